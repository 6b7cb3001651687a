//! Hostile inputs, one case per defect found by a hostile review (tests/hostile/README.md maps each defect to its
//! case and test). Every run of the binary here is under a watchdog: a hang fails the test
//! instead of stalling CI. A missing tmux fails the tmux case under `CI=true` and prints a skip
//! elsewhere (tests/support).

use crate::support;

use proptest::prelude::*;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hostile");

fn case(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

/// Run with a watchdog: past `limit` the child is killed and the test fails (a hang).
fn run_limited(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id() as i32;
    // The output is read on another thread (a child writing more than a pipe holds would
    // otherwise block); this one kills the child past the limit.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("output"),
        Err(_) => {
            // SAFETY: killing the child this test spawned.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            let out = rx.recv().ok().and_then(Result::ok);
            panic!(
                "hung for more than {limit:?}: {cmd:?}\nstderr: {}",
                out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_default()
            );
        }
    }
}

fn doctor(args: &[&str]) -> Output {
    run_limited(
        Command::new(BIN).args(args).stdin(Stdio::null()),
        Duration::from_secs(60),
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("cstring");
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo: {}", std::io::Error::last_os_error());
}

/// The embedded knowledge base written to a directory, with `edit(name, text)` applied.
fn kb_dir(dir: &Path, edit: impl Fn(&str, String) -> String) -> PathBuf {
    let kb = dir.join("kb");
    std::fs::create_dir_all(&kb).expect("mkdir");
    for (name, text) in sm120_doctor::kb::EMBEDDED {
        std::fs::write(kb.join(name), edit(name, text.to_string())).expect("write kb");
    }
    kb
}

/// A YAML double-quoted scalar (JSON strings are valid YAML).
fn yq(s: &str) -> String {
    serde_json::to_string(s).expect("json string")
}

/// Replace, inside the block that starts with the line `start`, the line beginning with
/// `field` (and, for a list field, its `- ` items) by `with`.
fn replace_in_block(text: &str, start: &str, field: &str, with: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines
        .iter()
        .position(|l| l.trim_end() == start)
        .unwrap_or_else(|| panic!("{start:?} not found"));
    let at = lines[from + 1..]
        .iter()
        .position(|l| l.starts_with(field))
        .map(|p| p + from + 1)
        .unwrap_or_else(|| panic!("{field:?} not found after {start:?}"));
    let indent = field.len() - field.trim_start().len();
    let mut end = at + 1;
    while end < lines.len()
        && (lines[end].trim_start().starts_with("- ")
            && lines[end].len() - lines[end].trim_start().len() > indent)
    {
        end += 1;
    }
    let mut out: Vec<String> = lines[..at].iter().map(|s| s.to_string()).collect();
    out.push(with.to_string());
    out.extend(lines[end..].iter().map(|s| s.to_string()));
    out.join("\n") + "\n"
}

#[derive(serde::Deserialize)]
struct Injection {
    title: String,
    limits: Vec<String>,
    why: String,
}

// ----- 1. Command injection through --kb into patch-script -----

#[test]
fn item1_kb_strings_cannot_run_commands_in_the_patch_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pwn = dir.path().join("PWN");
    let pwn_s = pwn.display().to_string();
    let text = std::fs::read_to_string(case("01_injection_remedy.yaml")).expect("case");
    let inj: Injection = serde_saphyr::from_str(&text).expect("case parses");
    let sub = |s: &str| s.replace("PWN", &pwn_s);
    let kb = kb_dir(dir.path(), |name, text| {
        if name != "remedies.yaml" {
            return text;
        }
        let t = replace_in_block(
            &text,
            "  - id: apply_pr_43923",
            "    title:",
            &format!("    title: {}", yq(&sub(&inj.title))),
        );
        let limits: Vec<String> = inj.limits.iter().map(|l| yq(&sub(l))).collect();
        let t = replace_in_block(
            &t,
            "  - id: apply_pr_43923",
            "    limits:",
            &format!("    limits: [{}]", limits.join(", ")),
        );
        replace_in_block(
            &t,
            "  - pr: 43923",
            "    why:",
            &format!("    why: {}", yq(&sub(&inj.why))),
        )
    });
    // kb lint accepts it but warns about each string.
    let o = doctor(&["kb", "lint", kb.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lint = stdout(&o) + &stderr(&o);
    for want in [
        "its title holds",
        "its limit holds",
        "PR #43923: its why holds",
    ] {
        assert!(lint.contains(want), "{want:?} missing in:\n{lint}");
    }
    let script = dir.path().join("apply.sh");
    let o = doctor(&[
        "patch-script",
        "--pr",
        "43923",
        "--kb",
        kb.to_str().expect("utf8"),
        "--python",
        &format!("python3 $(touch {pwn_s})"),
        "-o",
        script.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let body = std::fs::read_to_string(&script).expect("script");
    let o = run_limited(
        Command::new("bash").arg("-n").arg(&script),
        Duration::from_secs(20),
    );
    assert!(o.status.success(), "bash -n: {}", stderr(&o));
    // Run it: --help, a dry run that stops early, and one that prints the limits.
    for args in [
        vec!["--help"],
        vec!["--vllm-dir", "/nonexistent-sm120"],
        vec!["--python", "/nonexistent-python"],
    ] {
        let _ = run_limited(
            Command::new("bash").arg(&script).args(&args),
            Duration::from_secs(30),
        );
    }
    // The limits() function alone, called: its words print as text.
    let o = run_limited(
        Command::new("bash")
            .arg("-c")
            .arg("say() { printf '%s\\n' \"$*\"; }; PR=43923; eval \"$(sed -n '/^limits() {/,/^}/p' \"$1\")\"; limits")
            .arg("x")
            .arg(&script),
        Duration::from_secs(30),
    );
    let printed = stdout(&o);
    assert!(
        printed.contains("touch"),
        "the limits print as text:\n{printed}"
    );
    assert!(
        !pwn.exists(),
        "a knowledge-base string ran a command:\n{body}"
    );
}

/// Shell words of `declare -f` output, as bash reads them: quotes, `$(…)`, `${…}` and
/// backquotes (nested inside double quotes too) stay inside their word; `;`, `&`, `|`, `(`,
/// `)`, `<`, `>` and newlines are tokens of their own; `#` at the start of a word is a comment.
/// Enough to compare two renderings of one script word by word.
fn shell_tokens(s: &str) -> Vec<String> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut word_start: Option<usize> = None;
    let flush = |ws: &mut Option<usize>, end: usize, out: &mut Vec<String>| {
        if let Some(st) = ws.take() {
            out.push(c[st..end].iter().collect());
        }
    };
    // Here-documents whose bodies start after the current line: their delimiters.
    let mut heredocs: Vec<String> = Vec::new();
    while i < c.len() {
        match c[i] {
            ' ' | '\t' => {
                flush(&mut word_start, i, &mut out);
                i += 1;
            }
            '<' if c.get(i + 1) == Some(&'<') && c.get(i + 2) != Some(&'<') => {
                flush(&mut word_start, i, &mut out);
                out.push("<<".into());
                i += 2;
                if c.get(i) == Some(&'-') {
                    i += 1;
                }
                while c.get(i).is_some_and(|x| *x == ' ') {
                    i += 1;
                }
                let st = i;
                while i < c.len() && !c[i].is_whitespace() && !";&|<>()".contains(c[i]) {
                    i = skip_word_part(&c, i);
                }
                let word: String = c[st..i].iter().filter(|x| !"'\"\\".contains(**x)).collect();
                out.push(word.clone());
                heredocs.push(word);
            }
            '\n' if !heredocs.is_empty() => {
                flush(&mut word_start, i, &mut out);
                out.push("\n".into());
                i += 1;
                // The bodies, verbatim, one token each.
                for delim in std::mem::take(&mut heredocs) {
                    let st = i;
                    loop {
                        let e = (i..c.len()).find(|k| c[*k] == '\n').unwrap_or(c.len());
                        let line: String = c[i..e].iter().collect();
                        i = (e + 1).min(c.len());
                        if line.trim() == delim || i >= c.len() {
                            break;
                        }
                    }
                    out.push(c[st..i].iter().collect());
                }
            }
            '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                flush(&mut word_start, i, &mut out);
                out.push(c[i].to_string());
                i += 1;
            }
            '#' if word_start.is_none() => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            _ => {
                word_start.get_or_insert(i);
                i = skip_word_part(&c, i);
            }
        }
    }
    flush(&mut word_start, c.len(), &mut out);
    out
}

/// One part of a word starting at `i` (a quoted string, an expansion, an escaped or plain
/// character); returns where it ends.
fn skip_word_part(c: &[char], i: usize) -> usize {
    match c[i] {
        '\'' => skip_to(c, i + 1, '\''),
        '"' => skip_double(c, i + 1),
        '\\' => (i + 2).min(c.len()),
        '`' => skip_backquote(c, i + 1),
        '$' if c.get(i + 1) == Some(&'(') => skip_subst(c, i + 2),
        '$' if c.get(i + 1) == Some(&'{') => skip_brace(c, i + 2),
        _ => i + 1,
    }
}

fn skip_to(c: &[char], mut i: usize, end: char) -> usize {
    while i < c.len() && c[i] != end {
        i += 1;
    }
    (i + 1).min(c.len())
}

fn skip_backquote(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i] != '`' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    (i + 1).min(c.len())
}

/// After `"`: to the closing quote, over nested expansions.
fn skip_double(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '"' => return i + 1,
            '\\' => i += 2,
            '`' => i = skip_backquote(c, i + 1),
            '$' if c.get(i + 1) == Some(&'(') => i = skip_subst(c, i + 2),
            '$' if c.get(i + 1) == Some(&'{') => i = skip_brace(c, i + 2),
            _ => i += 1,
        }
    }
    c.len()
}

/// After `${`: to the matching `}`.
fn skip_brace(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '}' => return i + 1,
            '\'' | '"' | '\\' | '`' | '$' => i = skip_word_part(c, i),
            _ => i += 1,
        }
    }
    c.len()
}

/// After `$(`: to the matching `)`.
fn skip_subst(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        match c[i] {
            '(' => {
                depth += 1;
                i += 1;
            }
            ')' if depth == 0 => return i + 1,
            ')' => {
                depth -= 1;
                i += 1;
            }
            '\'' | '"' | '\\' | '`' | '$' => i = skip_word_part(c, i),
            _ => i += 1,
        }
    }
    c.len()
}

/// The script as bash parses it: every command, comments dropped, one canonical form
/// (`declare -f` of a function whose body is the script), as tokens; a word holding a value
/// marker becomes `<V>`.
fn command_structure(script: &str, markers: &[String]) -> Result<Vec<String>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let body = script
        .strip_prefix("#!/usr/bin/env bash\n")
        .unwrap_or(script);
    let wrapper = dir.path().join("w.sh");
    std::fs::write(&wrapper, format!("f() {{\n{body}\n}}\ndeclare -f f\n"))
        .map_err(|e| e.to_string())?;
    let o = run_limited(
        Command::new("bash").arg("--norc").arg(&wrapper),
        Duration::from_secs(20),
    );
    if !o.status.success() {
        return Err(format!("bash could not parse it: {}", stderr(&o)));
    }
    Ok(shell_tokens(&stdout(&o))
        .into_iter()
        .map(|t| {
            if markers.iter().any(|m| t.contains(m.as_str())) {
                "<V>".to_string()
            } else {
                t
            }
        })
        .collect())
}

/// Strings a hostile knowledge base might hold: shell and template syntax, quotes, newlines.
fn hostile_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("$(".to_string()),
        Just(")".to_string()),
        Just("`".to_string()),
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("@@LIMITS@@".to_string()),
        Just("@@PR@@".to_string()),
        Just("{{ limits }}".to_string()),
        Just("{% raw %}".to_string()),
        Just("@{ x }@".to_string()),
        Just("@% for l in limits %@".to_string()),
        Just("#@".to_string()),
        Just("SM120_DOCTOR_LIMITS_END".to_string()),
        Just("; touch /tmp/sm120-pwn-prop".to_string()),
        Just("${HOME}".to_string()),
        Just("$x".to_string()),
        Just("!".to_string()),
        Just("#".to_string()),
        Just(" ".to_string()),
        "[a-z]{1,6}",
    ];
    proptest::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

fn marked(i: usize, s: &str) -> String {
    format!("QQ{i}ZZ{s}ZZ{i}QQ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// No knowledge-base string changes the script's command structure: the hostile script
    /// parses (`bash -n`), and word for word it is the clean script with values in the same
    /// places.
    #[test]
    fn item1_no_kb_string_changes_the_scripts_commands(
        title in hostile_string(),
        limits in proptest::collection::vec(hostile_string(), 0..4),
        why in hostile_string(),
        verified in hostile_string(),
        version in hostile_string(),
        python in hostile_string(),
    ) {
        let base = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact)
            .expect("kb");
        let render = |title: &str, limits: &[String], why: &str, verified: &str, version: &str,
                      python: &str| {
            let mut kb = base.clone();
            let r = kb.remedies.get_mut("apply_pr_43923").expect("remedy");
            r.title = title.to_string();
            r.limits = limits.to_vec();
            r.verified = verified.to_string();
            let p = kb.prs.iter_mut().find(|p| p.pr.value == 43923).expect("pr");
            p.why = why.to_string();
            p.expected_version.value = version.to_string();
            sm120_doctor::remedy::patch_script::generate(
                &kb,
                &sm120_doctor::remedy::patch_script::ScriptOptions {
                    pr: 43923,
                    python: Some(python.to_string()),
                    vllm_dir: None,
                },
            )
        };
        let markers: Vec<String> = (0..8).map(|i| format!("QQ{i}ZZ")).collect();
        let clean_limits: Vec<String> =
            (0..limits.len()).map(|i| marked(4, &format!("limit{i}"))).collect();
        let clean = render(&marked(0, "t"), &clean_limits, &marked(1, "w"), &marked(2, "v"),
                           &marked(3, "0.24"), &marked(5, "python3")).expect("clean script");
        let hostile_limits: Vec<String> = limits.iter().map(|l| marked(4, l)).collect();
        let hostile = render(&marked(0, &title), &hostile_limits, &marked(1, &why),
                             &marked(2, &verified), &marked(3, &version), &marked(5, &python));
        // A value with NUL cannot be a shell word and is refused; the strategy makes none.
        let hostile = hostile.expect("hostile script");
        let want = command_structure(&clean, &markers).expect("clean parses");
        let got = command_structure(&hostile, &markers);
        prop_assert!(got.is_ok(), "{:?}\n{hostile}", got.err());
        let got = got.unwrap_or_default();
        let first = got.iter().zip(&want).position(|(g, w)| g != w);
        let at = first.unwrap_or(got.len().min(want.len()));
        let lo = at.saturating_sub(8);
        prop_assert!(
            first.is_none() && got.len() == want.len(),
            "the hostile script's commands differ from the clean one's at token {}:\n  got  {:?}\n  want {:?}",
            at,
            &got[lo..(at + 8).min(got.len())],
            &want[lo..(at + 8).min(want.len())]
        );
    }
}

// ----- 2. -o FILE --force: device nodes, FIFOs, setuid, lstat -----

#[test]
fn item2_force_never_replaces_a_device_node_or_fifo() {
    // As root this is the dangerous case: /dev/null must stay a character device.
    let o = doctor(&["report", "--demo", "-o", "/dev/null", "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/dev/null: is a character device"),
        "{}",
        stderr(&o)
    );
    let meta = std::fs::symlink_metadata("/dev/null").expect("lstat /dev/null");
    assert!(
        meta.file_type().is_char_device(),
        "/dev/null is no longer a device"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("out.md");
    mkfifo(&fifo);
    for args in [
        vec!["report", "--demo", "-o"],
        vec![
            "fix",
            "--launch",
            "vllm serve m",
            "--remedy",
            "enforce_eager",
            "-o",
        ],
        vec!["patch-script", "--pr", "43923", "-o"],
    ] {
        let mut a: Vec<&str> = args.clone();
        a.push(fifo.to_str().expect("utf8"));
        a.push("--force");
        let o = doctor(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("FIFO"), "{args:?}: {}", stderr(&o));
        assert!(
            std::fs::symlink_metadata(&fifo)
                .expect("lstat")
                .file_type()
                .is_fifo(),
            "the FIFO was replaced"
        );
    }
    // A symbolic link to a device is refused too.
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink("/dev/null", &link).expect("symlink");
    let o = doctor(&[
        "report",
        "--demo",
        "-o",
        link.to_str().expect("utf8"),
        "--force",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("a character device"), "{}", stderr(&o));
}

#[test]
fn item2_force_never_keeps_setuid_or_setgid_and_uses_lstat() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mode = |p: &Path| {
        std::fs::symlink_metadata(p)
            .expect("lstat")
            .permissions()
            .mode()
            & 0o7777
    };
    for bits in [0o4755, 0o2755, 0o6750, 0o1777] {
        let f = dir.path().join(format!("serve-{bits:o}.sh"));
        std::fs::write(&f, "vllm serve m\n").expect("seed");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(bits)).expect("chmod");
        assert_eq!(mode(&f), bits, "the test file has its bits");
        let o = doctor(&[
            "fix",
            "--launch-file",
            f.to_str().expect("utf8"),
            "--remedy",
            "enforce_eager",
            "-o",
            f.to_str().expect("utf8"),
            "--force",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            mode(&f),
            bits & 0o777,
            "{bits:o}: special bits carried over"
        );
    }
    // Through a symbolic link (metadata() would follow it; the writer reads the target's
    // own bits and still drops setuid).
    let target = dir.path().join("real.sh");
    std::fs::write(&target, "vllm serve m\n").expect("seed");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o4750)).expect("chmod");
    let link = dir.path().join("link.sh");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let o = doctor(&[
        "fix",
        "--launch",
        "vllm serve m",
        "--remedy",
        "enforce_eager",
        "-o",
        link.to_str().expect("utf8"),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(mode(&target), 0o750);
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("lstat")
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
}

// ----- 3. Hangs: FIFOs and endless devices as inputs -----

#[test]
fn item3_no_reader_hangs_on_a_fifo_or_an_endless_device() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("a.yaml");
    mkfifo(&fifo);
    let f = fifo.to_str().expect("utf8");
    let cases: Vec<Vec<&str>> = vec![
        vec!["check", "--snapshot", f],
        vec!["check", "--collect-env", f],
        vec!["check", "--demo", "--launch-file", f],
        vec!["check", "--demo", "--log", f],
        vec!["check", "--demo", "--answers", f],
        vec!["report", "--demo", "--log", f],
        vec!["classify", "--log", f],
        vec!["fix", "--launch-file", f, "--remedy", "enforce_eager"],
        vec!["classify", "--log", "/dev/zero"],
        vec!["check", "--demo", "--log", "/dev/zero"],
        vec!["check", "--snapshot", "/dev/urandom"],
    ];
    for args in cases {
        let start = Instant::now();
        let o = run_limited(
            Command::new(BIN).args(&args).stdin(Stdio::null()),
            Duration::from_secs(20),
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("FIFO") || err.contains("a character device"),
            "{args:?}: {err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{args:?} was slow"
        );
    }
    // A FIFO named a.yaml inside a --kb directory.
    let kb = kb_dir(dir.path(), |_, t| t);
    mkfifo(&kb.join("zz.yaml"));
    let o = doctor(&["kb", "lint", kb.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("zz.yaml: is a FIFO"), "{}", stderr(&o));
}

#[test]
fn item3_stdin_is_read_where_it_makes_sense() {
    let log = std::fs::read(case("07_nccl.log")).expect("case");
    let mut child = Command::new(BIN)
        .args(["classify", "--log", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&log)
        .expect("feed");
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"file\": \"stdin\""), "{}", stdout(&o));
    // Only one input may be standard input.
    let o = doctor(&["check", "--snapshot", "-", "--log", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("standard input (-)"), "{}", stderr(&o));
}

// ----- 4. Unbounded memory: caps -----

#[test]
fn item4_replaying_deep_log_matches_is_bounded() {
    let o = doctor(&[
        "check",
        "--snapshot",
        case("04_replay_deep_lines.json").to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("field log_matches: the matched lines lie 100000000 lines deep"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn item4_the_python_collector_output_is_capped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("s.yaml");
    let start = Instant::now();
    let o = run_limited(
        Command::new(BIN).args([
            "snapshot",
            "--python",
            case("04_flood_python.sh").to_str().expect("utf8"),
            "--python-timeout",
            "60",
            "-o",
            out.to_str().expect("utf8"),
        ]),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the flood was not stopped early"
    );
    let snap = std::fs::read_to_string(&out).expect("snapshot written");
    // YAML may fold the long reason over lines.
    let snap = snap.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        snap.contains("printed more than 4 MiB and was stopped"),
        "{snap}"
    );
}

#[test]
fn item4_a_huge_topology_matrix_gives_a_small_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 400;
    let mut t =
        String::from("PyTorch version: 2.11.0\nOS: Ubuntu 24.04\nGPU models and configuration:\n");
    for i in 0..n {
        t.push_str(&format!("GPU {i}: NVIDIA H200\n"));
    }
    t.push_str("Nvidia driver version: 580.95.05\nGPU Topology:\n\t");
    t.push_str(
        &(0..n)
            .map(|i| format!("GPU{i}"))
            .collect::<Vec<_>>()
            .join("\t"),
    );
    t.push_str("\tCPU Affinity\n");
    for i in 0..n {
        let row: Vec<&str> = (0..n).map(|j| if i == j { "X" } else { "NV18" }).collect();
        t.push_str(&format!("GPU{i}\t{}\t0-63\n", row.join("\t")));
    }
    let p = dir.path().join("ce.txt");
    std::fs::write(&p, t).expect("write");
    let o = doctor(&[
        "report",
        "--collect-env",
        p.to_str().expect("utf8"),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        o.stdout.len() < 2 << 20,
        "report is {} bytes",
        o.stdout.len()
    );
    assert!(stdout(&o).contains("pairs are recorded for at most 64 GPUs"));
}

#[test]
fn item4_every_reader_has_a_cap_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Sparse files: large to the reader, no disk used.
    let sparse = |name: &str, len: u64| {
        let p = dir.path().join(name);
        std::fs::File::create(&p)
            .expect("create")
            .set_len(len)
            .expect("set_len");
        p
    };
    let cases = [
        (
            sparse("big.yaml", 40 << 20),
            "--snapshot",
            "32 MiB",
            "check",
        ),
        (
            sparse("big.txt", 5 << 20),
            "--collect-env",
            "4 MiB",
            "check",
        ),
        (sparse("big.sh", 2 << 20), "--launch-file", "1 MiB", "check"),
        (
            sparse("big.answers", 2 << 20),
            "--answers",
            "1 MiB",
            "check",
        ),
        (sparse("big.log", 5 << 30), "--log", "4096 MiB", "check"),
        (sparse("huge.log", 5 << 30), "--log", "4096 MiB", "classify"),
    ];
    for (p, flag, cap, mode) in cases {
        let ps = p.to_str().expect("utf8");
        let args: Vec<&str> = if mode == "classify" {
            vec!["classify", flag, ps]
        } else if flag == "--snapshot" || flag == "--collect-env" {
            vec!["check", flag, ps]
        } else {
            vec!["check", "--demo", flag, ps]
        };
        let start = Instant::now();
        let o = doctor(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(&format!("larger than {cap}")) && err.contains(ps),
            "{args:?}: {err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{args:?} read before refusing"
        );
    }
    // A KB directory file too.
    let kb = kb_dir(dir.path(), |_, t| t);
    std::fs::File::create(kb.join("zz.yaml"))
        .expect("create")
        .set_len(5 << 20)
        .expect("set_len");
    let o = doctor(&["kb", "lint", kb.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("zz.yaml: larger than 4 MiB"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn item4_a_line_longer_than_the_cap_is_cut_and_the_rest_still_scanned() {
    // 20 MB without a newline, then a known signature on the next line.
    let mut child = Command::new(BIN)
        .args(["classify", "--log", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut sink = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..20 {
            if sink.write_all(&chunk).is_err() {
                return;
            }
        }
        let _ = sink
            .write_all(b"\nFailed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n");
    });
    let o = child.wait_with_output().expect("wait");
    feeder.join().expect("feeder");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\"line\": 2") && out.contains("allocator_ipc"),
        "{out}"
    );
}

// ----- 5. Stack overflow: nesting depth in KB checks -----

#[test]
fn item5_a_deeply_nested_check_is_an_error_with_its_place() {
    for expr_case in ["05_deep_not.expr", "05_deep_parens.expr"] {
        let expr = std::fs::read_to_string(case(expr_case)).expect("case");
        let dir = tempfile::tempdir().expect("tempdir");
        let kb = kb_dir(dir.path(), |name, text| {
            if name == "orphan_workers.yaml" {
                text.replacen(
                    "check: \"processes.orphans > 0\"",
                    &format!("check: \"{}\"", expr.trim()),
                    1,
                )
            } else {
                text
            }
        });
        let k = kb.to_str().expect("utf8");
        for args in [
            vec!["kb", "lint", k],
            vec!["check", "--demo", "--kb", k],
            // The TUI reads its inputs before it takes the terminal.
            vec!["--demo", "--kb", k],
        ] {
            let o = doctor(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{expr_case} {args:?}: {err}");
            assert!(
                err.contains("orphan_workers.yaml:") && err.contains("nested more than 64 levels"),
                "{expr_case} {args:?}: {err}"
            );
            assert!(
                err.len() < 2000,
                "the error quotes the whole check: {}",
                err.len()
            );
        }
    }
}

// ----- 6. Orphans: children die with the run -----

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn alive(pid: i32) -> bool {
    // A zombie (dead, not yet reaped by whoever inherited it) counts as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
        .unwrap_or(false)
}

fn all_gone(pids: &[i32]) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if pids.iter().all(|p| !alive(*p)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn wait_for_pids(file: &Path, n: usize) -> Vec<i32> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let p = pids(file);
        if p.len() >= n {
            return p;
        }
        assert!(Instant::now() < until, "the fake python never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn item6_a_setsid_grandchild_does_not_survive_the_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pids");
    let o = run_limited(
        Command::new(BIN)
            .args([
                "snapshot",
                "--python",
                case("06_setsid_python.sh").to_str().expect("utf8"),
                "--python-timeout",
                "1",
                "-o",
                dir.path().join("s.yaml").to_str().expect("utf8"),
            ])
            .env("SM120_HOSTILE_PIDS", &pidfile),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = wait_for_pids(&pidfile, 2);
    assert!(all_gone(&p), "left behind: {p:?}");
}

/// `snapshot` with a fake python (a script under tests/hostile) that writes the pids it starts
/// to `pidfile`, its output dropped. As in a terminal, SIGINT, SIGTERM and SIGHUP have their
/// default action (a test harness run in the background may have inherited one ignored).
fn snapshot_with_fake_python(
    script: &str,
    timeout: &str,
    dir: &std::path::Path,
    pidfile: &std::path::Path,
) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "snapshot",
        "--python",
        case(script).to_str().expect("utf8"),
        "--python-timeout",
        timeout,
        "-o",
        dir.join("s.yaml").to_str().expect("utf8"),
    ])
    .env("SM120_HOSTILE_PIDS", pidfile)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    // SAFETY: only async-signal-safe signal(2) calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd
}

#[test]
fn item6_a_signal_to_the_tool_takes_its_children_along() {
    for (sig, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pids");
        let mut child =
            snapshot_with_fake_python("06_setsid_python.sh", "120", dir.path(), &pidfile)
                .spawn()
                .expect("spawn");
        let p = wait_for_pids(&pidfile, 2);
        // SAFETY: signalling the child we spawned.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let until = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            assert!(Instant::now() < until, "{name}: the tool did not end");
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "{name}: ended by {status:?}");
        assert!(all_gone(&p), "{name}: left behind {p:?}");
    }
}

#[test]
fn item6_a_panic_takes_the_children_along() {
    // The TUI's test-only panic switch (the test-panic feature, on under `cargo test`), in tmux:
    // the TUI starts the live Python collection (a fake python from $VIRTUAL_ENV), then panics.
    if !support::require_tools(&["tmux"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let venv = dir.path().join("venv");
    std::fs::create_dir_all(venv.join("bin")).expect("mkdir");
    std::fs::copy(case("06_setsid_python.sh"), venv.join("bin/python")).expect("copy");
    let pidfile = dir.path().join("pids");
    let socket = format!("sm120-hostile-{}", std::process::id());
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .args(["-f", "/dev/null", "-L", &socket])
            .args(args)
            .output()
            .expect("tmux")
    };
    let venv_s = format!("VIRTUAL_ENV={}", venv.display());
    let pids_s = format!("SM120_HOSTILE_PIDS={}", pidfile.display());
    let out = tmux(&[
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
        "TERM=xterm",
        &venv_s,
        &pids_s,
        "SM120_DOCTOR_TEST_PANIC_AFTER_MS=4000",
        BIN,
    ]);
    assert!(out.status.success(), "{out:?}");
    let pane =
        String::from_utf8_lossy(&tmux(&["list-panes", "-t", "t", "-F", "#{pane_pid}"]).stdout)
            .trim()
            .parse::<i32>()
            .expect("pane pid");
    let p = wait_for_pids(&pidfile, 2);
    let until = Instant::now() + Duration::from_secs(30);
    while alive(pane) {
        assert!(Instant::now() < until, "the TUI did not panic");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = tmux(&["kill-server"]);
    assert!(all_gone(&p), "left behind after the panic: {p:?}");
}

// ----- 7. Redaction gaps -----

/// Every secret the redaction cases plant (tests/hostile/07_*).
const PLANTED: &[&str] = &[
    "gpu-box-planted",
    "alice",
    "hunter-planted-1",
    "tok-planted-2",
    "key-planted-3",
    "T0PLANTED",
    "Zx9PlantedWebhookSecret77",
    "PlantedMy4",
    "Planted5",
    "p@ss",
    "vk-planted-secret-0001",
    "sk6",
];

#[test]
fn item7_no_planted_secret_reaches_a_redacted_output() {
    let ce = case("07_collect_env_paste.txt");
    let launch = case("07_launch_with_secrets.sh");
    let log = case("07_nccl.log");
    let (ce, launch, log) = (
        ce.to_str().expect("utf8"),
        launch.to_str().expect("utf8"),
        log.to_str().expect("utf8"),
    );
    let inputs = ["--collect-env", ce, "--launch-file", launch, "--log", log];
    // The planted values really are in the unredacted report.
    let mut a = vec!["report", "--format", "json", "--no-redact"];
    a.extend(inputs);
    let raw = stdout(&doctor(&a));
    for s in PLANTED {
        assert!(raw.contains(s), "{s} is not planted: the case is broken");
    }
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for f in ["md", "json", "text"] {
        let mut a = vec!["report", "--format", f];
        a.extend(inputs);
        runs.push(a);
    }
    for f in ["text", "json"] {
        let mut a = vec!["check", "--redact", "--format", f];
        a.extend(inputs);
        runs.push(a);
        runs.push(vec!["classify", "--redact", "--format", f, "--log", log]);
    }
    for args in runs {
        let o = doctor(&args);
        assert!(
            o.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {}",
            stderr(&o)
        );
        let out = stdout(&o);
        for s in PLANTED {
            assert!(!out.contains(s), "{args:?} leaked {s}:\n{out}");
        }
        assert!(out.contains("[redacted:"), "{args:?} redacted nothing");
    }
}

#[test]
fn item7_unredacted_json_to_a_file_says_so_on_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = case("07_nccl.log");
    let out = Command::new(BIN)
        .args([
            "classify",
            "--format",
            "json",
            "--log",
            log.to_str().expect("utf8"),
        ])
        .stdout(std::fs::File::create(dir.path().join("out2.json")).expect("create"))
        .stderr(Stdio::piped())
        .output()
        .expect("run");
    assert!(
        stderr(&out).contains("this JSON is not redacted"),
        "{}",
        stderr(&out)
    );
    // To a pipe (another program) it stays quiet; with --redact too.
    let o = doctor(&[
        "classify",
        "--format",
        "json",
        "--log",
        log.to_str().expect("utf8"),
    ]);
    assert!(!stderr(&o).contains("not redacted"), "{}", stderr(&o));
    let report = dir.path().join("r.json");
    let o = doctor(&[
        "report",
        "--demo",
        "--format",
        "json",
        "--no-redact",
        "-o",
        report.to_str().expect("utf8"),
    ]);
    assert!(
        stderr(&o).contains("this JSON is not redacted"),
        "{}",
        stderr(&o)
    );
}

// ----- 8. Smaller ones -----

#[test]
fn item8_json_snapshots_name_field_and_line_and_refuse_duplicate_keys() {
    let o = doctor(&[
        "check",
        "--snapshot",
        case("08_snapshot_type_error.json").to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("08_snapshot_type_error.json:4:")
            && stderr(&o).contains("field gpus.value[0].index: invalid type"),
        "{}",
        stderr(&o)
    );
    let o = doctor(&[
        "check",
        "--snapshot",
        case("08_snapshot_duplicate_key.json")
            .to_str()
            .expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("08_snapshot_duplicate_key.json:5:")
            && stderr(&o).contains("duplicate key \"PYTORCH_CUDA_ALLOC_CONF\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn item8_yaml_budget_stops_read_as_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = "x".repeat(1 << 20);
    let mut doc = format!(
        "schema_version: 1\norigin: &big \"{big}\"\nenv:\n  value:\n    source: hostile\n    vars:\n"
    );
    for i in 0..70 {
        doc.push_str(&format!("      V{i}: *big\n"));
    }
    let p = dir.path().join("bomb.yaml");
    std::fs::write(&p, doc).expect("write");
    let o = doctor(&["check", "--snapshot", p.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("the YAML reader stopped: its text values add up"),
        "{err}"
    );
    assert!(
        !err.contains("budget breached") && !err.contains('{'),
        "{err}"
    );
}

#[test]
fn item8_an_unknown_node_in_answers_names_the_file_and_line() {
    let p = case("08_answers_unknown_node.yaml");
    let o = doctor(&["check", "--demo", "--answers", p.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("08_answers_unknown_node.yaml:3: answer for \"no_such_node_anywhere\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn item8_a_python_killed_by_a_signal_is_said_in_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let py = dir.path().join("python");
    std::fs::write(&py, "#!/bin/sh\nkill -SEGV $$\n").expect("write");
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = dir.path().join("s.yaml");
    let o = doctor(&[
        "snapshot",
        "--python",
        py.to_str().expect("utf8"),
        "-o",
        out.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let snap = std::fs::read_to_string(&out).expect("snapshot");
    let snap = snap.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(snap.contains("was killed by signal 11 (SIGSEGV)"), "{snap}");
    assert!(!snap.contains("code signal"), "{snap}");
}

#[test]
fn item8_the_panic_switch_is_a_test_only_feature() {
    // Under `cargo test` the binary has it (the dev-dependency on the package turns it on)...
    let bin = std::fs::read(BIN).expect("binary");
    let has = |needle: &[u8]| bin.windows(needle.len()).any(|w| w == needle);
    assert!(
        has(b"SM120_DOCTOR_TEST_PANIC_AFTER_MS"),
        "cargo test lost the test-panic feature"
    );
    // ...and nothing else does: not a default feature, only the self dev-dependency enables it.
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("Cargo.toml");
    assert!(manifest.contains("\ntest-panic = []\n"), "feature declared");
    assert!(!manifest.contains("default = ["), "no default features");
    let enabling: Vec<&str> = manifest
        .lines()
        .filter(|l| l.contains("\"test-panic\""))
        .collect();
    assert_eq!(
        enabling,
        ["sm120-doctor = { path = \".\", features = [\"test-panic\", \"schema\"] }"],
        "only the dev-dependency enables it"
    );
    let dev = manifest
        .find("[dev-dependencies]")
        .expect("dev-dependencies");
    let line = manifest.find(enabling[0]).expect("line");
    let next_section = manifest[dev + 1..]
        .find("\n[")
        .map_or(manifest.len(), |p| p + dev + 1);
    assert!(line > dev && line < next_section, "it is a dev-dependency");
}

/// A crash printed over a progress bar whose redraws (`\r`) make one line longer than the
/// reader's 64 KiB cut still classifies (the last redraw is kept after the cut), and a long cut
/// line of nothing matches no class (the cut note names no GPU).
#[test]
fn a_crash_after_a_long_progress_line_is_still_found_and_a_cut_line_alone_matches_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = b"INFO PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n".to_vec();
    for i in 0..3000 {
        log.extend_from_slice(
            format!("\rCapturing CUDA graphs: {i:>4}/3000 [######    ]").as_bytes(),
        );
    }
    log.extend_from_slice(
        b"\r(Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n",
    );
    let crash = dir.path().join("tqdm.log");
    std::fs::write(&crash, &log).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["classify", "--format", "json", "--log"])
        .arg(&crash)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["classes"][0], "allocator_ipc", "{v}");
    assert_eq!(v["confidence"]["allocator_ipc"], "CONFIRMED", "{v}");

    let long = dir.path().join("long.log");
    std::fs::write(&long, format!("{}\n", "x".repeat(70_000))).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
        .args(["classify", "--format", "json", "--log"])
        .arg(&long)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["classes"], serde_json::json!([]), "{v}");
    assert_eq!(v["matches"], serde_json::json!([]), "{v}");

    // The tool's own name in a pasted note is no SM12x GPU; an sm_120 build target is.
    let own = dir.path().join("own.log");
    std::fs::write(
        &own,
        "sm120-doctor: note: this JSON is not redacted\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n",
    )
    .expect("write");
    let ctx = |path: &Path| -> Vec<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_sm120-doctor"))
            .args(["classify", "--format", "json", "--log"])
            .arg(path)
            .output()
            .expect("run");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .filter_map(|m| m["signature"].as_str().map(str::to_string))
            .collect()
    };
    assert!(!ctx(&own).contains(&"ctx_gpu_sm12x".to_string()));
    let target = dir.path().join("target.log");
    std::fs::write(
        &target,
        "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'\n",
    )
    .expect("write");
    assert!(ctx(&target).contains(&"ctx_gpu_sm12x".to_string()));
}

// ----- round 2 of the hostile review -----

/// A launch `--config` file given with `--launch-with`, run through `check --demo`.
fn check_with_config(dir: &Path, yaml: &str) -> Output {
    let p = dir.join("cfg.yaml");
    std::fs::write(&p, yaml).expect("write");
    let launch = format!("vllm serve m --config {}", p.display());
    doctor(&[
        "check",
        "--demo",
        "--launch",
        &launch,
        "--launch-with",
        p.to_str().expect("utf8"),
    ])
}

#[test]
fn r2_a_yaml_node_that_contains_itself_is_an_error_with_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = check_with_config(dir.path(), "a: &a [*a]\n");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cfg.yaml:1:8") && err.contains("inside the node it names"),
        "{err}"
    );
}

#[test]
fn r2_aliases_that_multiply_stop_quickly_with_their_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Billion laughs: 9 levels of ten aliases each, under 500 bytes.
    let mut laughs = String::from("a0: &a0 x\n");
    for i in 1..=9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(",");
        laughs.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    laughs.push_str("model: *a9\n");
    // Nested anchors around a long list: each level used to copy all that it holds.
    let mut nested = String::from("x-big: ");
    for i in 0..250 {
        nested.push_str(&format!("&n{i} ["));
    }
    nested.push_str(&vec!["1"; 100_000].join(","));
    nested.push_str(&"]".repeat(250));
    nested.push_str("\nmodel: m\n");
    let start = Instant::now();
    let o = check_with_config(dir.path(), &laughs);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cfg.yaml:") && err.contains("expands to more than"),
        "{err}"
    );
    assert!(err.len() < 2000, "{} bytes of stderr", err.len());
    assert!(start.elapsed() < Duration::from_secs(20), "laughs: slow");
    // Nested anchors are within every limit: read, and fast.
    let start = Instant::now();
    let o = check_with_config(dir.path(), &nested);
    let plain = check_with_config(dir.path(), "model: m\n");
    assert_eq!(o.status.code(), plain.status.code(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("cfg.yaml:"), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(20), "nested: slow");
}

#[test]
fn r2_a_kb_dir_shares_one_yaml_text_budget_across_its_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Each extra file expands to 8 MiB of text through aliases: under serde-saphyr's
    // per-document 64 MiB, but 29 of them are more than a whole load may reach.
    let kb = kb_dir(dir.path(), |_, text| text);
    let big = "x".repeat(1 << 20);
    for i in 0..29 {
        let mut doc = format!("class: bomb{i}\ntitle: &big \"{big}\"\nstart:\n");
        for _ in 0..8 {
            doc.push_str("  - *big\n");
        }
        std::fs::write(kb.join(format!("bomb{i}.yaml")), &doc).expect("write");
    }
    let o = doctor(&["kb", "lint", kb.to_str().expect("utf8")]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bomb0.yaml:") && err.contains("its text values add up"),
        "{}",
        &err[..err.len().min(3000)]
    );
}

/// An OSC 52 (set the clipboard) and a CSI (clear the screen), as hostile text carries them.
const OSC52: &str = "\u{1b}]52;c;cm0gLXJmIH4K\u{7}\u{1b}[2J\u{9b}2J";

fn no_control_bytes(what: &str, out: &[u8]) {
    let bad: Vec<u8> = out
        .iter()
        .copied()
        .filter(|b| (*b < 0x20 && *b != b'\n' && *b != b'\t') || *b == 0x7f)
        .collect();
    assert!(bad.is_empty(), "{what}: control bytes {bad:?}");
    assert!(
        !String::from_utf8_lossy(out).contains('\u{9b}'),
        "{what}: a C1 CSI"
    );
}

#[test]
fn r2_no_control_sequence_from_untrusted_text_reaches_a_text_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join(format!("run{}.log", "\u{1b}]0;t\u{7}"));
    std::fs::write(
        &log,
        format!("RuntimeError: CUDA error: out of memory {OSC52}\n"),
    )
    .expect("write");
    let log_s = log.to_str().expect("utf8");
    let launch = format!("vllm serve m{OSC52} --tensor-parallel-size 2");
    for args in [
        vec!["check", "--demo", "--launch", &launch, "--log", log_s],
        vec![
            "report",
            "--demo",
            "--launch",
            &launch,
            "--log",
            log_s,
            "--no-redact",
        ],
        vec![
            "report", "--demo", "--launch", &launch, "--log", log_s, "--format", "text",
        ],
    ] {
        let o = doctor(&args);
        assert!(o.status.code() != Some(2), "{args:?}: {}", stderr(&o));
        no_control_bytes(&format!("{args:?}"), &o.stdout);
        // The report quotes the log line and the launch: still there, shown escaped.
        if args[0] == "report" {
            assert!(stdout(&o).contains("\\x1b]52;c;"), "{args:?}");
        }
    }
    // A KB limit in the PR apply script, and what its dry run prints.
    let kb = kb_dir(dir.path(), |name, text| {
        if name != "remedies.yaml" {
            return text;
        }
        replace_in_block(
            &text,
            "  - id: apply_pr_43923",
            "    limits:",
            // YAML's own escapes: a raw C1 byte is not valid YAML text.
            "    limits: [\"a limit\\e]52;c;cm0K\\a\\e[2J\\x9b2J\"]",
        )
    });
    let script = dir.path().join("apply.sh");
    let o = doctor(&[
        "patch-script",
        "--pr",
        "43923",
        "--kb",
        kb.to_str().expect("utf8"),
        "-o",
        script.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let body = std::fs::read(&script).expect("script");
    no_control_bytes("apply script", &body);
    assert!(String::from_utf8_lossy(&body).contains("a limit"));
    let o = run_limited(
        Command::new("bash")
            .arg(&script)
            .args(["--python", "/nonexistent-python"]),
        Duration::from_secs(30),
    );
    no_control_bytes("dry run", &o.stdout);
}

#[test]
fn r2_a_crash_looping_log_keeps_a_bounded_sample_with_a_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("loop.log");
    let line = "RuntimeError: CUDA error: out of memory\n";
    let n = 50_000;
    std::fs::write(&log, line.repeat(n)).expect("write");
    let log_s = log.to_str().expect("utf8");
    let o = doctor(&["classify", "--format", "json", "--log", log_s]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let matches = v["matches"].as_array().expect("matches");
    assert!(!matches.is_empty());
    let mut per_sig: std::collections::BTreeMap<String, (usize, u64)> = Default::default();
    for m in matches {
        let e = per_sig
            .entry(m["signature"].as_str().expect("sig").to_string())
            .or_default();
        e.0 += 1;
        e.1 += 1 + m["repeats_left_out"].as_u64().unwrap_or(0);
    }
    for (sig, (kept, total)) in per_sig {
        assert!(kept <= 16, "{sig}: {kept} matches kept");
        // Every matched line is counted: the kept ones and the ones left out.
        assert_eq!(total, n as u64, "{sig}");
    }
    let o = doctor(&["classify", "--log", log_s]);
    let text = stdout(&o);
    assert!(text.len() < 20_000, "{} bytes of text", text.len());
    assert!(text.contains("more matches of"), "{text}");
}

/// Run the tool to its end with stdout to a file; its own peak RSS in KiB, its exit code and
/// output size. The peak is the child's `VmHWM` (/proc/PID/status), read every few
/// milliseconds until it exits: that is the high-water mark of the program's own address space
/// after exec. `wait4`'s `ru_maxrss` is not: a child started through vfork/posix_spawn shares
/// this test process's memory until exec and the kernel carries that high-water mark over, so
/// with other tests holding large logs in the same binary it reported the test process's
/// peak (186 MiB once) instead of the tool's.
fn peak_rss_kib(args: &[&str], out: &Path) -> (i64, Option<i32>, u64) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).expect("out"))
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0i64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    (peak, status.code(), size)
}

/// `classify`, `report` and `check` on a crash-looping log (one matched line
/// repeated to 64 MiB, more than `report` keeps of a log) stay under 128 MiB RSS with a small
/// output: `report` and `check` keep the log's ends and count the repeats; `classify` streams.
/// benches/log_rss.sh measures the same at 512 MiB.
#[test]
fn r2_a_crash_looping_log_costs_bounded_memory_in_every_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("loop.log");
    let line = b"(Worker_TP1 pid=2951) Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n";
    let mut block = Vec::new();
    for _ in 0..4096 {
        block.extend_from_slice(line);
    }
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&log).expect("create"));
        let mut n = 0;
        while n < 64 << 20 {
            f.write_all(&block).expect("write");
            n += block.len();
        }
        f.flush().expect("flush");
    }
    let log_s = log.to_str().expect("utf8");
    let out = dir.path().join("out");
    for args in [
        vec!["classify", "--format", "json", "--log", log_s],
        vec!["report", "--demo", "--format", "json", "--log", log_s],
        vec!["check", "--demo", "--format", "json", "--log", log_s],
    ] {
        let (kib, code, bytes) = peak_rss_kib(&args, &out);
        assert!(matches!(code, Some(0) | Some(1)), "{args:?}: exit {code:?}");
        assert!(kib < 128 * 1024, "{args:?}: peak RSS {kib} KiB");
        assert!(bytes < 1 << 20, "{args:?}: {bytes} bytes of output");
        let text = std::fs::read_to_string(&out).expect("output");
        assert!(
            text.contains("custom_all_reduce"),
            "{args:?}: the crash is not named"
        );
    }
}

/// Every ESC in `out` starts one of the tool's own colour sequences (`ESC [ digits m`).
fn only_tool_colour(what: &str, out: &str) {
    for (i, _) in out.match_indices('\u{1b}') {
        let body = &out[i + 1..];
        let params = body[1..]
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b';')
            .count();
        assert!(
            body.starts_with('[') && body.as_bytes().get(1 + params) == Some(&b'm'),
            "{what}: an ESC that is not colour at {i}: {:?}",
            &out[i..(i + 20).min(out.len())]
        );
    }
    assert!(!out.contains(['\u{7}', '\u{9b}', '\u{fdd0}']), "{what}");
}

#[test]
fn r2_colour_stderr_json_device_names_and_kb_titles_carry_no_control_sequence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("osc.log");
    std::fs::write(
        &log,
        format!("RuntimeError: CUDA error: out of memory {OSC52}\n"),
    )
    .expect("write");
    let log_s = log.to_str().expect("utf8");
    // JSON: the C1 CSI is escaped the JSON way (the sanitiser's `\u{9b}` was an invalid JSON
    // escape, so the report did not replay), and the report replays to a clean Markdown.
    let o = doctor(&[
        "report",
        "--demo",
        "--log",
        log_s,
        "--format",
        "json",
        "--no-redact",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    no_control_bytes("report json", &o.stdout);
    let _: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert!(stdout(&o).contains("\\u009b2J"), "the C1 CSI is shown");
    let replay = dir.path().join("replay.json");
    std::fs::write(&replay, &o.stdout).expect("write");
    let o = doctor(&[
        "report",
        "--snapshot",
        replay.to_str().expect("utf8"),
        "--no-redact",
    ]);
    assert!(o.status.success(), "replay: {}", stderr(&o));
    no_control_bytes("replayed report", &o.stdout);
    // Colour on: the tool's colours are painted, a colour sequence in the launch is not.
    let launch = format!("vllm serve m\u{1b}[31m{OSC52} --tensor-parallel-size 2");
    let o = run_limited(
        Command::new(BIN)
            .args(["check", "--demo", "--launch", &launch])
            .env("CLICOLOR_FORCE", "1")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null()),
        Duration::from_secs(60),
    );
    let out = stdout(&o);
    assert!(out.contains("\u{1b}[3"), "coloured");
    assert!(out.contains("vllm serve m\\x1b[31m\\x1b]52;c;"), "{out}");
    only_tool_colour("check in colour", &out);
    // Messages on stderr quote file names and KB text.
    let missing = dir.path().join(format!("missing{OSC52}.sh"));
    let o = doctor(&[
        "check",
        "--demo",
        "--launch-file",
        missing.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing\\x1b]52;c;"), "{}", stderr(&o));
    no_control_bytes("stderr of a missing file", &o.stderr);
    let kb = kb_dir(dir.path(), |name, text| {
        match name {
        "remedies.yaml" => text
            .replace(
                "    verified: \"avoids capture entirely",
                "    limits: [\"a limit\\e]52;c;cm0K\\a\\x9b2J\"]\n    verified: \"avoids capture entirely",
            )
            .replace(
                "    title: Remove expandable_segments:True from",
                "    title: \"Remove\\e]0;title\\a\\e[2J\" # from",
            ),
        _ => text,
    }
    });
    let kb_s = kb.to_str().expect("utf8");
    let o = doctor(&[
        "fix",
        "--launch",
        "vllm serve m",
        "--remedy",
        "enforce_eager",
        "--kb",
        kb_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("a limit\\x1b]52;c;"), "{}", stderr(&o));
    no_control_bytes("fix notes on stderr", &o.stderr);
    for args in [
        vec!["check", "-v", "--demo", "--log", log_s, "--kb", kb_s],
        vec!["report", "--demo", "--log", log_s, "--kb", kb_s],
    ] {
        let o = doctor(&args);
        assert!(stdout(&o).contains("Remove\\x1b]0;title"), "{args:?}");
        no_control_bytes(&format!("{args:?}"), &o.stdout);
    }
    // A GPU name from a snapshot and from a collect-env paste.
    let snap = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-live-2026-11-30/snapshot.yaml"
    ))
    .expect("fixture")
    .replacen(
        "value: NVIDIA H200",
        "value: \"NVIDIA H200\\e]52;c;cm0K\\a\\x9b2J\"",
        1,
    );
    let snap_p = dir.path().join("snap.yaml");
    std::fs::write(&snap_p, snap).expect("write");
    let paste = std::fs::read_to_string(case("07_collect_env_paste.txt"))
        .expect("case")
        .replacen(
            "GPU 0: NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            &format!("GPU 0: NVIDIA RTX PRO 6000{OSC52}"),
            1,
        );
    let paste_p = dir.path().join("paste.txt");
    std::fs::write(&paste_p, paste).expect("write");
    for args in [
        vec!["check", "--snapshot", snap_p.to_str().expect("utf8")],
        vec!["report", "--snapshot", snap_p.to_str().expect("utf8")],
        vec!["check", "--collect-env", paste_p.to_str().expect("utf8")],
        vec![
            "report",
            "--collect-env",
            paste_p.to_str().expect("utf8"),
            "--format",
            "text",
        ],
    ] {
        let o = doctor(&args);
        assert!(o.status.code() != Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("\\x1b]52;c;"),
            "{args:?}: the name is shown"
        );
        no_control_bytes(&format!("{args:?}"), &o.stdout);
    }
}

#[test]
fn r2_cli_messages_go_through_the_sanitiser() {
    // src/cli/ writes stderr with esay!, which escapes control characters; a plain eprintln!
    // there would print a file name or a KB string raw.
    let mut files = Vec::new();
    for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli")).expect("src/cli") {
        files.push(e.expect("entry").path());
    }
    files.push(concat!(env!("CARGO_MANIFEST_DIR"), "/src/shell_integration.rs").into());
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        assert!(
            !code.contains("eprintln!(") && !code.contains("eprint!("),
            "{}: use esay! (src/lib.rs)",
            f.display()
        );
    }
}

#[test]
fn r2_a_kb_id_that_is_not_an_identifier_is_refused_at_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Renamed everywhere, so every reference resolves: only the id's shape is wrong. It went
    // unquoted into the report's "Exact command from the tool".
    let kb = kb_dir(dir.path(), |_, text| {
        text.replace(
            "drop_expandable_segments",
            "\"drop_expandable_segments|PWNCMD\"",
        )
        .replace(
            "\"\"drop_expandable_segments|PWNCMD\"\"",
            "\"drop_expandable_segments|PWNCMD\"",
        )
    });
    let kb_s = kb.to_str().expect("utf8");
    let o = doctor(&["kb", "lint", kb_s]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("remedies.yaml:")
            && err.contains("remedy id \"drop_expandable_segments|PWNCMD\" is not an identifier"),
        "{err}"
    );
    let o = doctor(&[
        "report",
        "--demo",
        "--kb",
        kb_s,
        "--remedy",
        "drop_expandable_segments|PWNCMD",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stdout(&o).contains("PWNCMD"));
}

#[test]
fn r2_check_classify_and_report_redact_the_same_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("run.log");
    // What gives a value away is on lines no output keeps; the matched line repeats it.
    std::fs::write(
        &log,
        "INFO launching DB_PASSWORD=s3cr3tpw9 HTTPS_PROXY=user:pw0rd@proxy.corp:3128\n\
         gpu-node-17:2817:2817 [0] NCCL INFO Bootstrap : Using eth0:10.20.30.40<0>\n\
         INFO init_process_group tcp://10.20.30.40:43211\n\
         RuntimeError: CUDA error: out of memory (job of bob on GPU-NODE-17 10.20.30.40, \
         'auth s3cr3tpw9 pw0rd')\n",
    )
    .expect("write");
    let log_s = log.to_str().expect("utf8");
    let run = |args: &[&str]| {
        run_limited(
            Command::new(BIN)
                .args(args)
                .env("USER", "bob")
                .env("LOGNAME", "bob")
                .stdin(Stdio::null()),
            Duration::from_secs(60),
        )
    };
    for args in [
        vec!["report", "--demo", "--log", log_s, "--format", "text"],
        vec!["report", "--demo", "--log", log_s],
        vec!["check", "-v", "--demo", "--log", log_s, "--redact"],
        vec![
            "check", "--demo", "--log", log_s, "--redact", "--format", "json",
        ],
        vec!["classify", "--log", log_s, "--redact"],
        vec!["classify", "--log", log_s, "--redact", "--format", "json"],
    ] {
        let o = run(&args);
        let out = stdout(&o);
        assert!(out.contains("out of memory (job of"), "{args:?}: {out}");
        for leak in [
            "s3cr3tpw9",
            "pw0rd",
            "gpu-node-17",
            "GPU-NODE-17",
            "10.20.30.40",
        ] {
            assert!(!out.contains(leak), "{args:?}: {leak} in\n{out}");
        }
        // The local user: report and check learn it from the snapshot, classify from the
        // environment (the demo's snapshot has no USER, so only classify is asked).
        if args[0] == "classify" {
            assert!(!out.contains("bob"), "{args:?}: {out}");
        }
    }
}

#[test]
fn r2_a_snapshot_hides_a_token_under_an_innocent_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let snap = dir.path().join("s.yaml");
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let o = run_limited(
        Command::new(BIN)
            .args([
                "snapshot",
                "--no-python",
                "-o",
                snap.to_str().expect("utf8"),
            ])
            .env("NOTES", token)
            .stdin(Stdio::null()),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&snap).expect("snapshot");
    assert!(text.contains("NOTES"), "the variable is listed");
    assert!(!text.contains(token), "the token is not");
}

#[test]
fn r2_a_gpu_listed_twice_gives_one_prometheus_series() {
    let dir = tempfile::tempdir().expect("tempdir");
    let snap = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-live-2026-11-30/snapshot.yaml"
    ))
    .expect("fixture")
    .replace("  - index: 1\n", "  - index: 0\n");
    let p = dir.path().join("dup.yaml");
    std::fs::write(&p, snap).expect("write");
    let o = doctor(&[
        "check",
        "--snapshot",
        p.to_str().expect("utf8"),
        "--format",
        "prometheus",
    ]);
    assert!(o.status.code() != Some(2), "{}", stderr(&o));
    let text = stdout(&o);
    let mut seen = std::collections::BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let series = line.rsplit_once(' ').map_or(line, |(s, _)| s);
        assert!(
            seen.insert(series.to_string()),
            "collected before: {series}"
        );
    }
    assert!(text.contains("sm120_doctor_gpu_info{gpu=\"0\""), "{text}");
}

#[test]
fn r2_a_grandchild_that_sheds_group_and_run_id_does_not_survive() {
    // `setsid env -i`: neither the process group nor the run id finds it; the tool is its
    // subreaper, so it comes back as an orphan when the fake python dies, and is killed.
    for timeout in ["1", "120"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("pids");
        let mut child =
            snapshot_with_fake_python("28_setsid_env_i_python.sh", timeout, dir.path(), &pidfile)
                .spawn()
                .expect("spawn");
        let p = wait_for_pids(&pidfile, 2);
        if timeout == "120" {
            // SAFETY: signalling the child we spawned.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGTERM);
            }
        }
        let until = Instant::now() + Duration::from_secs(30);
        while child.try_wait().expect("wait").is_none() {
            assert!(Instant::now() < until, "the tool did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
        let gone = all_gone(&p);
        if !gone {
            // SAFETY: the pids this test's fake python wrote.
            for pid in &p {
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
        }
        assert!(gone, "timeout {timeout}: left behind {p:?}");
    }
}
