//! End-to-end: the real binary in a detached tmux session. Walks to the allocator/IPC finding
//! with keys, pastes a log (bracketed paste), picks the drop_expandable_segments remedy, exports,
//! quits; then checks the terminal is restored after `q`, SIGTERM and a forced panic.
//! Skipped (with a printed reason) only when tmux is not installed.

use std::path::Path;
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
/// The shell prompt (tmux trims the trailing space in captures).
const PROMPT: &str = "READY>";

struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            return None;
        }
        let t = Tmux {
            socket: format!("sm120-e2e-{}-{name}", std::process::id()),
        };
        let out = t.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "40",
            "--",
            "env",
            "PS1=READY> ",
            "TERM=tmux-256color",
            "bash",
            "--norc",
            "--noprofile",
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        t.wait_for(PROMPT);
        Some(t)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-f", "/dev/null", "-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
        sleep(Duration::from_millis(150));
    }

    fn type_text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "t", "-l", text])
                .status
                .success(),
            "send-keys -l"
        );
        sleep(Duration::from_millis(150));
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(20) {
                panic!("timed out waiting for {needle:?}; screen:\n{screen}");
            }
            sleep(Duration::from_millis(100));
        }
    }

    fn alternate_on(&self) -> bool {
        let out = self.run(&["display-message", "-p", "-t", "t", "#{alternate_on}"]);
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }

    fn pane_pid(&self) -> String {
        let out = self.run(&["display-message", "-p", "-t", "t", "#{pane_pid}"]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// After the program ended: prompt back, alternate screen left, cooked mode with echo.
    fn assert_restored(&self, rc: &str) {
        let screen = self.wait_for(&format!("rc={rc}"));
        assert!(!self.alternate_on(), "alternate screen still on:\n{screen}");
        self.keys(&["clear", "Enter"]);
        self.keys(&[
            "printf 'MODES %s DONE\\n' \"$(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo|isig)' | tr '\\n' ' ')\"",
            "Enter",
        ]);
        let start = Instant::now();
        let (screen, line) = loop {
            let screen = self.capture();
            let found = screen
                .lines()
                .find(|l| l.starts_with("MODES ") && l.ends_with(" DONE"))
                .map(str::to_string);
            if let Some(line) = found {
                break (screen, line);
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no stty output:\n{screen}"
            );
            sleep(Duration::from_millis(100));
        };
        let modes: Vec<&str> = line.split_whitespace().collect();
        for m in ["icanon", "echo", "isig"] {
            assert!(
                modes.contains(&m),
                "terminal mode {m} not restored: {line:?}\n{screen}"
            );
        }
        assert!(
            screen.trim_end().ends_with(PROMPT.trim_end()),
            "no prompt:\n{screen}"
        );
        self.keys(&["clear", "Enter"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn launch(t: &Tmux, dir: &Path, env: &str) {
    t.keys(&["clear", "Enter"]);
    let cmd = format!("cd {} && {env} {BIN} --demo; echo \"rc=$?\"", dir.display());
    t.type_text(&cmd);
    t.keys(&["Enter"]);
    t.wait_for("2 Walk");
    assert!(t.alternate_on(), "the TUI uses the alternate screen");
}

#[test]
fn tui_end_to_end_in_tmux() {
    let Some(t) = Tmux::start("main") else {
        eprintln!("SKIPPED tui_end_to_end_in_tmux: tmux is not installed");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("crash.log");
    std::fs::write(&log, sm120_doctor::import::demo::LOG).expect("write log");
    let report = dir.path().join("report.md");

    launch(&t, dir.path(), "");
    // Walk with keys: another class, then back to the allocator/IPC finding.
    t.wait_for("Custom all-reduce crashed on expandable_segments");
    t.keys(&["Right"]);
    let s = t.capture();
    assert!(
        !s.contains("Custom all-reduce crashed"),
        "still on allocator_ipc:\n{s}"
    );
    t.keys(&["Left"]);
    t.wait_for("Custom all-reduce crashed on expandable_segments");
    // Move away again, then paste a log: the walk jumps to the matched class.
    t.keys(&["Right"]);
    let out = t.run(&["load-buffer", "-b", "lg", &log.display().to_string()]);
    assert!(out.status.success(), "{out:?}");
    let out = t.run(&["paste-buffer", "-p", "-d", "-b", "lg", "-t", "t"]);
    assert!(out.status.success(), "{out:?}");
    t.wait_for("the walk jumped to allocator_ipc");
    t.wait_for("Custom all-reduce crashed on expandable_segments");
    t.keys(&["2"]);
    t.wait_for("── pasted ──");
    let s = t.capture();
    assert!(
        s.contains("▶   5 (Worker_TP1 pid=2951) Failed: Cuda error"),
        "{s}"
    );
    // Pick the cheapest remedy.
    t.keys(&["1"]);
    t.keys(&["Down"]);
    t.keys(&["Up"]);
    t.keys(&["Enter"]);
    t.wait_for("remedy drop_expandable_segments");
    // The Remedy pane shows the plan's combined command (from `engine::plan`) and its diff.
    let s = t.wait_for("Run this (w writes it");
    assert!(s.contains("  export PYTORCH_CUDA_ALLOC_CONF=''"), "{s}");
    assert!(s.contains("+export PYTORCH_CUDA_ALLOC_CONF=''"), "{s}");
    assert!(
        s.contains("-export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
        "{s}"
    );
    // Write it: `w`, a path, Enter; the file holds the patched command.
    let patched = dir.path().join("patched.sh");
    t.keys(&["w"]);
    t.wait_for("Writes the plan's launch command");
    t.keys(&["C-u"]);
    t.type_text(&patched.display().to_string());
    t.keys(&["Enter"]);
    t.wait_for("wrote the launch command to");
    let cmd = std::fs::read_to_string(&patched).expect("patched command written");
    assert!(cmd.contains("export PYTORCH_CUDA_ALLOC_CONF=''\n"), "{cmd}");
    assert!(!cmd.contains("expandable_segments:True"), "{cmd}");
    // Export, then export again to the same path and refuse to overwrite.
    for attempt in 0..2 {
        t.keys(&["e"]);
        t.wait_for("Export report");
        t.keys(&["C-u"]);
        t.type_text(&report.display().to_string());
        t.keys(&["Enter"]);
        if attempt == 0 {
            t.wait_for("wrote the Markdown report to");
        } else {
            t.wait_for("exists. Overwrite it?");
            t.keys(&["n"]);
            t.wait_for("kept the existing file");
        }
    }
    let text = std::fs::read_to_string(&report).expect("report written");
    assert!(text.starts_with("## sm120-doctor report"), "{text}");
    assert!(text.contains("allocator_ipc"), "{text}");
    assert!(
        text.contains("Custom all-reduce crashed on expandable_segments"),
        "{text}"
    );
    assert!(text.contains("drop_expandable_segments"), "{text}");
    assert!(
        text.contains("pasted:5: (Worker_TP1 pid=2951) Failed: Cuda error"),
        "the pasted log is in the report:\n{text}"
    );
    assert!(
        text.contains("(`drop_expandable_segments`, CONFIRMED, chosen by the user)"),
        "the picked remedy is the report's choice:\n{text}"
    );
    t.keys(&["?"]);
    t.wait_for("sm120-doctor keys");
    t.keys(&["Escape"]);
    t.keys(&["q"]);
    t.assert_restored("0");

    // SIGTERM.
    launch(&t, dir.path(), "");
    let shell = t.pane_pid();
    let out = Command::new("pgrep")
        .args(["-P", &shell])
        .output()
        .expect("pgrep");
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!pid.is_empty() && !pid.contains('\n'), "one child: {pid:?}");
    let st = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(st.success());
    t.wait_for("SIGTERM received; terminal restored");
    t.assert_restored("143");

    // Forced panic (test-only switch).
    launch(&t, dir.path(), "SM120_DOCTOR_TEST_PANIC_AFTER_MS=1500");
    t.wait_for("forced test panic");
    t.assert_restored("101");
}

/// No host option: the live host. Without an NVIDIA driver the no-host screen names the
/// collector's reason; `p` runs the allocator/IPC probe on a background thread and its skip
/// reasons appear; `d` still opens the demo. Skipped on a machine with a GPU.
#[test]
fn tui_live_host_without_gpu_probes_in_the_background() {
    let Some(t) = Tmux::start("live") else {
        eprintln!("SKIPPED tui_live_host_without_gpu_probes_in_the_background: no tmux");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    t.keys(&["clear", "Enter"]);
    t.type_text(&format!(
        "cd {} && {BIN}; echo \"rc=$?\"",
        dir.path().display()
    ));
    t.keys(&["Enter"]);
    let start = Instant::now();
    let screen = loop {
        let s = t.capture();
        if s.contains("No host to look at") || s.contains("2 Walk") {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{s}");
        sleep(Duration::from_millis(100));
    };
    if screen.contains("2 Walk") {
        eprintln!("SKIPPED: this machine has an NVIDIA GPU, so the live host opened");
        t.keys(&["q"]);
        t.assert_restored("0");
        return;
    }
    assert!(screen.contains("no NVIDIA driver seen:"), "{screen}");
    assert!(screen.contains(" p  probe IPC"), "{screen}");
    t.keys(&["p"]);
    let s = t.wait_for("allocator/IPC probe: nothing measured");
    assert!(s.contains("  native: skipped: "), "{s}");
    assert!(s.contains("  torch: "), "{s}");
    t.keys(&["d"]);
    t.wait_for("Custom all-reduce crashed on expandable_segments");
    t.keys(&["q"]);
    t.assert_restored("0");
}
