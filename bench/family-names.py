#!/usr/bin/env python3
"""Where each family is named outside its own folder, in src/'s code.

A family should be one folder, src/families/<name>/, and one line of the registry; the rest
of the code reaches it through the traits and the dispatch macros. This counts the places
that still name one: a path into its folder (`families::ring`), a variant of the
registry's or the command line's enums (`Family::Ring`, `Command::Ring`), an outcome's
accessor (`.ring()`) and its types (`RingSpec`). Comments and string literals are not
code and are not read, nor are test-only items (each `#[cfg(test)]` item: the test module
and its helpers). The seeds' data, which replicate one family's study (src/store/seeds/),
are counted apart.

  bench/family-names.py            one line per family, then the files, most names first
  bench/family-names.py --total    the one number: names outside the folders and the seeds
"""
import os
import re
import sys

FAMILIES = ["ring", "workload", "latency", "command", "taskset", "server"]
# The registry's files: where a family's name is meant to stand, on one line once the
# registry is one declaration.
REGISTRY = {os.path.join("families", "list.rs"), os.path.join("families", "mod.rs")}
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def code_of(text):
    """The code of a Rust source: comments, strings and test-only items blanked."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"b?r(#*)\".*?\"\1", '""', text, flags=re.S)
    text = re.sub(r'b?"(?:\\.|[^"\\])*"', '""', text, flags=re.S)
    text = re.sub(r"'(?:\\.|\\u\{[0-9a-fA-F]+\}|[^'\\])'", "' '", text)
    return without_test_items(text)


def without_test_items(code):
    """`code` less every item marked #[cfg(test)]: the test module and test-only helpers,
    each from its attribute to the end of its braces (or its semicolon)."""
    out = []
    at = 0
    for mark in re.finditer(r"#\[cfg\(test\)\]", code):
        if mark.start() < at:
            continue
        out.append(code[at : mark.start()])
        brace, semi = code.find("{", mark.end()), code.find(";", mark.end())
        if brace < 0 or 0 <= semi < brace:
            at = semi + 1 if semi >= 0 else len(code)
            continue
        depth, i = 0, brace
        while i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                break
            i += 1
        at = i + 1
    out.append(code[at:])
    return "".join(out)


# Identifiers that start like a family's name but are someone else's (std, clap).
NOT_FAMILIES = {"CommandFactory", "CommandExt", "Commands"}
# The enums a family is a variant of, the registry's and the command line's.
ENUMS = ["Family", "TrialSpec", "Outcome", "FamilyOptions", "Command"]


def names_in(code, family):
    """How many times `code` names `family`: a path into its folder (`families::ring`), a
    variant of an enum (`Family::Ring`), an outcome's accessor (`.ring()`), or one of its
    types (`RingSpec`)."""
    capital = family.capitalize()
    n = len(re.findall(r"\bfamilies\s*::\s*" + family + r"\b", code))
    n += len(re.findall(r"\b(?:" + "|".join(ENUMS) + r")\s*::\s*" + capital + r"\b", code))
    n += len(re.findall(r"\.\s*" + family + r"\s*\(\s*\)", code))
    types = re.findall(r"\b" + capital + r"[A-Z][A-Za-z0-9_]*\b", code)
    return n + sum(1 for t in types if t not in NOT_FAMILIES)


def main():
    total_only = "--total" in sys.argv[1:]
    per_family = {f: 0 for f in FAMILIES}
    seeds = {f: 0 for f in FAMILIES}
    per_file = {}
    for root, _, files in os.walk(SRC):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, SRC)
            with open(path, encoding="utf-8") as f:
                code = code_of(f.read())
            for family in FAMILIES:
                if rel.startswith(os.path.join("families", family) + os.sep):
                    continue
                n = names_in(code, family)
                if n == 0:
                    continue
                if rel.startswith(os.path.join("store", "seeds") + os.sep):
                    seeds[family] += n
                    continue
                per_family[family] += n
                per_file[rel] = per_file.get(rel, 0) + n
    total = sum(per_family.values())
    if total_only:
        print(total)
        return
    registry = sum(n for rel, n in per_file.items() if rel in REGISTRY)
    print(
        f"family names outside their folders, in code: {total}, of them {registry} in the registry's files "
        f"(families/list.rs, families/mod.rs); in the seeds' data, apart: {sum(seeds.values())}"
    )
    for family in FAMILIES:
        print(f"  {family:9} {per_family[family]:5}   seeds {seeds[family]}")
    print("by file:")
    for rel, n in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:5}  src/{rel}")


if __name__ == "__main__":
    main()
