//! The generated PR #43923 apply script, run for real by bash against (a) a temporary git
//! repository shaped like vLLM and (b) a fake site-packages with a `python` wrapper.
//!
//! The diff is a small one of our own (the PR's real diff is not known to this project); what is
//! tested is the script's behaviour: dry-run, apply, re-apply, rollback, and the refusals.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

/// The tools the script needs on the user's host (and the tests need to build its inputs).
/// Without one a test fails under `CI=true` and prints a skip elsewhere (tests/support).
const SCRIPT_TOOLS: &[&str] = &["bash", "git", "patch", "python3", "awk", "sed"];

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("command runs")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = run(Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

const CAR_BEFORE: &str = "\"\"\"Custom all-reduce (a stand-in for vLLM's file).\"\"\"\n\n\nclass CustomAllreduce:\n    def capture(self):\n        return \"graph buffers registered\"\n";
const CAR_AFTER: &str = "\"\"\"Custom all-reduce (a stand-in for vLLM's file).\"\"\"\n\n\nclass CustomAllreduce:\n    def capture(self):\n        # expandable_segments is switched off while buffers are registered\n        return \"graph buffers registered\"\n\n\nPATCHED = True\n";

/// Files of the fake vLLM tree (relative path → content).
fn vllm_files(version: &str) -> Vec<(&'static str, String)> {
    vec![
        ("vllm/__init__.py", "\"\"\"fake vLLM\"\"\"\n".to_string()),
        (
            "vllm/_version.py",
            format!("__version__ = version = '{version}'\n"),
        ),
        ("vllm/distributed/__init__.py", String::new()),
        (
            "vllm/distributed/device_communicators/__init__.py",
            String::new(),
        ),
        (
            "vllm/distributed/device_communicators/custom_all_reduce.py",
            CAR_BEFORE.to_string(),
        ),
        (
            "tests/distributed/test_custom_all_reduce.py",
            "def test_x():\n    assert True\n".to_string(),
        ),
        ("csrc/custom_all_reduce.cuh", "// kernel\n".to_string()),
    ]
}

/// An "upstream" repo with tag v0.24.0 and `refs/pull/43923/head`, and the PR's diff.
struct Upstream {
    _dir: tempfile::TempDir,
    path: PathBuf,
    diff: String,
}

fn upstream() -> Upstream {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("upstream");
    std::fs::create_dir_all(&path).expect("mkdir");
    git(&path, &["init", "-q", "-b", "main"]);
    for (f, t) in vllm_files("0.24.0") {
        write(&path.join(f), &t);
    }
    git(&path, &["add", "-A"]);
    git(&path, &["commit", "-qm", "v0.24.0"]);
    git(&path, &["tag", "v0.24.0"]);
    // main moves on after the release; the PR forks from there. The script must take only the
    // PR's own commits, not this one.
    write(
        &path.join("vllm/__init__.py"),
        "\"\"\"fake vLLM, newer main\"\"\"\n",
    );
    git(&path, &["commit", "-qam", "main moves on"]);
    git(&path, &["checkout", "-qb", "pr"]);
    write(
        &path.join("vllm/distributed/device_communicators/custom_all_reduce.py"),
        CAR_AFTER,
    );
    write(
        &path.join("tests/distributed/test_custom_all_reduce.py"),
        "def test_x():\n    assert True\n\n\ndef test_toggle():\n    assert True\n",
    );
    git(&path, &["commit", "-qam", "the PR"]);
    let head = git(&path, &["rev-parse", "HEAD"]);
    git(&path, &["update-ref", "refs/pull/43923/head", &head]);
    let diff = git(&path, &["diff", "main", "pr"]) + "\n";
    git(&path, &["checkout", "-q", "main"]);
    Upstream {
        _dir: dir,
        path,
        diff,
    }
}

/// Every file under `root` except `.git/`, with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let e = e.expect("entry");
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("prefix").display().to_string();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Generate the script with the real binary.
fn script(dir: &Path) -> PathBuf {
    let path = dir.join("apply-pr-43923.sh");
    let out = run(Command::new(BIN)
        .args(["patch-script", "--pr", "43923", "-o"])
        .arg(&path));
    assert!(
        out.status.success(),
        "patch-script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn bash(script: &Path, args: &[&str], extra: &[(&str, &Path)]) -> Run {
    let mut cmd = Command::new("bash");
    cmd.arg(script).args(args);
    for (flag, p) in extra {
        cmd.arg(flag).arg(p);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1");
    let out = run(&mut cmd);
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn rollback_script(state: &Path) -> PathBuf {
    let mut found = Vec::new();
    for e in std::fs::read_dir(state).expect("state dir") {
        let p = e.expect("entry").path().join("rollback.sh");
        if p.exists() {
            found.push(p);
        }
    }
    assert_eq!(found.len(), 1, "one backup folder: {found:?}");
    found.remove(0)
}

#[test]
fn generated_script_passes_shellcheck() {
    if !support::require_tools(&["shellcheck"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let s = script(dir.path());
    let out = run(Command::new("shellcheck").arg(&s));
    assert!(
        out.status.success(),
        "shellcheck:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = std::fs::read_to_string(&s).expect("read");
    assert!(text.contains("set -euo pipefail"));
}

#[test]
fn checkout_dry_run_apply_reapply_rollback() {
    if !support::require_tools(SCRIPT_TOOLS) {
        return;
    }
    let up = upstream();
    let dir = tempfile::tempdir().expect("tempdir");
    let s = script(dir.path());
    let co = dir.path().join("vllm-checkout");
    let out = run(Command::new("git")
        .arg("clone")
        .arg("-q")
        .arg(&up.path)
        .arg(&co));
    assert!(out.status.success());
    // The user's checkout is the release tag, older than the PR's fork point.
    git(&co, &["checkout", "-q", "v0.24.0"]);
    let state = dir.path().join("state");
    let common: Vec<(&str, &Path)> = vec![
        ("--vllm-dir", &co),
        ("--remote", &up.path),
        ("--state-dir", &state),
    ];
    let before = snapshot(&co);

    let r = bash(&s, &["--python", "python3"], &common);
    assert!(r.ok, "dry run: {}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("dry run: the diff applies cleanly; nothing was changed"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("ignores") || r.stdout.contains("misses PYTORCH_ALLOC_CONF"),
        "{}",
        r.stdout
    );
    assert_eq!(snapshot(&co), before, "dry run changed files");
    assert!(!state.exists(), "dry run wrote backups");

    // The embedded knowledge base pins no head commit or sha256 for #43923, so --apply alone
    // is refused (printing both) and nothing changes.
    let r = bash(&s, &["--apply", "--python", "python3"], &common);
    assert!(!r.ok, "unpinned apply was not refused: {}", r.stdout);
    assert!(
        r.stderr.contains("--accept-unpinned") && r.stdout.contains("PR head commit: "),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert_eq!(snapshot(&co), before, "refused apply changed files");
    assert!(!state.exists(), "refused apply wrote backups");

    let r = bash(
        &s,
        &["--apply", "--accept-unpinned", "--python", "python3"],
        &common,
    );
    assert!(r.ok, "apply: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("applied PR #43923"), "{}", r.stdout);
    // The rollback hint is one shell word however odd the path.
    assert!(r.stdout.contains("to undo it: bash /"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("imported: vllm.distributed.device_communicators.custom_all_reduce"),
        "{}",
        r.stdout
    );
    let applied = snapshot(&co);
    assert_eq!(
        applied["vllm/distributed/device_communicators/custom_all_reduce.py"],
        CAR_AFTER.as_bytes()
    );
    // Only the PR's own files changed (not main's later commit to vllm/__init__.py).
    let changed: Vec<_> = applied
        .keys()
        .filter(|k| before.get(*k) != applied.get(*k))
        .collect();
    assert_eq!(
        changed,
        vec![
            "tests/distributed/test_custom_all_reduce.py",
            "vllm/distributed/device_communicators/custom_all_reduce.py"
        ]
    );

    let r = bash(
        &s,
        &["--apply", "--accept-unpinned", "--python", "python3"],
        &common,
    );
    assert!(r.ok, "re-apply: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("already applied"), "{}", r.stdout);
    assert_eq!(snapshot(&co), applied, "second run changed files");

    let rb = rollback_script(&state);
    let out = run(Command::new("bash").arg(&rb));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(snapshot(&co), before, "rollback is not byte-for-byte");
    assert_eq!(git(&co, &["status", "--porcelain"]), "");
}

#[test]
fn checkout_refusals_leave_every_file_untouched() {
    if !support::require_tools(SCRIPT_TOOLS) {
        return;
    }
    let up = upstream();
    let dir = tempfile::tempdir().expect("tempdir");
    let s = script(dir.path());
    let co = dir.path().join("vllm");
    let out = run(Command::new("git")
        .arg("clone")
        .arg("-q")
        .arg(&up.path)
        .arg(&co));
    assert!(out.status.success());
    let state = dir.path().join("state");
    let common: Vec<(&str, &Path)> = vec![
        ("--vllm-dir", &co),
        ("--remote", &up.path),
        ("--state-dir", &state),
    ];

    // A version mismatch.
    let before = snapshot(&co);
    let r = bash(&s, &["--apply", "--expect-version", "0.25"], &common);
    assert!(!r.ok);
    assert!(
        r.stderr
            .contains("vLLM version 0.24.0, but this script was written for 0.25.x"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("nothing was changed"), "{}", r.stderr);
    assert_eq!(snapshot(&co), before);
    // ... which --force overrides (dry run, still checked).
    let r = bash(&s, &["--expect-version", "0.25", "--force"], &common);
    assert!(r.ok, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("going on because of --force"),
        "{}",
        r.stdout
    );
    assert_eq!(snapshot(&co), before);

    // A diff that does not apply.
    let bad = dir.path().join("bad.diff");
    write(
        &bad,
        &up.diff.replace(
            "        return \"graph buffers registered\"",
            "        return \"something else\"",
        ),
    );
    let r = bash(
        &s,
        &["--apply"],
        &[common.clone(), vec![("--diff-file", &bad)]].concat(),
    );
    assert!(!r.ok);
    assert!(r.stderr.contains("does not apply"), "{}", r.stderr);
    assert_eq!(snapshot(&co), before);
    assert!(!state.exists());

    // A dirty tree.
    let f = co.join("vllm/__init__.py");
    write(&f, "\"\"\"fake vLLM, edited\"\"\"\n");
    let dirty = snapshot(&co);
    let r = bash(&s, &["--apply"], &common);
    assert!(!r.ok);
    assert!(r.stderr.contains("uncommitted changes"), "{}", r.stderr);
    assert!(r.stderr.contains("vllm/__init__.py"), "{}", r.stderr);
    assert_eq!(snapshot(&co), dirty);
    assert!(!state.exists());
}

/// A site-packages with the fake vllm package and its dist-info, and a `python` that uses it.
fn site_packages(dir: &Path, version: &str) -> (PathBuf, PathBuf) {
    let site = dir.join("site-packages");
    for (f, t) in vllm_files(version) {
        if f.starts_with("vllm/") && f != "vllm/_version.py" {
            write(&site.join(f), &t);
        }
    }
    write(
        &site.join(format!("vllm-{version}.dist-info/METADATA")),
        &format!("Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n"),
    );
    write(&site.join(format!("vllm-{version}.dist-info/RECORD")), "");
    let python = dir.join("bin/python");
    write(
        &python,
        &format!(
            "#!/bin/sh\nPYTHONPATH='{}'${{PYTHONPATH:+:$PYTHONPATH}} exec python3 \"$@\"\n",
            site.display()
        ),
    );
    let out = run(Command::new("chmod").arg("+x").arg(&python));
    assert!(out.status.success());
    (site, python)
}

#[test]
fn installed_package_dry_run_apply_reapply_rollback() {
    if !support::require_tools(SCRIPT_TOOLS) {
        return;
    }
    let up = upstream();
    let dir = tempfile::tempdir().expect("tempdir");
    let s = script(dir.path());
    let (site, python) = site_packages(dir.path(), "0.24.0");
    let diff = dir.path().join("pr.diff");
    write(&diff, &up.diff);
    let state = dir.path().join("state");
    let before = snapshot(&site);
    // The HTTPS path, pointed at a local file (curl reads file:// URLs too).
    let url = format!("file://{}", diff.display());
    let common: Vec<(&str, &Path)> = vec![("--python", &python), ("--state-dir", &state)];

    // The script downloads with curl when it has it, else with the target Python's urllib (which
    // this run then exercises instead); CI must cover the curl path.
    let curl = support::require_tools_for("the curl download in the --diff-url leg", &["curl"]);
    let r = bash(&s, &["--diff-url", &url], &common);
    let how = if curl { "curl" } else { "python urllib" };
    assert!(r.ok, "dry run ({how}): {}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("(installed)"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("skipping tests/distributed/test_custom_all_reduce.py"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("nothing was changed"), "{}", r.stdout);
    assert_eq!(snapshot(&site), before, "dry run changed files");

    let with_diff = [common.clone(), vec![("--diff-file", diff.as_path())]].concat();
    let r = bash(&s, &["--apply"], &with_diff);
    assert!(
        !r.ok && r.stderr.contains("--accept-unpinned"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&site), before, "refused apply changed files");
    let r = bash(&s, &["--apply", "--accept-unpinned"], &with_diff);
    assert!(r.ok, "apply: {}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("imported: vllm.distributed"),
        "{}",
        r.stdout
    );
    let applied = snapshot(&site);
    assert_eq!(
        applied["vllm/distributed/device_communicators/custom_all_reduce.py"],
        CAR_AFTER.as_bytes()
    );
    // Only the patched file changed: no .orig, no bytecode, no test files.
    let changed: Vec<_> = applied
        .keys()
        .filter(|k| before.get(*k) != applied.get(*k))
        .collect();
    assert_eq!(
        changed,
        vec!["vllm/distributed/device_communicators/custom_all_reduce.py"]
    );

    let r = bash(&s, &["--apply", "--accept-unpinned"], &with_diff);
    assert!(r.ok, "re-apply: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("already applied"), "{}", r.stdout);
    assert_eq!(snapshot(&site), applied);

    let out = run(Command::new("bash").arg(rollback_script(&state)));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(snapshot(&site), before, "rollback is not byte-for-byte");
}

#[test]
fn installed_package_refusals_leave_every_file_untouched() {
    if !support::require_tools(SCRIPT_TOOLS) {
        return;
    }
    let up = upstream();
    let dir = tempfile::tempdir().expect("tempdir");
    let s = script(dir.path());
    let state = dir.path().join("state");

    // A version mismatch.
    let (site, python) = site_packages(&dir.path().join("old"), "0.23.0");
    let diff = dir.path().join("pr.diff");
    write(&diff, &up.diff);
    let before = snapshot(&site);
    let args: Vec<(&str, &Path)> = vec![
        ("--python", &python),
        ("--state-dir", &state),
        ("--diff-file", &diff),
    ];
    let r = bash(&s, &["--apply"], &args);
    assert!(!r.ok);
    assert!(
        r.stderr
            .contains("vLLM version 0.23.0, but this script was written for 0.24.x"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&site), before);

    // A diff that touches compiled sources.
    let (site, python) = site_packages(&dir.path().join("cur"), "0.24.0");
    let before = snapshot(&site);
    let csrc = dir.path().join("csrc.diff");
    write(
        &csrc,
        &format!(
            "{}diff --git a/csrc/custom_all_reduce.cuh b/csrc/custom_all_reduce.cuh\n--- a/csrc/custom_all_reduce.cuh\n+++ b/csrc/custom_all_reduce.cuh\n@@ -1 +1 @@\n-// kernel\n+// kernel 2\n",
            up.diff
        ),
    );
    let r = bash(
        &s,
        &["--apply"],
        &[
            ("--python", &python),
            ("--state-dir", &state),
            ("--diff-file", &csrc),
        ],
    );
    assert!(!r.ok);
    assert!(
        r.stderr
            .contains("compiled sources (csrc/custom_all_reduce.cuh)"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&site), before);

    // A diff that does not apply.
    let bad = dir.path().join("bad.diff");
    write(
        &bad,
        &up.diff.replace("class CustomAllreduce:", "class Other:"),
    );
    let r = bash(
        &s,
        &["--apply"],
        &[
            ("--python", &python),
            ("--state-dir", &state),
            ("--diff-file", &bad),
        ],
    );
    assert!(!r.ok);
    assert!(r.stderr.contains("does not apply"), "{}", r.stderr);
    assert_eq!(snapshot(&site), before);
    assert!(!state.exists(), "a refusal wrote backups");

    // The wrong Python.
    let r = bash(
        &s,
        &["--python", "/nonexistent/python"],
        &[("--state-dir", &state)],
    );
    assert!(!r.ok);
    assert!(
        r.stderr.contains("Python not found: /nonexistent/python"),
        "{}",
        r.stderr
    );
}

/// The script generated from the embedded knowledge base with `pins` added to PR #43923's
/// `prs:` entry (e.g. `head_commit: "…"`).
fn pinned_script(dir: &Path, pins: &[String]) -> PathBuf {
    let kb = dir.join("kb");
    std::fs::create_dir_all(&kb).expect("mkdir");
    for (name, text) in sm120_doctor::kb::EMBEDDED {
        let text = if *name == "remedies.yaml" {
            let extra: String = pins.iter().map(|p| format!("    {p}\n")).collect();
            text.replacen("  - pr: 43923\n", &format!("  - pr: 43923\n{extra}"), 1)
        } else {
            text.to_string()
        };
        write(&kb.join(name), &text);
    }
    let path = dir.join("apply-pinned.sh");
    let out = run(Command::new(BIN)
        .args(["patch-script", "--pr", "43923", "--kb"])
        .arg(&kb)
        .arg("-o")
        .arg(&path));
    assert!(
        out.status.success(),
        "patch-script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// Hostile review, apply script: a pinned head commit or diff sha256 is verified before anything is applied;
/// a pinned, matching diff needs no --accept-unpinned.
#[test]
fn pinned_head_and_sha256_are_verified() {
    if !support::require_tools(SCRIPT_TOOLS) {
        return;
    }
    let up = upstream();
    let head = git(&up.path, &["rev-parse", "refs/pull/43923/head"]);
    let checkout = |dir: &Path| {
        let co = dir.join("vllm-checkout");
        let out = run(Command::new("git")
            .arg("clone")
            .arg("-q")
            .arg(&up.path)
            .arg(&co));
        assert!(out.status.success());
        git(&co, &["checkout", "-q", "v0.24.0"]);
        co
    };
    // The sha256 the script computes, from an unpinned dry run.
    let dir = tempfile::tempdir().expect("tempdir");
    let co = checkout(dir.path());
    let s = script(dir.path());
    let common: Vec<(&str, &Path)> = vec![("--vllm-dir", &co), ("--remote", &up.path)];
    let r = bash(&s, &["--python", "python3"], &common);
    assert!(r.ok, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!("PR head commit: {head}")),
        "{}",
        r.stdout
    );
    let sha = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("diff sha256:"))
        .and_then(|l| l.split_whitespace().next())
        .expect("the dry run prints the sha256")
        .to_string();
    assert_eq!(sha.len(), 64, "{sha}");
    let wrong = "0".repeat(64);
    let wrong_head = "1".repeat(40);

    for (pins, ok, why) in [
        (vec![format!("head_commit: \"{head}\"")], true, ""),
        (vec![format!("diff_sha256: \"{sha}\"")], true, ""),
        (
            vec![format!("head_commit: \"{wrong_head}\"")],
            false,
            "but the knowledge base pins 1111",
        ),
        (
            vec![
                format!("head_commit: \"{head}\""),
                format!("diff_sha256: \"{wrong}\""),
            ],
            false,
            "but the knowledge base pins 0000",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let co = checkout(dir.path());
        let s = pinned_script(dir.path(), &pins);
        let state = dir.path().join("state");
        let before = snapshot(&co);
        let common: Vec<(&str, &Path)> = vec![
            ("--vllm-dir", &co),
            ("--remote", &up.path),
            ("--state-dir", &state),
        ];
        let r = bash(&s, &["--apply", "--python", "python3"], &common);
        if ok {
            assert!(r.ok, "{pins:?}: {}{}", r.stdout, r.stderr);
            assert!(!r.stdout.contains("pins neither"), "{}", r.stdout);
            assert_ne!(snapshot(&co), before, "{pins:?}: nothing applied");
        } else {
            assert!(!r.ok, "{pins:?}: applied a diff that is not the pinned one");
            assert!(r.stderr.contains(why), "{pins:?}: {}", r.stderr);
            assert_eq!(snapshot(&co), before, "{pins:?}: refused but changed files");
        }
    }
}

/// Hostile review, apply script: the version is read from the files that will be patched (vllm/_version.py)
/// before the package metadata, and every Python step has a time limit.
#[test]
fn installed_version_comes_from_the_package_files_and_python_has_a_time_limit() {
    if !support::require_tools(SCRIPT_TOOLS) {
        return;
    }
    let up = upstream();
    let dir = tempfile::tempdir().expect("tempdir");
    let s = script(dir.path());
    // dist-info says 0.23.0 (stale metadata), the package's own _version.py says 0.24.1.
    let (site, python) = site_packages(dir.path(), "0.23.0");
    write(
        &site.join("vllm/_version.py"),
        "__version__ = version = '0.24.1'\n",
    );
    let diff = dir.path().join("pr.diff");
    write(&diff, &up.diff);
    let common: Vec<(&str, &Path)> = vec![("--python", &python), ("--diff-file", &diff)];
    let r = bash(&s, &[], &common);
    assert!(r.ok, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("vLLM version 0.24.1 (written for 0.24.x)"),
        "{}",
        r.stdout
    );

    // A Python that hangs: the script gives up after --python-timeout, not never.
    if !support::require_tools_for("the --python-timeout leg", &["timeout"]) {
        return;
    }
    let slow = dir.path().join("bin/slow-python");
    write(&slow, "#!/bin/sh\nexec sleep 300\n");
    let out = run(Command::new("chmod").arg("+x").arg(&slow));
    assert!(out.status.success());
    let start = std::time::Instant::now();
    let r = bash(&s, &["--python-timeout", "1"], &[("--python", &slow)]);
    assert!(!r.ok, "{}", r.stdout);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(r.stderr.contains("longer than 1 s"), "{}", r.stderr);
}
