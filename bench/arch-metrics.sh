#!/usr/bin/env bash
# The shape of the source, as issue 19 measures it: lines in src/report/, uses of
# serde_json's untyped Value outside the edges where JSON belongs (export/import, the 0.1.0
# reader, the HTML template data, the JSON writer of tables), and the `duplicates` pairs
# (when that tool is on PATH).
#
#   bench/arch-metrics.sh [SRC]      (default: src)
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-src}
echo "lines in $src/report/: $(cat "$src"/report/*.rs "$src"/report/**/*.rs 2>/dev/null | wc -l)"
python3 - "$src" <<'PY'
import pathlib, re, sys
src = pathlib.Path(sys.argv[1])
# Where untyped JSON is the point: export/import files, the 0.1.0 reader, HTML template data.
edges = re.compile(r"(^|/)(legacy|export|html)\.rs$|templates")
total, per_file = 0, {}
for f in sorted(src.rglob("*.rs")):
    text = f.read_text()
    names = set()
    if re.search(r"serde_json::Value\b", text):
        names.add("serde_json::Value")
    for m in re.finditer(r"use serde_json::\{([^}]*)\}", text):
        for part in m.group(1).split(","):
            part = part.strip()
            if part == "Value":
                names.add("Value")
            elif part.startswith("Value as "):
                names.add(part.split()[-1])
    if re.search(r"use serde_json::Value;", text):
        names.add("Value")
    if re.search(r"use serde_json::Value as (\w+);", text):
        names.add(re.search(r"use serde_json::Value as (\w+);", text).group(1))
    if not names:
        continue
    pat = re.compile("|".join(r"(?<![\w:])" + re.escape(n) + r"\b" for n in names))
    n = sum(1 for line in text.splitlines() if pat.search(line) and not line.lstrip().startswith(("use ", "//")))
    rel = f.relative_to(src)
    if edges.search(str(rel)):
        continue
    per_file[str(rel)] = n
    total += n
print(f"serde_json::Value uses outside export/import/legacy/templates: {total}")
for name, n in sorted(per_file.items(), key=lambda kv: -kv[1]):
    if n:
        print(f"  {n:4d} {name}")
PY
if command -v duplicates >/dev/null; then
  echo "duplicates: $(duplicates --repo "$src" --most 1 | head -1)"
fi
