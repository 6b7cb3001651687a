//! Property test against real bash: random argv and env (spaces, quotes, `$`, backslashes,
//! newlines, unicode), written the ways users write them, are (1) parsed by our tokenizer into
//! the same argv/env bash sees, and (2) after `fix` edits (a new env var, a new flag with a random
//! value, a changed env var), bash sees exactly the old argv/env plus the edit.
//!
//! bash runs the text with `vllm` defined as a function that prints its argv and the variables.
//!
//! The same holds for an env file a script sources and for scripts of several commands (export,
//! bare assignments, `export NAME`, `unset`, `set -a`, a comment cutting an export chain, `env`
//! prefixes): 2,000 cases each, bash being the judge of what reaches the engine.
//! Without bash the test fails under `CI=true` and prints a skip elsewhere (tests/support).

use crate::support;

use proptest::prelude::*;
use sm120_doctor::kb::schema::Edit;
use sm120_doctor::launch;
use sm120_doctor::remedy::rewrite;
use std::collections::BTreeMap;
use std::process::Command;

static KB: std::sync::LazyLock<sm120_doctor::kb::KnowledgeBase> = std::sync::LazyLock::new(|| {
    sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
});

/// Characters that stress quoting.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::sample::select(vec![
            ' ', '\t', '\n', '\'', '"', '$', '\\', '`', '!', '*', '?', '~', '#', '=', ';', '&',
            '|', '<', '>', '(', ')', '{', '}', '[', ']', ',', ':', '-', '%', '^',
        ]),
        6 => prop::char::range('a', 'z'),
        2 => prop::char::range('0', '9'),
        2 => prop::sample::select(vec!['é', 'ß', '模', 'α', '🚀', '\u{00a0}', 'Ж']),
    ]
}

fn word() -> impl Strategy<Value = String> {
    prop::collection::vec(any_char(), 0..10).prop_map(|v| v.into_iter().collect())
}

fn name() -> impl Strategy<Value = String> {
    "[A-Z][A-Z0-9_]{0,4}".prop_map(|s| format!("P_{s}"))
}

/// One way a user writes a word.
#[derive(Debug, Clone, Copy)]
enum Style {
    Shlex,
    Double,
    Backslash,
    AnsiC,
}

fn style() -> impl Strategy<Value = Style> {
    prop::sample::select(vec![
        Style::Shlex,
        Style::Double,
        Style::Backslash,
        Style::AnsiC,
    ])
}

fn render(w: &str, s: Style) -> String {
    match s {
        Style::Shlex => shlex::try_quote(w).expect("no NUL").into_owned(),
        Style::Double => {
            let mut o = String::from("\"");
            for c in w.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    o.push('\\');
                }
                o.push(c);
            }
            o.push('"');
            o
        }
        Style::Backslash => {
            if w.is_empty() {
                return "''".into();
            }
            let mut o = String::new();
            for c in w.chars() {
                if c == '\n' {
                    o.push_str("'\n'");
                } else if c.is_ascii_alphanumeric() || !c.is_ascii() {
                    o.push(c);
                } else {
                    o.push('\\');
                    o.push(c);
                }
            }
            o
        }
        Style::AnsiC => {
            let mut o = String::from("$'");
            for c in w.chars() {
                match c {
                    '\\' => o.push_str("\\\\"),
                    '\'' => o.push_str("\\'"),
                    '\n' => o.push_str("\\n"),
                    '\t' => o.push_str("\\t"),
                    c => o.push(c),
                }
            }
            o.push('\'');
            o
        }
    }
}

/// A word written as two halves in two styles (bash concatenates them).
fn written(w: &str, a: Style, b: Style, split: usize) -> String {
    let cut = w
        .char_indices()
        .map(|(i, _)| i)
        .nth(split % (w.chars().count() + 1))
        .unwrap_or(w.len());
    let (x, y) = w.split_at(cut);
    if x.is_empty() || y.is_empty() {
        render(w, a)
    } else {
        format!("{}{}", render(x, a), render(y, b))
    }
}

#[derive(Debug, Clone)]
struct Case {
    env: Vec<(String, String, Style, Style, usize)>,
    args: Vec<(String, Style, Style, usize)>,
    continuation: Vec<bool>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((name(), word(), style(), style(), 0usize..8), 0..3),
        prop::collection::vec((word(), style(), style(), 0usize..8), 1..6),
        prop::collection::vec(any::<bool>(), 8),
    )
        .prop_map(|(env, args, continuation)| Case {
            env,
            args,
            continuation,
        })
}

impl Case {
    fn text(&self) -> String {
        let mut t = String::new();
        for (n, v, a, b, s) in &self.env {
            t.push_str(&format!("{n}={} ", written(v, *a, *b, *s)));
        }
        t.push_str("vllm serve");
        for (i, (w, a, b, s)) in self.args.iter().enumerate() {
            t.push_str(if self.continuation[i % 8] {
                " \\\n    "
            } else {
                " "
            });
            t.push_str(&written(w, *a, *b, *s));
        }
        t.push('\n');
        t
    }
    fn names(&self) -> Vec<String> {
        self.env.iter().map(|e| e.0.clone()).collect()
    }
    fn env_map(&self) -> BTreeMap<String, String> {
        self.env
            .iter()
            .map(|(n, v, ..)| (n.clone(), v.clone()))
            .collect()
    }
    fn argv(&self) -> Vec<String> {
        self.args.iter().map(|a| a.0.clone()).collect()
    }
}

/// What bash passes to `vllm`: (argv after `serve`, the named variables that are set).
fn bash_sees(text: &str, names: &[String]) -> (Vec<String>, BTreeMap<String, String>) {
    let harness = format!(
        "vllm() {{ shift; printf '%s\\0' \"$@\"; printf '\\1\\0'; for n in {}; do if [ \"${{!n+set}}\" = set ]; then printf '%s=%s\\0' \"$n\" \"${{!n}}\"; fi; done; }}\n{text}",
        if names.is_empty() {
            "NONE_".to_string()
        } else {
            names.join(" ")
        }
    );
    let out = Command::new("bash")
        .arg("--norc")
        .arg("-c")
        .arg(&harness)
        .env("LC_ALL", "C")
        .env_remove("BASH_ENV")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash failed on {text:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8(out.stdout).expect("utf-8 from bash");
    let mut parts: Vec<&str> = s.split('\0').collect();
    assert_eq!(parts.pop(), Some(""), "output ends with NUL");
    let sep = parts.iter().position(|p| *p == "\u{1}").expect("separator");
    let argv = parts[..sep].iter().map(|s| s.to_string()).collect();
    let env = parts[sep + 1..]
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (argv, env)
}

fn ours(text: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let loc = launch::locate(text).unwrap_or_else(|e| panic!("locate {text:?}: {e}"));
    let mut env = BTreeMap::new();
    for s in &loc.env {
        if let Some(v) = &s.value {
            env.insert(s.name.clone(), v.clone());
        }
    }
    (loc.arg_values(), env)
}

#[test]
fn parse_and_rewrite_agree_with_bash() {
    if !support::require_tools(&["bash"]) {
        return;
    }
    parse_and_rewrite_agree_with_bash_cases();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    // Not a #[test] itself: the test above checks for bash first, then runs these cases.
    fn parse_and_rewrite_agree_with_bash_cases(
        c in case(),
        new_name in name(),
        new_value in word(),
        flag_value in word().prop_filter("a value, not a flag", |v| !v.starts_with('-')),
        change_existing in any::<bool>(),
    ) {
        let text = c.text();
        let names = c.names();

        // (1) the tokenizer reads what bash reads.
        let (b_argv, b_env) = bash_sees(&text, &names);
        prop_assert_eq!(&b_argv, &c.argv());
        prop_assert_eq!(&b_env, &c.env_map());
        let (o_argv, o_env) = ours(&text);
        prop_assert_eq!(&o_argv, &b_argv);
        prop_assert_eq!(&o_env, &b_env);

        // (2) edits: set a variable (an existing one or a new one), add a flag with a value.
        let target = if change_existing && !names.is_empty() {
            names[0].clone()
        } else {
            new_name.clone()
        };
        let step = rewrite::apply_edit(&text, "t", &Edit::SetEnv {
            name: target.clone(),
            value: new_value.clone(),
        }, &KB).map_err(|e| TestCaseError::fail(format!("set_env: {e}")))?;
        let step = rewrite::apply_edit(&step.text, "t", &Edit::AddFlag {
            flag: "--x-test".into(),
            value: Some(flag_value.clone()),
        }, &KB).map_err(|e| TestCaseError::fail(format!("add_flag: {e}")))?;

        let mut all_names = names.clone();
        all_names.push(target.clone());
        all_names.sort();
        all_names.dedup();
        let (a_argv, a_env) = bash_sees(&step.text, &all_names);
        let mut want_argv = c.argv();
        want_argv.push("--x-test".into());
        want_argv.push(flag_value.clone());
        let mut want_env = c.env_map();
        want_env.insert(target.clone(), new_value.clone());
        prop_assert_eq!(&a_argv, &want_argv, "after:\n{}", step.text);
        prop_assert_eq!(&a_env, &want_env, "after:\n{}", step.text);
        prop_assert_eq!(ours(&step.text), (a_argv, a_env));

        // Every byte outside the edits is kept: the command from `vllm serve` to the end is
        // still there as written, and so is everything before it when no assignment changed.
        let vpos = text.find("vllm serve").unwrap_or(0);
        let tail = &text[vpos..text.len() - 1];
        prop_assert!(step.text.contains(tail), "user bytes moved:\n{}\n->\n{}", text, step.text);
        if !names.contains(&target) {
            prop_assert!(step.text.starts_with(&text[..vpos]), "user bytes moved:\n{}\n->\n{}", text, step.text);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Env files a script sources, and scripts of several commands: bash decides what is exported.
// `vllm` is a program on PATH that prints its argv, then `env -0` (it sees exported variables
// only; `env X=1 vllm` and prefixes reach it as they would reach vLLM).
// ---------------------------------------------------------------------------------------------

use sm120_doctor::launch::{Select, SourceFile};

/// A directory with the `vllm` stub, written once: writing an executable in one test thread while
/// another forks can make its exec fail with ETXTBSY.
static STUB: std::sync::LazyLock<tempfile::TempDir> = std::sync::LazyLock::new(|| {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let stub = dir.path().join("vllm");
    std::fs::write(
        &stub,
        "#!/bin/bash\nshift\nprintf '%s\\0' \"$@\"\nprintf '\\1\\0'\nexec env -0\n",
    )
    .expect("write the stub");
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
});

/// Run `main` (with `files` beside it) in bash: (argv after `serve`, the exported P_* variables).
fn bash_exports(
    main: &str,
    files: &[(&str, &str)],
) -> Result<(Vec<String>, BTreeMap<String, String>), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).map_err(|e| e.to_string())?;
    }
    let bin = STUB.path();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = || {
        Command::new("bash")
            .arg("--norc")
            .arg("-c")
            .arg(main)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", &path)
            .env("LC_ALL", "C")
            .output()
            .map_err(|e| e.to_string())
    };
    let mut out = run()?;
    // The first exec of the stub can race another thread's fork (ETXTBSY); run it again.
    for _ in 0..3 {
        if out.status.success() || !String::from_utf8_lossy(&out.stderr).contains("Text file busy")
        {
            break;
        }
        out = run()?;
    }
    if !out.status.success() {
        return Err(format!(
            "bash failed on {main:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let s = String::from_utf8(out.stdout).map_err(|e| e.to_string())?;
    let mut parts: Vec<&str> = s.split('\0').collect();
    parts.pop();
    let sep = parts
        .iter()
        .position(|p| *p == "\u{1}")
        .ok_or("no separator: vllm did not run")?;
    let argv = parts[..sep].iter().map(|s| s.to_string()).collect();
    let env = parts[sep + 1..]
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| k.starts_with("P_"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Ok((argv, env))
}

/// What our model says the engine gets from `files` (`files[0]` the main script).
fn ours_files(files: &[SourceFile]) -> Result<(Vec<String>, BTreeMap<String, String>), String> {
    let loc = launch::locate_files(files, &Select::default()).map_err(|e| e.to_string())?;
    let mut env = BTreeMap::new();
    for s in &loc.env {
        match (&s.value, s.unset) {
            (_, true) => {
                env.remove(&s.name);
            }
            (Some(v), false) => {
                env.insert(s.name.clone(), v.clone());
            }
            (None, false) => {}
        }
    }
    Ok((loc.arg_values(), env))
}

/// A small pool of names, so commands interact (set, export, unset the same variable).
fn pooled_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["P_A", "P_B", "P_C", "P_D"]).prop_map(String::from),
        1 => name(),
    ]
}

/// One line (or a few) of an env file a script sources.
#[derive(Debug, Clone)]
enum EnvLine {
    Export(String, String, Style, Style, usize),
    Bare(String, String, Style, Style, usize),
    ExportAfter(String, String, Style, Style, usize),
    Declare(String, String, Style, Style, usize),
    AllExport(String, String, Style, Style, usize),
    Comment(String),
    Blank,
}

fn env_line() -> impl Strategy<Value = EnvLine> {
    let v = || (pooled_name(), word(), style(), style(), 0usize..8);
    prop_oneof![
        4 => v().prop_map(|(n, w, a, b, s)| EnvLine::Export(n, w, a, b, s)),
        2 => v().prop_map(|(n, w, a, b, s)| EnvLine::Bare(n, w, a, b, s)),
        1 => v().prop_map(|(n, w, a, b, s)| EnvLine::ExportAfter(n, w, a, b, s)),
        1 => v().prop_map(|(n, w, a, b, s)| EnvLine::Declare(n, w, a, b, s)),
        1 => v().prop_map(|(n, w, a, b, s)| EnvLine::AllExport(n, w, a, b, s)),
        1 => "[ a-z=#'\"]{0,12}".prop_map(EnvLine::Comment),
        1 => Just(EnvLine::Blank),
    ]
}

impl EnvLine {
    fn text(&self) -> String {
        match self {
            EnvLine::Export(n, v, a, b, s) => format!("export {n}={}\n", written(v, *a, *b, *s)),
            EnvLine::Bare(n, v, a, b, s) => format!("{n}={}\n", written(v, *a, *b, *s)),
            EnvLine::ExportAfter(n, v, a, b, s) => {
                format!("{n}={}\nexport {n}\n", written(v, *a, *b, *s))
            }
            EnvLine::Declare(n, v, a, b, s) => {
                format!("declare -x {n}={}\n", written(v, *a, *b, *s))
            }
            EnvLine::AllExport(n, v, a, b, s) => {
                format!("set -a\n{n}={}\nset +a\n", written(v, *a, *b, *s))
            }
            EnvLine::Comment(c) => format!("# {c}\n"),
            EnvLine::Blank => "\n".into(),
        }
    }
    fn name(&self) -> Option<&str> {
        match self {
            EnvLine::Export(n, ..)
            | EnvLine::Bare(n, ..)
            | EnvLine::ExportAfter(n, ..)
            | EnvLine::Declare(n, ..)
            | EnvLine::AllExport(n, ..) => Some(n),
            _ => None,
        }
    }
}

const RUN_SH: &str = "#!/bin/bash\nset -e\nsource ./set_env.sh\nvllm serve m --port 8000\n";

/// Apply `edit` to the files and return the new texts.
fn edit_files(files: &[SourceFile], edit: &Edit) -> Result<Vec<String>, TestCaseError> {
    rewrite::apply_edit_files(files, &Select::default(), "t", edit, &KB)
        .map(|s| s.texts)
        .map_err(|e| TestCaseError::fail(format!("{edit:?}: {e}")))
}

#[test]
fn sourced_env_file_agrees_with_bash() {
    if !support::require_tools(&["bash"]) {
        return;
    }
    sourced_env_file_cases();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// An env file a script sources (`export`, bare assignments, `export NAME` later,
    /// `declare -x`, `set -a`, comments): the model's environment is bash's, and `fix` edits the
    /// env file so bash sees exactly the old environment plus the edit, the script untouched
    /// unless the variable had to go on the command. (Run by the test above, after the bash check.)
    fn sourced_env_file_cases(
        lines in prop::collection::vec(env_line(), 1..7),
        new_name in pooled_name(),
        new_value in word(),
        pick in any::<prop::sample::Index>(),
        change_existing in any::<bool>(),
    ) {
        let env_text: String = lines.iter().map(EnvLine::text).collect();
        let files = vec![SourceFile::new("run.sh", RUN_SH), SourceFile::new("set_env.sh", env_text.clone())];
        let (b_argv, b_env) = bash_exports(RUN_SH, &[("set_env.sh", &env_text)]).map_err(TestCaseError::fail)?;
        let (o_argv, o_env) = ours_files(&files).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&o_argv, &b_argv);
        prop_assert_eq!(&o_env, &b_env, "set_env.sh:\n{}", env_text);

        // Set a variable (one the file names, or a new one).
        let names: Vec<&str> = lines.iter().filter_map(EnvLine::name).collect();
        let target = if change_existing && !names.is_empty() {
            pick.get(&names).to_string()
        } else {
            new_name.clone()
        };
        let texts = edit_files(&files, &Edit::SetEnv { name: target.clone(), value: new_value.clone() })?;
        let (a_argv, a_env) = bash_exports(&texts[0], &[("set_env.sh", &texts[1])]).map_err(TestCaseError::fail)?;
        let mut want = b_env.clone();
        want.insert(target.clone(), new_value.clone());
        prop_assert_eq!(&a_argv, &b_argv);
        prop_assert_eq!(&a_env, &want, "after:\n{}\n---\n{}", texts[0], texts[1]);
        // The script is untouched unless the name is set later without export (then the
        // command carries it); nothing else in it moved.
        if texts[0] != RUN_SH {
            prop_assert!(
                texts[0].starts_with("#!/bin/bash\nset -e\nsource ./set_env.sh\n")
                    && texts[0].ends_with("vllm serve m --port 8000\n"),
                "{}", texts[0]
            );
        }
        // Unset one the file names: bash no longer sees it (if it was exported at all).
        if let Some(&gone) = names.first() {
            let texts = edit_files(&files, &Edit::UnsetEnv { name: gone.to_string() })?;
            let (_, u_env) = bash_exports(&texts[0], &[("set_env.sh", &texts[1])]).map_err(TestCaseError::fail)?;
            let mut want = b_env.clone();
            want.remove(gone);
            prop_assert_eq!(&u_env, &want, "after unset {}:\n{}", gone, texts[1]);
        }
    }
}

/// One command of a script before the vLLM command.
#[derive(Debug, Clone)]
enum Cmd {
    Export(String, String, Style),
    Bare(String, String, Style),
    ExportName(String),
    Unset(String),
    SetA(bool),
    Echo(String, Style),
    Comment,
    /// `export A=… \` + a comment line + `  B=…`: the comment ends the export; B stays a
    /// shell variable.
    CutChain(String, String, String, String),
    AndExport(String, String),
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        4 => (pooled_name(), word(), style()).prop_map(|(n, v, s)| Cmd::Export(n, v, s)),
        2 => (pooled_name(), word(), style()).prop_map(|(n, v, s)| Cmd::Bare(n, v, s)),
        1 => pooled_name().prop_map(Cmd::ExportName),
        1 => pooled_name().prop_map(Cmd::Unset),
        1 => any::<bool>().prop_map(Cmd::SetA),
        1 => (word(), style()).prop_map(|(w, s)| Cmd::Echo(w, s)),
        1 => Just(Cmd::Comment),
        1 => (pooled_name(), "[a-z]{0,4}", pooled_name(), "[a-z]{0,4}")
            .prop_map(|(a, x, b, y)| Cmd::CutChain(a, x, b, y)),
        1 => (pooled_name(), "[a-z:_]{0,6}").prop_map(|(n, v)| Cmd::AndExport(n, v)),
    ]
}

impl Cmd {
    fn text(&self) -> String {
        let q = |v: &str, s: &Style| render(v, *s);
        match self {
            Cmd::Export(n, v, s) => format!("export {n}={}\n", q(v, s)),
            Cmd::Bare(n, v, s) => format!("{n}={}\n", q(v, s)),
            Cmd::ExportName(n) => format!("export {n}\n"),
            Cmd::Unset(n) => format!("unset {n}\n"),
            Cmd::SetA(on) => format!("set {}a\n", if *on { '-' } else { '+' }),
            Cmd::Echo(w, s) => format!("echo {} > /dev/null\n", q(w, s)),
            Cmd::Comment => "# a comment\n".into(),
            Cmd::CutChain(a, x, b, y) => format!("export {a}={x} \\\n# cut\n  {b}={y}\n"),
            Cmd::AndExport(n, v) => format!("true && export {n}={v}\n"),
        }
    }
    fn name(&self) -> Option<&str> {
        match self {
            Cmd::Export(n, ..) | Cmd::Bare(n, ..) | Cmd::ExportName(n) | Cmd::AndExport(n, _) => {
                Some(n)
            }
            Cmd::CutChain(a, ..) => Some(a),
            _ => None,
        }
    }
}

#[test]
fn multi_command_script_agrees_with_bash() {
    if !support::require_tools(&["bash"]) {
        return;
    }
    multi_command_script_cases();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// A script of several commands, then `[env] [PREFIX=…] vllm serve ARGS`: argv and the
    /// exported environment are bash's, and after `fix` (set a variable, add a flag with a value)
    /// bash sees exactly the old ones plus the edit. (Run by the test above, after the bash check.)
    fn multi_command_script_cases(
        cmds in prop::collection::vec(cmd(), 0..8),
        prefix in prop::collection::vec((pooled_name(), word(), style()), 0..3),
        use_env in any::<bool>(),
        args in prop::collection::vec((word(), style()), 1..4),
        new_name in pooled_name(),
        new_value in word(),
        flag_value in word().prop_filter("a value, not a flag", |v| !v.starts_with('-')),
        pick in any::<prop::sample::Index>(),
        change_existing in any::<bool>(),
    ) {
        let mut text = String::from("#!/bin/bash\n");
        for c in &cmds {
            text.push_str(&c.text());
        }
        if use_env && !prefix.is_empty() {
            text.push_str("env ");
        }
        for (n, v, s) in &prefix {
            text.push_str(&format!("{n}={} ", render(v, *s)));
        }
        text.push_str("vllm serve");
        for (w, s) in &args {
            text.push(' ');
            text.push_str(&render(w, *s));
        }
        text.push('\n');
        let files = vec![SourceFile::new("run.sh", text.clone())];
        let (b_argv, b_env) = bash_exports(&text, &[]).map_err(TestCaseError::fail)?;
        let want_argv: Vec<String> = args.iter().map(|a| a.0.clone()).collect();
        prop_assert_eq!(&b_argv, &want_argv);
        let (o_argv, o_env) = ours_files(&files).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&o_argv, &b_argv, "script:\n{}", text);
        prop_assert_eq!(&o_env, &b_env, "script:\n{}", text);

        let mut names: Vec<&str> = cmds.iter().filter_map(Cmd::name).collect();
        names.extend(prefix.iter().map(|p| p.0.as_str()));
        let target = if change_existing && !names.is_empty() {
            pick.get(&names).to_string()
        } else {
            new_name.clone()
        };
        let texts = edit_files(&files, &Edit::SetEnv { name: target.clone(), value: new_value.clone() })?;
        let texts = edit_files(
            &[SourceFile::new("run.sh", texts[0].clone())],
            &Edit::AddFlag { flag: "--x-test".into(), value: Some(flag_value.clone()) },
        )?;
        let (a_argv, a_env) = bash_exports(&texts[0], &[]).map_err(TestCaseError::fail)?;
        let mut want_env = b_env.clone();
        want_env.insert(target.clone(), new_value.clone());
        let mut want_argv = b_argv.clone();
        want_argv.push("--x-test".into());
        want_argv.push(flag_value.clone());
        prop_assert_eq!(&a_argv, &want_argv, "after:\n{}", texts[0]);
        prop_assert_eq!(&a_env, &want_env, "before:\n{}\nafter:\n{}", text, texts[0]);
        prop_assert_eq!(
            ours_files(&[SourceFile::new("run.sh", texts[0].clone())]).map_err(TestCaseError::fail)?,
            (a_argv, a_env)
        );
    }
}
