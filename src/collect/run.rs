//! Run a child process under a timeout, keeping whatever it printed before the deadline.
//!
//! The child gets its own process group; on timeout the whole group is killed, so nothing it
//! started is left behind.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How a child run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Exited with this code (`None`: killed by a signal).
    Exited(Option<i32>),
    /// Still running at the deadline; killed.
    TimedOut,
    /// Could not be started at all.
    SpawnFailed(String),
}

#[derive(Debug, Clone)]
pub struct RunOutput {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

fn reader<R: Read + Send + 'static>(mut r: R) -> Arc<Mutex<Vec<u8>>> {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let out = Arc::clone(&buf);
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut b) = out.lock() {
                        b.extend_from_slice(&chunk[..n]);
                    }
                }
            }
        }
    });
    buf
}

fn take(buf: &Arc<Mutex<Vec<u8>>>) -> String {
    buf.lock()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for the child.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Run `cmd` (stdin closed, stdout/stderr captured) and wait at most `timeout`.
pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> RunOutput {
    let start = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
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
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    let deadline = start + timeout;
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status.code()),
            Ok(None) => {}
            Err(e) => break Ending::SpawnFailed(format!("waiting for the child failed: {e}")),
        }
        if Instant::now() >= deadline {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            break Ending::TimedOut;
        }
        thread::sleep(Duration::from_millis(5));
    };
    // Give the readers a moment to drain what the child wrote last.
    if ending != Ending::TimedOut {
        thread::sleep(Duration::from_millis(2));
    }
    // Anything the child started in its group goes too, even after a normal exit.
    kill_group(child.id());
    let stdout = out.as_ref().map(take).unwrap_or_default();
    let stderr = err.as_ref().map(take).unwrap_or_default();
    RunOutput {
        ending,
        stdout,
        stderr,
        elapsed: start.elapsed(),
    }
}

/// The last non-empty line of `text`, shortened for a one-line reason.
pub fn last_line(text: &str) -> String {
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
