//! `run -- CMD`: the doctor as a wrapper around stand-in launches (shell scripts that print
//! vLLM-like start-up lines, then crash, hang or succeed). Each test waits on a condition (a
//! line in a file, a process gone), never on a fixed sleep.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

/// The #47266 crash (the demo's log): start-up, then the custom all-reduce 'invalid argument'.
const CRASH_LINES: &str = r#"echo "(EngineCore pid=2817) INFO [gpu_model_runner.py:4107] Model loading took 28.61 GiB memory and 41.83 seconds"
echo "(EngineCore pid=2817) INFO [monitor.py:34] torch.compile takes 38.27 s in total"
echo "(Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'" >&2
echo "(EngineCore pid=2817) ERROR [core.py:871] EngineCore failed to start." >&2
exit 1"#;

/// A directory with a stand-in `vllm` on it: it exports the allocator variable (as a launch
/// script does), then becomes a process named `vllm` that runs `body` (so the variable is in
/// that process's /proc/PID/environ, as in a real engine's).
fn stand_in(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    let script = format!(
        "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexec -a vllm bash -c '{}' vllm \"$@\"\n",
        body.replace('\'', r"'\''")
    );
    let p = bin.join("vllm");
    std::fs::write(&p, script).expect("write");
    chmod(&p, 0o755);
    (dir, bin)
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The doctor with `bin` first on PATH, signals at their default action (a harness run in the
/// background may have inherited one ignored), no XDG state directory unless a test sets one.
fn doctor(bin: Option<&Path>) -> Command {
    let mut c = Command::new(BIN);
    if let Some(b) = bin {
        let path = std::env::var("PATH").unwrap_or_default();
        c.env("PATH", format!("{}:{path}", b.display()));
    }
    c.env_remove("XDG_STATE_HOME").env("NO_COLOR", "1");
    // SAFETY: signal(2) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    c
}

/// A doctor started by a test, stopped when the test ends however it ends (a failed assertion
/// must not leave a launch running on a shared machine): SIGTERM (forwarded to the launch),
/// then SIGKILL.
struct Running(Option<std::process::Child>);

impl Running {
    fn id(&self) -> i32 {
        self.0.as_ref().map_or(0, |c| c.id() as i32)
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the doctor this test started.
        unsafe {
            libc::kill(self.id(), sig);
        }
    }

    fn try_wait(&mut self) -> Option<std::process::ExitStatus> {
        self.0
            .as_mut()
            .and_then(|c| c.try_wait().expect("try_wait"))
    }

    fn wait(mut self) -> std::process::ExitStatus {
        self.0.take().expect("child").wait().expect("wait")
    }

    fn wait_with_output(mut self) -> Output {
        self.0
            .take()
            .expect("child")
            .wait_with_output()
            .expect("wait")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            // SAFETY: kill(2) on the doctor this test started.
            unsafe {
                libc::kill(c.id() as i32, libc::SIGTERM);
            }
            let until = Instant::now() + Duration::from_secs(3);
            while c.try_wait().ok().flatten().is_none() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn run_to_end(c: &mut Command) -> Output {
    let child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the doctor");
    child.wait_with_output().expect("wait")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: i32) -> bool {
    // A zombie counts as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
        .unwrap_or(false)
}

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn a_crash_is_diagnosed_after_its_output_with_its_status_and_log() {
    let (dir, bin) = stand_in(CRASH_LINES);
    let log = dir.path().join("run.log");
    let o = run_to_end(doctor(Some(&bin)).args([
        "run",
        "--log-to",
        log.to_str().expect("utf8"),
        "--",
        "vllm",
        "serve",
        "m",
        "--tensor-parallel-size",
        "2",
    ]));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "the launch's status\n{err}");
    // stdout is the launch's, unchanged: nothing of the doctor's is mixed in.
    assert_eq!(
        out,
        "(EngineCore pid=2817) INFO [gpu_model_runner.py:4107] Model loading took 28.61 GiB memory and 41.83 seconds\n\
         (EngineCore pid=2817) INFO [monitor.py:34] torch.compile takes 38.27 s in total\n"
    );
    // stderr: where the log goes, the launch's own lines, then the diagnosis after them.
    assert!(
        err.contains(&format!("its output is also written to {}", log.display())),
        "{err}"
    );
    let crash = err
        .find("custom_all_reduce.cuh:455 'invalid argument'")
        .expect("the launch's stderr passed through");
    let headline = err
        .find("`vllm serve m --tensor-parallel-size 2` exited with code 1")
        .expect("headline");
    assert!(
        crash < headline,
        "the diagnosis comes after the output\n{err}"
    );
    assert!(err.contains("[allocator_ipc"), "the class's finding\n{err}");
    // The log holds both streams, whole.
    let kept = std::fs::read_to_string(&log).expect("log");
    assert_eq!(kept.lines().count(), 4, "{kept}");
    assert!(kept.contains("EngineCore failed to start."));
}

/// The step of a walk in `check --format json`'s shape whose node is `node`.
fn step<'a>(v: &'a serde_json::Value, node: &str) -> &'a serde_json::Value {
    v["walks"]
        .as_array()
        .expect("walks")
        .iter()
        .flat_map(|w| w["steps"].as_array().into_iter().flatten())
        .find(|s| s["node"] == node)
        .unwrap_or_else(|| panic!("no step {node} in {v:#}"))
}

#[test]
fn the_engines_environment_is_read_from_the_launch_as_measured() {
    // Start-up, then an exit before the all-reduce: the walk asks about the allocator config.
    let (dir, bin) = stand_in(
        r#"echo "(EngineCore pid=2817) INFO [gpu_model_runner.py:4107] Model loading took 28.61 GiB memory and 41.83 seconds"
sleep 0.5
exit 1"#,
    );
    let json = dir.path().join("d.json");
    // The doctor's own shell does not set the variable: only the launch's process has it.
    let o = run_to_end(
        doctor(Some(&bin))
            .env_remove("PYTORCH_CUDA_ALLOC_CONF")
            .env_remove("PYTORCH_ALLOC_CONF")
            .current_dir(dir.path())
            .args(["run", "--format", "json", "-o", "d.json", "--"])
            .args(["vllm", "serve", "m", "--tensor-parallel-size", "2"]),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("-o written")).expect("json");
    let run = &v["run"];
    assert_eq!(run["exit_status"], 1);
    assert_eq!(run["state"], "ended");
    let source = run["environment"].as_str().expect("environment");
    assert!(source.starts_with("launched process "), "{source}");
    let s = step(&v, "aipc_expandable");
    assert_eq!(s["answer"], "yes", "{s:#}");
    assert_eq!(s["basis"], "measured", "{s:#}");
    assert!(
        s["facts"]
            .as_array()
            .expect("facts")
            .iter()
            .any(|f| f["name"] == "alloc.expandable_segments"
                && f["source"].as_str().is_some_and(|x| x == source)),
        "the allocator fact comes from the launch's process: {s:#}"
    );
    // The same schema as `check --format json`.
    for key in ["findings", "walks", "plan", "schema_version", "host"] {
        assert!(v.get(key).is_some(), "{key} missing");
    }
    // The default log went to a new file in the current directory, named on stderr.
    let logs: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("sm120-doctor-run-")
        })
        .collect();
    assert_eq!(logs.len(), 1);
    let name = logs[0].file_name().to_string_lossy().into_owned();
    assert!(text(&o.stderr).contains(&name), "{}", text(&o.stderr));
}

#[test]
fn success_is_said_once_and_statuses_pass_through() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let o = run_to_end(doctor(None).env("XDG_STATE_HOME", &state).args([
        "run",
        "--",
        "sh",
        "-c",
        "echo 'INFO all good'; exit 0",
    ]));
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("exited with code 0")
            && err.contains("nothing of the SM120 failure family seen"),
        "{err}"
    );
    assert_eq!(text(&o.stdout), "INFO all good\n");
    // The default log is a new file under $XDG_STATE_HOME/sm120-doctor.
    let logs: Vec<_> = std::fs::read_dir(state.join("sm120-doctor"))
        .expect("state dir")
        .flatten()
        .collect();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        std::fs::read_to_string(logs[0].path()).expect("log"),
        "INFO all good\n"
    );

    for (script, want) in [
        ("exit 7", 7),
        ("kill -TERM $$", 128 + 15),
        ("kill -KILL $$", 137),
    ] {
        let log = dir.path().join(format!("s{want}.log"));
        let o = run_to_end(doctor(None).args([
            "run",
            "--log-to",
            log.to_str().expect("utf8"),
            "--",
            "sh",
            "-c",
            script,
        ]));
        assert_eq!(o.status.code(), Some(want), "{script}: {}", text(&o.stderr));
    }
}

#[test]
fn the_doctors_own_failures_have_their_own_statuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("kept.log");
    std::fs::write(&log, "an earlier run\n").expect("write");
    // An existing log is never overwritten: 125, the file as it was, the launch not started.
    let marker = dir.path().join("started");
    let o = run_to_end(doctor(None).args([
        "run",
        "--log-to",
        log.to_str().expect("utf8"),
        "--",
        "touch",
        marker.to_str().expect("utf8"),
    ]));
    assert_eq!(o.status.code(), Some(125));
    assert!(
        text(&o.stderr).contains("never overwrites"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&log).expect("log"),
        "an earlier run\n"
    );
    assert!(!marker.exists(), "the launch must not start");
    // A bad --hang-after is the doctor's failure too.
    let o = run_to_end(doctor(None).args(["run", "--hang-after", "-1", "--", "true"]));
    assert_eq!(o.status.code(), Some(125));
    assert!(
        text(&o.stderr).contains("--hang-after"),
        "{}",
        text(&o.stderr)
    );
    // Not found: 127; not executable: 126; no log file left behind for a launch never started.
    let cwd = dir.path().join("cwd");
    std::fs::create_dir(&cwd).expect("cwd");
    let o = run_to_end(doctor(None).current_dir(&cwd).args([
        "run",
        "--",
        "/nonexistent/sm120-doctor-test",
    ]));
    assert_eq!(o.status.code(), Some(127), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("command not found"));
    let noexec = dir.path().join("noexec.sh");
    std::fs::write(&noexec, "#!/bin/sh\necho hi\n").expect("write");
    chmod(&noexec, 0o644);
    let o = run_to_end(doctor(None).current_dir(&cwd).args([
        "run",
        "--",
        noexec.to_str().expect("utf8"),
    ]));
    assert_eq!(o.status.code(), Some(126), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_dir(&cwd).expect("cwd").count(), 0);
}

#[test]
fn sigterm_to_the_doctor_reaches_the_launch_and_its_status_comes_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("run.log");
    let got = dir.path().join("got");
    let script =
        r#"trap 'echo TERM > "$0"; exit 42' TERM; echo ready; while :; do sleep 0.05; done"#;
    let child = doctor(None)
        .args(["run", "--log-to", log.to_str().expect("utf8"), "--"])
        .args(["bash", "-c", script, got.to_str().expect("utf8")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map(|c| Running(Some(c)))
        .expect("spawn");
    wait_until("the launch to start", 20, || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("ready"))
    });
    child.signal(libc::SIGTERM);
    let o = child.wait_with_output();
    assert_eq!(
        std::fs::read_to_string(&got)
            .expect("the launch's trap ran")
            .trim(),
        "TERM"
    );
    assert_eq!(o.status.code(), Some(42), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("exited with code 42"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn nothing_the_launch_started_is_left_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pids");
    let log = dir.path().join("run.log");
    // A worker in the group, one that left it (setsid), and one that also dropped the run id.
    let script = r#"sleep 300 & echo $! >> "$0"; setsid sleep 301 & echo $! >> "$0"; env -i setsid sleep 302 & echo $! >> "$0"; echo started; exit 0"#;
    let o = run_to_end(
        doctor(None)
            .args(["run", "--log-to", log.to_str().expect("utf8"), "--"])
            .args(["bash", "-c", script, pidfile.to_str().expect("utf8")]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let p = pids(&pidfile);
    assert_eq!(p.len(), 3, "{p:?}");
    wait_until("every process of the launch to end", 10, || {
        p.iter().all(|x| !alive(*x))
    });
}

#[test]
fn a_quiet_launch_is_reported_as_a_hang_while_it_runs() {
    let (dir, bin) = stand_in(
        r#"echo "INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m..."
echo "INFO 05-12 10:00:41 [default_loader.py:267] Loading weights took 38.11 seconds"
echo "INFO 05-12 10:01:20 [backends.py:394] Compiling a graph for compile range (1, 8192) takes 20.11 s"
echo $$ > "$PIDFILE"
while :; do sleep 0.05; done"#,
    );
    let log = dir.path().join("run.log");
    let err_file = dir.path().join("stderr");
    let pidfile = dir.path().join("pid");
    let mut child = doctor(Some(&bin))
        .env("PIDFILE", &pidfile)
        .args([
            "run",
            "--hang-after",
            "1",
            "--log-to",
            log.to_str().expect("utf8"),
        ])
        .args(["--", "vllm", "serve", "m"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_file).expect("stderr file"))
        .spawn()
        .map(|c| Running(Some(c)))
        .expect("spawn");
    let read_err = || std::fs::read_to_string(&err_file).unwrap_or_default();
    wait_until("the hang report", 30, || {
        read_err().contains("possible hang")
    });
    // Reported while the launch still runs, and left running.
    let pid = pids(&pidfile)[0];
    assert!(alive(pid), "the launch was left running");
    assert!(child.try_wait().is_none(), "the doctor still waits");
    let err = read_err();
    assert!(err.contains("no output for 1 s"), "{err}");
    assert!(err.contains(&format!("still running (pid {pid})")), "{err}");
    // The walk read the log as stopping inside start-up (the engine's hang).
    assert!(err.contains("The log shows a hang"), "{err}");
    // Ctrl-C is forwarded: the launch ends of it, and so does the doctor (128+2).
    child.signal(libc::SIGINT);
    let status = child.wait();
    assert_eq!(status.code(), Some(130), "{}", read_err());
    assert!(!alive(pid));
    assert!(
        read_err().contains("was killed by signal 2"),
        "{}",
        read_err()
    );
}

#[test]
fn repeating_stall_warnings_are_a_hang_before_the_quiet_limit() {
    let stall = "(EngineCore_DP0 pid=301) INFO 01-25 19:03:13 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).";
    let (dir, bin) = stand_in(&format!(
        r#"echo "(Worker_TP0 pid=1) INFO 01-25 19:01:00 [gpu_model_runner.py:2338] Starting to load model m..."
echo "(Worker_TP0 pid=1) INFO 01-25 19:01:40 [default_loader.py:267] Loading weights took 38.11 seconds"
for i in 1 2 3; do echo "{stall}"; done
echo $$ > "$PIDFILE"
while :; do sleep 0.05; done"#
    ));
    let log = dir.path().join("run.log");
    let err_file = dir.path().join("stderr");
    let pidfile = dir.path().join("pid");
    let child = doctor(Some(&bin))
        .env("PIDFILE", &pidfile)
        .args([
            "run",
            "--hang-after",
            "600",
            "--log-to",
            log.to_str().expect("utf8"),
        ])
        .args(["--", "vllm", "serve", "m", "-tp", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_file).expect("stderr file"))
        .spawn()
        .map(|c| Running(Some(c)))
        .expect("spawn");
    let read_err = || std::fs::read_to_string(&err_file).unwrap_or_default();
    wait_until("the stall report", 30, || {
        read_err().contains("possible hang")
    });
    let err = read_err();
    assert!(
        err.contains("its stall warnings repeat (3 so far)"),
        "{err}"
    );
    let pid = pids(&pidfile)[0];
    assert!(alive(pid), "the launch was left running");
    // SIGHUP is forwarded too.
    child.signal(libc::SIGHUP);
    let status = child.wait();
    assert_eq!(status.code(), Some(128 + libc::SIGHUP), "{}", read_err());
    assert!(!alive(pid));
}

/// The capture from a real H200 host (tests/fixtures/h200-run-2026-12-03): the same JSON this
/// test file checks on stand-ins, from a real torch program under `run`. The environment the
/// allocator step used is the launched process's, read while it ran, both ways.
#[test]
fn the_h200_capture_measured_the_allocator_config_from_the_launched_process() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-run-2026-12-03");
    for (name, status, expandable) in [("expandable", 1, "yes"), ("default", 0, "no")] {
        let path = dir.join(format!("{name}.json"));
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(v["run"]["exit_status"], status, "{name}");
        let env = v["run"]["environment"].as_str().unwrap_or_default();
        assert!(env.starts_with("launched process "), "{name}: {env}");
        let s = step(&v, "aipc_expandable");
        assert_eq!(s["answer"], expandable, "{name}: {s}");
        assert_eq!(s["basis"], "measured", "{name}: {s}");
        let source = s["facts"][0]["source"].as_str().unwrap_or_default();
        assert!(source.contains("ipc_export.py"), "{name}: {source}");
    }
    // The failing run's error line is a finding, not an all-clear.
    let text = std::fs::read_to_string(dir.join("expandable-text.stderr")).expect("capture");
    assert!(
        text.contains("RuntimeError: cudaIpcGetMemHandle failed: invalid argument"),
        "{text}"
    );
    assert!(text.contains("1 error(s)"), "{text}");
}

/// SIGKILL of the doctor: the launch's direct child dies of its parent-death signal, and a
/// worker it started in its process group (as vLLM's workers are) is killed by the sentinel.
#[test]
fn a_sigkill_of_the_doctor_takes_the_launchs_workers_along() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pids");
    let log = dir.path().join("run.log");
    let script = r#"sleep 300 & echo $! >> "$0"; echo $$ >> "$0"; wait"#;
    let mut c = doctor(None);
    c.args(["run", "--log-to", log.to_str().expect("utf8"), "--"])
        .args(["bash", "-c", script, pidfile.to_str().expect("utf8")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut d = c.spawn().expect("doctor starts");
    wait_until("the launch to write its pids", 20, || {
        pids(&pidfile).len() == 2
    });
    let p = pids(&pidfile);
    // Whatever the outcome, nothing of this test outlives it.
    struct KillOnDrop(Vec<i32>);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            for &pid in &self.0 {
                // SAFETY: kill(2) on a pid this test's launch wrote.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
    let _cleanup = KillOnDrop(p.clone());
    assert!(p.iter().all(|x| alive(*x)), "{p:?}");
    d.kill().expect("SIGKILL the doctor");
    let _ = d.wait();
    wait_until("the launch and its worker to end", 10, || {
        p.iter().all(|x| !alive(*x))
    });
}

/// Pids of live processes whose command line has `marker` as an argument.
fn with_marker(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmd.split(|b| *b == 0).any(|a| a == marker.as_bytes()) && alive(pid) {
            out.push(pid);
        }
    }
    out
}

/// SIGKILL of the doctor while the launch has a grandchild that left the process group *and*
/// cleared its environment (`setsid env -i`): neither the group nor the run id finds it, and
/// the doctor is dead. The run's supervisor (a subreaper between the doctor and the launch)
/// inherits it when the launch dies and kills it. Found by a marker argument unique to this run.
#[test]
fn a_sigkill_of_the_doctor_takes_a_setsid_env_i_grandchild_along() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("run.log");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let marker = format!("300.{}{nanos:09}", std::process::id());
    let script = format!(r#"setsid env -i sh -c 'sleep "$1"' sh {marker} & echo started; wait"#);
    let mut c = doctor(None);
    c.args(["run", "--log-to", log.to_str().expect("utf8"), "--"])
        .args(["sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut d = c.spawn().expect("doctor starts");
    struct KillOnDrop(String);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            for pid in with_marker(&self.0) {
                // SAFETY: kill(2) on a process carrying this test's unique marker.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
    let _cleanup = KillOnDrop(marker.clone());
    // The sleep and the `sh -c` around it both carry the marker.
    wait_until("the grandchild to start", 20, || {
        with_marker(&marker).len() == 2
    });
    d.kill().expect("SIGKILL the doctor");
    let _ = d.wait();
    wait_until("the setsid env -i grandchild to end", 10, || {
        with_marker(&marker).is_empty()
    });
}

/// The real H200 capture of 2026-12-03 14:56 (tests/fixtures/h200-run-supervisor-2026-12-03):
/// the launch's status passes through the supervisor, a grandchild that left the session and
/// cleared its environment while holding GPU memory is gone 3 s after a SIGKILL of the doctor,
/// and `check` on a clean program's log that shows no vLLM coming up exits 3, not 0.
#[test]
fn the_h200_supervisor_capture_shows_statuses_no_survivor_and_an_undetermined_log() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-run-supervisor-2026-12-03");
    let read =
        |n: &str| std::fs::read_to_string(dir.join(n)).unwrap_or_else(|e| panic!("{n}: {e}"));
    let rc = read("rc.txt");
    for want in [
        "expandable 1",
        "default 0",
        "check-expandable 1",
        "check-default 3",
    ] {
        assert!(rc.lines().any(|l| l == want), "{want} in {rc}");
    }
    let survive = read("survive.txt");
    let (before, after) = survive
        .split_once("after SIGKILL of the doctor")
        .expect("a before and an after part");
    assert!(
        before.contains("MiB"),
        "the grandchild held GPU memory: {before}"
    );
    assert!(after.contains("no process with the marker"), "{after}");
    assert!(
        !after
            .lines()
            .take_while(|l| *l != "(end of compute apps)")
            .any(|l| l.contains("MiB")),
        "no compute app left: {after}"
    );
    let check = read("check-default.txt");
    assert!(
        check.contains("[ ] Not checked: the log shows neither a failure nor that the run came up"),
        "{check}"
    );
    assert!(!check.contains("[✗]"), "{check}");
    assert!(read("expandable.log").contains("cudaIpcGetMemHandle failed: invalid argument"));
}
