//! What to run: one validated spec per trial, per family. Specs are plain values that
//! travel to the trial process as JSON; whatever needs the machine to be checked or
//! resolved (CPUs, privileges, limits, work directories) is done by the preflight.

pub(crate) fn reading_on() -> bool {
    true
}
