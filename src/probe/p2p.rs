//! The functional peer-to-peer probe (`probe p2p`): for every GPU pair of the tensor-parallel
//! group, write a pattern from one GPU to the other through the CUDA driver API, read every byte
//! back, and time it — in a child process under a hard time limit, so a fabric that swallows
//! peer-to-peer traffic shows as "hung after N ms in STEP" instead of hanging the tool.
//!
//! The child is this executable re-run with the hidden `__p2p-child` subcommand
//! ([`super::p2p_child`]); it prints one JSON event per line ([`ChildEvent`]) *before* each step
//! that can block, so the parent knows where it stopped. The child runs under a run supervisor
//! in its own process group (`collect::run::own_group`), and the whole run — descendants that
//! left the group and cleared their environment (`setsid env -i`) included — is killed at the
//! time limit, on Ctrl-C / SIGTERM / SIGHUP (when those have their default action), and when the
//! parent dies, even by SIGKILL. Tests swap the child for scripts ([`ChildProgram`]).

use crate::collect::run;
use crate::snapshot::{
    P2pDevice, P2pDirection, P2pOutcome, P2pPair, P2pProbe, Probed, Reason, ReasonCode,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// The hidden subcommand that runs the child side.
pub const CHILD_SUBCOMMAND: &str = "__p2p-child";

/// How the copies are made, for the record.
pub const METHOD: &str = "CUDA driver API, peer access enabled both ways (cuCtxEnablePeerAccess); \
push = cuMemcpyPeerAsync on the source GPU's stream, pull = cuMemcpyDtoDAsync of the peer-mapped \
source pointer on the destination GPU's stream (the destination's copy engine reads the peer; no \
kernel); every byte of one copy per direction and method read back and compared; bandwidth from \
CUDA events over the timed copies; latency = median of 11 eight-byte copies";

/// Which GPUs to pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuSelection {
    /// Every GPU the CUDA driver sees (after `CUDA_VISIBLE_DEVICES`).
    All,
    /// These CUDA indices.
    List(Vec<u32>),
}

impl GpuSelection {
    /// The `--gpus` argument the child gets.
    pub fn arg(&self) -> String {
        match self {
            GpuSelection::All => "all".into(),
            GpuSelection::List(l) => l.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        }
    }
}

/// Parse `all` or `0,1,3`: at least two distinct indices.
pub(crate) fn parse_gpus(s: &str) -> Result<GpuSelection, String> {
    if s.trim() == "all" {
        return Ok(GpuSelection::All);
    }
    let mut out: Vec<u32> = Vec::new();
    for part in s.split(',') {
        let t = part.trim();
        let n: u32 = t
            .parse()
            .map_err(|_| format!("{t:?} is not a GPU index (expected e.g. 0,1)"))?;
        if out.contains(&n) {
            return Err(format!("GPU {n} is listed twice"));
        }
        out.push(n);
    }
    if out.len() < 2 {
        return Err("a pair needs at least two GPUs (e.g. 0,1)".into());
    }
    Ok(GpuSelection::List(out))
}

/// Every unordered pair of `gpus`, in order.
pub(crate) fn pairs_of(gpus: &[u32]) -> Vec<(u32, u32)> {
    let mut p = Vec::new();
    for (i, &a) in gpus.iter().enumerate() {
        for &b in &gpus[i + 1..] {
            p.push((a, b));
        }
    }
    p
}

/// The child program: a path and its leading arguments (the probe adds `--gpus`, `--bytes`,
/// `--iterations`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildProgram {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl ChildProgram {
    /// This executable with the hidden child subcommand.
    pub(crate) fn this_executable() -> Result<ChildProgram, String> {
        std::env::current_exe()
            .map(|program| ChildProgram {
                program,
                args: vec![CHILD_SUBCOMMAND.into()],
            })
            .map_err(|e| format!("cannot find this executable to run the probe child: {e}"))
    }
}

/// What to probe and how.
#[derive(Debug, Clone)]
pub struct P2pOptions {
    pub selection: GpuSelection,
    /// How the selection was given, for the record: `all visible GPUs`, `--gpus 0,1`, `--tp 2`.
    pub selection_label: String,
    pub bytes: u64,
    pub iterations: u32,
    /// Hard limit on the whole child.
    pub timeout: Duration,
    /// `None`: this executable's `__p2p-child`.
    pub child: Option<ChildProgram>,
    /// Ask NVML for its P2P status of each pair.
    pub nvml: bool,
    /// Print every line of the child with its arrival time to stderr.
    pub trace: bool,
}

impl P2pOptions {
    /// The probe for a tensor-parallel group: GPUs 0 to TP-1 (the ones vLLM's TP group takes)
    /// when `tp` is 2 or more, else every GPU; the other options at their defaults. What `check
    /// --probe p2p` and the TUI run.
    pub(crate) fn for_tp(tp: Option<u32>) -> P2pOptions {
        match tp.filter(|n| *n >= 2) {
            Some(n) => P2pOptions {
                selection: GpuSelection::List((0..n).collect()),
                selection_label: format!("--tp {n}"),
                ..Default::default()
            },
            None => P2pOptions::default(),
        }
    }
}

impl Default for P2pOptions {
    fn default() -> Self {
        P2pOptions {
            selection: GpuSelection::All,
            selection_label: "all visible GPUs".into(),
            bytes: 64 << 20,
            iterations: 5,
            timeout: Duration::from_secs(10),
            child: None,
            nvml: true,
            trace: false,
        }
    }
}

/// One line the child prints.
fn other_code() -> ReasonCode {
    ReasonCode::Other
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum ChildEvent {
    /// About to do something that may block. `a`/`b`: the pair, when inside one.
    Step {
        #[serde(default)]
        a: Option<u32>,
        #[serde(default)]
        b: Option<u32>,
        step: String,
    },
    /// The GPUs to be paired, as the driver sees them.
    Devices {
        devices: Vec<P2pDevice>,
    },
    PairStart {
        a: u32,
        b: u32,
    },
    /// `cuDeviceCanAccessPeer` both ways.
    Driver {
        a: u32,
        b: u32,
        can_ab: Probed<bool>,
        can_ba: Probed<bool>,
    },
    Direction {
        a: u32,
        b: u32,
        direction: P2pDirection,
    },
    /// The pair is finished; `error`: its set-up failed (peer access could not be enabled).
    PairEnd {
        a: u32,
        b: u32,
        #[serde(default)]
        error: Option<String>,
        wall_ms: f64,
    },
    /// Nothing to probe here (no driver, fewer than two GPUs): the reason.
    Skipped {
        reason: String,
        /// What kind of absence (no driver, nothing to pair); older children send none.
        #[serde(default = "other_code")]
        code: ReasonCode,
    },
    /// The probe cannot go on: the error.
    Fatal {
        error: String,
    },
    Done,
}

/// How the child ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildEnding {
    Exited(i32),
    Signalled(i32),
    /// Killed at the time limit.
    TimedOut,
    /// Said `done` and was still exiting after a short grace: its group was killed and the
    /// exit is reaped in the background.
    DoneExiting,
    SpawnFailed(String),
}

/// Everything the child printed, with the time each line arrived.
#[derive(Debug, Clone)]
pub struct ChildRun {
    /// (milliseconds since the start, line).
    pub lines: Vec<(f64, String)>,
    pub ending: ChildEnding,
    pub stderr: String,
    /// Milliseconds from the start to the end (exit or kill).
    pub end_ms: f64,
}

/// How long to wait for the child's exit after its `done` before leaving the exit (the
/// driver's teardown, about 170 ms on an H200 pair) to the background.
const DONE_GRACE: Duration = Duration::from_millis(20);

fn is_done(line: &str) -> bool {
    line.contains("\"done\"") && matches!(serde_json::from_str(line), Ok(ChildEvent::Done))
}

/// How long to wait, after the child's end, for its last output to be read from the pipes.
const PIPE_DRAIN: Duration = Duration::from_millis(500);

/// The child's process group, for the signal handler.
static CHILD_PGID: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_fatal_signal(sig: libc::c_int) {
    let pg = CHILD_PGID.load(Ordering::SeqCst);
    // SAFETY: kill, signal and raise are async-signal-safe.
    unsafe {
        // The group's leader is the run's supervisor (collect::run): asked to stop, it kills
        // every process of the run, `setsid env -i` ones too; it does the same when this
        // process dies of the signal below. A group kill would kill it first and leave those.
        if pg > 0 {
            libc::kill(pg, libc::SIGUSR1);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Handlers for SIGINT, SIGTERM and SIGHUP that kill the child's group first, installed only
/// where the action is the default one, restored on drop.
struct SignalGuard(Vec<(libc::c_int, libc::sigaction)>);

impl SignalGuard {
    fn install() -> SignalGuard {
        let mut saved = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: sigaction with valid pointers; the handler only calls async-signal-safe
            // functions.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction != libc::SIG_DFL
                {
                    continue;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_fatal_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut new.sa_mask);
                if libc::sigaction(sig, &new, std::ptr::null_mut()) == 0 {
                    saved.push((sig, old));
                }
            }
        }
        SignalGuard(saved)
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for (sig, old) in &self.0 {
            // SAFETY: restores the action saved by `install`.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
    }
}

/// End the child's run: its supervisor kills every process of it (see `collect::run`), then
/// the group is killed.
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        run::stop_runs(&[pid]);
    }
}

/// Run `cmd` under a supervisor in its own process group (everything it starts dying with the
/// run, or with this process) and collect its lines until it exits or `timeout` runs out; then
/// the whole run is killed.
pub(crate) fn run_child(mut cmd: Command, timeout: Duration) -> ChildRun {
    let start = Instant::now();
    let ms = |t: Instant| t.duration_since(start).as_secs_f64() * 1000.0;
    // The CLI's signal cleanup and panic hook (collect::run) know this child by its run id, so
    // a Ctrl-C takes its whole group even when this module's own handler is not installed.
    let run_id = run::new_run_id();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    run::own_group(&mut cmd, &run_id);
    let guard = SignalGuard::install();
    let spawning = run::spawn_guard();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ChildRun {
                lines: Vec::new(),
                ending: ChildEnding::SpawnFailed(e.to_string()),
                stderr: String::new(),
                end_ms: ms(Instant::now()),
            };
        }
    };
    let pid = child.id();
    let mut tracked = Some(run::track(i32::try_from(pid).unwrap_or(0), run_id));
    drop(spawning);
    CHILD_PGID.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);

    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    if let Some(out) = child.stdout.take() {
        thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
    }
    let err_buf = Arc::new(Mutex::new(Vec::<u8>::new()));
    // Closed when the stderr reader has seen the end of the pipe.
    let (err_done_tx, err_done_rx) = mpsc::channel::<()>();
    if let Some(mut err) = child.stderr.take() {
        let buf = Arc::clone(&err_buf);
        thread::spawn(move || {
            let _done = err_done_tx;
            let mut chunk = [0u8; 4096];
            while let Ok(n) = err.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut b) = buf.lock() {
                    b.extend_from_slice(&chunk[..n]);
                    // Keep the last 64 KiB.
                    let len = b.len();
                    if len > 65_536 {
                        b.drain(..len - 65_536);
                    }
                }
            }
        });
    }

    let deadline = start + timeout;
    let mut lines = Vec::new();
    let mut stdout_open = true;
    // When the child said `done`: from then on only its exit (the driver's teardown) is left.
    let mut done_at: Option<Instant> = None;
    let mut killed_at: Option<Instant> = None;
    let ending = loop {
        let limit = match done_at {
            Some(d) => deadline.min(d + DONE_GRACE),
            None => deadline,
        };
        if stdout_open {
            match rx.recv_timeout(limit.saturating_duration_since(Instant::now())) {
                Ok((t, l)) => {
                    if done_at.is_none() && is_done(&l) {
                        done_at = Some(t);
                    }
                    lines.push((ms(t), l));
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => stdout_open = false,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                break match (status.code(), status.signal()) {
                    (Some(c), _) => ChildEnding::Exited(c),
                    (None, Some(s)) => ChildEnding::Signalled(s),
                    (None, None) => ChildEnding::Exited(-1),
                };
            }
            Ok(None) => {}
            Err(e) => break ChildEnding::SpawnFailed(format!("waiting for the child failed: {e}")),
        }
        let now = Instant::now();
        if now >= deadline && done_at.is_none() {
            killed_at = Some(now);
            kill_group(pid);
            // Reaping a killed CUDA process waits for the driver's teardown: not part of the
            // time the child was given.
            let _ = child.kill();
            let _ = child.wait();
            break ChildEnding::TimedOut;
        }
        if done_at.is_some() && now >= limit {
            // The work is reported; the exit is left to finish (and be reaped) in the
            // background, the group killed so nothing of it stays behind.
            killed_at = Some(now);
            // The supervisor's stop waits for the exit; the tracking goes along, so its end
            // does not kill the supervisor in the middle.
            let tracked = tracked.take();
            thread::spawn(move || {
                kill_group(pid);
                let _ = child.wait();
                drop(tracked);
            });
            break ChildEnding::DoneExiting;
        }
        if !stdout_open {
            thread::sleep(Duration::from_millis(2));
        }
    };
    let end_ms = ms(killed_at.unwrap_or_else(Instant::now));
    // Anything left in the child's group goes too, even after a normal exit (the background
    // thread does it after `done`).
    if tracked.is_some() {
        kill_group(pid);
    }
    drop(tracked);
    CHILD_PGID.store(0, Ordering::SeqCst);
    drop(guard);
    // What the child wrote just before the end: its group is gone, so both pipes close and the
    // readers finish at once; the bound only guards a descendant that escaped the group.
    // After `done` everything needed has arrived, and the exiting child may hold its pipes
    // through the driver's teardown: do not wait for them then.
    let drain_until = Instant::now()
        + if done_at.is_some() {
            Duration::ZERO
        } else {
            PIPE_DRAIN
        };
    while let Ok((t, l)) = rx.recv_timeout(drain_until.saturating_duration_since(Instant::now())) {
        lines.push((ms(t), l));
    }
    let _ = err_done_rx.recv_timeout(drain_until.saturating_duration_since(Instant::now()));
    let stderr = err_buf
        .lock()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    ChildRun {
        lines,
        ending,
        stderr,
        end_ms,
    }
}

/// `exited 0`, `killed by signal 11 (SIGSEGV)`, `killed at the time limit (10 s)`.
pub(crate) fn describe_ending(e: &ChildEnding, timeout: Duration) -> String {
    match e {
        ChildEnding::Exited(c) => format!("exited {c}"),
        ChildEnding::Signalled(s) => {
            let name = match *s {
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGABRT => " (SIGABRT)",
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGBUS => " (SIGBUS)",
                libc::SIGTERM => " (SIGTERM)",
                _ => "",
            };
            format!("killed by signal {s}{name}")
        }
        ChildEnding::TimedOut => format!("killed at the time limit ({})", secs(timeout)),
        ChildEnding::SpawnFailed(e) => format!("could not be started: {e}"),
        ChildEnding::DoneExiting => "finished (its exit left to the background)".into(),
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

fn last_stderr(s: &str) -> String {
    let l = crate::collect::run::last_line(s);
    if l.is_empty() {
        "nothing on stderr".into()
    } else {
        format!("stderr: {l}")
    }
}

/// A pair as its events built it.
#[derive(Debug, Default)]
struct Partial {
    can_ab: Option<Probed<bool>>,
    can_ba: Option<Probed<bool>>,
    directions: Vec<P2pDirection>,
    start_ms: f64,
    /// (set-up error, wall ms) once finished.
    end: Option<(Option<String>, f64)>,
    /// The last step inside the pair and when it began.
    step: Option<(String, f64)>,
}

/// What the child's output comes to.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembled {
    pub devices: Vec<P2pDevice>,
    pub pairs: Probed<Vec<P2pPair>>,
    pub ending: String,
    /// When the `done` line arrived, milliseconds after the start.
    pub done_ms: Option<f64>,
}

/// Build the pairs from the child's events and how it ended (pure: the same for real and fake
/// children).
pub(crate) fn assemble(run: &ChildRun, timeout: Duration) -> Assembled {
    let ending = describe_ending(&run.ending, timeout);
    if let ChildEnding::SpawnFailed(e) = &run.ending {
        return Assembled {
            devices: Vec::new(),
            pairs: Probed::failed(format!("cannot start the probe child: {e}")),
            ending,
            done_ms: None,
        };
    }
    let mut devices: Option<Vec<P2pDevice>> = None;
    let mut skipped = None;
    let mut fatal: Option<String> = None;
    let mut garbage: Option<String> = None;
    let mut partial: BTreeMap<(u32, u32), Partial> = BTreeMap::new();
    let mut last_step: Option<(String, f64)> = None;
    let mut current: Option<(u32, u32)> = None;
    let mut done_ms = None;
    for (t, line) in &run.lines {
        let ev: ChildEvent = match serde_json::from_str(line) {
            Ok(e) => e,
            Err(_) => {
                if garbage.is_none() && !line.trim().is_empty() {
                    garbage = Some(crate::collect::run::short(line.trim(), 120));
                }
                continue;
            }
        };
        match ev {
            ChildEvent::Step { a, b, step } => {
                last_step = Some((step.clone(), *t));
                if let (Some(a), Some(b)) = (a, b) {
                    partial.entry((a, b)).or_default().step = Some((step, *t));
                }
            }
            ChildEvent::Devices { devices: d } => devices = Some(d),
            ChildEvent::PairStart { a, b } => {
                current = Some((a, b));
                partial.entry((a, b)).or_default().start_ms = *t;
            }
            ChildEvent::Driver {
                a,
                b,
                can_ab,
                can_ba,
            } => {
                let p = partial.entry((a, b)).or_default();
                p.can_ab = Some(can_ab);
                p.can_ba = Some(can_ba);
            }
            ChildEvent::Direction { a, b, direction } => {
                partial
                    .entry((a, b))
                    .or_default()
                    .directions
                    .push(direction);
            }
            ChildEvent::PairEnd {
                a,
                b,
                error,
                wall_ms,
            } => {
                partial.entry((a, b)).or_default().end = Some((error, wall_ms));
                if current == Some((a, b)) {
                    current = None;
                }
            }
            ChildEvent::Skipped { reason, code } => skipped = Some(Reason::new(code, reason)),
            ChildEvent::Fatal { error } => fatal = Some(error),
            ChildEvent::Done => done_ms = Some(*t),
        }
    }
    if let Some(r) = skipped {
        return Assembled {
            devices: devices.unwrap_or_default(),
            pairs: Probed::Skipped(r),
            ending,
            done_ms,
        };
    }
    let why_ended = || match (&fatal, &garbage) {
        (Some(f), _) => f.clone(),
        (None, Some(g)) => {
            format!("the probe child {ending}; it printed something that is not an event: {g:?}")
        }
        (None, None) => format!("the probe child {ending} ({})", last_stderr(&run.stderr)),
    };
    let Some(devices) = devices else {
        let pairs = match (&run.ending, &last_step) {
            (ChildEnding::TimedOut, Some((s, t))) => Probed::failed(format!(
                "hung: still in `{s}` after {:.0} ms, before any pair was tried; killed at the time limit ({})",
                run.end_ms - t,
                secs(timeout)
            )),
            (ChildEnding::TimedOut, None) => Probed::failed(format!(
                "hung: the probe child reported nothing within the time limit ({})",
                secs(timeout)
            )),
            _ => Probed::failed(why_ended()),
        };
        return Assembled {
            devices: Vec::new(),
            pairs,
            ending,
            done_ms,
        };
    };
    let indices: Vec<u32> = devices.iter().map(|d| d.index).collect();
    let expected = pairs_of(&indices);
    if expected.is_empty() {
        return Assembled {
            devices,
            pairs: Probed::skipped("fewer than two GPUs to pair"),
            ending,
            done_ms,
        };
    }
    let mut hung_pair: Option<(u32, u32)> = None;
    let mut out = Vec::new();
    for (a, b) in expected {
        let p = partial.remove(&(a, b));
        let (functional, directions, wall_ms, can_ab, can_ba) = match p {
            None => {
                let reason = match hung_pair {
                    Some((x, y)) => {
                        format!("not tried: the probe child was killed after GPU{x} ↔ GPU{y} hung")
                    }
                    None if fatal.is_some() => format!("not tried: {}", why_ended()),
                    None => format!("not tried: the probe child {ending} first"),
                };
                (P2pOutcome::NotRun { reason }, Vec::new(), 0.0, None, None)
            }
            Some(p) => {
                let outcome = match &p.end {
                    Some((Some(err), _)) => P2pOutcome::Error { error: err.clone() },
                    Some((None, _)) => p
                        .directions
                        .iter()
                        .map(|d| &d.outcome)
                        .find(|o| **o != P2pOutcome::Ok)
                        .cloned()
                        .unwrap_or(if p.directions.is_empty() {
                            P2pOutcome::Error {
                                error: "the probe child reported no copies for this pair".into(),
                            }
                        } else {
                            P2pOutcome::Ok
                        }),
                    None => {
                        let (step, since) = p
                            .step
                            .clone()
                            .unwrap_or_else(|| ("starting the pair".into(), p.start_ms));
                        if run.ending == ChildEnding::TimedOut {
                            hung_pair = Some((a, b));
                            P2pOutcome::Hung {
                                after_ms: round1(run.end_ms - since),
                                step,
                            }
                        } else {
                            P2pOutcome::Error {
                                error: match &fatal {
                                    Some(f) => format!("{f} (during `{step}`)"),
                                    None => format!(
                                        "the probe child {ending} during `{step}` ({})",
                                        last_stderr(&run.stderr)
                                    ),
                                },
                            }
                        }
                    }
                };
                let wall = match &p.end {
                    Some((_, w)) => *w,
                    None => round1(run.end_ms - p.start_ms),
                };
                (outcome, p.directions, wall, p.can_ab, p.can_ba)
            }
        };
        let not_reported = || Probed::skipped("not reported by the probe child");
        out.push(P2pPair {
            a,
            b,
            cuda_can_access_peer_ab: can_ab.unwrap_or_else(not_reported),
            cuda_can_access_peer_ba: can_ba.unwrap_or_else(not_reported),
            nvml_p2p_read: Probed::skipped("NVML not asked"),
            nvml_p2p_write: Probed::skipped("NVML not asked"),
            functional,
            directions,
            wall_ms,
        });
    }
    Assembled {
        devices,
        pairs: Probed::Value(out),
        ending,
        done_ms,
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The command line of the child.
pub(crate) fn child_command(child: &ChildProgram, opts: &P2pOptions) -> Command {
    let mut cmd = Command::new(&child.program);
    cmd.args(&child.args)
        .arg("--gpus")
        .arg(opts.selection.arg())
        .arg("--bytes")
        .arg(opts.bytes.to_string())
        .arg("--iterations")
        .arg(opts.iterations.to_string());
    cmd
}

/// NVML's P2P (read, write) status.
pub type NvmlP2p = (Probed<bool>, Probed<bool>);

/// NVML's P2P status for a pair of PCI bus ids.
type NvmlLookup = Box<dyn Fn(&str, &str) -> NvmlP2p + Send>;

fn nvml_lookup() -> NvmlLookup {
    match crate::collect::nvml::RealNvml::open() {
        Ok(n) => Box::new(move |a: &str, b: &str| n.p2p_by_bus_id(a, b)),
        Err(reason) => {
            let r = reason.why_or("NVML unavailable");
            Box::new(move |_: &str, _: &str| {
                (Probed::skipped(r.clone()), Probed::skipped(r.clone()))
            })
        }
    }
}

/// Fill each pair's NVML fields, matching GPUs by PCI bus id (CUDA and NVML number GPUs
/// differently unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`).
pub(crate) fn add_nvml(
    devices: &[P2pDevice],
    pairs: &mut [P2pPair],
    lookup: &dyn Fn(&str, &str) -> NvmlP2p,
) {
    let bus: BTreeMap<u32, &str> = devices
        .iter()
        .filter_map(|d| d.pci_bus_id.as_deref().map(|b| (d.index, b)))
        .collect();
    for p in pairs {
        match (bus.get(&p.a), bus.get(&p.b)) {
            (Some(x), Some(y)) => {
                let (r, w) = lookup(x, y);
                p.nvml_p2p_read = r;
                p.nvml_p2p_write = w;
            }
            _ => {
                let why = "the PCI bus id of a GPU is unknown, so NVML cannot be matched";
                p.nvml_p2p_read = Probed::skipped(why);
                p.nvml_p2p_write = Probed::skipped(why);
            }
        }
    }
}

/// Run the probe.
pub fn run(opts: &P2pOptions) -> P2pProbe {
    let start = Instant::now();
    let nvml = opts.nvml.then(|| thread::spawn(nvml_lookup));
    let mut probe = P2pProbe {
        selection: opts.selection_label.clone(),
        method: METHOD.into(),
        bytes: opts.bytes,
        iterations: opts.iterations,
        timeout_ms: opts.timeout.as_secs_f64() * 1000.0,
        ..Default::default()
    };
    let child = match &opts.child {
        Some(c) => Ok(c.clone()),
        None => ChildProgram::this_executable(),
    };
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            probe.pairs = Probed::failed(e);
            probe.child_ending = "not started".into();
            probe.wall_ms = start.elapsed().as_secs_f64() * 1000.0;
            return probe;
        }
    };
    let run = run_child(child_command(&child, opts), opts.timeout);
    if opts.trace {
        for (t, l) in &run.lines {
            eprintln!("{t:9.1} ms  {l}");
        }
        eprintln!("{:9.1} ms  (child {:?})", run.end_ms, run.ending);
    }
    let a = assemble(&run, opts.timeout);
    probe.child_done_ms = a.done_ms.map(round1);
    probe.devices = a.devices;
    probe.pairs = a.pairs;
    probe.child_ending = a.ending;
    probe.child_ms = round1(run.end_ms);
    if let Some(h) = nvml {
        let lookup: NvmlLookup = h.join().unwrap_or_else(|_| {
            Box::new(|_: &str, _: &str| {
                (
                    Probed::failed("the NVML thread panicked"),
                    Probed::failed("the NVML thread panicked"),
                )
            })
        });
        if let Probed::Value(pairs) = &mut probe.pairs {
            add_nvml(&probe.devices, pairs, lookup.as_ref());
        }
    } else if let Probed::Value(pairs) = &mut probe.pairs {
        for p in pairs {
            p.nvml_p2p_read = Probed::skipped("NVML not asked (--no-nvml)");
            p.nvml_p2p_write = Probed::skipped("NVML not asked (--no-nvml)");
        }
    }
    probe.wall_ms = round1(start.elapsed().as_secs_f64() * 1000.0);
    probe
}

/// Did every pair come out `ok`? (`None`: no pair was tried — skipped or failed.)
pub fn all_ok(p: &P2pProbe) -> Option<bool> {
    p.pairs
        .value()
        .map(|v| v.iter().all(|x| x.functional == P2pOutcome::Ok))
}

fn yes_no(p: &Probed<bool>, yes: &str, no: &str) -> String {
    match p {
        Probed::Value(true) => yes.into(),
        Probed::Value(false) => no.into(),
        Probed::Skipped(r) => format!("skipped ({r})"),
        Probed::Failed(e) => format!("failed ({e})"),
    }
}

/// One outcome in words (the snapshot model's wording).
pub(crate) fn outcome_text(o: &P2pOutcome) -> String {
    o.describe()
}

/// Plain-text table of the result (restates what was measured).
pub fn render_text(p: &P2pProbe) -> String {
    let mut s = format!(
        "P2P probe — GPUs: {}; {} MiB per copy, {} timed copies; time limit {}\n",
        p.selection,
        p.bytes >> 20,
        p.iterations,
        secs(Duration::from_secs_f64(p.timeout_ms / 1000.0))
    );
    for d in &p.devices {
        s.push_str(&format!(
            "  GPU{}  {}  {}\n",
            d.index,
            d.name,
            d.pci_bus_id.as_deref().unwrap_or("(bus id unknown)")
        ));
    }
    match &p.pairs {
        Probed::Value(pairs) => {
            for x in pairs {
                s.push_str(&format!(
                    "GPU{} ↔ GPU{}: {}\n",
                    x.a,
                    x.b,
                    outcome_text(&x.functional)
                ));
                s.push_str(&format!(
                    "  driver reports: cuDeviceCanAccessPeer {}→{} {}, {}→{} {}; NVML P2P read {}, write {}\n",
                    x.a,
                    x.b,
                    yes_no(&x.cuda_can_access_peer_ab, "yes", "no"),
                    x.b,
                    x.a,
                    yes_no(&x.cuda_can_access_peer_ba, "yes", "no"),
                    yes_no(&x.nvml_p2p_read, "OK", "not OK"),
                    yes_no(&x.nvml_p2p_write, "OK", "not OK"),
                ));
                for d in &x.directions {
                    let bw = d
                        .gb_per_s
                        .map(|g| format!("{g:8.1} GB/s"))
                        .unwrap_or_else(|| format!("{:>13}", "-"));
                    let lat = d
                        .latency_us
                        .map(|l| format!("latency {l:.1} µs"))
                        .unwrap_or_default();
                    s.push_str(&format!(
                        "  {:<4} {}→{}  {bw}  {lat:<18} {}\n",
                        d.method,
                        d.from,
                        d.to,
                        outcome_text(&d.outcome)
                    ));
                }
            }
        }
        Probed::Skipped(r) => s.push_str(&format!("skipped: {r}\n")),
        Probed::Failed(e) => s.push_str(&format!("failed: {e}\n")),
    }
    let done = p
        .child_done_ms
        .map(|d| format!(" (done after {d:.0} ms)"))
        .unwrap_or_default();
    s.push_str(&format!(
        "child {}, {:.0} ms{done}; whole probe {:.0} ms\n",
        p.child_ending, p.child_ms, p.wall_ms
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(ev: &ChildEvent) -> String {
        serde_json::to_string(ev).unwrap_or_default()
    }

    fn dev(i: u32) -> P2pDevice {
        P2pDevice {
            index: i,
            name: "NVIDIA H200".into(),
            pci_bus_id: Some(format!("0000:{:02x}:00.0", 0x19 + i)),
        }
    }

    fn dir(from: u32, to: u32, method: &str, outcome: P2pOutcome) -> P2pDirection {
        P2pDirection {
            from,
            to,
            method: method.into(),
            outcome,
            gb_per_s: Some(100.0),
            latency_us: Some(3.0),
        }
    }

    fn run_of(events: &[(f64, ChildEvent)], ending: ChildEnding, end_ms: f64) -> ChildRun {
        ChildRun {
            lines: events.iter().map(|(t, e)| (*t, line(e))).collect(),
            ending,
            stderr: String::new(),
            end_ms,
        }
    }

    fn step(a: u32, b: u32, s: &str) -> ChildEvent {
        ChildEvent::Step {
            a: Some(a),
            b: Some(b),
            step: s.into(),
        }
    }

    #[test]
    fn a_tp_group_selects_gpus_0_to_tp_minus_1() {
        let o = P2pOptions::for_tp(Some(4));
        assert_eq!(o.selection, GpuSelection::List(vec![0, 1, 2, 3]));
        assert_eq!(o.selection_label, "--tp 4");
        for tp in [None, Some(0), Some(1)] {
            let o = P2pOptions::for_tp(tp);
            assert_eq!(o.selection, GpuSelection::All, "{tp:?}");
            assert_eq!(o.selection_label, "all visible GPUs");
        }
        assert_eq!(P2pOptions::for_tp(Some(2)).timeout, Duration::from_secs(10));
    }

    #[test]
    fn gpu_lists() {
        assert_eq!(parse_gpus("all"), Ok(GpuSelection::All));
        assert_eq!(parse_gpus("0, 1"), Ok(GpuSelection::List(vec![0, 1])));
        assert!(parse_gpus("0").is_err());
        assert!(parse_gpus("0,0").is_err());
        assert!(parse_gpus("0,x").is_err());
        assert_eq!(GpuSelection::List(vec![2, 0]).arg(), "2,0");
        assert_eq!(pairs_of(&[0, 1, 2]), vec![(0, 1), (0, 2), (1, 2)]);
        assert!(pairs_of(&[3]).is_empty());
    }

    #[test]
    fn a_finished_pair_is_ok_and_keeps_its_numbers() {
        let ok = P2pOutcome::Ok;
        let r = run_of(
            &[
                (
                    1.0,
                    ChildEvent::Devices {
                        devices: vec![dev(0), dev(1)],
                    },
                ),
                (2.0, ChildEvent::PairStart { a: 0, b: 1 }),
                (
                    3.0,
                    ChildEvent::Driver {
                        a: 0,
                        b: 1,
                        can_ab: Probed::Value(true),
                        can_ba: Probed::Value(true),
                    },
                ),
                (
                    4.0,
                    ChildEvent::Direction {
                        a: 0,
                        b: 1,
                        direction: dir(0, 1, "push", ok.clone()),
                    },
                ),
                (
                    5.0,
                    ChildEvent::Direction {
                        a: 0,
                        b: 1,
                        direction: dir(1, 0, "push", ok.clone()),
                    },
                ),
                (
                    6.0,
                    ChildEvent::PairEnd {
                        a: 0,
                        b: 1,
                        error: None,
                        wall_ms: 4.0,
                    },
                ),
                (7.0, ChildEvent::Done),
            ],
            ChildEnding::Exited(0),
            8.0,
        );
        let a = assemble(&r, Duration::from_secs(10));
        assert_eq!(a.ending, "exited 0");
        assert_eq!(a.done_ms, Some(7.0));
        let pairs = a.pairs.value().expect("pairs");
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].functional, P2pOutcome::Ok);
        assert_eq!(pairs[0].directions.len(), 2);
        assert_eq!(pairs[0].cuda_can_access_peer_ab, Probed::Value(true));
        assert_eq!(pairs[0].wall_ms, 4.0);
    }

    #[test]
    fn a_pair_in_flight_at_the_time_limit_hung_and_the_rest_were_not_tried() {
        let r = run_of(
            &[
                (
                    1.0,
                    ChildEvent::Devices {
                        devices: vec![dev(0), dev(1), dev(2)],
                    },
                ),
                (2.0, ChildEvent::PairStart { a: 0, b: 1 }),
                (3.0, step(0, 1, "push 0→1: verified copy")),
            ],
            ChildEnding::TimedOut,
            503.0,
        );
        let a = assemble(&r, Duration::from_millis(500));
        let pairs = a.pairs.value().expect("pairs");
        assert_eq!(
            pairs[0].functional,
            P2pOutcome::Hung {
                after_ms: 500.0,
                step: "push 0→1: verified copy".into()
            }
        );
        assert!(
            matches!(&pairs[1].functional, P2pOutcome::NotRun { reason } if reason.contains("GPU0 ↔ GPU1 hung"))
        );
        assert_eq!(pairs.len(), 3);
        assert!(a.ending.contains("time limit (0.5 s)"), "{}", a.ending);
        assert!(outcome_text(&pairs[0].functional).starts_with("hung after 500 ms in `push 0→1"));
    }

    #[test]
    fn the_first_bad_direction_is_the_pairs_outcome() {
        let wrong = P2pOutcome::WrongData {
            mismatched_bytes: 10,
            first_offset: 0,
            expected: 1,
            got: 0,
        };
        let r = run_of(
            &[
                (
                    1.0,
                    ChildEvent::Devices {
                        devices: vec![dev(0), dev(1)],
                    },
                ),
                (2.0, ChildEvent::PairStart { a: 0, b: 1 }),
                (
                    4.0,
                    ChildEvent::Direction {
                        a: 0,
                        b: 1,
                        direction: dir(0, 1, "push", P2pOutcome::Ok),
                    },
                ),
                (
                    5.0,
                    ChildEvent::Direction {
                        a: 0,
                        b: 1,
                        direction: dir(1, 0, "push", wrong.clone()),
                    },
                ),
                (
                    6.0,
                    ChildEvent::PairEnd {
                        a: 0,
                        b: 1,
                        error: None,
                        wall_ms: 4.0,
                    },
                ),
            ],
            ChildEnding::Exited(0),
            8.0,
        );
        let a = assemble(&r, Duration::from_secs(10));
        assert_eq!(a.pairs.value().expect("pairs")[0].functional, wrong);
    }

    #[test]
    fn endings_without_pairs() {
        let t = Duration::from_secs(10);
        let skipped = run_of(
            &[(
                1.0,
                ChildEvent::Skipped {
                    reason: "libcuda.so not found".into(),
                    code: ReasonCode::NoDriver,
                },
            )],
            ChildEnding::Exited(0),
            2.0,
        );
        assert_eq!(
            assemble(&skipped, t).pairs,
            Probed::skipped(Reason::new(ReasonCode::NoDriver, "libcuda.so not found"))
        );
        let init_hang = run_of(
            &[(
                1.0,
                ChildEvent::Step {
                    a: None,
                    b: None,
                    step: "cuInit".into(),
                },
            )],
            ChildEnding::TimedOut,
            10_001.0,
        );
        assert!(
            matches!(assemble(&init_hang, t).pairs, Probed::Failed(e) if e.to_string().contains("`cuInit` after 10000 ms"))
        );
        let mut crashed = run_of(&[], ChildEnding::Signalled(libc::SIGSEGV), 5.0);
        crashed.stderr = "Segmentation fault\n".into();
        let a = assemble(&crashed, t);
        assert!(
            matches!(&a.pairs, Probed::Failed(e) if e.to_string().contains("SIGSEGV") && e.to_string().contains("Segmentation fault")),
            "{:?}",
            a.pairs
        );
        let mut garbage = run_of(&[], ChildEnding::Exited(0), 5.0);
        garbage.lines.push((1.0, "hello world".into()));
        assert!(
            matches!(assemble(&garbage, t).pairs, Probed::Failed(e) if e.to_string().contains("hello world"))
        );
        let spawn = ChildRun {
            lines: vec![],
            ending: ChildEnding::SpawnFailed("No such file or directory (os error 2)".into()),
            stderr: String::new(),
            end_ms: 0.0,
        };
        assert!(
            matches!(assemble(&spawn, t).pairs, Probed::Failed(e) if e.to_string().contains("cannot start"))
        );
        let one = run_of(
            &[(
                1.0,
                ChildEvent::Devices {
                    devices: vec![dev(0)],
                },
            )],
            ChildEnding::Exited(0),
            2.0,
        );
        assert!(matches!(assemble(&one, t).pairs, Probed::Skipped(_)));
    }

    #[test]
    fn a_child_that_dies_inside_a_pair_is_an_error_there() {
        let mut r = run_of(
            &[
                (
                    1.0,
                    ChildEvent::Devices {
                        devices: vec![dev(0), dev(1)],
                    },
                ),
                (2.0, ChildEvent::PairStart { a: 0, b: 1 }),
                (3.0, step(0, 1, "cuCtxEnablePeerAccess 0→1")),
            ],
            ChildEnding::Signalled(libc::SIGBUS),
            4.0,
        );
        r.stderr = "bus error\n".into();
        let a = assemble(&r, Duration::from_secs(10));
        let p = &a.pairs.value().expect("pairs")[0];
        assert!(
            matches!(&p.functional, P2pOutcome::Error { error } if error.contains("cuCtxEnablePeerAccess 0→1") && error.contains("bus error")),
            "{:?}",
            p.functional
        );
    }

    #[test]
    fn nvml_is_matched_by_bus_id() {
        let devices = vec![dev(0), dev(1)];
        let mut pairs = vec![P2pPair {
            a: 0,
            b: 1,
            cuda_can_access_peer_ab: Probed::Value(true),
            cuda_can_access_peer_ba: Probed::Value(true),
            nvml_p2p_read: Probed::skipped("x"),
            nvml_p2p_write: Probed::skipped("x"),
            functional: P2pOutcome::Ok,
            directions: vec![],
            wall_ms: 1.0,
        }];
        let seen = Mutex::new(Vec::new());
        add_nvml(&devices, &mut pairs, &|a, b| {
            if let Ok(mut s) = seen.lock() {
                s.push(format!("{a} {b}"));
            }
            (Probed::Value(true), Probed::Value(false))
        });
        assert_eq!(pairs[0].nvml_p2p_read, Probed::Value(true));
        assert_eq!(pairs[0].nvml_p2p_write, Probed::Value(false));
        assert_eq!(
            seen.lock().map(|s| s.clone()).unwrap_or_default(),
            vec!["0000:19:00.0 0000:1a:00.0"]
        );
    }
}
