//! Property test against real bash: random argv and env (spaces, quotes, `$`, backslashes,
//! newlines, unicode), written the ways users write them, are (1) parsed by our tokenizer into
//! the same argv/env bash sees, and (2) after `fix` edits (a new env var, a new flag with a random
//! value, a changed env var), bash sees exactly the old argv/env plus the edit.
//!
//! bash runs the text with `vllm` defined as a function that prints its argv and the variables.

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

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn parse_and_rewrite_agree_with_bash(
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
