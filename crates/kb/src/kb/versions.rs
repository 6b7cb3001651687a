//! Version knowledge in the knowledge base: the `changes:` tables (a release where something
//! changed, with its source) and the `holds:` ranges of conclusions and remedies, compiled and
//! checked at load; plus the lints about claims that depend on a version.
//!
//! The rules a loaded knowledge base keeps: every change id is unique and names a known
//! package and a final release; every range parses (`vllm::version::Range`); every edge of a
//! range names exactly one change of that package at that release, and every change a range
//! lists sits at one of its edges, so the tool can always say what changed and since when.

use super::schema::{Change, Holds, Severity, SpannedStr};
use super::{KbError, KnowledgeBase, Lint};
use crate::vllm::version::{self, Package, Range};
use pep440_rs::Version;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One package's compiled `holds:` range.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VersionBound {
    pub package: Package,
    pub range: Range,
    /// The change id at each edge, ascending.
    pub edges: Vec<(Version, String)>,
}

impl VersionBound {
    /// The change id at `edge`.
    pub fn change_at(&self, edge: &Version) -> Option<&str> {
        self.edges
            .iter()
            .find(|(e, _)| e == edge)
            .map(|(_, id)| id.as_str())
    }
}

fn at(file: &str, s: &SpannedStr, message: impl Into<String>) -> KbError {
    KbError {
        file: file.to_string(),
        line: s.referenced.line(),
        column: s.referenced.column(),
        message: message.into(),
    }
}

/// Every `changes:` entry of every file, unique by id and well formed.
pub(super) fn collect_changes<'a>(
    files: impl Iterator<Item = (&'a str, &'a [Change])>,
    errors: &mut Vec<KbError>,
) -> BTreeMap<String, Change> {
    let mut out: BTreeMap<String, Change> = BTreeMap::new();
    for (file, changes) in files {
        for c in changes {
            if out.contains_key(&c.id.value) {
                errors.push(at(
                    file,
                    &c.id,
                    format!("duplicate change id {:?}", c.id.value),
                ));
            }
            if Package::from_key(&c.package.value).is_none() {
                errors.push(at(file, &c.package, unknown_package(&c.package.value)));
            }
            match version::parse(&c.version.value) {
                Ok(v) if v.is_pre() || v.is_dev() || v.is_post() || v.is_local() => {
                    errors.push(at(
                        file,
                        &c.version,
                        format!(
                            "change {:?}: {:?} is not a final release; a change is dated by the \
                             first release that has it",
                            c.id.value, c.version.value
                        ),
                    ))
                }
                Ok(_) => {}
                Err(e) => errors.push(at(file, &c.version, e)),
            }
            if c.text.trim().is_empty() {
                errors.push(at(
                    file,
                    &c.id,
                    format!("change {:?} says nothing (text)", c.id.value),
                ));
            }
            out.insert(c.id.value.clone(), c.clone());
        }
    }
    out
}

fn unknown_package(name: &str) -> String {
    let known: Vec<&str> = Package::ALL.iter().map(|p| p.key()).collect();
    format!("unknown package {name:?}; known: {}", known.join(", "))
}

/// Compile one `holds:`; `owner` names the conclusion or remedy for messages.
pub(super) fn compile_holds(
    file: &str,
    owner: &str,
    holds: &Holds,
    changes: &BTreeMap<String, Change>,
    errors: &mut Vec<KbError>,
) -> Vec<VersionBound> {
    let mut out = Vec::new();
    for (key, h) in holds {
        let Some(package) = Package::from_key(key) else {
            errors.push(at(
                file,
                &h.range,
                format!("{owner}: holds: {}", unknown_package(key)),
            ));
            continue;
        };
        let range = match Range::parse(&h.range.value) {
            Ok(r) => r,
            Err(e) => {
                errors.push(at(file, &h.range, format!("{owner}: holds.{key}: {e}")));
                continue;
            }
        };
        let mut listed: Vec<(Version, &SpannedStr)> = Vec::new();
        for id in &h.changes {
            let Some(c) = changes.get(&id.value) else {
                errors.push(at(
                    file,
                    id,
                    format!("{owner}: holds.{key} names no change {:?}", id.value),
                ));
                continue;
            };
            if c.package.value != key.as_str() {
                errors.push(at(
                    file,
                    id,
                    format!(
                        "{owner}: holds.{key} lists change {:?}, which is about {}",
                        id.value, c.package.value
                    ),
                ));
                continue;
            }
            if let Ok(v) = version::parse(&c.version.value) {
                listed.push((v, id));
            }
        }
        let edges = range.edges();
        let mut at_edges = Vec::new();
        for edge in &edges {
            let here: Vec<&&SpannedStr> = listed
                .iter()
                .filter(|(v, _)| v == edge)
                .map(|(_, id)| id)
                .collect();
            match here.as_slice() {
                [one] => at_edges.push((edge.clone(), one.value.clone())),
                [] => errors.push(at(
                    file,
                    &h.range,
                    format!(
                        "{owner}: holds.{key} has an edge at {edge} but lists no change of \
                         {key} {edge} (what changed there, with its source)"
                    ),
                )),
                [_, second, ..] => errors.push(at(
                    file,
                    second,
                    format!("{owner}: holds.{key} lists two changes at {edge}"),
                )),
            }
        }
        for (v, id) in &listed {
            if !edges.contains(v) {
                errors.push(at(
                    file,
                    id,
                    format!(
                        "{owner}: change {:?} ({key} {v}) is not at an edge of {:?}",
                        id.value, h.range.value
                    ),
                ));
            }
        }
        out.push(VersionBound {
            package,
            range,
            edges: at_edges,
        });
    }
    out
}

/// A conclusion with `holds:` must report a problem: outside the range the tool says the
/// problem does not apply.
pub(super) fn check_holds_severity(
    file: &str,
    id: &SpannedStr,
    severity: Severity,
    holds: &Holds,
    errors: &mut Vec<KbError>,
) {
    if !holds.is_empty() && severity == Severity::Ok {
        errors.push(at(
            file,
            id,
            format!(
                "conclusion {:?} has holds: but severity ok; a range belongs on a conclusion \
                 that reports a problem (outside it the tool says the problem does not apply)",
                id.value
            ),
        ));
    }
}

/// Text that claims something only some versions do: a version bound (`vLLM >= 0.24`,
/// `0.27+`, `before 0.25`), or "fixed in" / "since" / "merged".
static VERSION_CLAIM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(vllm|pytorch|torch|flashinfer|deepgemm|deep_gemm)\s*(>=|<=|>|<|≥|≤)\s*v?\d",
        r"|\b(vllm|pytorch|torch|flashinfer|deepgemm)\s+v?\d+\.\d+(\.\d+)?\+(\s|$|[,.;:)])",
        r"|\b(fixed|introduced|changed|removed) in\b",
        r"|\b(since|until|before|from) (vllm|pytorch|torch|flashinfer|deepgemm) v?\d",
        r"|\bmerged\b",
    ))
    .unwrap_or_else(|e| unreachable!("the version-claim pattern is a constant: {e}"))
});

/// Does `text` make a claim that depends on a version? (The lint's rule, public for tests.)
pub(crate) fn claims_a_version(text: &str) -> bool {
    VERSION_CLAIM.is_match(text)
}

/// Lints: a change with no source, a change no range uses, a version claim with no range.
pub(super) fn lints(kb: &KnowledgeBase) -> Vec<Lint> {
    let mut out = Vec::new();
    let mut used: Vec<&str> = Vec::new();
    for c in &kb.classes {
        for bounds in c.holds.values() {
            used.extend(
                bounds
                    .iter()
                    .flat_map(|b| b.edges.iter().map(|(_, id)| id.as_str())),
            );
        }
    }
    for bounds in kb.remedy_holds.values() {
        used.extend(
            bounds
                .iter()
                .flat_map(|b| b.edges.iter().map(|(_, id)| id.as_str())),
        );
    }
    for (id, ch) in &kb.changes {
        let said = format!(
            "{} {} {}",
            ch.kind.words(),
            Package::from_key(&ch.package.value).map_or(ch.package.value.as_str(), |p| p.display()),
            ch.version.value
        );
        if ch.sources.is_empty() {
            out.push(Lint {
                file: kb.change_files.get(id).cloned().unwrap_or_default(),
                message: format!("change {id:?} ({said}) has no source"),
            });
        }
        if !used.contains(&id.as_str()) {
            out.push(Lint {
                file: kb.change_files.get(id).cloned().unwrap_or_default(),
                message: format!("change {id:?} ({said}) is at no edge of any holds: range"),
            });
        }
    }
    for c in &kb.classes {
        for k in &c.def.conclusions {
            if k.severity == Severity::Ok || !k.holds.is_empty() {
                continue;
            }
            let texts = std::iter::once(k.title.as_str())
                .chain(k.evidence.iter().map(|e| e.value.as_str()));
            if let Some(t) = texts.into_iter().find(|t| claims_a_version(t)) {
                out.push(Lint {
                    file: c.file.clone(),
                    message: format!(
                        "conclusion {:?} makes a claim that depends on a version but has no \
                         holds: range ({:?})",
                        k.id.value,
                        short(t)
                    ),
                });
            }
        }
    }
    for r in kb.remedies.values() {
        if !r.holds.is_empty() {
            continue;
        }
        let texts = std::iter::once(r.title.as_str()).chain(r.limits.iter().map(String::as_str));
        if let Some(t) = texts.into_iter().find(|t| claims_a_version(t)) {
            out.push(Lint {
                file: super::REMEDIES_FILE.into(),
                message: format!(
                    "remedy {:?} makes a claim that depends on a version but has no holds: \
                     range ({:?})",
                    r.id.value,
                    short(t)
                ),
            });
        }
    }
    out
}

fn short(t: &str) -> String {
    let mut s: String = t.chars().take(80).collect();
    if t.chars().count() > 80 {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_claims_are_recognised() {
        for yes in [
            "vLLM >= 0.24.0 marks SM120 DeepGEMM-capable",
            "On vLLM 0.27+, the mhc path calls DeepGEMM",
            "fixed in 0.25.0",
            "PR #48956 (merged) makes vLLM fall back",
            "since vLLM 0.12 -O means the optimization level",
            "before FlashInfer 0.6.7 there was no check",
        ] {
            assert!(claims_a_version(yes), "{yes}");
        }
        for no in [
            "torch 2.11.0+cu130 on H200: measured",
            "Reproduced on RTX PRO 6000 with vLLM 0.24.0",
            "Compute capabilities: {gpu.cc_list}.",
            "TP>1 with CUDA graphs",
            "install a CUDA 12.8+ build",
        ] {
            assert!(!claims_a_version(no), "{no}");
        }
    }
}
