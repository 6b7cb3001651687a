//! The bash script that applies a vLLM PR (today: #43923) on the user's host, safely.
//!
//! The script's behaviour lives in `apply_pr.sh.in`, a minijinja template; this module fills in
//! the values in one pass: the PR, the vLLM version line it was written for (`prs:` in
//! knowledge/remedies.yaml, with the head commit and diff sha256 it pins, if any), the target
//! Python / checkout defaults, and the PR's known limits from the knowledge base (the remedy
//! whose edit is `patch_script`).
//!
//! A knowledge base is shared between people, so none of its strings may change what the
//! script runs. Every value passes through a filter for the place it lands in: `sh` quotes a
//! shell word (shlex), `comment` makes one line of comment text (newlines and other control
//! characters become spaces). The formatter refuses any string that did not pass a filter, so a
//! template edit that forgets one fails in the tests instead of shipping.

use crate::kb::KnowledgeBase;
use crate::kb::schema::{Edit, Remedy};
use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};
use std::collections::BTreeMap;

const TEMPLATE: &str = include_str!("apply_pr.sh.in");

/// Default seconds each Python step of the script may take (its `--python-timeout` changes it).
pub const PYTHON_TIMEOUT_SECS: u32 = 120;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScriptError {
    #[error("no remedy in the knowledge base applies PR #{pr}; known: {}", known.join(", "))]
    UnknownPr { pr: u32, known: Vec<String> },
    #[error("PR #{0}: the vLLM version it was written for is not known to this tool")]
    NoBase(u32),
    #[error("{0}")]
    BadValue(String),
}

/// Options for [`generate`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScriptOptions {
    pub pr: u32,
    /// Default target Python (the script's `--python` overrides it); `python3` when `None`.
    pub python: Option<String>,
    /// Default vLLM checkout (the script's `--vllm-dir` overrides it).
    pub vllm_dir: Option<String>,
}

/// The remedy that applies `pr`.
pub(crate) fn remedy_for_pr(kb: &KnowledgeBase, pr: u32) -> Result<&Remedy, ScriptError> {
    let is_pr = |r: &&Remedy| {
        r.edits
            .iter()
            .any(|e| matches!(e, Edit::PatchScript { pr: p } if *p == pr))
    };
    kb.remedies
        .values()
        .find(is_pr)
        .ok_or_else(|| ScriptError::UnknownPr {
            pr,
            known: kb
                .remedies
                .values()
                .flat_map(|r| r.edits.iter())
                .filter_map(|e| match e {
                    Edit::PatchScript { pr } => Some(format!("#{pr}")),
                    _ => None,
                })
                .collect(),
        })
}

/// One line of comment text: every run of whitespace or control characters is one space.
pub(crate) fn comment_text(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `comment` filter: one line of comment text.
fn comment_filter(v: String) -> Value {
    Value::from_safe_string(comment_text(&v))
}

/// The `sh` filter: one shell word (quoted by shlex where needed; NUL cannot be quoted).
fn sh_filter(v: String) -> Result<Value, Error> {
    shlex::try_quote(&v)
        .map(|q| Value::from_safe_string(q.into_owned()))
        .map_err(|_| {
            Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "{:?} holds a NUL byte and cannot be a shell word",
                    comment_text(&v)
                ),
            )
        })
}

/// The template environment: custom delimiters, strict undefined values, the two filters and a
/// formatter that lets only filtered strings (and numbers) through.
fn environment() -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .block_delimiters("@%", "%@")
            .variable_delimiters("@{", "}@")
            .comment_delimiters("@#", "#@")
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()?,
    );
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.remove_filter("safe");
    env.add_filter("comment", comment_filter);
    env.add_filter("sh", sh_filter);
    env.set_formatter(|out, _state, value| {
        if value.as_str().is_some() && !value.is_safe() {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "a string reaches the script without a `sh` or `comment` filter",
            ));
        }
        if value.as_str().is_none() && value.as_i64().is_none() {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("only strings and integers go into the script, not {value:?}"),
            ));
        }
        write!(out, "{value}").map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"))
    });
    env.add_template("apply_pr.sh", TEMPLATE)?;
    Ok(env)
}

/// Render the template with these values (`limits` a list, `pr` an integer, the rest strings).
fn render(values: BTreeMap<String, Value>) -> Result<String, ScriptError> {
    let bad = |e: Error| ScriptError::BadValue(format!("cannot generate the script: {e}"));
    let env = environment().map_err(bad)?;
    let t = env.get_template("apply_pr.sh").map_err(bad)?;
    t.render(Value::from(values)).map_err(bad)
}

/// Generate the script.
pub fn generate(kb: &KnowledgeBase, opts: &ScriptOptions) -> Result<String, ScriptError> {
    let remedy = remedy_for_pr(kb, opts.pr)?;
    let base = kb.pr(opts.pr).ok_or(ScriptError::NoBase(opts.pr))?;
    let mut limits: Vec<Value> = remedy
        .limits
        .iter()
        .map(|l| Value::from(l.as_str()))
        .collect();
    limits.push(Value::from(format!(
        "Written for {}; confidence {}; verified on: {}",
        comment_text(&base.why),
        remedy.confidence.as_str(),
        comment_text(&remedy.verified)
    )));
    let s = |v: &str| Value::from(v);
    let pinned = |v: &Option<crate::kb::schema::SpannedStr>| {
        Value::from(v.as_ref().map(|x| x.value.as_str()).unwrap_or(""))
    };
    let values: BTreeMap<String, Value> = [
        ("pr", Value::from(opts.pr)),
        ("tool_version", s(env!("CARGO_PKG_VERSION"))),
        ("title", s(&remedy.title)),
        ("expected_version", s(&base.expected_version.value)),
        ("why", s(&base.why)),
        ("head_commit", pinned(&base.head_commit)),
        ("diff_sha256", pinned(&base.diff_sha256)),
        ("python", s(opts.python.as_deref().unwrap_or("python3"))),
        (
            "python_timeout",
            Value::from(PYTHON_TIMEOUT_SECS.to_string()),
        ),
        ("vllm_dir", s(opts.vllm_dir.as_deref().unwrap_or(""))),
        ("remote", s("https://github.com/vllm-project/vllm.git")),
        (
            "diff_url",
            Value::from(format!(
                "https://github.com/vllm-project/vllm/pull/{}.diff",
                opts.pr
            )),
        ),
        ("limits", Value::from(limits)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    render(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_carries_the_kb_limits_and_the_version() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let s = generate(
            &kb,
            &ScriptOptions {
                pr: 43923,
                python: Some("/opt/venv/bin/python it's".into()),
                vllm_dir: None,
            },
        )
        .expect("script");
        assert!(s.starts_with("#!/usr/bin/env bash\n"));
        assert!(s.contains("set -euo pipefail"));
        assert!(s.contains("EXPECTED_VLLM_VERSION=0.24  #"));
        assert!(s.contains("PINNED_HEAD=''\nPINNED_SHA256=''\n"), "{s}");
        assert!(
            s.contains("PYTHON=\"/opt/venv/bin/python it's\"")
                || s.contains("PYTHON='/opt/venv/bin/python it'\\''s'"),
            "{s}"
        );
        assert!(s.contains("PYTORCH_ALLOC_CONF"));
        assert!(s.contains("re-parses the allocator settings"));
        assert!(s.contains("h200x2"));
        assert!(!s.contains("@@") && !s.contains("@{") && !s.contains("@%"));
    }

    #[test]
    fn an_unfiltered_value_is_an_error_not_a_script() {
        let mut env = environment().expect("env");
        env.add_template("t", "a=@{ x }@").expect("template");
        let t = env.get_template("t").expect("t");
        let e = t
            .render(Value::from(BTreeMap::from([(
                "x".to_string(),
                Value::from("$(id)"),
            )])))
            .expect_err("unfiltered");
        assert!(
            e.to_string().contains("without a `sh` or `comment` filter"),
            "{e}"
        );
        assert!(
            env.render_str("@{ x|safe }@", Value::from(())).is_err(),
            "no `safe` filter"
        );
        let ok = env
            .render_str(
                "a=@{ x|sh }@ # @{ x|comment }@",
                Value::from(BTreeMap::from([(
                    "x".to_string(),
                    Value::from("$(id)\nrm -rf ~"),
                )])),
            )
            .expect("filtered");
        assert_eq!(ok, "a='$(id)\nrm -rf ~' # $(id) rm -rf ~");
    }

    #[test]
    fn a_nul_byte_cannot_become_a_shell_word() {
        let e = sh_filter("a\0b".into()).expect_err("nul");
        assert!(e.to_string().contains("NUL"), "{e}");
        assert_eq!(comment_text(" a\r\n\tb\u{7}c  "), "a b c");
    }

    #[test]
    fn unknown_pr_is_refused() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let e = generate(
            &kb,
            &ScriptOptions {
                pr: 1,
                ..Default::default()
            },
        )
        .expect_err("unknown");
        assert!(e.to_string().contains("#43923"), "{e}");
    }
}
