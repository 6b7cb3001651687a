//! Where a claim was read: the `sources:` lines of the knowledge base, and the lint that asks
//! every claim naming a release, a PR's state or an upstream message for the line that says
//! where it was read.
//!
//! A source is one of:
//! - a release read: `vllm==0.30.0:vllm/v1/worker/gpu/cudagraph_utils.py:605` (a published
//!   package, the file inside it, the line);
//! - a commit read: `891d57b:csrc/apis/attention.hpp:184` (a commit of the repository the claim
//!   is about);
//! - a URL: a file at a ref (`https://github.com/o/r/blob/<commit or tag>/path`, a read like
//!   the two above unless the ref is a branch), a PR or an issue (`…/pull/N`, `…/issues/N`),
//!   or any other page.

use super::schema::Severity;
use super::{KnowledgeBase, Lint};
use regex::Regex;
use std::sync::LazyLock;

/// What a `sources:` line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `package==version:path:line`.
    Release { package: String, version: String },
    /// `<hex commit>:path:line`.
    Commit { commit: String },
    /// A file at a tag or commit on GitHub (a branch such as `main` moves: not a read).
    Blob { at_ref: String },
    /// A PR or issue thread, with its number.
    Thread { number: u32 },
    /// Any other page (documentation, a release page).
    Page,
    /// Not one of the forms above.
    Unknown,
}

static RELEASE: LazyLock<Regex> = LazyLock::new(|| {
    // A compiled file has no line: its strings were read (`…/_C.abi3.so`, `… (strings)`).
    Regex::new(concat!(
        r"^([A-Za-z][A-Za-z0-9_.-]*)==([0-9][^:\s]*):",
        r"(?:[^:\s]+:[0-9]+|[^:\s]+\.(?:so|a)(?:\.[0-9]+)*(?: \(strings\))?)$",
    ))
    .unwrap_or_else(|e| unreachable!("constant pattern: {e}"))
});
static COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([0-9a-f]{7,40}):[^:\s]+:[0-9]+$")
        .unwrap_or_else(|e| unreachable!("constant pattern: {e}"))
});
static BLOB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^https://github\.com/[^/]+/[^/]+/(?:blob|tree|commit)/([^/#\s]+)")
        .unwrap_or_else(|e| unreachable!("constant pattern: {e}"))
});
static THREAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^https://github\.com/[^/]+/[^/]+/(?:pull|issues)/([0-9]+)")
        .unwrap_or_else(|e| unreachable!("constant pattern: {e}"))
});

/// Branch names that move: a file read at one is not a read of any release.
const BRANCHES: [&str; 4] = ["main", "master", "nv_dev", "HEAD"];

impl Source {
    pub fn parse(s: &str) -> Source {
        let s = s.trim();
        if let Some(c) = RELEASE.captures(s) {
            return Source::Release {
                package: c[1].to_string(),
                version: c[2].to_string(),
            };
        }
        if let Some(c) = COMMIT.captures(s) {
            return Source::Commit {
                commit: c[1].to_string(),
            };
        }
        if let Some(c) = BLOB.captures(s) {
            return Source::Blob {
                at_ref: c[1].to_string(),
            };
        }
        if let Some(n) = THREAD.captures(s).and_then(|c| c[1].parse().ok()) {
            return Source::Thread { number: n };
        }
        if s.starts_with("https://") {
            return Source::Page;
        }
        Source::Unknown
    }

    /// Does it say where released code was read (a release, a commit, a file at a fixed ref)?
    pub fn is_code_read(&self) -> bool {
        match self {
            Source::Release { .. } | Source::Commit { .. } => true,
            Source::Blob { at_ref } => !BRANCHES.contains(&at_ref.as_str()),
            _ => false,
        }
    }
}

/// A release or version named in prose: `0.28.0`, `2.25.1`, `0.27.x`, `v2.24.3-1`. Two-part
/// numbers (`12.8`, `12.0`) are CUDA versions and capabilities far more often than releases.
static NAMES_RELEASE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bv?\d+\.\d+\.(?:\d+|x)\b").unwrap_or_else(|e| unreachable!("constant: {e}"))
});

/// A PR's or issue's state: `#47258 (open)`, `#47258 is still open`, `merged in #4`, `unmerged`.
static NAMES_STATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)#(\d+)(?:,? (?:is )?(?:still )?)\(?(open|merged|closed|unmerged)\b",
        r"|(?i)\b(?:open|merged|closed|unmerged) (?:PR|issue|pull request)s? #(\d+)",
    ))
    .unwrap_or_else(|e| unreachable!("constant: {e}"))
});

/// An upstream message quoted in prose: four or more words between quotes.
static QUOTES_MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?:^|[\s(:,])'[^'{}]*\w+ \w+ \w+ \w+[^'{}]*'(?:$|[\s).,;:])"#,
        r#"|(?:^|[\s(:,])"[^"{}]*\w+ \w+ \w+ \w+[^"{}]*"(?:$|[\s).,;:])"#,
    ))
    .unwrap_or_else(|e| unreachable!("constant: {e}"))
});

/// What a claim's text names that needs a source, and why the given sources do not say it.
pub fn missing(texts: &[&str], sources: &[String]) -> Option<String> {
    let parsed: Vec<Source> = sources.iter().map(|s| Source::parse(s)).collect();
    let code_read = parsed.iter().any(Source::is_code_read);
    for t in texts {
        if let Some(m) = NAMES_RELEASE.find(t)
            && !code_read
        {
            return Some(format!(
                "names release {:?} but no source says where released code was read \
                 (package==version:path:line, commit:path:line or a file URL at a tag/commit)",
                m.as_str()
            ));
        }
        for c in NAMES_STATE.captures_iter(t) {
            let Some(n) = c
                .get(1)
                .or_else(|| c.get(3))
                .and_then(|m| m.as_str().parse::<u32>().ok())
            else {
                continue;
            };
            if !parsed.contains(&Source::Thread { number: n }) {
                return Some(format!(
                    "names the state of #{n} ({:?}) but lists no URL of #{n}",
                    c.get(0).map_or("", |m| m.as_str())
                ));
            }
        }
        if let Some(m) = QUOTES_MESSAGE.find(t)
            && !code_read
            && !parsed.iter().any(|s| matches!(s, Source::Thread { .. }))
        {
            return Some(format!(
                "quotes {} but no source says where it was read (released code or a thread)",
                short(m.as_str())
            ));
        }
    }
    None
}

fn short(t: &str) -> String {
    let mut s: String = t.chars().take(60).collect();
    if t.chars().count() > 60 {
        s.push('…');
    }
    s
}

/// Every claim in the knowledge base without the source its text needs.
pub(super) fn lints(kb: &KnowledgeBase) -> Vec<Lint> {
    let mut out = Vec::new();
    let mut say = |file: &str, what: String, texts: Vec<&str>, sources: &[String]| {
        if let Some(why) = missing(&texts, sources) {
            out.push(Lint {
                file: file.to_string(),
                message: format!("{what} {why}"),
            });
        }
    };
    for c in &kb.classes {
        for s in &c.def.signatures {
            let pattern = s.pattern.as_ref().map_or("", |p| p.value.as_str());
            // The pattern is an upstream message: it needs a source of some kind (a thread
            // where it was logged, or the code); the note is prose like any other.
            if !pattern.is_empty() && s.sources.is_empty() {
                say(
                    &c.file,
                    format!("signature {:?}", s.id.value),
                    vec!["'a message pattern with no source'"],
                    &s.sources,
                );
            }
            say(
                &c.file,
                format!("signature {:?}", s.id.value),
                vec![s.note.as_str(), s.unconfirmed.as_str()],
                &s.sources,
            );
        }
        for n in &c.def.nodes {
            say(
                &c.file,
                format!("node {:?}", n.id.value),
                vec![n.why.as_str(), n.question.as_str()],
                &n.sources,
            );
        }
        for k in &c.def.conclusions {
            let mut texts = vec![k.title.as_str()];
            texts.extend(k.evidence.iter().map(|e| e.value.as_str()));
            texts.extend(k.does_not_fix.iter().map(String::as_str));
            texts.extend(k.contradictions.iter().map(String::as_str));
            // A pass names no release as a claim about it.
            if k.severity == Severity::Ok && k.holds.is_empty() {
                texts.retain(|t| !NAMES_RELEASE.is_match(t));
            }
            say(
                &c.file,
                format!("conclusion {:?}", k.id.value),
                texts,
                &k.sources,
            );
        }
    }
    for (id, ch) in &kb.changes {
        let file = kb.change_files.get(id).map_or("", String::as_str);
        say(
            file,
            format!("change {id:?}"),
            vec![ch.text.as_str(), ch.by.as_str()],
            &ch.sources,
        );
    }
    for r in kb.remedies.values() {
        let mut texts = vec![r.title.as_str(), r.verified.as_str()];
        texts.extend(r.limits.iter().map(String::as_str));
        say(
            super::REMEDIES_FILE,
            format!("remedy {:?}", r.id.value),
            texts,
            &r.sources,
        );
    }
    for p in &kb.prs {
        say(
            super::REMEDIES_FILE,
            format!("PR base #{}", p.pr.value),
            vec![p.why.as_str()],
            &p.sources,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sources_are_told_apart() {
        assert_eq!(
            Source::parse("vllm==0.30.0:vllm/v1/worker/gpu/cudagraph_utils.py:605"),
            Source::Release {
                package: "vllm".into(),
                version: "0.30.0".into()
            }
        );
        assert!(Source::parse("891d57b:csrc/apis/attention.hpp:184").is_code_read());
        assert!(
            Source::parse("https://github.com/NVIDIA/nccl/blob/v2.25.1-1/makefiles/common.mk")
                .is_code_read()
        );
        assert!(
            !Source::parse("https://github.com/vllm-project/vllm/blob/main/vllm/envs.py")
                .is_code_read()
        );
        assert_eq!(
            Source::parse("https://github.com/vllm-project/vllm/pull/54782"),
            Source::Thread { number: 54782 }
        );
        // A path without its line is not a release read.
        assert_eq!(Source::parse("vllm==0.30.0:vllm/envs.py"), Source::Unknown);
    }

    #[test]
    fn a_release_claim_without_a_read_is_caught() {
        let t = ["The guard arrives in 0.30.0 (PR #54782)."];
        assert!(
            missing(
                &t,
                &src(&["https://github.com/vllm-project/vllm/pull/54782"])
            )
            .is_some()
        );
        assert_eq!(
            missing(
                &t,
                &src(&["vllm==0.30.0:vllm/v1/worker/gpu/cudagraph_utils.py:605"])
            ),
            None
        );
        // CUDA versions and capabilities are not releases.
        assert_eq!(
            missing(&["needs CUDA 12.8 on compute capability 12.0"], &[]),
            None
        );
    }

    #[test]
    fn a_pr_state_needs_that_pr_s_url() {
        let t = ["#47258 is still open; #49467 names #41652."];
        let only_other = src(&["https://github.com/vllm-project/vllm/pull/49467"]);
        assert!(missing(&t, &only_other).is_some_and(|m| m.contains("#47258")));
        let with = src(&["https://github.com/vllm-project/vllm/pull/47258"]);
        assert_eq!(missing(&t, &with), None);
        assert!(missing(&["fixed by unmerged PR #40991"], &[]).is_some());
    }

    #[test]
    fn a_quoted_message_needs_a_source() {
        let t = ["Expect 'piecewise CUDA graphs unavailable, model is not torch-compiled'."];
        assert!(missing(&t, &[]).is_some());
        assert_eq!(
            missing(
                &t,
                &src(&["https://github.com/vllm-project/vllm/issues/56349"])
            ),
            None
        );
        // Placeholders are the tool's own text, not a quote; nor is an apostrophe.
        assert_eq!(missing(&["VLLM_X={env.VLLM_X} was set"], &[]), None);
        assert_eq!(
            missing(
                &["torch's own warning when its wheel lacks it, vLLM's 'x'"],
                &[]
            ),
            None
        );
    }
}
