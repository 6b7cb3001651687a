//! Tests that cannot run here must not pass silently.
//!
//! A test that needs an outside tool (tmux, shellcheck, python3, bash, curl, git, patch, promtool,
//! node_exporter, systemd-analyze, zsh, fish, man) asks [`require_tools`] / [`require_tool`]
//! first. With the tool on PATH it runs. Without it:
//! - under `CI=true` the test **fails**, naming the missing tool and its Debian package
//!   (`.ci/run` installs them all), so CI cannot mistake a skipped test for a passing one;
//! - elsewhere it prints a `SKIPPED` line that `cargo test` shows (past libtest's output capture,
//!   which only catches `print!`/`eprint!`) and the test, or the part of it that needs the tool
//!   (`*_for`), is skipped.
//!
//! A tool may be named by alternatives, `prometheus-node-exporter|node_exporter`: the first found.
//!
//! [`skip_on_this_host`] is for a test whose subject is absent on this machine for a reason that
//! is not a missing tool (a test of the no-GPU path on a host with a GPU): it is printed the same
//! way but never fails, because no install makes it runnable.
//!
//! [`processes`]: the processes carrying a marker, for the tests that nothing a run starts
//! survives it.
#![allow(dead_code)]

pub mod processes;

use std::io::Write;
use std::path::{Path, PathBuf};

/// Is `CI` set to `true` (as GitHub Actions, GitLab CI and `.ci/run` set it)?
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Where `tool` is: the first of its `|`-separated names that is an executable file in a `PATH`
/// directory.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    tool.split('|')
        .find_map(|name| dirs.iter().map(|d| d.join(name)).find(|p| is_executable(p)))
}

/// Is `tool` on PATH (see [`which`])?
pub fn have(tool: &str) -> bool {
    which(tool).is_some()
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The Debian package that installs `name`, where it is not `name` itself.
fn debian_package(name: &str) -> &str {
    match name {
        "promtool" => "prometheus",
        "node_exporter" | "prometheus-node-exporter" => "prometheus-node-exporter",
        "systemd-analyze" => "systemd",
        "man" => "man-db",
        "timeout" => "coreutils",
        other => other,
    }
}

/// `promtool (apt-get install prometheus)`; alternatives joined with "or".
fn describe(tool: &str) -> String {
    let names: Vec<&str> = tool.split('|').collect();
    let package = debian_package(names[0]);
    format!("{} (apt-get install {package})", names.join(" or "))
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

/// The paths of `tools`, in order; `None` after the failure or skip the module comment describes.
#[track_caller]
pub fn require(part: &str, tools: &[&str]) -> Option<Vec<PathBuf>> {
    let found: Vec<Option<PathBuf>> = tools.iter().map(|t| which(t)).collect();
    let missing: Vec<String> = tools
        .iter()
        .zip(&found)
        .filter(|(_, p)| p.is_none())
        .map(|(t, _)| describe(t))
        .collect();
    if missing.is_empty() {
        return Some(found.into_iter().flatten().collect());
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
    None
}

/// `true` when every tool is on PATH; otherwise a failure under `CI=true`, else a visible skip
/// and `false` (the test returns early).
#[must_use]
#[track_caller]
pub fn require_tools(tools: &[&str]) -> bool {
    require("", tools).is_some()
}

/// [`require_tools`] for one part of a test (`part` says which, e.g. "the --diff-url leg"); on
/// `false` the caller skips that part and goes on.
#[must_use]
#[track_caller]
pub fn require_tools_for(part: &str, tools: &[&str]) -> bool {
    require(part, tools).is_some()
}

/// One tool's path, with [`require_tools`]'s failure or skip when it is missing.
#[must_use]
#[track_caller]
pub fn require_tool(tool: &str) -> Option<PathBuf> {
    require("", &[tool]).and_then(|mut v| v.pop())
}

/// [`require_tool`] for one part of a test.
#[must_use]
#[track_caller]
pub fn require_tool_for(part: &str, tool: &str) -> Option<PathBuf> {
    require(part, &[tool]).and_then(|mut v| v.pop())
}

/// A visible skip for a condition of this host that no install changes (see the module comment).
pub fn skip_on_this_host(why: &str) {
    show(&format!("SKIPPED {}: {why}", test_name()));
}
