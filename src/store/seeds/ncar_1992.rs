//! J.L. Sloan's "Context Switch Time Scalability: Benchmark Results" (NCAR, October 1992):
//! its Appendix 1's nine machines, one table each in the report's format (`families::ring::import`),
//! built into the binary (`data/ncar-1992.toml`) and stored by
//! `import --reference ncar-1992` as nine ring runs; the report's conclusions as claims.
//! It has no `report --against` form: `pipeline-1992`'s own report shows the same table.

use super::{line_of, Claim, Claims, ReferenceOptions, Seed, Test};
use crate::error::{Error, Result};
use crate::families::ring::import::{consistency_warnings, parse_table, to_run, Provenance, NCAR_LAPS};
use crate::store::{RunRecord, TrialRecord};
use serde::{Deserialize, Serialize};

/// The name of the built-in reference set (`import --reference`).
const REFERENCE_NAME: &str = "ncar-1992";

/// The report's nine tables, verbatim (see the file's header).
const REFERENCE_TOML: &str = include_str!("../../../data/ncar-1992.toml");
const REFERENCE_FILE: &str = "data/ncar-1992.toml (built into schedlab)";

/// Where the reference figures were published.
const CITATION: &str = "J.L. Sloan, \"Context Switch Time Scalability: Benchmark Results\", NCAR Scientific \
                        Computing Division, October 1992, Appendix 1";

pub struct Ncar1992;

impl Seed for Ncar1992 {
    fn name(&self) -> &'static str {
        REFERENCE_NAME
    }

    fn holds(&self) -> &'static str {
        "the 1992 NCAR report's nine machines: nine ring runs"
    }

    fn citation(&self) -> &'static str {
        CITATION
    }

    fn runs(&self) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
        machine_runs()
    }

    /// Decided on each machine's curve (the seed) and on a run of `pipeline-1992`.
    fn claims(&self) -> Claims {
        Claims {
            suite: "pipeline-1992",
            title: "The 1992 NCAR report's conclusions",
            claims: vec![
                Claim {
                    id: "switch-cost-grows",
                    claim: "Context switch time is not constant: on several systems (not all) it grows with the \
                            number of processes",
                    on_seed: Test::RingCostRises,
                    on_run: Test::RingCostRises,
                },
                Claim {
                    id: "sun4-knees",
                    claim: "The Sun-4/280 and Sun-4/470 have knees once their 16 and 32 register-window banks are in \
                            use",
                    on_seed: Test::KneesPastBanks(&[("4/280", 16.0), ("4/470", 32.0)]),
                    on_run: Test::NotCovered("a claim about two 1992 machines"),
                },
            ],
        }
    }
}

/// One machine of the built-in reference set, as `data/ncar-1992.toml` has it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReferenceMachine {
    id: String,
    vendor: String,
    model: String,
    system: String,
    cpus: u32,
    heading: String,
    table: String,
}

/// One of the report's machines as its run stores it: named by model and system, marked
/// as imported, with the laps its table's rings ran.
#[derive(Serialize)]
struct ReportMachine<'a> {
    hostname: String,
    kernel_release: &'a str,
    vendor: &'a str,
    model: &'a str,
    cpus_used: u32,
    imported: bool,
    figures: &'static str,
    source: String,
    laps: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReferenceFile {
    machine: Vec<ReferenceMachine>,
}

/// The report's nine machines, each as (machine id, table), in the report's order.
#[cfg(test)]
pub fn reference_tables() -> Result<Vec<(String, crate::families::ring::import::NcarTable)>> {
    reference_machines()?
        .into_iter()
        .map(|m| Ok((m.id.clone(), parse_table(REFERENCE_FILE, &m.table, line_of(REFERENCE_TOML, &m.table))?)))
        .collect()
}

fn reference_machines() -> Result<Vec<ReferenceMachine>> {
    let file: ReferenceFile = toml::from_str(REFERENCE_TOML).map_err(|e| {
        Error::env(format!("{REFERENCE_FILE} does not read ({e}): a bug in schedlab; please report it"))
    })?;
    Ok(file.machine)
}

/// `import --reference ncar-1992`: the report's nine machines as nine runs, labelled as
/// its published figures. Their uuids are fixed, so a second import stores nothing.
fn machine_runs() -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    let mut out = Vec::new();
    for m in reference_machines()? {
        let table = parse_table(REFERENCE_FILE, &m.table, line_of(REFERENCE_TOML, &m.table))?;
        let warnings = consistency_warnings(REFERENCE_FILE, &table);
        let label = format!("{}, {}", m.model, m.system);
        let machine = ReportMachine {
            hostname: format!("{label} (NCAR 1992, published)"),
            kernel_release: &m.system,
            vendor: &m.vendor,
            model: &m.model,
            cpus_used: m.cpus,
            imported: true,
            figures: "published in the report; built into schedlab, not measured by it",
            source: format!("{CITATION}: \"{}\"", m.heading),
            laps: NCAR_LAPS,
        };
        let options = ReferenceOptions { machine: Some(&m.id), ..ReferenceOptions::of(REFERENCE_NAME) };
        let provenance = Provenance {
            suite_name: format!("{REFERENCE_NAME}-published"),
            suite_text: format!("{}\n(from {CITATION})\n\n{}", m.heading, m.table.trim_end()),
            // Typed records in the stored form `to_run` takes (encoding cannot fail).
            options: serde_json::to_value(&options).unwrap_or_default(),
            machine: serde_json::to_value(&machine).unwrap_or_default(),
            // The report is dated October 1992; when each machine ran is not given.
            started: "1992-10-01T00:00:00.000Z".into(),
            notice: format!(
                "published figures: the NCAR 1992 report's table for the {label} ({CITATION}), not measured by \
                 schedlab"
            ),
            identity: format!("reference/{REFERENCE_NAME}/{}", m.id),
        };
        out.push(to_run(REFERENCE_FILE, &table, NCAR_LAPS, provenance, &warnings)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::Outcome;

    #[test]
    fn the_reference_set_is_the_reports_nine_tables() {
        let tables = reference_tables().unwrap();
        let sizes: Vec<(&str, usize, usize)> =
            tables.iter().map(|(id, t)| (id.as_str(), t.rows.len(), t.rows.last().unwrap().procs)).collect();
        assert_eq!(
            sizes,
            [
                ("dg-aviion-av400", 9, 64),
                ("hp-9000-720", 9, 48),
                ("ibm-370-4381", 7, 32),
                ("ibm-rs6000-530-aix-3.1", 9, 64),
                ("ibm-rs6000-530-aix-3.2", 9, 64),
                ("solbourne-702e", 8, 48),
                ("sun-4-280", 9, 64),
                ("sun-4-470", 9, 64),
                ("sun-4-630", 9, 64),
            ]
        );
        assert!(tables[1].1.rows.iter().any(|r| r.procs == 42), "the HP table's 42-process row");
        // Every published table adds up within its rounding.
        for (id, table) in &tables {
            assert!(consistency_warnings(id, table).is_empty(), "{id}: {:?}", consistency_warnings(id, table));
        }
        let runs = machine_runs().unwrap();
        assert_eq!(runs.len(), 9);
        let (run, trials) = &runs[6];
        assert_eq!(run.machine.hostname(), Some("Sun-4/280, SunOS 4.1.1 (NCAR 1992, published)"));
        assert_eq!(run.warnings.len(), 1, "only the notice");
        let last = trials.last().unwrap().outcome.as_ref().and_then(Outcome::ring).unwrap();
        assert_eq!((last.hops, last.usage.cpu_ns()), (64_000_000, 96_545_000_000_000), "3402 + 93143 s");
        let uuids: std::collections::BTreeSet<&str> = runs.iter().map(|(r, _)| r.uuid.as_str()).collect();
        assert_eq!(uuids.len(), 9);
        assert_eq!(machine_runs().unwrap()[0].0.uuid, runs[0].0.uuid, "fixed ids");
        assert!(super::super::reference_runs("ncar-1993")
            .unwrap_err()
            .to_string()
            .contains("no reference set 'ncar-1993'"));
    }

    #[test]
    fn reference_errors_point_into_the_data_file() {
        let first = reference_machines().unwrap().remove(0);
        assert_eq!(REFERENCE_TOML.lines().nth(line_of(REFERENCE_TOML, &first.table)), first.table.lines().next());
    }
}

/// The knee analysis read on the 1992 report's own machines (the data it was checked
/// against without being tuned on).
#[cfg(test)]
mod knees_of_the_published_machines {
    use super::reference_tables;
    use crate::analysis::knee::{analyse, Scaling, Shape};

    /// One value per count: (processes, CPU seconds) as CPU s per process.
    fn table(rows: &[(u32, u32)]) -> Vec<(f64, Vec<f64>)> {
        rows.iter().map(|&(p, cpu)| (f64::from(p), vec![f64::from(cpu) / f64::from(p)])).collect()
    }

    fn knees(s: &Scaling) -> Vec<(f64, f64)> {
        s.knees.iter().map(|k| (k.before, k.after)).collect()
    }

    /// A machine of the 1992 report's Appendix 1 (as shipped for `import --reference`):
    /// (processes, CPU seconds for 1,000,000 laps).
    fn published(id: &str) -> Vec<(u32, u32)> {
        let tables = reference_tables().expect("the reference set reads");
        let (_, table) = tables.iter().find(|(m, _)| m == id).unwrap_or_else(|| panic!("no machine {id}"));
        table.rows.iter().map(|r| (r.procs as u32, r.cpu.value as u32)).collect()
    }

    fn read(id: &str) -> Scaling {
        analyse(&table(&published(id))).expect("nine or seven counts are analysed")
    }

    #[test]
    fn the_sun_4_280_turns_between_10_and_16_processes() {
        // "The Sun-4/280 has sixteen high-speed register banks": rapid degradation past them.
        let s = read("sun-4-280");
        assert_eq!(knees(&s), vec![(10.0, 16.0)]);
        assert!(s.knees[0].jump > 1.5, "{:?}", s.knees[0]);
        assert!((s.above_projection - 3.46).abs() < 0.01, "{}", s.above_projection);
    }

    #[test]
    fn the_sun_4_470_turns_at_48_to_64_processes() {
        let s = read("sun-4-470");
        assert_eq!(knees(&s), vec![(48.0, 64.0)]);
        assert!((s.knees[0].jump - 0.38).abs() < 0.01, "{:?}", s.knees[0]);
        assert!((s.above_projection - 1.83).abs() < 0.01);
    }

    #[test]
    fn the_hp_aix_3_2_and_sun_4_630_stay_linear() {
        for name in ["hp-9000-720", "ibm-rs6000-530-aix-3.2", "sun-4-630"] {
            let s = read(name);
            assert!(s.knees.is_empty(), "{name}: {s:?}");
            assert_eq!(s.shape, Shape::Linear, "{name}: {s:?}");
            assert!(s.above_projection < 1.2, "{name}: {s:?}");
        }
    }

    #[test]
    fn aix_3_1_diverges_steadily() {
        // "As processes are added incrementally, the RS running AIX 3.1 is increasingly
        // expensive": a rise with no single step that is a knee.
        let s = read("ibm-rs6000-530-aix-3.1");
        assert!(s.knees.is_empty(), "{s:?}");
        assert_eq!(s.shape, Shape::SteadyRise);
        assert!((s.above_projection - 1.41).abs() < 0.01);
        // AIX 3.1 against the HP at 48 processes: the report's "2.25 times slower".
        let at = |id: &str, p: u32| published(id).iter().find(|r| r.0 == p).map(|r| f64::from(r.1)).unwrap();
        assert!((at("ibm-rs6000-530-aix-3.1", 48) / at("hp-9000-720", 48) - 2.25).abs() < 0.01);
    }

    #[test]
    fn the_other_three_machines_read_as_their_figures_show() {
        // The report does not comment on these; the readings follow the numbers.
        // The DG's cost per hop jumps 27 % from 2 to 4 processes, then keeps rising.
        let dg = read("dg-aviion-av400");
        assert_eq!(knees(&dg), vec![(2.0, 4.0)]);
        assert!((dg.knees[0].jump - 0.27).abs() < 0.01);
        assert_eq!(dg.shape, Shape::SteadyRise);
        // The IBM 370 and the (noisy, two-CPU) Solbourne have no step of a quarter.
        assert!(read("ibm-370-4381").knees.is_empty());
        assert_eq!(read("ibm-370-4381").shape, Shape::Linear);
        assert!(read("solbourne-702e").knees.is_empty());
    }
}
