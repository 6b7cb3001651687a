//! Issue 28 in the TUI, which is not a child subreaper: a SIGKILL of the TUI while its Python
//! collector runs takes along the collector's grandchild that left the process group and the
//! session and cleared its environment (`setsid env -i`). The TUI runs in a detached tmux pane
//! (it needs a terminal); its Python is a fake one in `$VIRTUAL_ENV/bin/python`
//! (tests/fixtures/no-survivor/python.sh), whose grandchild is `sleep MARKER`.

use crate::support;
use crate::support::processes::{with_marker, within};
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

/// Kills the tmux server and whatever still carries the marker when the test ends.
struct Cleanup {
    socket: String,
    marker: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
        for pid in with_marker(&self.marker) {
            // SAFETY: kill(2) on a process carrying this test's unique marker.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

#[test]
fn a_sigkill_of_the_tui_takes_the_python_collectors_setsid_env_i_grandchild_along() {
    if !support::require_tools(&["tmux"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let venv = dir.path().join("venv");
    std::fs::create_dir_all(venv.join("bin")).expect("venv/bin");
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/no-survivor/python.sh");
    std::fs::copy(&fake, venv.join("bin/python")).expect("the fake python");
    let pidfile = dir.path().join("gc.pid");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let marker = format!("300.{}9{nanos:09}", std::process::id());
    let socket = format!("sm120-nosurvivor-{}", std::process::id());
    let _cleanup = Cleanup {
        socket: socket.clone(),
        marker: marker.clone(),
    };
    let out = Command::new("tmux")
        .args(["-f", "/dev/null", "-L", &socket])
        .args([
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "40",
            "--",
        ])
        .arg("env")
        .arg(format!("VIRTUAL_ENV={}", venv.display()))
        .arg("CONDA_PREFIX=")
        .arg(format!("NO_SURVIVOR_MARKER={marker}"))
        .arg(format!("NO_SURVIVOR_PIDFILE={}", pidfile.display()))
        .arg("TERM=tmux-256color")
        .arg(BIN)
        .output()
        .expect("tmux");
    assert!(out.status.success(), "tmux new-session: {out:?}");
    // The pane's process: `env` exec'd the TUI, so it is the TUI.
    let out = Command::new("tmux")
        .args([
            "-L",
            &socket,
            "display-message",
            "-p",
            "-t",
            "t",
            "#{pane_pid}",
        ])
        .output()
        .expect("tmux display-message");
    let tui: i32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the pane's pid");
    assert!(
        within(30, || with_marker(&marker).len() == 1),
        "the fake python's grandchild never started"
    );
    let exe = std::fs::read_link(format!("/proc/{tui}/exe")).expect("the TUI's exe");
    assert_eq!(exe, Path::new(BIN), "the pane runs the TUI");
    // SAFETY: kill(2) on the TUI this test started in its own tmux server.
    assert_eq!(unsafe { libc::kill(tui, libc::SIGKILL) }, 0);
    assert!(
        within(10, || with_marker(&marker).is_empty()),
        "left behind after SIGKILL of the TUI: {:?}",
        with_marker(&marker)
    );
}
