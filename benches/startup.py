#!/usr/bin/env python3
"""Whole-process start-up of the release binary, next to `python3 -c pass` in the same run.

Usage: benches/startup.py [--bin PATH] [--before PATH] [--reps N] [--no-build] [--callgrind]
                          [--python PATH]...

Each repetition runs, in a rotating order so that load from other processes hits every command
alike:
  - `python3 -c pass` as PATH finds it (on the dev machine a pyenv shim, a bash script that
    execs the interpreter: what `python3` costs a user there, and what issue 11 compared with);
  - the interpreter itself (the shim's target, or python3 when there is no shim), and
    /usr/bin/python3 when that is another one (and any `--python`);
  - `sm120-doctor check --demo` (output to /dev/null);
  - the TUI on the live host, up to its first frame: the binary runs on a fresh pseudo-terminal
    (200x50, TERM=xterm-256color); the time is from just before the spawn to the moment the
    first frame's last byte is read from the terminal. A frame's first row begins with
    " sm120-doctor " and ratatui ends each frame with hide-cursor, so the first frame ends at
    the first `ESC[?25l` after that text. A cursor-position query (`ESC[6n`) is answered at
    once, as a local terminal does. Then `q` is typed and the process reaped. The row names
    the host: "no driver" where no NVIDIA driver is loaded (this dev machine: NVML and the CUDA
    driver are not found), "NVIDIA driver" where one is (/proc/driver/nvidia/version exists).
Wall time is the median of the repetitions (time.perf_counter_ns around spawn and wait). CPU
time (user + system of the child, from wait4's rusage) is the median too: on a machine loaded
by other builds it moves less than wall time. `--callgrind` also counts instructions of one run
of each (valgrind; deterministic, independent of load; a shim that execs is not followed, so it
has no count).

Goal (issue 11 item 7): check --demo <= 0.15x `python3 -c pass`; TUI first frame <= 30 ms.

The latest numbers, with what is left of a start and what was tried, are in README.md
(Benchmarks, Start-up) and tests/fixtures/h200-startup-2026-12-04/ (a live H200). On the dev
machine, 2026-12-04, 100 repetitions: check --demo 8.66 ms wall, 22.3 M instructions (a76c0c8:
19.66 ms, 87.2 M); 0.202x the pyenv interpreter, 0.067x its shim, 0.685x /usr/bin/python3.
"""

import argparse
import fcntl
import os
import select
import shutil
import statistics
import struct
import subprocess
import sys
import termios
import time

# The first row of every frame starts with the program's name; a frame ends with hide-cursor.
HEADER = b" sm120-doctor "
HIDE_CURSOR = b"\x1b[?25l"
DSR = b"\x1b[6n"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_plain(argv):
    """Spawn, wait; (wall ns, cpu ns)."""
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter_ns() - t0
    p.returncode = 0  # reaped by wait4; keeps Popen's destructor quiet
    return wall, int((ru.ru_utime + ru.ru_stime) * 1e9)


def first_frame(argv, cols=200, rows=50, timeout=10.0):
    """Run the TUI on a new pseudo-terminal; (ns to the first frame's end, cpu ns of the run)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("NO_COLOR", None)

    def child_setup():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    t0 = time.perf_counter_ns()
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                         preexec_fn=child_setup, close_fds=True)
    os.close(slave)
    seen = b""
    done_at = None
    deadline = time.monotonic() + timeout
    while done_at is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        # Answer a cursor-position query as a terminal does (else the query waits 2 s).
        if DSR in chunk:
            os.write(master, b"\x1b[1;1R")
        seen += chunk
        header = seen.find(HEADER)
        if header >= 0 and seen.find(HIDE_CURSOR, header) >= 0:
            done_at = time.perf_counter_ns()
    try:
        os.write(master, b"q")
    except OSError:
        pass
    # Drain until the child is gone so it never blocks on a full terminal.
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            p.kill()
            break
        try:
            if not os.read(master, 65536):
                break
        except OSError:
            break
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    os.close(master)
    if done_at is None:
        raise SystemExit(f"no first frame within {timeout} s (exit status {status}); "
                         f"output: {seen[-400:]!r}")
    return done_at - t0, int((ru.ru_utime + ru.ru_stime) * 1e9)


def callgrind(argv):
    """Instructions executed by one run (valgrind --tool=callgrind), or None."""
    if not shutil.which("valgrind"):
        return None
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                         + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in out.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1].strip())
    return None


def python_baselines(extra):
    """(label, executable): python3 as the user's PATH finds it (before a pyenv shim put its
    version first on this script's PATH), the interpreter that one runs, the system's, extras."""
    found = []
    user_path = os.environ.get("PATH", "")
    pyenv_root = os.environ.get("PYENV_ROOT")
    shim = os.path.join(pyenv_root, "shims", "python3") if pyenv_root else None
    first = shutil.which("python3", path=user_path)
    if shim and os.path.exists(shim) and first and first.startswith(
            os.path.join(pyenv_root, "versions") + os.sep):
        first = shim  # run through `pyenv exec`: the shim is what the user's shell runs
    if first is None:
        raise SystemExit("python3 not found on PATH")
    found.append(("python3 -c pass (PATH)", first))
    real = subprocess.run([first, "-c", "import sys; print(sys.executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    found.append(("python3 -c pass (its interpreter)", real))
    if os.path.exists("/usr/bin/python3"):
        found.append(("python3 -c pass (/usr/bin)", "/usr/bin/python3"))
    for e in extra:
        found.append((f"python3 -c pass ({e})", e))
    seen, out = set(), []
    for label, exe in found:
        key = os.path.realpath(exe)
        if key not in seen:
            seen.add(key)
            out.append((label, exe))
    return out


def driver_loaded():
    """Whether this host's NVIDIA kernel driver is loaded: then the TUI's first frame waits on
    NVML and the CUDA driver, a different case from a host without one."""
    return os.path.exists("/proc/driver/nvidia/version")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/sm120-doctor"))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--before", help="another build of sm120-doctor to measure alongside")
    ap.add_argument("--python", action="append", default=[],
                    help="another python3 to compare with (repeatable)")
    a = ap.parse_args()
    if a.reps < 2:
        raise SystemExit("--reps must be at least 2")
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "sm120-doctor"],
                       cwd=ROOT, check=True)
    pythons = python_baselines(a.python)
    cases = {}
    for label, exe in pythons:
        cases[label] = (lambda exe=exe: run_plain([exe, "-c", "pass"]))
    cases["check --demo"] = lambda: run_plain([a.bin, "check", "--demo"])
    host = "NVIDIA driver" if driver_loaded() else "no driver"
    cases[f"TUI first frame (live, {host})"] = lambda: first_frame([a.bin])
    if a.before:
        cases["check --demo (--before)"] = lambda: run_plain([a.before, "check", "--demo"])
        cases["TUI first frame (--before)"] = lambda: first_frame([a.before])
    load_before = os.getloadavg()[0]
    names = list(cases)
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for n in names:  # warm the page cache
        cases[n]()
    for i in range(a.reps):
        for j in range(len(names)):
            n = names[(i + j) % len(names)]
            w, c = cases[n]()
            wall[n].append(w)
            cpu[n].append(c)
    print(f"{a.reps} repetitions, interleaved; medians; load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    for label, exe in pythons:
        print(f"  {label}: {exe}")
    med = {n: statistics.median(wall[n]) / 1e6 for n in names}
    medc = {n: statistics.median(cpu[n]) / 1e6 for n in names}
    for n in names:
        q = statistics.quantiles(wall[n], n=10, method="inclusive")
        print(f"  {n:36} wall {med[n]:8.2f} ms (min {min(wall[n]) / 1e6:.2f}, "
              f"p10 {q[0] / 1e6:.2f}, p90 {q[-1] / 1e6:.2f}, max {max(wall[n]) / 1e6:.2f})"
              f"   cpu {medc[n]:7.2f} ms (min {min(cpu[n]) / 1e6:.2f}, "
              f"max {max(cpu[n]) / 1e6:.2f})")
    checks = ["check --demo"] + (["check --demo (--before)"] if a.before else [])
    for check in checks:
        for base, _ in pythons:
            print(f"  {check} / {base}: wall {med[check] / med[base]:.3f}x, "
                  f"cpu {medc[check] / medc[base]:.3f}x")
    if a.callgrind:
        runs = [(label, [exe, "-c", "pass"]) for label, exe in pythons]
        runs.append(("check --demo", [a.bin, "check", "--demo"]))
        if a.before:
            runs.append(("check --demo (--before)", [a.before, "check", "--demo"]))
        for n, argv in runs:
            ir = callgrind(argv)
            if ir is not None:
                print(f"  instructions, {n}: {ir / 1e6:.1f} M")


if __name__ == "__main__":
    sys.exit(main())
