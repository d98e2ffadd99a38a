//! Periodic-spike detection on the real kernel: a planted interferer is found with its
//! period, beside what the machine shows without it.
//!
//! One test, so that the interferer never runs beside another test's measurement in this
//! binary.

mod common;

use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

/// 73 ms: no multiple of the 100 ms beat this VM's host puts on its guests (seen in plain
/// runs: 35-40 µs that no tracepoint explains, every 100 ms), so the planted period is
/// told apart from the machine's own.
const PERIOD_NS: u64 = 73_000_000;
const SPIN_NS: u64 = 300_000;

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A thread of this test at SCHED_FIFO 99 on one CPU that wakes every 73 ms and spins
/// 300 µs: the periodic source to be found. Dropping it stops it and waits for it, so it
/// never outlives the test, a failed assertion included (the drop runs while the panic
/// unwinds; a killed test process takes the thread with it).
struct Interferer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Interferer {
    fn start(cpu: usize) -> Interferer {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel();
        let thread = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                // SAFETY: a zeroed cpu_set_t with one CPU set, and a valid sched_param, for
                // the calling thread (pid 0).
                let setup = unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    let param = libc::sched_param { sched_priority: 99 };
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
                        && libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0
                };
                let _ = ready_tx.send(setup.then_some(()).ok_or_else(std::io::Error::last_os_error));
                if !setup {
                    return;
                }
                let mut next = now_ns() + PERIOD_NS;
                while !stop.load(Ordering::Relaxed) {
                    let deadline =
                        libc::timespec { tv_sec: (next / 1_000_000_000) as _, tv_nsec: (next % 1_000_000_000) as _ };
                    // SAFETY: a valid absolute deadline; no remainder with TIMER_ABSTIME.
                    unsafe {
                        libc::clock_nanosleep(
                            libc::CLOCK_MONOTONIC,
                            libc::TIMER_ABSTIME,
                            &deadline,
                            std::ptr::null_mut(),
                        )
                    };
                    let spin_until = now_ns() + SPIN_NS;
                    while now_ns() < spin_until {
                        std::hint::spin_loop();
                    }
                    next += PERIOD_NS;
                }
            })
        };
        let interferer = Interferer { stop, thread: Some(thread) };
        ready_rx.recv().unwrap().expect("the interferer gets CPU and SCHED_FIFO 99");
        interferer
    }
}

impl Drop for Interferer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One 4 s SCHED_FIFO (priority 95) latency run on `cpu` at 5 kHz: its JSON line.
fn fifo_run(cpu: usize) -> serde_json::Value {
    fifo_run_with(cpu, &[])
}

fn fifo_run_with(cpu: usize, extra: &[&str]) -> serde_json::Value {
    let cpu = cpu.to_string();
    let args = ["latency", "--policy", "fifo", "--interval", "200us", "--duration", "4s", "--cpus", &cpu, "--json"];
    let lines = json_lines(stdout_of(&[&args[..], extra].concat()).as_bytes());
    assert_eq!(lines.len(), 1, "{lines:?}");
    lines.into_iter().next().unwrap()
}

#[test]
fn a_planted_periodic_interferer_is_found_with_its_period() {
    if !is_root() {
        eprintln!("skipped: SCHED_FIFO needs root");
        return;
    }
    let cpu = last_allowed_cpu();
    // Without the interferer first: the calibration. A machine may have periodic sources of
    // its own, and a run may rightly claim one: this VM's kdamond samples memory on a 100 ms
    // beat now and then and its host takes 35-40 µs every 100 ms, which no tracepoint sees;
    // CI's machine (2026-12-07) claimed 20 ms, five of its 4 ms ticks, beating with exits
    // no event shows. So what plain runs claim is printed, with what ran on its beats, and
    // held to nothing here: how often noise alone makes a claim is accuracy, measured on
    // seeded series in `analysis::period`'s tests and on this machine by
    // bench/spike-periods.sh (its plain set). The planted period is one no plain run shows.
    let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 0.05;
    let plain: Vec<serde_json::Value> = (0..3).map(|_| fifo_run_with(cpu, &["--trace", "on"])).collect();
    let own: Vec<f64> = plain.iter().filter_map(|l| l["spike_period_ns"].as_f64()).collect();
    for l in plain.iter().filter(|l| !l["spike_period_ns"].is_null()) {
        eprintln!(
            "a period of this machine's own: {} ns (p {}), {} on its beats",
            l["spike_period_ns"], l["spike_period_p"], l["spike_beat_culprits"][0]["source"]
        );
    }
    assert!(
        !own.iter().any(|&p| near(p, PERIOD_NS as f64)),
        "this machine has a period of its own at the planted one ({own:?} ns): the test cannot tell them apart"
    );
    // With it: the period is 73 ms within ±5 %. A run in which the machine's own noise
    // (another tenant's, the host's) reaches the interferer's 300 µs in over 1 % of the
    // wakeups leaves its spikes inside the body of the distribution, not above it: such a
    // run may claim nothing, or a period the plain runs showed, but never another, and most
    // runs find it.
    let planted: Vec<serde_json::Value> = {
        let _interferer = Interferer::start(cpu);
        (0..3).map(|_| fifo_run(cpu)).collect()
    };
    let claimed: Vec<f64> = planted.iter().filter_map(|l| l["spike_period_ns"].as_f64()).collect();
    let summary = format!("plain: {plain:?}\nplanted: {planted:?}");
    let p_of = |lines: &[serde_json::Value]| -> Vec<String> {
        lines.iter().map(|l| l["spike_period_p"].as_f64().map_or("-".into(), |p| format!("{p:.2e}"))).collect()
    };
    eprintln!(
        "plain runs, best candidate's p: {:?}, periods (ns): {own:?}; planted runs, periods (ns): {claimed:?}, p: {:?}",
        p_of(&plain),
        p_of(&planted)
    );
    for &period in &claimed {
        let machines = own.iter().any(|&p| near(p, period));
        assert!(near(period, PERIOD_NS as f64) || machines, "period {period} ns\n{summary}");
    }
    let found: Vec<&serde_json::Value> =
        planted.iter().filter(|l| l["spike_period_ns"].as_f64().is_some_and(|p| near(p, PERIOD_NS as f64))).collect();
    assert!(found.len() >= 2, "the planted period was found in {} of 3 runs\n{summary}", found.len());
    for l in found {
        let (fits, count) = (l["spike_fits"].as_u64().unwrap(), l["spike_count"].as_u64().unwrap());
        // 54 beats in 4 s, each delaying one wakeup: most of them fit.
        assert!(fits >= 20 && fits <= count, "{l}");
        assert!(l["spike_period_p"].as_f64().unwrap() < 0.001, "{l}");
    }
}
