//! The bash script that applies a vLLM PR (today: #43923) on the user's host, safely.
//!
//! The script's behaviour lives in `apply_pr.sh.in`; this module fills in the values: the PR,
//! the vLLM version line it was written for (`prs:` in knowledge/remedies.yaml), the target
//! Python / checkout defaults, and the PR's known limits, which come from the knowledge base (the
//! remedy whose edit is `patch_script`).

use super::rewrite::shell_quote;
use crate::kb::KnowledgeBase;
use crate::kb::schema::{Edit, Remedy};

const TEMPLATE: &str = include_str!("apply_pr.sh.in");

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
pub fn remedy_for_pr(kb: &KnowledgeBase, pr: u32) -> Result<&Remedy, ScriptError> {
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

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Generate the script.
pub fn generate(kb: &KnowledgeBase, opts: &ScriptOptions) -> Result<String, ScriptError> {
    let remedy = remedy_for_pr(kb, opts.pr)?;
    let base = kb.pr(opts.pr).ok_or(ScriptError::NoBase(opts.pr))?;
    let q = |v: &str| shell_quote(v).map_err(|e| ScriptError::BadValue(e.to_string()));
    let mut limits = String::new();
    for l in &remedy.limits {
        limits.push_str(&format!("  - {}\n", one_line(l)));
    }
    limits.push_str(&format!(
        "  - Written for {}; confidence {}; verified on: {}",
        one_line(&base.why),
        remedy.confidence.as_str(),
        one_line(&remedy.verified)
    ));
    if limits
        .lines()
        .any(|l| l.trim() == "SM120_DOCTOR_LIMITS_END")
    {
        return Err(ScriptError::BadValue(
            "a limit line equals the here-document delimiter".into(),
        ));
    }
    let pr = opts.pr.to_string();
    let script = TEMPLATE
        .replace("@@TOOL_VERSION@@", env!("CARGO_PKG_VERSION"))
        .replace("@@TITLE@@", &one_line(&remedy.title))
        .replace(
            "@@EXPECTED_VERSION@@",
            &format!(
                "{}  # {}",
                q(&base.expected_version.value)?,
                one_line(&base.why)
            ),
        )
        .replace(
            "@@PYTHON@@",
            &q(opts.python.as_deref().unwrap_or("python3"))?,
        )
        .replace("@@VLLM_DIR@@", &q(opts.vllm_dir.as_deref().unwrap_or(""))?)
        .replace(
            "@@REMOTE@@",
            &q("https://github.com/vllm-project/vllm.git")?,
        )
        .replace(
            "@@DIFF_URL@@",
            &q(&format!(
                "https://github.com/vllm-project/vllm/pull/{pr}.diff"
            ))?,
        )
        .replace("@@LIMITS@@", limits.trim_end())
        .replace("@@PR@@", &pr);
    Ok(script)
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
        assert!(
            s.contains("PYTHON=\"/opt/venv/bin/python it's\"")
                || s.contains("PYTHON='/opt/venv/bin/python it'\\''s'"),
            "{s}"
        );
        assert!(s.contains("PYTORCH_ALLOC_CONF"));
        assert!(s.contains("re-parses the allocator settings"));
        assert!(s.contains("h200x2"));
        assert!(!s.contains("@@"));
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
