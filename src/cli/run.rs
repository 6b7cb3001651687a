//! `run [OPTIONS] -- CMD ARGS…`: start a vLLM launch as a wrapper and diagnose it from what it
//! really did (issue 30).
//!
//! Why: a diagnosis after the fact guesses the launch, the engine's environment and the log.
//! Started by the doctor, all three are known: the launch is the command given, the log is
//! what it printed, and the environment is read from `/proc/PID/environ` of its own processes
//! (workers included) while they run, so it is *measured*, not this shell's.
//!
//! A wrapper must not change what it wraps: the launch gets its own process group (from
//! [`crate::collect::run::spawn_wrapped`], with the run id and parent-death signal every other
//! child gets), INT/TERM/HUP/QUIT are forwarded to that group by the one signal handler
//! ([`crate::collect::run::forward_signals_to`]), stdout and stderr go through unchanged and
//! unbuffered (chunks as read, no line buffering), and the launch's status is the doctor's
//! (128+N for signal N; 125/126/127 as env(1) uses them when there is no status to pass on).
//! The diagnosis comes after the launch's output, on stderr (or `-o FILE`).
//!
//! `--hang-after SECS`: a quiet launch (or one repeating stall warnings) is reported while it
//! still runs, and is left running: a slow compile may recover, and stopping a server is the
//! operator's call (Ctrl-C is forwarded to it). Its final status still ends the run.

use super::{Format, RunArgs};
use crate::collect::run::{self as proc_run, Wrapped};
use crate::engine::classify::LogText;
use crate::engine::classify::run_signs::HangKind;
use crate::engine::{self, Mode, plan};
use crate::input;
use crate::report::{
    self, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_RUN_FAILED, Style, sanitize::terminal_safe,
};
use crate::snapshot::{EnvOwner, Environment, HostSnapshot, Probed};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// Bytes of the newest output kept in memory for the stall check while the launch runs.
const TAIL: usize = 256 * 1024;
/// How often the launch's process tree is read for its environment.
const ENV_EVERY: Duration = Duration::from_millis(200);
/// For how long after the start the tree is read on every turn of the wait loop (20 ms).
const ENV_EARLY: Duration = Duration::from_secs(2);
/// How often the output so far is checked for repeating stall warnings.
const STALL_EVERY: Duration = Duration::from_secs(1);

/// Where the launch's output goes besides the terminal: the log file and a tail for the
/// stall check; and when it last arrived.
struct Sink {
    state: Mutex<SinkState>,
    start: Instant,
    /// Milliseconds after `start` of the last output.
    last_ms: AtomicU64,
    /// Bytes seen, both streams.
    bytes: AtomicU64,
}

struct SinkState {
    file: Option<File>,
    tail: Vec<u8>,
    error: Option<String>,
}

impl Sink {
    fn take(&self, chunk: &[u8]) {
        let now = self.start.elapsed().as_millis() as u64;
        self.last_ms.store(now, Ordering::SeqCst);
        self.bytes.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        if let Some(f) = s.file.as_mut()
            && let Err(e) = f.write_all(chunk)
        {
            // Disk full or similar: the launch goes on, unrecorded from here; said at the end.
            s.error = Some(e.to_string());
            s.file = None;
        }
        s.tail.extend_from_slice(chunk);
        if s.tail.len() > TAIL {
            let cut = s.tail.len() - TAIL;
            s.tail.drain(..cut);
        }
    }

    fn quiet_for(&self) -> Duration {
        let last = self.last_ms.load(Ordering::SeqCst);
        self.start
            .elapsed()
            .saturating_sub(Duration::from_millis(last))
    }
}

/// Copy one of the launch's streams to ours (`fd` 1 or 2) as it arrives, and into the sink.
/// Written straight to the descriptor: Rust's stdout buffers up to a newline, which would hold
/// a progress bar back.
fn pump<R: Read + Send + 'static>(mut from: R, fd: i32, sink: Arc<Sink>) -> mpsc::Receiver<()> {
    let (done_tx, done) = mpsc::channel();
    thread::spawn(move || {
        let _done = done_tx;
        // SAFETY: fd 1 and 2 stay open for the life of the process; ManuallyDrop never closes it.
        let mut out = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
        let mut out_ok = true;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    // A closed terminal or pipe on our side: keep recording, stop copying.
                    if out_ok && out.write_all(&buf[..n]).is_err() {
                        out_ok = false;
                    }
                    sink.take(&buf[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    done
}

/// The launch as one shell-quoted line, for the launch parser and the messages.
fn command_line(cmd: &[std::ffi::OsString]) -> String {
    cmd.iter()
        .map(|a| {
            let a = a.to_string_lossy();
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.into_owned()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A new log file: `--log-to FILE` (which must not exist), else a fresh name in
/// `$XDG_STATE_HOME/sm120-doctor` or the current directory. Created here, never overwritten.
fn open_log(explicit: Option<&Path>) -> Result<(PathBuf, File), String> {
    let create = |p: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
    };
    if let Some(p) = explicit {
        return match create(p) {
            Ok(f) => Ok((p.to_path_buf(), f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(format!(
                "--log-to {}: the file exists; run never overwrites a log (give a new name)",
                p.display()
            )),
            Err(e) => Err(format!("--log-to {}: cannot create it: {e}", p.display())),
        };
    }
    let dir = match std::env::var_os("XDG_STATE_HOME").filter(|v| Path::new(v).is_absolute()) {
        Some(state) => {
            let d = Path::new(&state).join("sm120-doctor");
            std::fs::create_dir_all(&d)
                .map_err(|e| format!("cannot create the log directory {}: {e}", d.display()))?;
            d
        }
        None => PathBuf::from("."),
    };
    let stamp: String = crate::collect::rfc3339(std::time::SystemTime::now())
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take(15)
        .collect();
    let pid = std::process::id();
    for n in 0..100 {
        let name = if n == 0 {
            format!("sm120-doctor-run-{stamp}-{pid}.log")
        } else {
            format!("sm120-doctor-run-{stamp}-{pid}-{n}.log")
        };
        let p = dir.join(name);
        match create(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "cannot create a log file in {}: {e} (give one with --log-to FILE)",
                    dir.display()
                ));
            }
        }
    }
    Err(format!(
        "no free log file name in {} (give one with --log-to FILE)",
        dir.display()
    ))
}

/// One process of the launch's tree, as last read.
struct Seen {
    /// Breadth-first position when first seen (a later, deeper process is the one doing the work).
    order: usize,
    info: crate::collect::processes::ProcInfo,
    env: BTreeMap<String, String>,
}

/// The launch's processes read so far, for the environment the engine really got.
#[derive(Default)]
struct Tree {
    seen: BTreeMap<u32, Seen>,
    next: usize,
}

impl Tree {
    /// Read the launch's process tree now (new processes, and ones that exec'd since).
    fn sample(&mut self, root: i32) {
        let fs = crate::collect::fs::RealFs;
        for pid in proc_run::process_tree(root) {
            let Ok(pid) = u32::try_from(pid) else {
                continue;
            };
            let Some(info) = crate::collect::processes::read_proc(&fs, pid) else {
                continue;
            };
            if self.seen.get(&pid).is_some_and(|s| s.info == info) {
                continue;
            }
            let Ok(raw) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let env = crate::collect::env::parse_environ(&String::from_utf8_lossy(&raw));
            let order = self.seen.get(&pid).map_or(self.next, |s| s.order);
            self.next += 1;
            self.seen.insert(pid, Seen { order, info, env });
        }
    }

    /// The process whose environment is the engine's: a vLLM server, else any vLLM process,
    /// else a Python process, else the last one started; the launched process last of all.
    fn engine(&self) -> Option<&Seen> {
        let by =
            |f: &dyn Fn(&Seen) -> bool| self.seen.values().filter(|s| f(s)).max_by_key(|s| s.order);
        by(&|s| s.info.is_vllm_server())
            .or_else(|| by(&|s| s.info.is_vllm()))
            .or_else(|| {
                by(&|s| {
                    s.info.comm.starts_with("python")
                        || s.info.cmdline.first().is_some_and(|a| {
                            Path::new(a)
                                .file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("python"))
                        })
                })
            })
            .or_else(|| by(&|_| true))
    }

    /// The engine's environment as measured, or the one the launch was started with when no
    /// process of it could be read (then an assumption: a script may export more).
    fn environment(&self, run_id_var: &str) -> Environment {
        match self.engine() {
            Some(s) => {
                let one_line = s
                    .info
                    .command()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let what = proc_run::short(&one_line, 80);
                let mut env = crate::collect::env::environment(
                    format!(
                        "launched process {} ({what}), read while it ran",
                        s.info.pid
                    ),
                    s.env
                        .iter()
                        .filter(|(k, _)| k.as_str() != run_id_var)
                        .map(|(k, v)| (k.clone(), v.clone())),
                );
                env.whose = Some(EnvOwner::Engine);
                env
            }
            None => {
                let mut env = crate::collect::env::environment(
                    "this shell (the environment the launch was started with; none of its \
                     processes could be read)"
                        .into(),
                    std::env::vars(),
                );
                env.whose = Some(EnvOwner::DoctorShell);
                env
            }
        }
    }
}

/// How the launch ended, for messages and the exit status.
#[derive(Debug, Clone, Copy)]
enum End {
    Code(i32),
    Signal(i32),
}

impl End {
    fn status(self) -> i32 {
        match self {
            End::Code(c) => c,
            End::Signal(s) => 128 + s,
        }
    }

    fn describe(self) -> String {
        match self {
            End::Code(c) => proc_run::Ending::Exited(Some(c)).describe(),
            End::Signal(s) => proc_run::Ending::Killed(s).describe(),
        }
    }
}

/// What the diagnosis needs besides the log.
struct Context<'a> {
    kb: &'a crate::kb::KnowledgeBase,
    host: &'a HostSnapshot,
    launch: Option<&'a crate::snapshot::Launch>,
    log_path: &'a Path,
    command: &'a str,
    args: &'a RunArgs,
}

/// Where the run stands when a diagnosis is printed.
enum Moment {
    Hang { why: String, pid: u32 },
    Ended { end: End, elapsed: Duration },
}

/// Read the log back for the engine (the last [`crate::read::LOG`] bytes of a longer one).
fn read_log(path: &Path) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let limit = crate::read::LOG.bytes;
    if len > limit {
        use std::io::Seek;
        let _ = f.seek(std::io::SeekFrom::Start(len - limit));
    }
    let mut bytes = Vec::new();
    let _ = f.take(limit).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Run the engine over the log and the measured environment; print or write the diagnosis.
fn diagnose(cx: &Context<'_>, env: Environment, moment: &Moment) {
    let mut snap = cx.host.clone();
    snap.env = Probed::Value(env);
    input::apply_launch(&mut snap, cx.launch.cloned());
    let logs = vec![LogText {
        name: crate::read::shown(cx.log_path),
        text: read_log(cx.log_path),
    }];
    let answers = engine::Answers::new();
    let d = engine::diagnose(cx.kb, &snap, &answers, &logs, Mode::Failures);
    let plan = plan::for_findings_over(cx.kb, &d, &snap, &plan::Choices::preferred(&[]), None);
    let log = cx.log_path.display();
    let headline = match moment {
        Moment::Hang { why, pid } => format!(
            "sm120-doctor: possible hang: {why}; `{}` is still running (pid {pid}), left running \
             (Ctrl-C stops it). Its output so far is in {log}.",
            cx.command
        ),
        Moment::Ended { end, elapsed } => format!(
            "sm120-doctor: `{}` {} after {:.1} s; its output is in {log}.",
            cx.command,
            end.describe(),
            elapsed.as_secs_f64()
        ),
    };
    let text = match cx.args.format {
        Format::Text => {
            let clean_exit = matches!(
                moment,
                Moment::Ended {
                    end: End::Code(0),
                    ..
                }
            );
            // On success, one line: the output shows no class, failure or hang. Host findings
            // are counted, not shown (the launch worked; `check` shows them).
            let c = &d.classification;
            if clean_exit && c.classes.is_empty() && !c.run.shows_failure() {
                let host = d
                    .findings
                    .iter()
                    .filter(|f| f.severity >= crate::kb::schema::Severity::Warning)
                    .count();
                format!(
                    "{headline}\nsm120-doctor: nothing of the SM120 failure family seen in its output \
                     (environment: {}); {host} host finding(s) at warning or above; the full walk: \
                     sm120-doctor check --log {log}\n",
                    env_source(&snap)
                )
            } else {
                let style = if cx.args.output.is_some() {
                    Style::plain()
                } else {
                    Style::detect()
                };
                format!(
                    "{headline}\n\n{}",
                    report::check::check_text(cx.kb, &snap, &d, &plan, style)
                )
            }
        }
        Format::Json => {
            let mut v = report::check::check_json(&snap, &d, &plan);
            if let Some(map) = v.as_object_mut() {
                let (state, status, pid) = match moment {
                    Moment::Hang { pid, .. } => ("hang", None, Some(*pid)),
                    Moment::Ended { end, .. } => ("ended", Some(end.status()), None),
                };
                map.insert(
                    "run".into(),
                    serde_json::json!({
                        "command": cx.command,
                        "state": state,
                        "exit_status": status,
                        "pid": pid,
                        "log": cx.log_path.display().to_string(),
                        "environment": env_source(&snap),
                        "headline": headline,
                    }),
                );
            }
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
    };
    match &cx.args.output {
        Some(path) => {
            let bytes = terminal_safe(&text, false);
            // The first write was checked before the launch started (exists → --force);
            // a hang's report is replaced by the final one.
            if let Err(e) = report::textfile::write_replace(path, bytes.as_bytes(), true) {
                esay!("sm120-doctor: cannot write {}: {e}", path.display());
            } else {
                esay!(
                    "{}",
                    headline.replace(
                        "sm120-doctor: ",
                        &format!("sm120-doctor: (diagnosis in {}) ", path.display())
                    )
                );
            }
        }
        None => {
            let t = terminal_safe(&text, Style::detect().color);
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(t.as_bytes()).and_then(|_| err.flush());
        }
    }
}

fn env_source(snap: &HostSnapshot) -> String {
    match &snap.env {
        Probed::Value(e) => e.source.clone(),
        _ => "not read".into(),
    }
}

fn failed(msg: String) -> i32 {
    esay!("sm120-doctor run: {msg}");
    EXIT_RUN_FAILED
}

/// What `run` settles before the launch starts; every refusal comes before it.
struct Prepared<'a> {
    hang_after: Option<Duration>,
    program: &'a std::ffi::OsString,
    kb: crate::kb::KnowledgeBase,
    command: String,
    launch: Option<crate::snapshot::Launch>,
    log_path: PathBuf,
}

impl Prepared<'_> {
    /// What a diagnosis needs, with the host as collected.
    fn context<'a>(&'a self, host: &'a HostSnapshot, args: &'a RunArgs) -> Context<'a> {
        Context {
            kb: &self.kb,
            host,
            launch: self.launch.as_ref(),
            log_path: &self.log_path,
            command: &self.command,
            args,
        }
    }
}

/// Check the options, load the knowledge base, read the launch and create the log. `Err` is
/// the exit status, the reason already said.
fn prepare(args: &RunArgs) -> Result<(Prepared<'_>, File), i32> {
    let hang_after = match args.hang_after {
        None => None,
        Some(v) => match super::seconds(v, "--hang-after") {
            Ok(d) => Some(d),
            Err(e) => return Err(failed(e.0)),
        },
    };
    let Some(program) = args.command.first() else {
        return Err(failed(
            "give the launch after `--`: sm120-doctor run -- vllm serve …".into(),
        ));
    };
    if let Some(out) = &args.output
        && out.exists()
        && !args.force
    {
        return Err(failed(format!(
            "-o {}: the file exists (pass --force to overwrite it)",
            out.display()
        )));
    }
    let kb = match crate::kb::load(None, crate::facts::is_known_fact) {
        Ok(kb) => kb,
        Err(e) => return Err(failed(format!("knowledge base errors:\n{e}"))),
    };
    let command = command_line(&args.command);
    // The launch is the command given. One the launch reader cannot parse (a wrapper script
    // it does not know) is no launch, said in the diagnosis, not a refusal.
    let launch = input::parse_launch(&command, "run --").ok().map(|mut l| {
        l.source = "the command run".into();
        l
    });
    let (log_path, log_file) = open_log(args.log_to.as_deref()).map_err(failed)?;
    let prepared = Prepared {
        hang_after,
        program,
        kb,
        command,
        launch,
        log_path,
    };
    Ok((prepared, log_file))
}

/// Start the launch, pass its output and signals through, diagnose it when it ends (and on a
/// hang); the launch's status is returned.
pub fn run(args: &RunArgs) -> i32 {
    let (p, log_file) = match prepare(args) {
        Ok(x) => x,
        Err(status) => return status,
    };
    esay!(
        "sm120-doctor: running `{}`; its output is also written to {}",
        proc_run::short(&p.command, 200),
        p.log_path.display()
    );
    // The host's facts are collected while the launch starts.
    let host = thread::spawn(input::collect_live_host);

    let mut cmd = Command::new(p.program);
    cmd.args(&args.command[1..])
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut wrapped: Wrapped = match proc_run::spawn_wrapped(cmd) {
        Ok(w) => w,
        Err(e) => {
            drop(log_file);
            let _ = std::fs::remove_file(&p.log_path);
            let _ = host.join();
            return start_failed(p.program, &e);
        }
    };
    proc_run::forward_signals_to(wrapped.pgid);
    let sink = Arc::new(Sink {
        state: Mutex::new(SinkState {
            file: Some(log_file),
            tail: Vec::new(),
            error: None,
        }),
        start,
        last_ms: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
    });
    let mut done = Vec::new();
    if let Some(o) = wrapped.child.stdout.take() {
        done.push(pump(o, 1, Arc::clone(&sink)));
    }
    if let Some(e) = wrapped.child.stderr.take() {
        done.push(pump(e, 2, Arc::clone(&sink)));
    }
    let root = wrapped.launch;
    let mut tree = Tree::default();
    tree.sample(root);
    let mut host = HostSlot {
        thread: Some(host),
        snap: None,
    };
    let end = wait_for_end(&p, args, &mut wrapped, &sink, &mut tree, &mut host);
    let elapsed = start.elapsed();
    // The launch is over: signals end the doctor again, and whatever it left running goes.
    proc_run::forward_signals_to(0);
    tree.sample(root);
    drop(wrapped);
    close_log(&done, &sink, &p.log_path);
    let host = host.get();
    diagnose(
        &p.context(&host, args),
        tree.environment(proc_run::RUN_ID_VAR),
        &Moment::Ended { end, elapsed },
    );
    end.status()
}

/// The launch did not start: env(1)'s statuses (127 not found, 126 not executable).
fn start_failed(program: &std::ffi::OsStr, e: &std::io::Error) -> i32 {
    let name = program.to_string_lossy();
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            esay!("sm120-doctor run: {name}: command not found");
            EXIT_NOT_FOUND
        }
        std::io::ErrorKind::PermissionDenied => {
            esay!("sm120-doctor run: {name}: permission denied (not executable)");
            EXIT_NOT_EXECUTABLE
        }
        _ if e.raw_os_error() == Some(libc::ENOEXEC) => {
            esay!("sm120-doctor run: {name}: not an executable format");
            EXIT_NOT_EXECUTABLE
        }
        _ => failed(format!("{name}: cannot start it: {e}")),
    }
}

/// The host's facts, collected on their own thread while the launch starts; joined when a
/// diagnosis first needs them.
struct HostSlot {
    thread: Option<thread::JoinHandle<HostSnapshot>>,
    snap: Option<HostSnapshot>,
}

impl HostSlot {
    fn get(&mut self) -> HostSnapshot {
        let thread = &mut self.thread;
        self.snap
            .get_or_insert_with(|| {
                thread
                    .take()
                    .and_then(|h| h.join().ok())
                    .unwrap_or_else(|| HostSnapshot::empty("live", "collection failed"))
            })
            .clone()
    }
}

/// Wait for the launch to end, reading its process tree while it runs; with `--hang-after`,
/// a hang is diagnosed while the launch goes on.
fn wait_for_end(
    p: &Prepared<'_>,
    args: &RunArgs,
    wrapped: &mut Wrapped,
    sink: &Sink,
    tree: &mut Tree,
    host: &mut HostSlot,
) -> End {
    let root = wrapped.launch;
    let start = sink.start;
    let mut last_env = Instant::now();
    let mut watch = p.hang_after.map(HangWatch::new);
    loop {
        if let Some(end) = poll_end(&mut wrapped.child) {
            return end;
        }
        thread::sleep(Duration::from_millis(20));
        // Every turn during start-up (a wrapper script execs the engine within milliseconds),
        // then at ENV_EVERY.
        if start.elapsed() < ENV_EARLY || last_env.elapsed() >= ENV_EVERY {
            tree.sample(root);
            proc_run::reap_adopted();
            last_env = Instant::now();
        }
        let Some(why) = watch.as_mut().and_then(|w| w.why(sink, &p.kb)) else {
            continue;
        };
        tree.sample(root);
        let host = host.get();
        if let Ok(mut s) = sink.state.lock()
            && let Some(f) = s.file.as_mut()
        {
            let _ = f.flush();
        }
        diagnose(
            &p.context(&host, args),
            tree.environment(proc_run::RUN_ID_VAR),
            &Moment::Hang {
                why,
                pid: u32::try_from(root).unwrap_or(0),
            },
        );
    }
}

/// How the launch ended, once it has (a failure to wait for it ends the run too).
fn poll_end(child: &mut std::process::Child) -> Option<End> {
    match child.try_wait() {
        Ok(Some(status)) => {
            use std::os::unix::process::ExitStatusExt;
            Some(match (status.code(), status.signal()) {
                (Some(c), _) => End::Code(c),
                (None, Some(s)) => End::Signal(s),
                (None, None) => End::Code(EXIT_RUN_FAILED),
            })
        }
        Ok(None) => None,
        Err(e) => {
            esay!("sm120-doctor run: waiting for the launch failed: {e}");
            Some(End::Code(EXIT_RUN_FAILED))
        }
    }
}

/// `--hang-after`: a launch quiet for the limit, or repeating stall warnings, is a possible
/// hang; each is said once (quiet again after new output).
struct HangWatch {
    limit: Duration,
    last_stall: Instant,
    stall_bytes: u64,
    quiet_reported: bool,
    stall_reported: bool,
}

impl HangWatch {
    fn new(limit: Duration) -> Self {
        HangWatch {
            limit,
            last_stall: Instant::now(),
            stall_bytes: 0,
            quiet_reported: false,
            stall_reported: false,
        }
    }

    /// Why the launch newly looks hung, if it does.
    fn why(&mut self, sink: &Sink, kb: &crate::kb::KnowledgeBase) -> Option<String> {
        let quiet = sink.quiet_for();
        let mut why = None;
        if quiet < self.limit {
            self.quiet_reported = false;
        } else if !self.quiet_reported {
            self.quiet_reported = true;
            why = Some(format!("no output for {:.0} s", quiet.as_secs_f64()));
        }
        let bytes = sink.bytes.load(Ordering::SeqCst);
        if why.is_none()
            && !self.stall_reported
            && bytes != self.stall_bytes
            && self.last_stall.elapsed() >= STALL_EVERY
        {
            self.stall_bytes = bytes;
            self.last_stall = Instant::now();
            let tail = sink
                .state
                .lock()
                .map(|s| String::from_utf8_lossy(&s.tail).into_owned())
                .unwrap_or_default();
            let c = crate::engine::classify::classify(
                kb,
                &[LogText {
                    name: "tail".into(),
                    text: tail,
                }],
            );
            if let Some(h) = c.run.hang.filter(|h| h.kind == HangKind::StallWarnings) {
                self.stall_reported = true;
                why = Some(format!(
                    "its stall warnings repeat ({} so far)",
                    h.stall_count
                ));
            }
        }
        why
    }
}

/// The launch has ended: let the pumps copy what is left (2 s each at most), close the log,
/// and say if writing it failed part-way.
fn close_log(done: &[mpsc::Receiver<()>], sink: &Sink, log_path: &Path) {
    for d in done {
        let _ = d.recv_timeout(Duration::from_secs(2));
    }
    let log_error = sink.state.lock().ok().and_then(|mut s| {
        s.file.take();
        s.error.take()
    });
    if let Some(e) = log_error {
        esay!(
            "sm120-doctor: writing {} failed part-way ({e}); the diagnosis reads what was written",
            log_path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_quotes_what_a_shell_would_split() {
        let c: Vec<std::ffi::OsString> = ["vllm", "serve", "m", "--x", "a b", "it's"]
            .iter()
            .map(Into::into)
            .collect();
        assert_eq!(command_line(&c), r"vllm serve m --x 'a b' 'it'\''s'");
    }

    #[test]
    fn an_existing_log_is_refused_not_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("x.log");
        std::fs::write(&p, "keep me").expect("write");
        let e = open_log(Some(&p)).expect_err("refused");
        assert!(
            e.contains("exists") && e.contains("never overwrites"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "keep me");
    }

    #[test]
    fn statuses_pass_through() {
        assert_eq!(End::Code(3).status(), 3);
        assert_eq!(End::Signal(libc::SIGTERM).status(), 143);
    }
}
