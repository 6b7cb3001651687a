//! End-to-end: the real binary in a detached tmux session. Walks to the allocator/IPC finding
//! with keys, pastes a log (bracketed paste), picks the drop_expandable_segments remedy, exports,
//! quits; then checks the terminal is restored after `q`, SIGTERM and a forced panic. A second
//! run pastes a 30,000-line log and reads it (G, g, /, ]), checks the 80×24 layout, and copies
//! the fix with OSC 52, read back from tmux's buffer. The launch editor (append,
//! apply, cancel, a flag-first command refused) and a paste without bracketed paste in every
//! pane (never keys).
//! Needs tmux and bash: without them it fails under `CI=true` and prints a skip elsewhere
//! (tests/support).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long a test waits for a screen text before failing. A bound, not a sleep: the wait ends
/// as soon as the text is there; it is long because a loaded 2-core CI machine has taken over 20 s
/// to start the binary and draw a first frame.
const SCREEN_WAIT: Duration = Duration::from_secs(90);

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
/// The shell prompt (tmux trims the trailing space in captures).
const PROMPT: &str = "READY>";

struct Tmux {
    socket: String,
}

impl Tmux {
    /// `None` (after the skip or failure [`support::require_tools`] gives) without tmux or bash.
    fn start(name: &str) -> Option<Tmux> {
        if !support::require_tools(&["tmux", "bash"]) {
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

    /// The screen with its attributes (`-e`): a moved cursor or selection shows as a change.
    fn capture_styled(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-e", "-p", "-t", "t"]).stdout)
            .into_owned()
    }

    /// Send keys and return at once. The program reads its input a burst at a time, and a burst
    /// that looks like a paste is one (src/tui/io/event.rs), so a test waits for what a key shows
    /// on the screen before it sends more when the two would otherwise reach the program
    /// together: text after a control key, a key after a typed text, a key after Escape.
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }

    /// Send keys that change the screen, and wait until it changed (for a key whose effect has
    /// no words of its own, such as a line break in the editor).
    fn keys_and_wait_for_a_redraw(&self, keys: &[&str]) {
        let before = self.capture_styled();
        self.keys(keys);
        let start = Instant::now();
        loop {
            let now = self.capture_styled();
            if now != before {
                return;
            }
            if start.elapsed() > SCREEN_WAIT {
                panic!("timed out waiting for a redraw after {keys:?}; screen:\n{now}");
            }
            sleep(Duration::from_millis(20));
        }
    }

    fn type_text(&self, text: &str) {
        assert!(
            // `--`: a text that starts with a dash is text, not an option of send-keys.
            self.run(&["send-keys", "-t", "t", "-l", "--", text])
                .status
                .success(),
            "send-keys -l"
        );
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > SCREEN_WAIT {
                panic!("timed out waiting for {needle:?}; screen:\n{screen}");
            }
            sleep(Duration::from_millis(100));
        }
    }

    /// Wait until the screen satisfies `ok` (e.g. the program redrew after a resize).
    fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            if start.elapsed() > SCREEN_WAIT {
                panic!("timed out waiting for {what}; screen:\n{screen}");
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
        // The stty line, and the prompt the shell prints after it.
        let start = Instant::now();
        let (screen, line) = loop {
            let screen = self.capture();
            let found = screen
                .lines()
                .find(|l| l.starts_with("MODES ") && l.ends_with(" DONE"))
                .map(str::to_string);
            if let Some(line) = found
                && screen.trim_end().ends_with(PROMPT.trim_end())
            {
                break (screen, line);
            }
            assert!(
                start.elapsed() < SCREEN_WAIT,
                "no stty output followed by the prompt:\n{screen}"
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
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("crash.log");
    std::fs::write(&log, sm120_doctor::import::demo::LOG).expect("write log");
    let report = dir.path().join("report.md");

    launch(&t, dir.path(), "");
    // The Summary first: the finding and the fix.
    t.wait_for("Custom all-reduce crashed on expandable_segments");
    t.wait_for("The fix (one remedy per finding");
    // Walk with keys: another class, then back to the allocator/IPC walk (its class title in
    // the walk's fixed bar).
    t.keys(&["2"]);
    t.wait_for("class 1 of 20");
    t.keys(&["Right"]);
    let s = t.wait_for("class 2 of 20");
    assert!(
        !s.contains("│✗ Custom all-reduce crash from expandable_segments"),
        "still on allocator_ipc:\n{s}"
    );
    t.keys(&["Left"]);
    t.wait_for("│✗ Custom all-reduce crash from expandable_segments");
    // Move away again, then paste a log: the walk jumps to the matched class.
    t.keys(&["Right"]);
    let out = t.run(&["load-buffer", "-b", "lg", &log.display().to_string()]);
    assert!(out.status.success(), "{out:?}");
    let out = t.run(&["paste-buffer", "-p", "-d", "-b", "lg", "-t", "t"]);
    assert!(out.status.success(), "{out:?}");
    t.wait_for("the walk jumped to Custom all-reduce crash from expandable_segments");
    t.wait_for("│✗ Custom all-reduce crash from expandable_segments");
    t.keys(&["3"]);
    t.wait_for("── the pasted log · 7 lines ──");
    let s = t.capture();
    assert!(
        s.contains("▶   5 (Worker_TP1 pid=2951) Failed: Cuda error"),
        "{s}"
    );
    // Choose the cheapest remedy: Enter in the walk opens the Remedy pane, Enter there picks.
    t.keys(&["2"]);
    t.keys(&["Enter"]);
    t.wait_for("choose a remedy for this finding");
    t.keys(&["Down"]);
    t.keys(&["Up"]);
    t.keys(&["Enter"]);
    t.wait_for("in the plan for “Custom all-reduce crashed");
    // The Remedy pane shows the plan's combined command (from `engine::plan`) and its diff.
    t.wait_for("Run this instead of your launch (w writes it");
    t.keys(&["G"]);
    let s = t.wait_for("+export PYTORCH_CUDA_ALLOC_CONF=''");
    assert!(
        s.contains("-export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
        "{s}"
    );
    // Write it: `w`, a path, Enter; the file holds the patched command.
    let patched = dir.path().join("patched.sh");
    t.keys(&["w"]);
    t.wait_for("Writes the plan's launch command");
    t.keys(&["C-u"]);
    t.wait_for("Path: ▏");
    t.type_text(&patched.display().to_string());
    t.wait_for(&format!("Path: {}▏", patched.display()));
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
        t.wait_for("Path: ▏");
        t.type_text(&report.display().to_string());
        t.wait_for(&format!("Path: {}▏", report.display()));
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
        text.contains("`pasted`, lines 1–7:")
            && text.contains("> 5  (Worker_TP1 pid=2951) Failed: Cuda error"),
        "the pasted log is quoted in the report:\n{text}"
    );
    assert!(
        text.contains("(`drop_expandable_segments`, CONFIRMED, chosen by the user)"),
        "the picked remedy is the report's choice:\n{text}"
    );
    t.keys(&["?"]);
    t.wait_for("sm120-doctor keys");
    // An Escape and a key read together are Alt and that key: the help closes first.
    t.keys(&["Escape"]);
    t.wait_until("the help to close", |s| !s.contains("sm120-doctor keys"));
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

    // Forced panic (test-only switch): 1500 ms after start, after the first frame (the event
    // loop draws before it waits). The frame may be gone before a capture sees it, so the pane's
    // output is recorded and the frame is looked for there, before the panic's message.
    let recorded = dir.path().join("pane.out");
    let pipe = format!("cat >> '{}'", recorded.display());
    assert!(t.run(&["pipe-pane", "-t", "t", &pipe]).status.success());
    t.keys(&["clear", "Enter"]);
    t.type_text(&format!(
        "cd {} && SM120_DOCTOR_TEST_PANIC_AFTER_MS=1500 {BIN} --demo; echo \"rc=$?\"",
        dir.path().display()
    ));
    t.keys(&["Enter"]);
    t.wait_for("forced test panic");
    t.assert_restored("101");
    let start = Instant::now();
    let out = loop {
        let out =
            String::from_utf8_lossy(&std::fs::read(&recorded).unwrap_or_default()).into_owned();
        if out.contains("forced test panic") || start.elapsed() > SCREEN_WAIT {
            break out;
        }
        sleep(Duration::from_millis(100));
    };
    assert!(t.run(&["pipe-pane", "-t", "t"]).status.success());
    let alternate = out
        .find("\u{1b}[?1049h")
        .unwrap_or_else(|| panic!("the TUI never entered the alternate screen; output:\n{out:?}"));
    let frame = out[alternate..]
        .find("Custom all-reduce crashed on expandable_segments")
        .map(|i| alternate + i)
        .unwrap_or_else(|| panic!("no first frame before the panic; output:\n{out:?}"));
    let panicked = out.rfind("forced test panic").expect("the panic's message");
    assert!(
        frame < panicked,
        "the panic came before the first frame; output:\n{out:?}"
    );
}

/// No host option: the live host. Without an NVIDIA driver the no-host screen names the
/// collector's reason; `p` runs the allocator/IPC probe on a background thread and its skip
/// reasons appear; `d` still opens the demo. Skipped on a machine with a GPU.
#[test]
fn tui_live_host_without_gpu_probes_in_the_background() {
    let Some(t) = Tmux::start("live") else {
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
        // A whole frame: the footer (drawn last) shows its keys too.
        let footer = s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        let whole = footer.contains(" q  quit");
        if whole && (s.contains("No host to look at") || s.contains("2 Walk")) {
            break s;
        }
        assert!(start.elapsed() < SCREEN_WAIT, "{s}");
        sleep(Duration::from_millis(100));
    };
    if screen.contains("2 Walk") {
        support::skip_on_this_host("this machine has an NVIDIA GPU, so the live host opened");
        t.keys(&["q"]);
        t.assert_restored("0");
        return;
    }
    assert!(screen.contains("no NVIDIA driver seen:"), "{screen}");
    assert!(screen.contains(" p  probe IPC"), "{screen}");
    // The Python stack arrives after the host, and its status line would replace the probe's:
    // the probe runs once it is in.
    t.wait_for("read this host (GPUs, environment, Python stack)");
    t.keys(&["p"]);
    let s = t.wait_for("allocator/IPC probe: nothing measured");
    assert!(s.contains("  native: skipped: "), "{s}");
    assert!(s.contains("  torch: "), "{s}");
    t.keys(&["d"]);
    t.wait_for("Custom all-reduce crashed on expandable_segments");
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// `--no-python` in the TUI as on `check`: the live host is read, no interpreter runs. A fake
/// python3 first on PATH leaves a marker when run; the same TUI without the flag runs it (else
/// the test would prove nothing).
#[test]
fn tui_no_python_runs_no_interpreter_in_tmux() {
    use std::os::unix::fs::PermissionsExt;
    let Some(t) = Tmux::start("nopy") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("python-ran");
    for name in ["python3", "python"] {
        let p = dir.path().join(name);
        let script = format!("#!/bin/sh\necho \"$0\" >> '{}'\nexit 1\n", marker.display());
        std::fs::write(&p, script).expect("write fake python");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let tui = |flag: &str, status: &str| {
        t.keys(&["clear", "Enter"]);
        t.type_text(&format!(
            "cd {d} && env -u VIRTUAL_ENV -u CONDA_PREFIX PATH={d}:$PATH {BIN} {flag}; echo \"rc=$?\"",
            d = dir.path().display()
        ));
        t.keys(&["Enter"]);
        t.wait_for(status);
        t.keys(&["q"]);
        t.assert_restored("0");
    };
    // The status line says the stack was not collected, not that it was read.
    tui(
        "--no-python",
        "read this host (GPUs, environment; Python stack not collected: --no-python)",
    );
    assert!(
        !marker.exists(),
        "--no-python ran python: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    tui("", "read this host (GPUs, environment, Python stack)");
    assert!(
        marker.exists(),
        "without --no-python the fake python3 on PATH is run"
    );
}

/// A first-day user's long log: 30,000 lines pasted at once, read from the end, searched; the
/// 80×24 layout keeps the counts, the verdict and the essential keys; `c` copies the fix with
/// OSC 52 into tmux's buffer (`set-clipboard on`), and says why not while it is off.
#[test]
fn tui_long_paste_small_screen_and_clipboard_in_tmux() {
    // tests/support has failed (CI) or printed the skip already.
    let Some(t) = Tmux::start("long") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("big.log");
    let mut text: String = (0..29_993)
        .map(|i| {
            format!(
                "(EngineCore pid=1234) INFO [loader.py:{}] loading weights shard {i}\n",
                i % 400
            )
        })
        .collect();
    text.push_str(sm120_doctor::import::demo::LOG);
    assert_eq!(text.lines().count(), 30_000);
    std::fs::write(&big, &text).expect("write log");

    // tmux's default (`external`) keeps programs off the clipboard: the tool says so.
    launch(&t, dir.path(), "");
    t.wait_for("The fix (one remedy per finding");
    t.keys(&["c"]);
    t.wait_for("not copied: tmux has set-clipboard external");

    let out = t.run(&["load-buffer", "-b", "big", &big.display().to_string()]);
    assert!(out.status.success(), "{out:?}");
    let out = t.run(&["paste-buffer", "-p", "-d", "-b", "big", "-t", "t"]);
    assert!(out.status.success(), "{out:?}");
    t.wait_for("pasted 30,000 line(s)");
    // The log pane opens at the first matched line of the paste, at its end.
    t.keys(&["3"]);
    let s = t.wait_for("the pasted log line 29,");
    assert!(
        s.contains("▶29998 (Worker_TP1 pid=2951) Failed: Cuda error"),
        "{s}"
    );
    assert!(s.contains("of 30,000"), "{s}");
    t.keys(&["g"]);
    t.wait_for("demo:seed_crash.log line 1");
    t.keys(&["G"]);
    let s = t.wait_for("30,000 of 30,000");
    assert!(
        s.contains(" 30000 (EngineCore pid=2817) ERROR [core.py:871] EngineCore failed to"),
        "{s}"
    );
    t.keys(&["/"]);
    t.wait_for("search the logs: /");
    t.type_text("shard 12345");
    t.wait_for("search the logs: /shard 12345▏");
    t.keys(&["Enter"]);
    let s = t.wait_for("/shard 12345: 1 line(s); hit 1 of 1, the pasted log line 12,346");
    assert!(
        s.contains("12346 (EngineCore pid=1234) INFO [loader.py:345] loading weights"),
        "{s}"
    );
    t.keys(&["]"]);
    t.wait_for("matched line 4 of 6: the pasted log line 29,997");

    // The advertised minimum: counts, verdict and the keys q ? e w are on screen.
    assert!(
        t.run(&["resize-window", "-t", "t", "-x", "80", "-y", "24"])
            .status
            .success()
    );
    // The program redraws on the resize event: wait for the 80-column frame.
    let s = t.wait_until("the 80×24 frame", |s| {
        s.lines().count() >= 24
            && s.lines().all(|l| l.chars().count() <= 80)
            && s.contains("✗ 1 ! 1 ? 0")
            && !s.contains("┌ GPUs")
            // The whole frame: its footer is the last row drawn.
            && s.lines().nth(23).is_some_and(|l| l.contains(" q ") && l.contains(" w "))
    });
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines.len() >= 24, "{s}");
    assert!(lines[0].contains("✗ 1 ! 1 ? 0"), "{s}");
    assert!(
        lines[1].starts_with("✗ Custom all-reduce crashed on expandable_segments"),
        "{s}"
    );
    let keys = lines[23];
    for k in [" q ", " ? ", " e ", " w "] {
        assert!(keys.contains(k), "{k:?} in {keys:?}\n{s}");
    }
    assert!(
        !s.contains("┌ GPUs"),
        "side panels collapse first at 80 columns:\n{s}"
    );
    assert!(
        t.run(&["resize-window", "-t", "t", "-x", "120", "-y", "40"])
            .status
            .success()
    );

    // OSC 52 into tmux's buffer.
    assert!(
        t.run(&["set-option", "-g", "set-clipboard", "on"])
            .status
            .success()
    );
    t.keys(&["1"]);
    t.keys(&["c"]);
    t.wait_for("copied the fix (6 lines) to the clipboard");
    let out = t.run(&["show-buffer"]);
    let buffer = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        buffer.contains("export PYTORCH_CUDA_ALLOC_CONF=''\n"),
        "{buffer:?}"
    );
    assert!(
        buffer.contains("export VLLM_USE_DEEP_GEMM=0\n"),
        "{buffer:?}"
    );
    assert!(
        buffer.contains("vllm serve Qwen/Qwen3.6-27B-FP8"),
        "{buffer:?}"
    );

    // A pasted log is unsaved work: q asks, q again quits.
    t.keys(&["q"]);
    t.wait_for("Quit without saving?");
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// A log that shows a failure no class of the knowledge base knows, pasted into the TUI on a
/// recorded host where nothing else is wrong: the Summary leads with the failure, its walk
/// quotes the first error and its frames, and "No problem found" is never said.
#[test]
fn tui_pasted_unknown_failure_is_shown_not_an_all_clear() {
    let Some(t) = Tmux::start("unknown") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("unknown.log");
    std::fs::write(
        &log,
        "INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m...\n\
         Traceback (most recent call last):\n  \
         File \"/app/loader.py\", line 88, in load_shard\n    \
         build()\n\
         RuntimeError: frobnicator exploded while reading shard 3\n",
    )
    .expect("write log");
    let host =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kb/snapshots/sm120_ws2.yaml");
    t.keys(&["clear", "Enter"]);
    t.type_text(&format!(
        "cd {} && {BIN} --snapshot {}; echo \"rc=$?\"",
        dir.path().display(),
        host.display()
    ));
    t.keys(&["Enter"]);
    // Before the paste: no log, no error on the recorded host.
    t.wait_for("✗ 0 ! 0");
    let out = t.run(&["load-buffer", "-b", "lg", &log.display().to_string()]);
    assert!(out.status.success(), "{out:?}");
    let out = t.run(&["paste-buffer", "-p", "-d", "-b", "lg", "-t", "t"]);
    assert!(out.status.success(), "{out:?}");
    t.keys(&["1"]);
    let s = t.wait_for("The log shows a failure this tool does not recognise");
    assert!(
        !s.contains("No problem found"),
        "an all-clear over a failing log:\n{s}"
    );
    assert!(!s.contains("nothing to change"), "{s}");
    // Its walk: the first error, the frame before it.
    t.keys(&["Enter"]);
    t.wait_for("First error at pasted line 5: RuntimeError: frobnicator exploded");
    t.wait_for("Last frames: File \"/app/loader.py\", line 88, in load_shard");
    // A pasted log not saved yet: quitting asks first.
    t.keys(&["q"]);
    t.wait_for("Quit without saving?");
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// The launch editor as a person uses it: `4`, `i`, type ` --max-num-seqs 8`, Enter:
/// the words land after the user's arguments (the cursor opens at the end) and the copied fix
/// ends with them; `i`, type, Esc (and Ctrl-C) cancel: the fix is unchanged; a flag typed
/// where a command belongs is refused with the reason, the editor left open.
#[test]
fn tui_launch_editor_appends_applies_and_cancels_in_tmux() {
    let Some(t) = Tmux::start("editor") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(
        t.run(&["set-option", "-g", "set-clipboard", "on"])
            .status
            .success()
    );
    let copied = |t: &Tmux| -> String {
        t.keys(&["c"]);
        t.wait_for("copied the fix");
        let out = t.run(&["show-buffer"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    launch(&t, dir.path(), "");
    t.wait_for("The fix (one remedy per finding");
    t.keys(&["4"]);
    t.wait_for("Your launch command, as given");
    t.keys(&["i"]);
    t.wait_for("Editing your launch command · Enter applies");
    t.type_text(" --max-num-seqs 8");
    t.wait_for("FULL_AND_PIECEWISE\"}' --max-num-seqs 8");
    t.keys(&["Enter"]);
    t.wait_for("launch command parsed; the walk was re-run");
    let fix = copied(&t);
    assert!(
        fix.trim_end()
            .ends_with("FULL_AND_PIECEWISE\"}' --max-num-seqs 8"),
        "the flag after the user's arguments:\n{fix}"
    );
    assert!(
        fix.contains("\nvllm serve Qwen/Qwen3.6-27B-FP8 \\\n"),
        "the command starts the line:\n{fix}"
    );

    // Open again, type, cancel (Esc, then Ctrl-C): the fix is what was applied.
    for (cancel, n) in [("Escape", 1), ("C-c", 2)] {
        t.keys(&["i"]);
        t.wait_for("Editing your launch command");
        t.type_text(" --enforce-eager");
        t.wait_for("--max-num-seqs 8 --enforce-eager");
        t.keys(&[cancel]);
        let s = t.wait_for("edit cancelled: the launch command is unchanged");
        assert!(
            !s.contains("--max-num-seqs 8 --enforce-eager"),
            "{cancel}:\n{s}"
        );
        assert!(!s.contains("Quit without saving?"), "{cancel} quits:\n{s}");
        t.run(&["delete-buffer"]);
        assert_eq!(copied(&t), fix, "cancel {n} changed the fix");
    }

    // A flag at the start of a new line (Alt-Enter breaks the line) is refused, with why.
    t.keys(&["i"]);
    t.wait_for("Editing your launch command");
    t.keys_and_wait_for_a_redraw(&["M-Enter"]);
    t.type_text("--max-model-len 4096");
    t.wait_for("--max-model-len 4096");
    t.keys(&["Enter"]);
    let s = t.wait_for("not applied: line 6 starts with the flag --max-model-len");
    assert!(
        s.contains("Editing your launch command"),
        "still open:\n{s}"
    );
    t.keys(&["C-c"]);
    t.wait_for("edit cancelled");
    t.run(&["delete-buffer"]);
    assert_eq!(copied(&t), fix);

    // The applied edit is unsaved work: q asks, q again quits.
    t.keys(&["q"]);
    t.wait_for("Quit without saving?");
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// A paste the terminal does not bracket (tmux `paste-buffer` without `-p`) never
/// acts as keys. A 200-line log whose lines include `e`, `w`, `q`, `x`, `d` alone is pasted
/// into every pane (once with `-r`: bare line feeds, which raw mode reads as Ctrl-J): no file
/// appears in the working directory, the program keeps running, and each paste is read as
/// one more 200 lines of the pasted log.
#[test]
fn tui_unbracketed_paste_is_a_paste_in_every_pane() {
    let Some(t) = Tmux::start("rawpaste") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let logs = tempfile::tempdir().expect("tempdir");
    let log = logs.path().join("crash.log");
    let keys_if_typed = [
        "e",
        "report.md",
        "w",
        "launch.sh",
        "D",
        "d: Cuda error custom_all_reduce.cuh:455 'invalid argument'",
        "x",
        "O",
        "c",
        "q",
    ];
    let mut text: String = sm120_doctor::import::demo::LOG.to_string();
    let mut i = 0;
    while text.lines().count() < 200 {
        text.push_str(keys_if_typed[i % keys_if_typed.len()]);
        text.push('\n');
        i += 1;
    }
    assert_eq!(text.lines().count(), 200);
    std::fs::write(&log, &text).expect("write log");

    launch(&t, dir.path(), "");
    t.wait_for("The fix (one remedy per finding");
    for (n, (pane, raw)) in [("1", false), ("2", false), ("3", true), ("4", false)]
        .into_iter()
        .enumerate()
    {
        t.keys(&[pane]);
        // The pane is on the screen before the paste, so the key is not read as its first byte.
        t.wait_until(&format!("pane {pane}"), |s| match pane {
            "1" => s.contains("The fix (one remedy per finding"),
            "2" => walk_bar(s),
            "3" => s.contains("the pasted log line"),
            _ => s.contains("Your launch command, as given"),
        });
        let out = t.run(&["load-buffer", "-b", "lg", &log.display().to_string()]);
        assert!(out.status.success(), "{out:?}");
        let mut paste = vec!["paste-buffer", "-d", "-b", "lg", "-t", "t"];
        if raw {
            paste.push("-r");
        }
        let out = t.run(&paste);
        assert!(out.status.success(), "{out:?}");
        let s = t.wait_for("pasted 200 line(s)");
        assert!(t.alternate_on(), "the program ended on pane {pane}:\n{s}");
        // The log pane opens at the paste's first matched line; its border counts the lines.
        t.keys(&["3"]);
        let total = format!(" of {} ", 200 * (n + 1));
        let s = t.wait_until(&format!("the pasted log{total}lines"), |s| {
            s.contains("the pasted log line") && s.contains(&total)
        });
        assert!(!s.contains("Export report"), "{s}");
        // A status of its own, so the next paste's "pasted 200 line(s)" is a new one.
        t.keys(&["D"]);
        t.keys(&["D"]);
        t.wait_for("details off");
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.map(|e| e.file_name()))
            .collect();
        assert!(files.is_empty(), "pane {pane}: {files:?}\n{s}");
    }
    t.keys(&["q"]);
    t.wait_for("Quit without saving?");
    t.keys(&["q"]);
    t.assert_restored("0");
    let files: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").collect();
    assert!(files.is_empty(), "{files:?}");
}

/// The walk's bar ("class N of 20") is on the screen.
fn walk_bar(screen: &str) -> bool {
    screen.split("class ").skip(1).any(|rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(" of 20")
    })
}

/// Onboarding you can find: `--onboard` at 80×24 opens on "item 1 of 9"; `O` goes to
/// the next open item; the Summary has the checklist block with its done / failed / open counts.
#[test]
fn tui_onboard_opens_on_item_one_at_80_columns_in_tmux() {
    let Some(t) = Tmux::start("onboard") else {
        return;
    };
    assert!(
        t.run(&["resize-window", "-t", "t", "-x", "80", "-y", "24"])
            .status
            .success()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    t.keys(&["clear", "Enter"]);
    t.type_text(&format!(
        "cd {} && {BIN} --demo --onboard; echo \"rc=$?\"",
        dir.path().display()
    ));
    t.keys(&["Enter"]);
    let s = t.wait_for("item 1 of 9: SM120 detected");
    assert!(s.contains(" item 1 of 9 "), "the bar's position:\n{s}");
    assert!(s.contains("O  open item"), "O in the footer:\n{s}");
    t.keys(&["O"]);
    let s = t.wait_for("O: next open item");
    assert!(s.contains("? item 7 of 9: Persistence mode"), "{s}");
    t.keys(&["1"]);
    t.wait_for("Onboarding checklist: 8 done · 0 failed · 1 open");
    t.wait_for("○ item 7 of 9: Persistence mode");
    t.keys(&["q"]);
    t.assert_restored("0");
}

/// A launch pasted on pane 4 is offered as the launch (the editor opens with it;
/// Enter uses it), not read as a log; Esc on such an offer keeps the launch there was.
#[test]
fn tui_launch_pasted_on_pane_4_is_offered_as_the_launch_in_tmux() {
    let Some(t) = Tmux::start("pastelaunch") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("launch.txt");
    std::fs::write(
        &file,
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nvllm serve Qwen/Qwen3-8B --tensor-parallel-size 2\n",
    )
    .expect("write");
    launch(&t, dir.path(), "");
    t.wait_for("The fix (one remedy per finding");
    t.keys(&["4"]);
    t.wait_for("Your launch command, as given");
    let paste = |t: &Tmux| {
        let out = t.run(&["load-buffer", "-b", "l", &file.display().to_string()]);
        assert!(out.status.success(), "{out:?}");
        let out = t.run(&["paste-buffer", "-p", "-d", "-b", "l", "-t", "t"]);
        assert!(out.status.success(), "{out:?}");
    };
    paste(&t);
    let s = t.wait_for("the paste reads as a launch");
    assert!(s.contains("Editing your launch command"), "{s}");
    assert!(!s.contains("pasted 2 line(s)"), "read as a log:\n{s}");
    t.keys(&["Escape"]);
    let s = t.wait_for("edit cancelled: the launch command is unchanged");
    assert!(s.contains("Qwen/Qwen3.6-27B-FP8"), "the old launch:\n{s}");
    paste(&t);
    t.wait_for("the paste reads as a launch");
    t.keys(&["Enter"]);
    let s = t.wait_for("launch command parsed; the walk was re-run");
    assert!(s.contains("Qwen/Qwen3-8B"), "{s}");
    let files: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").collect();
    assert_eq!(files.len(), 1, "only the launch file: {files:?}");
    t.keys(&["q"]);
    t.wait_for("Quit without saving?");
    t.keys(&["q"]);
    t.assert_restored("0");
}

#[test]
fn tui_escape_sequences_in_a_log_are_shown_not_sent_in_tmux() {
    let Some(t) = Tmux::start("escapes") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    // An OSC 0 would set the pane's title, an OSC 52 the clipboard, a CSI 2J clear the screen.
    let log = "INFO start\nERROR \u{1b}]0;PWNED\u{7}title \u{1b}]52;c;cm0gLXJmIH4=\u{7}clip \u{1b}[2Jclear\n";
    std::fs::write(dir.path().join("evil.log"), log).expect("write log");
    t.keys(&["clear", "Enter"]);
    let cmd = format!(
        "cd {} && {BIN} --demo --log evil.log; echo \"rc=$?\"",
        dir.path().display()
    );
    t.type_text(&cmd);
    t.keys(&["Enter"]);
    t.wait_for("2 Walk");
    t.keys(&["3"]);
    // Shown escaped, as the CLI shows them (the line wraps before the CSI).
    t.wait_for("ERROR \\x1b]0;PWNED\\x07title \\x1b]52;c;cm0gLXJmIH4=\\x07clip");
    let s = t.wait_for("\\x1b[2Jclear");
    assert!(s.contains("── evil.log"), "{s}");
    let title = t.run(&["display-message", "-p", "-t", "t", "#{pane_title}"]);
    let title = String::from_utf8_lossy(&title.stdout);
    assert!(
        !title.contains("PWNED"),
        "the OSC 0 reached tmux: title {title:?}"
    );
    t.keys(&["q"]);
    t.assert_restored("0");
}
