//! Issue 28: no process of a run survives the tool, even after SIGKILL. For each kind of child
//! the tool starts (the P2P probe's child, the Python collector, the torch probe) a fake program
//! starts a grandchild that leaves the process group and the session and clears its environment
//! (`setsid env -i sleep MARKER`): neither the group kill nor the run-id sweep can find it. Each
//! test ends the run one way — SIGKILL of the tool, or the time limit in a process that is not a
//! child subreaper (as the TUI and a library caller are not) — and polls /proc until no process
//! carries the marker, with a deadline.

use crate::support::processes::{with_marker, within};
use sm120_doctor::collect::python::{self, PythonMode};
use sm120_doctor::probe::p2p::{self, ChildProgram, GpuSelection, P2pOptions};
use sm120_doctor::probe::torch;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/no-survivor")
        .join(name)
}

/// A `sleep` argument unique to this test (a number `sleep` accepts: about 300 s).
fn marker(tag: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("300.{}{tag}{nanos:09}", std::process::id())
}

/// Kills whatever still carries the marker when the test ends (a failing test leaves nothing).
struct Sweep(String);

impl Drop for Sweep {
    fn drop(&mut self) {
        for pid in with_marker(&self.0) {
            // SAFETY: kill(2) on a process carrying this test's unique marker.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// The grandchild's pid, written by the fake program once it has started it.
fn grandchild(pidfile: &Path) -> i32 {
    let mut pid = 0;
    assert!(
        within(20, || {
            pid = std::fs::read_to_string(pidfile)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            pid > 0
        }),
        "the fake program never started its grandchild"
    );
    pid
}

/// Start the tool with the fake program, wait for the `setsid env -i` grandchild, SIGKILL the
/// tool, and require that the grandchild is gone within 10 s.
fn sigkill_the_tool(mut cmd: Command, marker: &str, pidfile: &Path) {
    cmd.env("NO_SURVIVOR_MARKER", marker)
        .env("NO_SURVIVOR_PIDFILE", pidfile)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut tool = cmd.spawn().expect("the tool starts");
    let gc = grandchild(pidfile);
    assert!(
        within(10, || with_marker(marker) == vec![gc]),
        "the grandchild {gc} is not the one process with the marker: {:?}",
        with_marker(marker)
    );
    tool.kill().expect("SIGKILL the tool");
    let _ = tool.wait();
    assert!(
        within(10, || with_marker(marker).is_empty()),
        "left behind after SIGKILL of the tool: {:?}",
        with_marker(marker)
    );
}

#[test]
fn p2p_probe_a_sigkill_of_the_tool_takes_a_setsid_env_i_grandchild_along() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = marker(1);
    let _sweep = Sweep(m.clone());
    let mut cmd = Command::new(BIN);
    cmd.args([
        "probe",
        "p2p",
        "--no-nvml",
        "--timeout",
        "120",
        "--child-program",
    ])
    .arg(fixture("p2p-child.sh"));
    sigkill_the_tool(cmd, &m, &dir.path().join("gc.pid"));
}

#[test]
fn python_collector_a_sigkill_of_the_tool_takes_a_setsid_env_i_grandchild_along() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = marker(2);
    let _sweep = Sweep(m.clone());
    let mut cmd = Command::new(BIN);
    cmd.args(["snapshot", "--python-timeout", "120", "--python"])
        .arg(fixture("python.sh"))
        .arg("-o")
        .arg(dir.path().join("s.yaml"));
    sigkill_the_tool(cmd, &m, &dir.path().join("gc.pid"));
}

/// The environment the fake programs read, passed through `env` so that no test changes this
/// process's environment.
fn env_args(marker: &str, pidfile: &Path) -> Vec<String> {
    vec![
        format!("NO_SURVIVOR_MARKER={marker}"),
        format!("NO_SURVIVOR_PIDFILE={}", pidfile.display()),
    ]
}

#[test]
fn p2p_probe_the_time_limit_takes_a_setsid_env_i_grandchild_along_without_a_subreaper() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("gc.pid");
    let m = marker(3);
    let _sweep = Sweep(m.clone());
    let mut args = env_args(&m, &pidfile);
    args.push(fixture("p2p-child.sh").display().to_string());
    let opts = P2pOptions {
        selection: GpuSelection::List(vec![0, 1]),
        selection_label: "--gpus 0,1".into(),
        timeout: Duration::from_millis(1500),
        child: Some(ChildProgram {
            program: PathBuf::from("env"),
            args,
        }),
        nvml: false,
        ..Default::default()
    };
    let p = p2p::run(&opts);
    assert!(p.child_ending.contains("time limit"), "{}", p.child_ending);
    let gc = grandchild(&pidfile);
    assert!(
        within(10, || with_marker(&m).is_empty()),
        "grandchild {gc} outlived the time limit: {:?}",
        with_marker(&m)
    );
}

/// A fake interpreter: `env VAR=… fixture` as one executable (the collector runs
/// `INTERP -c SCRIPT MODE`; the fixture ignores its arguments).
fn fake_python(dir: &Path, marker: &str, pidfile: &Path) -> PathBuf {
    let path = dir.join("python");
    let [a, b] = <[String; 2]>::try_from(env_args(marker, pidfile)).expect("two variables");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nexec env '{a}' '{b}' '{}' \"$@\"\n",
            fixture("python.sh").display()
        ),
    )
    .expect("write the fake python");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn python_collector_the_time_limit_takes_a_setsid_env_i_grandchild_along_without_a_subreaper() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("gc.pid");
    let m = marker(4);
    let _sweep = Sweep(m.clone());
    let py = fake_python(dir.path(), &m, &pidfile);
    let stack = python::collect(&py, PythonMode::Fast, Duration::from_millis(1500));
    assert!(stack.value().is_none(), "{stack:?}");
    let gc = grandchild(&pidfile);
    assert!(
        within(10, || with_marker(&m).is_empty()),
        "grandchild {gc} outlived the time limit: {:?}",
        with_marker(&m)
    );
}

#[test]
fn torch_probe_the_time_limit_takes_a_setsid_env_i_grandchild_along_without_a_subreaper() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("gc.pid");
    let m = marker(5);
    let _sweep = Sweep(m.clone());
    let py = fake_python(dir.path(), &m, &pidfile);
    // Each of the probe's children (one per allocator setting) hangs and starts a grandchild
    // with the same marker: all of them must go.
    let _ = torch::probe(&py, None, Duration::from_millis(1500));
    let gc = grandchild(&pidfile);
    assert!(
        within(10, || with_marker(&m).is_empty()),
        "grandchild {gc} outlived the time limit: {:?}",
        with_marker(&m)
    );
}
