//! Thin safe wrappers over the OS, one concern a file. Everything `unsafe` in schedlab
//! lives here or in the measurement kernels, with the reason it is sound beside it.

pub mod children;
pub mod clock;
pub mod fd;
pub mod fs;
pub mod limits;
pub mod machine;
pub mod process;
pub mod random;
pub mod rusage;
pub mod sched;
pub mod shm;
pub mod signals;
