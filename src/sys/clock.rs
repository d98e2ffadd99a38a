//! The clocks in integer nanoseconds, and what is timed on them (an absolute sleep, a
//! burn of CPU time). CLOCK_MONOTONIC is comparable across CPUs and processes, so a
//! timestamp taken in one ring member can be subtracted from one taken in another.

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC_RAW in integer nanoseconds: the clocksource's own rate, never slewed
/// by NTP. SCHED_DEADLINE's periods run on the scheduler clock, which is not slewed
/// either, so a deadline job's lateness is measured on this clock (as rt-tests'
/// cyclicdeadline does): on CLOCK_MONOTONIC a slew of a few ppm would add a lateness
/// that grows with every period.
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists since Linux 2.6.28.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's CPU time in integer nanoseconds (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the thread CPU clock exists since Linux 2.6.12.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The whole process's CPU time (every thread's) in integer nanoseconds.
pub fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the process CPU clock always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until `at_ns` on CLOCK_MONOTONIC (an absolute timer: a late wakeup does not
/// shift the next one).
pub fn sleep_until(at_ns: u64) {
    let ts = libc::timespec { tv_sec: (at_ns / 1_000_000_000) as libc::time_t, tv_nsec: (at_ns % 1_000_000_000) as _ };
    // SAFETY: a valid timespec; EINTR is retried by the loop.
    while unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) }
        == libc::EINTR
    {}
}

/// The most CPU time `burn` spins between two reads of the thread's CPU clock.
pub const BURN_CHUNK_NS: u64 = 5_000;

/// Spin `n` iterations in user space.
fn spin(n: u64) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// Spin iterations per µs of CPU time, measured once per process (a few hundred µs, on
/// the first call).
fn spins_per_us() -> u64 {
    static PER_US: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PER_US.get_or_init(|| {
        const N: u64 = 200_000;
        let start = thread_cpu_ns();
        spin(N);
        let took = thread_cpu_ns().saturating_sub(start).max(1);
        (N * 1000 / took).max(1)
    })
}

/// Busy until this thread has had `ns` more of CPU time, on its own CPU clock (not a
/// calibrated loop: time off the CPU does not count). It spins at most about
/// `BURN_CHUNK_NS` between reads of the clock, so the work is user time, not the clock's
/// system calls, and it overshoots by less than a chunk. Call `burn(0)` before anything is
/// timed to take the one calibration out of the measurement.
pub fn burn(ns: u64) {
    let per_us = spins_per_us();
    let start = thread_cpu_ns();
    loop {
        let done = thread_cpu_ns().saturating_sub(start);
        if done >= ns {
            break;
        }
        let left = (ns - done).min(BURN_CHUNK_NS);
        spin((left * per_us / 1000).max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burn_is_its_cpu_time_and_mostly_user_time() {
        burn(0);
        let usage = || {
            // SAFETY: an all-zero rusage is valid to pass for writing.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD exists since 2.6.26.
            unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
            let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
            (us(ru.ru_utime), us(ru.ru_stime))
        };
        let (u0, s0) = usage();
        let c0 = thread_cpu_ns();
        burn(200_000_000);
        let took = thread_cpu_ns() - c0;
        let (u1, s1) = usage();
        assert!((200_000_000..200_000_000 + 2 * BURN_CHUNK_NS + 1_000_000).contains(&took), "{took} ns");
        // Beside it, the same CPU time spent reading the clock and nothing else: what a burn
        // that read it every spin would be. What a clock read costs in system time is this
        // machine's (a VM's system calls are dear), so the burn is judged against it.
        let (u2, s2) = usage();
        let (c2, mut reads) = (thread_cpu_ns(), 0u64);
        while thread_cpu_ns() - c2 < 200_000_000 {
            reads += 1;
        }
        let (u3, s3) = usage();
        // A burn reads the clock once a chunk of spinning, and a read costs less than a
        // chunk, so at most half its time goes to reads: its system share is at most half
        // the loop's. (The kernel splits user and system time by sampling at its ticks, a
        // few ms apart: a share over 200 ms is rough, and half is far from the burn's.)
        let read_ns = 200_000_000 / reads.max(1);
        assert!(read_ns < BURN_CHUNK_NS, "a clock read takes {read_ns} ns");
        let system_share = |u: u64, s: u64| s as f64 / (u + s).max(1) as f64;
        let (burn_share, loop_share) = (system_share(u1 - u0, s1 - s0), system_share(u3 - u2, s3 - s2));
        assert!(
            burn_share <= loop_share / 2.0,
            "system share of the burn {burn_share:.3} ({} µs user), of the clock loop {loop_share:.3} ({} µs user)",
            u1 - u0,
            u3 - u2
        );
    }
}
