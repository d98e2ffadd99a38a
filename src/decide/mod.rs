//! Decisions over stored results: the tests behind what schedlab concludes, as typed
//! values for `report` to render. A run's findings and the answers to its questions
//! (`findings`), the seeds' claims (`claims`), two runs compared (`compare`), a figure's
//! history and its change points (`trend`). The statistics themselves are `analysis`; the
//! words, tables and pages are `report`.

pub mod claims;
pub mod compare;
pub mod findings;
pub mod trend;
