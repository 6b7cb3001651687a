//! The TUI entry point without a terminal and with bad input: a clear message, exit 2, and
//! nothing written to stdout (no escape sequences left behind).

use crate::support;

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

#[test]
fn bad_snapshot_path_is_named_and_exits_2() {
    let out = Command::new(BIN)
        .args(["--snapshot", "tests/fixtures/tui/no-such-file.yaml"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-file.yaml"), "{err}");
    assert!(out.stdout.is_empty(), "stdout: {:?}", out.stdout);
}

#[test]
fn subcommand_and_tui_options_do_not_mix() {
    let out = Command::new(BIN)
        .args(["--demo", "check"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn no_terminal_is_an_error_not_garbage() {
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok()
    {
        // The TUI would open the controlling terminal and wait for keys.
        support::skip_on_this_host("a controlling terminal exists");
        return;
    }
    let out = Command::new(BIN)
        .arg("--demo")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("TERM")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot open the terminal"), "{err}");
    assert!(
        !out.stdout.contains(&0x1b),
        "escape codes on stdout: {:?}",
        out.stdout
    );
}

/// A JSON report written on one machine opens in the TUI with the same findings (a report is shared between machines).
#[test]
fn the_tui_opens_a_json_report_with_the_same_findings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["report", "--demo", "--format", "json", "-o"])
        .arg(&report)
        .output()
        .expect("report runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let demo = sm120_doctor::tui::build_app(
        sm120_doctor::input::prepare(&sm120_doctor::input::InputArgs {
            demo: true,
            ..Default::default()
        })
        .expect("demo app"),
        sm120_doctor::engine::Mode::Failures,
    );
    let replayed = sm120_doctor::tui::build_app(
        sm120_doctor::input::prepare(&sm120_doctor::input::InputArgs {
            snapshot: Some(report.clone()),
            ..Default::default()
        })
        .expect("the TUI opens the report"),
        sm120_doctor::engine::Mode::Failures,
    );
    let ids = |app: &sm120_doctor::tui::state::app::App| -> Vec<(String, String)> {
        app.diagnosis
            .findings
            .iter()
            .map(|f| (f.class.clone(), f.id.clone()))
            .collect()
    };
    assert!(!ids(&demo).is_empty());
    assert_eq!(ids(&demo), ids(&replayed));
    assert!(
        matches!(
            replayed.snapshot.origin,
            sm120_doctor::snapshot::Origin::Snapshot { .. }
        ),
        "{}",
        replayed.snapshot.origin
    );
}
