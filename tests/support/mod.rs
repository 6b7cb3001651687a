//! Tests that cannot run here must not pass silently.
//!
//! A test that needs an outside tool (tmux, shellcheck, python3, bash, curl, git, patch) asks
//! [`require_tools`] first. With the tool on PATH it runs. Without it:
//! - under `CI=true` the test **fails**, naming the missing tool (`.ci/run` installs them all),
//!   so CI cannot mistake a skipped end-to-end test for a passing one;
//! - elsewhere it prints a `SKIPPED` line that `cargo test` shows (past libtest's output capture,
//!   which only catches `print!`/`eprint!`) and the test returns early.
//!
//! [`skip_on_this_host`] is for a test whose subject is absent on this machine for a reason that
//! is not a missing tool (a test of the no-GPU path on a host with a GPU): it is printed the same
//! way but never fails, because no install makes it runnable.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

/// Is `CI` set to `true` (as GitHub Actions, GitLab CI and `.ci/run` set it)?
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Is `tool` an executable file in a `PATH` directory?
pub fn have(tool: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| is_executable(&dir.join(tool)))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => "this test".to_string(),
    }
}

/// Write a line that `cargo test` shows even for a passing test.
fn show(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The tools missing from `tools`, or what to do about them (see the module comment): `true`
/// when all are on PATH; otherwise a failure under `CI=true`, else a visible skip and `false`.
#[must_use]
#[track_caller]
pub fn require_tools(tools: &[&str]) -> bool {
    require_tools_for("", tools)
}

/// [`require_tools`] for one part of a test (`part` says which, e.g. "the --diff-url leg"); on
/// `false` the caller skips that part and goes on.
#[must_use]
#[track_caller]
pub fn require_tools_for(part: &str, tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    let what = if part.is_empty() {
        test_name()
    } else {
        format!("{} ({part})", test_name())
    };
    let why = format!("not on PATH: {}", missing.join(", "));
    if in_ci() {
        panic!(
            "{what} cannot run: {why}. CI=true, so a missing tool fails the test; \
             install it (.ci/run does)."
        );
    }
    show(&format!("SKIPPED {what}: {why} (under CI=true this fails)"));
    false
}

/// A visible skip for a condition of this host that no install changes (see the module comment).
pub fn skip_on_this_host(why: &str) {
    show(&format!("SKIPPED {}: {why}", test_name()));
}
