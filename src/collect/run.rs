//! Run a child process under a timeout, keeping what it printed before the deadline (at most
//! [`MAX_OUTPUT`] bytes of each stream).
//!
//! Nothing a child starts outlives the run, on every exit path:
//! - the child gets its own process group, a run id in its environment ([`RUN_ID_VAR`], which
//!   its descendants inherit) and `PR_SET_PDEATHSIG(SIGKILL)` (the kernel kills it if this
//!   process dies, even by SIGKILL);
//! - the child is a supervisor ([`supervise`]), a child subreaper forked before the exec, and
//!   the command is its child: every orphan of the run (`setsid env -i` ones too) is
//!   reparented to it, and it kills them all when the command ends or when this process dies,
//!   even by SIGKILL; it then ends with the command's status;
//! - when the run ends (exit, timeout, output over the cap) the supervisor is asked to kill
//!   every process below it ([`stop_runs`]; a group kill first would kill the supervisor and
//!   hand those orphans to init wherever this process is not a subreaper: the TUI, a library
//!   caller), then the group is killed, and so is every process that carries the run id;
//! - a panic while the run is in progress kills the same tree (a drop guard);
//! - [`kill_all`] kills every run still in progress: `main` calls it when a mode returns, from
//!   its panic hook, and [`install_signal_cleanup`] from SIGINT, SIGTERM and SIGHUP (Ctrl-C in a
//!   terminal only reaches the tool's own process group, not the children's);
//! - in the CLI modes the tool is the child subreaper ([`become_subreaper`]): a descendant that
//!   left the group (`setsid`) *and* the run id (`env -i`) comes back to it as an orphan when
//!   its parent dies, and is killed at the end of the run (when no other run is in progress)
//!   and by [`kill_all`].

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// Most bytes kept of a child's stdout (and, separately, stderr). A child that prints more is
/// stopped: the collector's JSON is a few kilobytes.
pub const MAX_OUTPUT: usize = 4 << 20;

/// The environment variable that marks every process of one run (`<tool pid>-<n>`).
pub const RUN_ID_VAR: &str = "SM120_DOCTOR_RUN_ID";

/// How a child run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Exited with this code (`None` only when the status has neither code nor signal).
    Exited(Option<i32>),
    /// Ended by this signal (not ours: ours is [`Ending::TimedOut`] or [`Ending::OutputLimit`]).
    Killed(i32),
    /// Still running at the deadline; killed.
    TimedOut,
    /// Printed more than [`MAX_OUTPUT`] bytes on one stream; killed, the first part kept.
    OutputLimit,
    /// Could not be started at all.
    SpawnFailed(String),
}

impl Ending {
    /// Plain words for a message: "exited with code 3", "was killed by signal 9 (SIGKILL)".
    pub fn describe(&self) -> String {
        match self {
            Ending::Exited(Some(c)) => format!("exited with code {c}"),
            Ending::Exited(None) => "ended with an unknown status".into(),
            Ending::Killed(s) => format!("was killed by signal {s}{}", signal_name(*s)),
            Ending::TimedOut => "did not finish in time and was stopped".into(),
            Ending::OutputLimit => {
                format!("printed more than {} MiB and was stopped", MAX_OUTPUT >> 20)
            }
            Ending::SpawnFailed(e) => format!("could not be started: {e}"),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGHUP => " (SIGHUP)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGQUIT => " (SIGQUIT)",
        libc::SIGILL => " (SIGILL)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGFPE => " (SIGFPE)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGTERM => " (SIGTERM)",
        _ => "",
    }
}

#[derive(Debug, Clone)]
pub struct RunOutput {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// One stream's bytes: the first [`MAX_OUTPUT`], and how many more were dropped.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: u64,
}

/// A stream being read: its bytes so far, and a receiver that disconnects at its end.
struct Reading {
    buf: Arc<Mutex<Captured>>,
    ended: mpsc::Receiver<()>,
}

fn reader<R: Read + Send + 'static>(mut r: R, over: Arc<AtomicBool>) -> Reading {
    let buf = Arc::new(Mutex::new(Captured::default()));
    let out = Arc::clone(&buf);
    let (ended_tx, ended) = mpsc::channel::<()>();
    thread::spawn(move || {
        let _ended = ended_tx;
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
                Ok(n) => {
                    if let Ok(mut b) = out.lock() {
                        let room = MAX_OUTPUT.saturating_sub(b.bytes.len()).min(n);
                        b.bytes.extend_from_slice(&chunk[..room]);
                        if room < n {
                            b.dropped += (n - room) as u64;
                            over.store(true, Ordering::SeqCst);
                        }
                    }
                }
            }
        }
    });
    Reading { buf, ended }
}

/// What a stream held, once its reader has seen the end (or `until` has passed: a descendant
/// that escaped the kill may hold the pipe open).
fn take(r: &Reading, until: Instant) -> String {
    let _ = r
        .ended
        .recv_timeout(until.saturating_duration_since(Instant::now()));
    r.buf
        .lock()
        .map(|b| {
            let mut s = String::from_utf8_lossy(&b.bytes).into_owned();
            if b.dropped > 0 {
                s.push_str(&format!(
                    "\n[sm120-doctor: output cut at {} MiB; {} more bytes dropped]\n",
                    MAX_OUTPUT >> 20,
                    b.dropped
                ));
            }
            s
        })
        .unwrap_or_default()
}

/// Runs in progress: (process group, run id).
static LIVE: Mutex<Vec<(i32, String)>> = Mutex::new(Vec::new());
static SEQ: AtomicU64 = AtomicU64::new(0);

/// Kill every process whose environment carries a run id `matches` accepts (all of this user's
/// processes are looked at; others' environments cannot be read and are skipped).
fn kill_marked(matches: &dyn Fn(&str) -> bool) {
    let me = std::process::id();
    let prefix = format!("{RUN_ID_VAR}=");
    // A process may fork while we look: look again until a pass finds nothing (at most 3).
    for _ in 0..3 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut found = 0;
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if pid as u32 == me {
                continue;
            }
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let marked = env.split(|b| *b == 0).any(|kv| {
                std::str::from_utf8(kv)
                    .ok()
                    .and_then(|kv| kv.strip_prefix(prefix.as_str()))
                    .is_some_and(matches)
            });
            if marked {
                // SAFETY: kill(2) on a process this user owns that carries our run id.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                found += 1;
            }
        }
        if found == 0 {
            return;
        }
    }
}

fn kill_tree(pgid: i32, run_id: &str) {
    stop_runs(&[pgid]);
    kill_marked(&|id| id == run_id);
}

/// How long a run's supervisor is given to kill its tree (it waits for each process it kills,
/// a CUDA process's exit included) before its group is killed outright.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// `pid`'s state letter and parent from /proc/PID/stat (`None`: no such process).
fn state_and_parent(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Is `pid` a live child of this process (not a zombie)?
fn live_child(pid: i32) -> bool {
    pid > 0
        && state_and_parent(pid)
            .is_some_and(|(st, ppid)| st != 'Z' && ppid as u32 == std::process::id())
}

/// End the runs led by `pgids` (each the pid of a run's supervisor, see [`supervise`], and its
/// process group): ask each supervisor that is still a live child of this process to kill
/// every process below it ([`STOP_RUN`]), wait for them (at most [`STOP_GRACE`]), then kill
/// each group outright. Killing the group first would kill the supervisor too, and the orphans
/// of the run (`setsid env -i` ones) would go to init where this process is not a subreaper
/// (the TUI, a library caller). A pid that is no longer our child (reaped, or reused) is not
/// signalled.
pub(crate) fn stop_runs(pgids: &[i32]) {
    let asked: Vec<i32> = pgids.iter().copied().filter(|p| live_child(*p)).collect();
    for p in &asked {
        // SAFETY: kill(2) on a live child of this process (the run's supervisor).
        unsafe {
            libc::kill(*p, STOP_RUN);
        }
    }
    let until = Instant::now() + STOP_GRACE;
    while asked.iter().any(|p| live_child(*p)) && Instant::now() < until {
        thread::sleep(Duration::from_millis(2));
    }
    for p in pgids.iter().filter(|p| **p > 0) {
        // SAFETY: kill(2) with a negative pid signals the process group we created.
        unsafe {
            libc::kill(-*p, libc::SIGKILL);
        }
    }
}

/// Held from a child's spawn until it is in [`LIVE`], and while a run's end kills adopted
/// orphans: a child another thread has just started is not an orphan.
static SPAWNING: Mutex<()> = Mutex::new(());

/// Hold this around spawning a child and [`track`]ing it (see [`SPAWNING`]).
pub(crate) fn spawn_guard() -> std::sync::MutexGuard<'static, ()> {
    SPAWNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether [`become_subreaper`] succeeded.
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// For the CLI modes: make this process the child subreaper (`PR_SET_CHILD_SUBREAPER`), so
/// orphans of its children are reparented here rather than to init, where [`kill_all`] finds
/// them. Not for the TUI: a clipboard helper (xclip, wl-copy) forks a server meant to outlive it.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl(2) with integer arguments.
    let ok = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) } == 0;
    SUBREAPER.store(ok, Ordering::SeqCst);
    ok
}

/// This process's children: `/proc/self/task/*/children`.
fn children() -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(list) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

/// Is `pid` a zombie (`Z` in /proc/PID/stat, after the command name's last `)`)?
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Kill and reap the orphans reparented to this process (children it did not start: not the
/// leader of a run in progress), again for those that appear as their parents die.
fn kill_adopted() {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return;
    }
    let ours: Vec<i32> = LIVE
        .lock()
        .map(|l| l.iter().map(|(p, _)| *p).collect())
        .unwrap_or_default();
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        let mut alive = 0;
        for pid in children().into_iter().filter(|p| !ours.contains(p)) {
            if !is_zombie(pid) {
                // SAFETY: kill(2) on a child of this process (an orphan it adopted).
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                alive += 1;
            }
            // SAFETY: waitpid(2) on our own child, not blocking; reaps it once it is dead.
            unsafe {
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
        if alive == 0 || Instant::now() >= until {
            return;
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// Kill every run still in progress (their groups and every process carrying their run id).
pub fn kill_all() {
    // No child was ever started: nothing to look for (and no /proc scan on every exit).
    if SEQ.load(Ordering::SeqCst) == 0 {
        return;
    }
    let live: Vec<(i32, String)> = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
    let groups: Vec<i32> = live.iter().map(|(p, _)| *p).collect();
    stop_runs(&groups);
    let mine = format!("{}-", std::process::id());
    kill_marked(&|id| id.starts_with(&mine));
    if let Ok(mut l) = LIVE.lock() {
        l.clear();
    }
    kill_adopted();
}

/// Kills the run's tree when dropped, so a panic in the middle of a run leaves nothing behind.
struct TreeGuard {
    pgid: i32,
    run_id: String,
}

impl Drop for TreeGuard {
    fn drop(&mut self) {
        kill_tree(self.pgid, &self.run_id);
        if let Ok(mut l) = LIVE.lock() {
            l.retain(|(p, _)| *p != self.pgid);
        }
    }
}

/// A new run id (`<tool pid>-<n>`) for a child started outside [`run_with_timeout`].
pub(crate) fn new_run_id() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::SeqCst)
    )
}

/// A child started elsewhere (the P2P probe's), tracked like this module's own runs: while the
/// value lives, [`kill_all`] (signal, panic, exit) takes its group and every process carrying
/// `run_id` (which the caller put in the child's environment as [`RUN_ID_VAR`]); dropping it
/// kills them too.
pub struct Tracked {
    _guard: TreeGuard,
}

/// Track the process group `pgid` whose processes carry `run_id` (see [`Tracked`]).
pub(crate) fn track(pgid: i32, run_id: String) -> Tracked {
    if let Ok(mut l) = LIVE.lock() {
        l.push((pgid, run_id.clone()));
    }
    Tracked {
        _guard: TreeGuard { pgid, run_id },
    }
}

/// Write end of the pipe the signal handler writes to (-1: not installed).
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::SeqCst);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; `b` lives for the call.
        unsafe {
            libc::write(fd, (&b as *const u8).cast(), 1);
        }
    }
}

/// The process group that SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to instead of
/// ending the tool (0: none). Set by `run` while its launch runs ([`forward_signals_to`]).
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

/// Forward the signals [`install_signal_cleanup`] catches to process group `pgid` (0: stop
/// forwarding; they end the tool again, children killed).
pub(crate) fn forward_signals_to(pgid: i32) {
    FORWARD_TO.store(pgid.max(0), Ordering::SeqCst);
}

/// For the CLI modes: on SIGINT, SIGTERM, SIGHUP or SIGQUIT kill every child tree, then die of
/// the same signal (or, while [`forward_signals_to`] names a group, send it there). A signal
/// whose disposition is not the default (ignored, or handled by someone else, as the TUI does)
/// is left alone. Returns whether anything was installed.
pub fn install_signal_cleanup() -> bool {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return false;
    }
    let (rd, wr) = (fds[0], fds[1]);
    SIGNAL_PIPE.store(wr, Ordering::SeqCst);
    let mut installed = false;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: plain sigaction calls on zeroed structs; the handler only writes to a pipe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            if libc::sigaction(sig, &act, std::ptr::null_mut()) == 0 {
                installed = true;
            }
        }
    }
    if !installed {
        return false;
    }
    thread::spawn(move || {
        let mut b = 0u8;
        loop {
            // SAFETY: read(2) of one byte into `b`.
            let n = unsafe { libc::read(rd, (&mut b as *mut u8).cast(), 1) };
            if n == 1 {
                // `run` wraps a launch: the signal is the launch's to act on (it ends, and
                // its status is passed through), not the doctor's.
                let group = FORWARD_TO.load(Ordering::SeqCst);
                if group > 0 {
                    // SAFETY: kill(2) with a negative pid signals the group `run` created.
                    unsafe {
                        libc::kill(-group, libc::c_int::from(b));
                    }
                    continue;
                }
                break;
            }
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        kill_all();
        let sig = libc::c_int::from(b);
        // SAFETY: back to the default action, then the same signal: the tool ends as it would
        // have without the handler (exit status "killed by SIGINT" and so on).
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        std::process::exit(128 + sig);
    });
    true
}

/// Set `cmd` up as a run's leader: its own process group, `run_id` in its environment, and a
/// supervisor ([`supervise`]) between this process and the command, which outlives a SIGKILL
/// of this process and then kills every descendant of the run. Every child the tool starts is
/// set up here (through [`run_with_timeout`], [`spawn_wrapped`], or directly, as the P2P probe
/// does before [`track`]ing it); end such a run with [`stop_runs`], not a bare group kill.
pub(crate) fn own_group(cmd: &mut Command, run_id: &str) {
    // SAFETY: getpid(2) cannot fail.
    let parent = unsafe { libc::getpid() };
    cmd.env(RUN_ID_VAR, run_id).process_group(0);
    // SAFETY: between fork and exec only async-signal-safe calls (prctl, getppid, fork,
    // waitpid, kill, open, read, close, _exit); `supervise` allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before prctl took effect: nobody will ever read our output.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            supervise(parent);
            Ok(())
        });
    }
}

/// The signal the kernel sends the supervisor when this process dies (`PR_SET_PDEATHSIG`).
const DOCTOR_GONE: libc::c_int = libc::SIGUSR2;

/// The signal that asks a supervisor to end its run now ([`stop_runs`]): it kills every
/// process below it and exits.
const STOP_RUN: libc::c_int = libc::SIGUSR1;

/// In the forked child of a run, before exec: become the child subreaper and fork. The new
/// child returns (and execs the command, in the same process group, stdio as set up); this
/// process stays behind as the command's parent and never returns. It ignores the signals the
/// doctor forwards to the group (they are the command's), waits for the command, and when the
/// command ends *or the doctor dies* (even by SIGKILL) kills every process left below it:
/// as a subreaper every orphan of the run, `setsid` and `env -i` ones included, is its child,
/// so killing its children over and over until none is left takes the whole tree. Then it
/// ends as the command ended (the same exit code, or the same signal), so the doctor reads
/// the command's status from it. Where the subreaper or the fork is refused, the command is
/// exec'd directly as before.
///
/// # Safety
/// Only between fork and exec, in a process this module forked; calls only async-signal-safe
/// functions and allocates nothing.
unsafe fn supervise(doctor: libc::pid_t) {
    // SAFETY: prctl(2), getpid(2), sigprocmask(2) and fork(2) with plain arguments.
    unsafe {
        // Blocked from before the fork, so a stop sent as soon as the spawn returns waits for
        // the supervisor's sigtimedwait instead of killing it; the command gets it unblocked.
        let mut stop: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut stop);
        libc::sigaddset(&mut stop, STOP_RUN);
        libc::sigprocmask(libc::SIG_BLOCK, &stop, std::ptr::null_mut());
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) != 0 {
            libc::sigprocmask(libc::SIG_UNBLOCK, &stop, std::ptr::null_mut());
            return;
        }
        let me = libc::getpid();
        match libc::fork() {
            0 => {
                libc::sigprocmask(libc::SIG_UNBLOCK, &stop, std::ptr::null_mut());
                // The command: killed by the kernel if the supervisor dies.
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                if libc::getppid() != me {
                    libc::_exit(1);
                }
            }
            pid if pid > 0 => supervisor(doctor, pid),
            _ => {
                // No fork: the command runs here, not a subreaper (it would collect zombies).
                libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0 as libc::c_ulong, 0, 0, 0);
                libc::sigprocmask(libc::SIG_UNBLOCK, &stop, std::ptr::null_mut());
            }
        }
    }
}

/// The supervisor's life (see [`supervise`]); `command` is the pid of the command it forked.
///
/// # Safety
/// As [`supervise`].
unsafe fn supervisor(doctor: libc::pid_t, command: libc::pid_t) -> ! {
    // SAFETY: async-signal-safe calls on this process's own descriptors, signals and children.
    unsafe {
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(s, libc::SIG_IGN);
        }
        // Hold none of the run's pipes (the doctor reads its output to the end; std's
        // exec-error pipe must close for the spawn to return) and no terminal.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            if null >= 0 {
                libc::dup2(null, fd);
            } else {
                libc::close(fd);
            }
        }
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            0,
        ) != 0
        {
            for fd in 3..65536 {
                libc::close(fd);
            }
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, DOCTOR_GONE);
        libc::sigaddset(&mut set, STOP_RUN);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            DOCTOR_GONE as libc::c_ulong,
            0,
            0,
            0,
        );
        let mut ended: Option<libc::c_int> = None;
        loop {
            loop {
                let mut st = 0;
                let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
                if r <= 0 {
                    break;
                }
                if r == command {
                    ended = Some(st);
                }
            }
            if ended.is_some() || libc::getppid() != doctor {
                break;
            }
            // Blocked above, so a SIGCHLD or the doctor's death since the last look is
            // pending and ends the wait at once; the second is only a safety net.
            let t = libc::timespec {
                tv_sec: 1,
                tv_nsec: 0,
            };
            // The doctor asks for the run's end (a timeout, its own exit): stop waiting.
            if libc::sigtimedwait(&set, std::ptr::null_mut(), &t) == STOP_RUN {
                break;
            }
        }
        kill_every_child();
        match ended {
            Some(st) if libc::WIFEXITED(st) => libc::_exit(libc::WEXITSTATUS(st)),
            Some(st) if libc::WIFSIGNALED(st) => {
                let sig = libc::WTERMSIG(st);
                libc::signal(sig, libc::SIG_DFL);
                let mut one: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut one);
                libc::sigaddset(&mut one, sig);
                libc::sigprocmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
                libc::kill(libc::getpid(), sig);
                libc::_exit(128 + sig)
            }
            // The doctor is gone: nobody reads this status.
            _ => libc::_exit(137),
        }
    }
}

/// Kill this process's children until it has none: a subreaper adopts the children of each
/// one that dies, so this takes the whole tree below it. Async-signal-safe, no allocation.
///
/// # Safety
/// Only in the supervisor (single-threaded, a subreaper).
unsafe fn kill_every_child() {
    let mut buf = [0u8; 4096];
    // SAFETY: open/read/close into a stack buffer, kill/waitpid on this process's children.
    unsafe {
        loop {
            let fd = libc::open(
                c"/proc/thread-self/children".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            if fd >= 0 {
                let mut pid: libc::pid_t = 0;
                loop {
                    let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                    if n <= 0 {
                        break;
                    }
                    for &b in &buf[..n as usize] {
                        if b.is_ascii_digit() {
                            pid = pid
                                .saturating_mul(10)
                                .saturating_add(libc::pid_t::from(b - b'0'));
                        } else {
                            if pid > 0 {
                                libc::kill(pid, libc::SIGKILL);
                            }
                            pid = 0;
                        }
                    }
                }
                if pid > 0 {
                    libc::kill(pid, libc::SIGKILL);
                }
                libc::close(fd);
            }
            // One child reaped (its own children are ours by then), or none left.
            let r = libc::waitpid(-1, std::ptr::null_mut(), 0);
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                return;
            }
        }
    }
}

/// A launch started by [`spawn_wrapped`]: the child (the run's supervisor, see [`supervise`]),
/// and the tracking that kills its tree (group and run id) when dropped, on a signal, a panic
/// or the mode's end.
pub struct Wrapped {
    pub child: std::process::Child,
    pub pgid: i32,
    pub run_id: String,
    /// The command's own pid (the supervisor's child; the supervisor's pid where it could not
    /// fork): the root of the launch's processes for reading their environment.
    pub launch: i32,
    _tracked: Tracked,
}

/// Start `cmd` as `run`'s launch: in its own process group with a run id, tracked like the
/// runs of [`run_with_timeout`]; stdio as the caller set it. A spawn error is returned as is
/// (its kind says not found / not executable).
pub(crate) fn spawn_wrapped(mut cmd: Command) -> std::io::Result<Wrapped> {
    let run_id = new_run_id();
    own_group(&mut cmd, &run_id);
    let spawning = spawn_guard();
    let child = cmd.spawn()?;
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let tracked = track(pgid, run_id.clone());
    drop(spawning);
    // The spawn returned after the command's exec succeeded, so the supervisor's child exists.
    let launch = std::fs::read_to_string(format!("/proc/{pgid}/task/{pgid}/children"))
        .ok()
        .and_then(|c| c.split_whitespace().next().and_then(|p| p.parse().ok()))
        .unwrap_or(pgid);
    Ok(Wrapped {
        child,
        pgid,
        run_id,
        launch,
        _tracked: tracked,
    })
}

/// `pid` and its descendants now (`/proc/PID/task/*/children`, breadth first). A descendant
/// that left the tree (its parent died) is not found here; it carries the run id.
pub(crate) fn process_tree(pid: i32) -> Vec<i32> {
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() && out.len() < 4096 {
        let p = out[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) {
            for t in tasks.flatten() {
                if let Ok(list) = std::fs::read_to_string(t.path().join("children")) {
                    for c in list
                        .split_whitespace()
                        .filter_map(|c| c.parse::<i32>().ok())
                    {
                        if !out.contains(&c) {
                            out.push(c);
                        }
                    }
                }
            }
        }
        i += 1;
    }
    out
}

/// Reap the orphans reparented to this process (subreaper) that have died, leaving the
/// leaders of runs in progress to their own waits.
pub(crate) fn reap_adopted() {
    if !SUBREAPER.load(Ordering::SeqCst) {
        return;
    }
    let _spawning = spawn_guard();
    let ours: Vec<i32> = LIVE
        .lock()
        .map(|l| l.iter().map(|(p, _)| *p).collect())
        .unwrap_or_default();
    for pid in children().into_iter().filter(|p| !ours.contains(p)) {
        if is_zombie(pid) {
            // SAFETY: waitpid(2) on our own dead child, not blocking.
            unsafe {
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
    }
}

/// Run `cmd` (stdin closed, stdout/stderr captured) and wait at most `timeout`.
pub(crate) fn run_with_timeout(mut cmd: Command, timeout: Duration) -> RunOutput {
    let start = Instant::now();
    let run_id = new_run_id();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    own_group(&mut cmd, &run_id);
    let spawning = spawn_guard();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return RunOutput {
                ending: Ending::SpawnFailed(e.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                elapsed: start.elapsed(),
            };
        }
    };
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    if let Ok(mut l) = LIVE.lock() {
        l.push((pgid, run_id.clone()));
    }
    drop(spawning);
    let _guard = TreeGuard {
        pgid,
        run_id: run_id.clone(),
    };
    let over = Arc::new(AtomicBool::new(false));
    let out = child.stdout.take().map(|r| reader(r, Arc::clone(&over)));
    let err = child.stderr.take().map(|r| reader(r, Arc::clone(&over)));
    let deadline = start + timeout;
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                break match (status.code(), status.signal()) {
                    (Some(c), _) => Ending::Exited(Some(c)),
                    (None, Some(s)) => Ending::Killed(s),
                    (None, None) => Ending::Exited(None),
                };
            }
            Ok(None) => {}
            Err(e) => break Ending::SpawnFailed(format!("waiting for the child failed: {e}")),
        }
        let stop = if over.load(Ordering::SeqCst) {
            Some(Ending::OutputLimit)
        } else if Instant::now() >= deadline {
            Some(Ending::TimedOut)
        } else {
            None
        };
        if let Some(why) = stop {
            kill_tree(pgid, &run_id);
            let _ = child.kill();
            let _ = child.wait();
            break why;
        }
        thread::sleep(Duration::from_millis(5));
    };
    // Anything the child started goes too, even after a normal exit (the guard does it again
    // on the way out, which also covers a panic above). Then the pipes close and the readers
    // finish with what the child wrote last.
    kill_tree(pgid, &run_id);
    // Orphans that shed both the group and the run id came back to us (subreaper); they are
    // this run's when no other run is in progress.
    let _ = child.wait();
    let spawning = spawn_guard();
    if LIVE.lock().is_ok_and(|l| l.iter().all(|(p, _)| *p == pgid)) {
        kill_adopted();
    }
    drop(spawning);
    let until = Instant::now() + Duration::from_millis(500);
    let stdout = out.as_ref().map(|r| take(r, until)).unwrap_or_default();
    let stderr = err.as_ref().map(|r| take(r, until)).unwrap_or_default();
    RunOutput {
        ending,
        stdout,
        stderr,
        elapsed: start.elapsed(),
    }
}

/// The last non-empty line of `text`, shortened for a one-line reason.
pub(crate) fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    short(line, 200)
}

/// `s` cut to at most `max` characters.
pub fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo hello; echo oops >&2; exit 3"]);
        let r = run_with_timeout(c, Duration::from_secs(5));
        assert_eq!(r.ending, Ending::Exited(Some(3)));
        assert_eq!(r.stdout.trim(), "hello");
        assert_eq!(r.stderr.trim(), "oops");
    }

    #[test]
    fn kills_at_the_deadline_and_keeps_partial_output() {
        let mut c = Command::new("sh");
        c.args(["-c", "echo early; sleep 30"]);
        let r = run_with_timeout(c, Duration::from_millis(300));
        assert_eq!(r.ending, Ending::TimedOut);
        assert_eq!(r.stdout.trim(), "early");
        assert!(r.elapsed < Duration::from_secs(2), "{:?}", r.elapsed);
    }

    fn alive(pid: i32) -> bool {
        // A zombie (dead, not yet reaped by its new parent) counts as gone.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
            .unwrap_or(false)
    }

    fn wait_gone(pid: i32) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if !alive(pid) {
                return true;
            }
            thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_setsid_grandchild_does_not_survive_the_timeout_or_a_normal_exit() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (script, timeout) in [
            // Leaves a grandchild in a new session, then hangs: killed at the deadline.
            ("setsid sleep 300 & echo $! > \"$1\"; sleep 300", 400),
            // Leaves one and exits at once.
            ("setsid sleep 300 & echo $! > \"$1\"; exit 0", 5000),
        ] {
            let pidfile = dir.path().join("pid");
            let _ = std::fs::remove_file(&pidfile);
            let mut c = Command::new("bash");
            c.args(["-c", script, "x"]).arg(&pidfile);
            let r = run_with_timeout(c, Duration::from_millis(timeout));
            let pid: i32 = std::fs::read_to_string(&pidfile)
                .expect("pid file")
                .trim()
                .parse()
                .expect("pid");
            assert!(wait_gone(pid), "grandchild {pid} survived ({:?})", r.ending);
        }
    }

    #[test]
    fn a_flood_is_cut_at_the_cap_and_stopped() {
        let mut c = Command::new("sh");
        c.args(["-c", "yes 0123456789abcdef"]);
        let r = run_with_timeout(c, Duration::from_secs(30));
        assert_eq!(r.ending, Ending::OutputLimit);
        assert!(r.elapsed < Duration::from_secs(10), "{:?}", r.elapsed);
        assert!(r.stdout.len() < MAX_OUTPUT + 200, "{}", r.stdout.len());
        assert!(r.stdout.ends_with("more bytes dropped]\n"), "note missing");
        assert!(r.ending.describe().contains("more than 4 MiB"));
    }

    #[test]
    fn endings_in_plain_words() {
        let mut c = Command::new("sh");
        c.args(["-c", "kill -SEGV $$"]);
        let r = run_with_timeout(c, Duration::from_secs(5));
        assert_eq!(r.ending, Ending::Killed(libc::SIGSEGV));
        assert_eq!(r.ending.describe(), "was killed by signal 11 (SIGSEGV)");
        assert_eq!(Ending::Exited(Some(3)).describe(), "exited with code 3");
    }

    #[test]
    fn missing_program_is_a_spawn_failure() {
        let r = run_with_timeout(
            Command::new("/nonexistent/sm120-doctor-test"),
            Duration::from_secs(1),
        );
        assert!(matches!(r.ending, Ending::SpawnFailed(_)));
    }

    #[test]
    fn shortening() {
        assert_eq!(short("abcdef", 3), "abc…");
        assert_eq!(last_line("a\nb\n\n"), "b");
    }
}
