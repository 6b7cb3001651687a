//! `probe p2p` with fake children (tests/fixtures/p2p-children/): one that succeeds, one that
//! hangs in a copy, one whose copy arrives wrong, one that crashes — through the library and
//! through the real binary, including Ctrl-C and a killed parent.

use sm120_doctor::probe::p2p::{self, ChildProgram, GpuSelection, P2pOptions};
use sm120_doctor::snapshot::{P2pOutcome, P2pProbe, Probed};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/p2p-children")
        .join(name)
}

fn opts(name: &str, timeout: Duration) -> P2pOptions {
    P2pOptions {
        selection: GpuSelection::List(vec![0, 1]),
        selection_label: "--gpus 0,1".into(),
        timeout,
        child: Some(ChildProgram {
            program: script(name),
            args: Vec::new(),
        }),
        nvml: false,
        ..Default::default()
    }
}

/// The script run through `env VAR=VALUE`, so no test changes this process's environment.
fn with_env(mut o: P2pOptions, var: &str, value: &Path) -> P2pOptions {
    let script = o.child.take().expect("child").program;
    o.child = Some(ChildProgram {
        program: PathBuf::from("env"),
        args: vec![
            format!("{var}={}", value.display()),
            script.display().to_string(),
        ],
    });
    o
}

fn pairs(p: &P2pProbe) -> &Vec<sm120_doctor::snapshot::P2pPair> {
    p.pairs
        .value()
        .unwrap_or_else(|| panic!("no pairs: {:?}", p.pairs))
}

/// Gone, or a zombie nobody reaped yet.
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_gone(pid: i32, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    gone(pid)
}

fn wait_pid(file: &Path, within: Duration) -> i32 {
    let until = Instant::now() + within;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < until, "{} never appeared", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_child_that_succeeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let args_file = dir.path().join("args");
    let mut o = with_env(
        opts("ok.sh", Duration::from_secs(10)),
        "P2P_FAKE_ARGS",
        &args_file,
    );
    o.bytes = 1 << 20;
    o.iterations = 3;
    let p = p2p::run(&o);
    let ps = pairs(&p);
    assert_eq!(ps.len(), 1);
    assert_eq!(ps[0].functional, P2pOutcome::Ok);
    assert_eq!(ps[0].directions.len(), 4);
    assert_eq!(ps[0].directions[0].gb_per_s, Some(350.5));
    assert_eq!(ps[0].cuda_can_access_peer_ba, Probed::Value(true));
    assert_eq!(p.devices.len(), 2);
    // It exits right after `done`; on a loaded machine the exit may outlast the grace.
    assert!(
        p.child_ending == "exited 0" || p.child_ending.contains("background"),
        "{}",
        p.child_ending
    );
    assert_eq!(p2p::all_ok(&p), Some(true));
    let args = std::fs::read_to_string(&args_file).expect("the child recorded its arguments");
    assert_eq!(args.trim(), "--gpus 0,1 --bytes 1048576 --iterations 3");
    let text = p2p::render_text(&p);
    assert!(text.contains("GPU0 ↔ GPU1: ok"), "{text}");
    assert!(text.contains("350.5 GB/s"), "{text}");
}

#[test]
fn a_child_that_hangs_is_killed_with_its_group_and_the_pair_is_hung() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grandchild = dir.path().join("grandchild");
    let start = Instant::now();
    let mut o = with_env(
        opts("hang.sh", Duration::from_millis(600)),
        "P2P_FAKE_GRANDCHILD",
        &grandchild,
    );
    o.selection = GpuSelection::All;
    let p = p2p::run(&o);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let ps = pairs(&p);
    assert_eq!(ps.len(), 3, "three GPUs: three pairs");
    let P2pOutcome::Hung { after_ms, step } = &ps[0].functional else {
        panic!("{:?}", ps[0].functional);
    };
    assert_eq!(step, "push 0→1: one copy, waiting for it");
    assert!(*after_ms > 0.0 && *after_ms <= 600.0, "{after_ms}");
    for other in &ps[1..] {
        assert!(
            matches!(&other.functional, P2pOutcome::NotRun { reason } if reason.contains("GPU0 ↔ GPU1 hung")),
            "{:?}",
            other.functional
        );
    }
    assert!(p.child_ending.contains("time limit"), "{}", p.child_ending);
    assert_eq!(p2p::all_ok(&p), Some(false));
    let gc = wait_pid(&grandchild, Duration::from_secs(1));
    assert!(
        wait_gone(gc, Duration::from_secs(2)),
        "the grandchild {gc} outlived the time limit"
    );
    let text = p2p::render_text(&p);
    assert!(text.contains("GPU0 ↔ GPU1: hung after"), "{text}");
}

#[test]
fn a_child_that_lingers_after_done_is_not_waited_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let start = Instant::now();
    let p = p2p::run(&with_env(
        opts("done-then-linger.sh", Duration::from_secs(20)),
        "P2P_FAKE_PIDFILE",
        &pidfile,
    ));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(pairs(&p)[0].functional, P2pOutcome::Ok);
    assert_eq!(p.child_ending, "finished (its exit left to the background)");
    assert!(p.child_done_ms.is_some_and(|d| d <= p.child_ms));
    let pid = wait_pid(&pidfile, Duration::from_secs(1));
    assert!(
        wait_gone(pid, Duration::from_secs(3)),
        "the lingering child {pid} was left running"
    );
}

#[test]
fn a_child_whose_copy_arrives_wrong() {
    let p = p2p::run(&opts("wrong-data.sh", Duration::from_secs(10)));
    let ps = pairs(&p);
    assert_eq!(
        ps[0].functional,
        P2pOutcome::WrongData {
            mismatched_bytes: 66_846_720,
            first_offset: 4096,
            expected: 183,
            got: 0
        }
    );
    assert_eq!(ps[0].directions[1].gb_per_s, None);
    assert_eq!(ps[0].directions[0].outcome, P2pOutcome::Ok);
    let text = p2p::render_text(&p);
    assert!(
        text.contains("wrong data: 66846720 byte(s) differ"),
        "{text}"
    );
}

#[test]
fn a_child_that_crashes() {
    let p = p2p::run(&opts("crash.sh", Duration::from_secs(10)));
    let ps = pairs(&p);
    let P2pOutcome::Error { error } = &ps[0].functional else {
        panic!("{:?}", ps[0].functional);
    };
    assert!(error.contains("SIGSEGV"), "{error}");
    assert!(error.contains("cuCtxEnablePeerAccess 0↔1"), "{error}");
    assert!(error.contains("fake driver: segmentation fault"), "{error}");
}

#[test]
fn a_child_that_cannot_start() {
    let p = p2p::run(&opts("no-such-child.sh", Duration::from_secs(10)));
    assert!(
        matches!(&p.pairs, Probed::Failed(e) if e.to_string().contains("cannot start the probe child")),
        "{:?}",
        p.pairs
    );
    assert_eq!(p2p::all_ok(&p), None);
}

fn binary(child: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(["probe", "p2p", "--no-nvml", "--child-program"])
        .arg(script(child))
        .args(extra);
    c
}

#[test]
fn binary_exit_codes_and_json() {
    let out = binary("ok.sh", &["--format", "json", "--gpus", "0,1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let p: P2pProbe = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(p.selection, "--gpus 0,1");
    assert_eq!(pairs(&p)[0].functional, P2pOutcome::Ok);

    let out = binary("hang.sh", &["--timeout", "0.5"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hung after"), "{text}");

    // One GPU: nothing to pair, so nothing was tested: 3, not the 0 of "every pair ok".
    let out = binary("one-gpu.sh", &[]).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("fewer than two GPUs"));

    let out = binary("ok.sh", &["--tp", "1"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = binary("ok.sh", &["--gpus", "0,x"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--gpus"));
}

/// Start the binary on the hanging child and wait until the child is up: (parent, child pid,
/// grandchild pid when asked for).
fn start_hanging(dir: &Path, grandchild: bool) -> (std::process::Child, i32, Option<i32>) {
    let pidfile = dir.join("child.pid");
    let gcfile = dir.join("grandchild.pid");
    let mut cmd = binary("hang.sh", &["--timeout", "60"]);
    cmd.env("P2P_FAKE_PIDFILE", &pidfile)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if grandchild {
        cmd.env("P2P_FAKE_GRANDCHILD", &gcfile);
    } else {
        cmd.env_remove("P2P_FAKE_GRANDCHILD");
    }
    let parent = cmd.spawn().expect("spawn");
    let child = wait_pid(&pidfile, Duration::from_secs(5));
    let gc = grandchild.then(|| wait_pid(&gcfile, Duration::from_secs(5)));
    (parent, child, gc)
}

#[test]
fn ctrl_c_on_the_parent_kills_the_childs_whole_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut parent, child, gc) = start_hanging(dir.path(), true);
    let gc = gc.expect("grandchild");
    assert!(!gone(child) && !gone(gc));
    // SAFETY: signals a process this test started.
    unsafe { libc::kill(parent.id() as i32, libc::SIGINT) };
    let status = parent.wait().expect("wait");
    assert!(!status.success());
    assert!(
        wait_gone(child, Duration::from_secs(3)),
        "child {child} outlived Ctrl-C"
    );
    // Only the group kill reaches the grandchild (PR_SET_PDEATHSIG covers the child alone).
    assert!(
        wait_gone(gc, Duration::from_secs(3)),
        "grandchild {gc} outlived Ctrl-C"
    );
}

#[test]
fn a_parent_killed_outright_takes_the_child_along() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut parent, child, _) = start_hanging(dir.path(), false);
    // SIGKILL runs no handler: only PR_SET_PDEATHSIG can end the child.
    let _ = parent.kill();
    let _ = parent.wait();
    assert!(
        wait_gone(child, Duration::from_secs(3)),
        "child {child} outlived its parent"
    );
}
