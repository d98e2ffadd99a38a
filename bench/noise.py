#!/usr/bin/env python3
"""Planted interference for the bench scripts: run a command beside a noisy neighbour.

    bench/noise.py MODE [options] -- CMD [ARG...]

Modes, one interferer process pinned to each allowed CPU:
  steal   SCHED_FIFO 99 spins of --spin-ms (default 1 ms) at random moments (exponential
          gaps), --share of each CPU on average (default 6 %). Like a hypervisor taking
          the CPU, it preempts everything, real-time tests included.
  tenant  a nice-0 process busy --share of each CPU (default 30 %), in bursts of 5-20 ms
          at random moments: another tenant's ordinary work.
  quiet   no interferer (the same command, for a baseline).

The interferers start before CMD and are killed when it ends, on SIGINT and SIGTERM, and,
should this script itself be killed, by the kernel (PR_SET_PDEATHSIG). The exit status is
CMD's. Needs root for `steal` (SCHED_FIFO).
"""

import argparse
import ctypes
import os
import random
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spin(seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        pass


def interfere(mode, cpu, spin_s, share, seed):
    """The body of one interferer, pinned to `cpu`; never returns."""
    die_with_parent()
    os.sched_setaffinity(0, {cpu})
    rng = random.Random(seed)
    if mode == "steal":
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
        burst = lambda: spin_s
        mean_burst = spin_s
    else:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
        burst = lambda: rng.uniform(0.005, 0.020)
        mean_burst = 0.0125
    # Exponential gaps whose mean leaves the bursts `share` of the time.
    mean_gap = mean_burst * (1.0 - share) / share
    while True:
        time.sleep(rng.expovariate(1.0 / mean_gap))
        spin(burst())


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        usage="bench/noise.py {steal,tenant,quiet} [--spin-ms MS] [--share S] -- CMD [ARG...]",
    )
    parser.add_argument("mode", choices=["steal", "tenant", "quiet"])
    parser.add_argument("--spin-ms", type=float, default=1.0, help="steal: each spin's length (ms)")
    parser.add_argument("--share", type=float, help="the share of each CPU taken (steal 0.06, tenant 0.30)")
    parser.add_argument("--seed", type=int, default=None)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1 :]
    if not command:
        parser.error("no command to run beside the noise")
    share = args.share if args.share is not None else (0.06 if args.mode == "steal" else 0.30)
    if not 0.0 < share < 1.0:
        parser.error("--share must be between 0 and 1")
    if args.mode == "steal" and os.geteuid() != 0:
        sys.exit("bench/noise.py: steal needs root (SCHED_FIFO 99)")

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    interferers = []
    if args.mode != "quiet":
        for i, cpu in enumerate(sorted(os.sched_getaffinity(0))):
            pid = os.fork()
            if pid == 0:
                try:
                    interfere(args.mode, cpu, args.spin_ms / 1e3, share, seed + i)
                finally:
                    os._exit(1)
            interferers.append(pid)

    def stop(*_):
        for pid in interferers:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        interferers.clear()

    child = None

    def forward(signum, _frame):
        if child is not None and child.poll() is None:
            child.send_signal(signum)
        stop()
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    try:
        print(
            f"noise: {args.mode}"
            + (f", {args.spin_ms:g} ms spins" if args.mode == "steal" else ", 5-20 ms bursts" if args.mode == "tenant" else "")
            + (f", {share:.0%} of each CPU, seed {seed}" if args.mode != "quiet" else ""),
            file=sys.stderr,
        )
        child = subprocess.Popen(command)
        rc = child.wait()
    finally:
        stop()
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
