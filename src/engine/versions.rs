//! Applying `holds:`: is a conclusion (or a remedy) true for the installed versions?
//!
//! After a walk concludes, [`gate`] checks the conclusion's ranges against the snapshot's
//! package versions (`vllm::version` decides; the facts give the versions). Inside: the walk
//! gets one more step saying so. Outside: [`apply`] turns the finding into "does not apply to
//! vLLM X: fixed in vLLM Y by #N", with that change's sources. Undecided (the version is not
//! known, or a nightly or rc sits on an edge): the walk stops at a version question
//! (`vllm_at_least_0.25.0`) instead of assuming. A remedy outside its range is not offered;
//! one whose range cannot be decided is offered with that said in its limits.

use super::{Answer, AnsweredBy, Answers, Basis, Finding, Outcome, Step, UsedFact, Walk};
use crate::facts::Facts;
use crate::kb::schema::{Change, ChangeKind, Severity};
use crate::kb::{Class, KnowledgeBase, VersionBound};
use crate::value::{Prose, Value};
use crate::vllm::version::{self, Decision, Package, Placement, Side, VersionQuestion};
use serde::Serialize;

/// What the version check said about one conclusion or remedy and one package.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionCheck {
    /// The conclusion or remedy id.
    pub subject: String,
    /// `vllm`, `torch`, `flashinfer` or `deep_gemm`.
    pub package: String,
    /// The range it holds for (`>=0.24.0,<0.25.0`).
    pub range: String,
    /// The installed version as read (`None`: not known).
    pub installed: Option<String>,
    pub verdict: Verdict,
    /// The change that puts it outside, or the one the question is about.
    pub change: Option<ChangeView>,
    /// How the version was read, when that is an assumption (a nightly, a torch source build).
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Inside,
    Outside,
    /// Not decided: the version is not known or the build sits on an edge.
    Unknown,
}

/// A change as a finding shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeView {
    pub id: String,
    pub package: String,
    pub version: String,
    pub kind: ChangeKind,
    pub by: String,
    pub text: String,
    pub sources: Vec<String>,
    /// The sentence: `fixed in vLLM 0.25.0 by PR #47164`.
    pub said: String,
}

/// `fixed in vLLM 0.25.0 by PR #47164`.
pub fn said(c: &Change) -> String {
    let pkg = Package::from_key(&c.package.value).map_or(c.package.value.as_str(), |p| p.display());
    let mut s = format!("{} {pkg} {}", c.kind.words(), c.version.value);
    if !c.by.is_empty() {
        s.push_str(" by ");
        s.push_str(&c.by);
    }
    s
}

fn view(c: &Change) -> ChangeView {
    ChangeView {
        id: c.id.value.clone(),
        package: c.package.value.clone(),
        version: c.version.value.clone(),
        kind: c.kind,
        by: c.by.clone(),
        text: c.text.clone(),
        sources: c.sources.clone(),
        said: said(c),
    }
}

/// The installed version of `package` and where it places the build.
struct Installed {
    text: Option<String>,
    placement: Placement,
    /// Why the version is not known (empty when it is).
    missing: String,
    fact: UsedFact,
}

fn installed(package: Package, facts: &Facts) -> Installed {
    let f = facts.get(package.fact());
    let fact = UsedFact {
        name: package.fact().into(),
        value: f.value.clone(),
        source: f.source.clone(),
        assumed: f.assumed,
    };
    match &f.value {
        Value::Str(v) => match Placement::of(package, v) {
            Ok(placement) => Installed {
                text: Some(v.clone()),
                placement,
                missing: String::new(),
                fact,
            },
            Err(e) => Installed {
                text: Some(v.clone()),
                placement: Placement::unknown(),
                missing: e,
                fact,
            },
        },
        Value::Null => Installed {
            text: None,
            placement: Placement::unknown(),
            missing: format!(
                "{} is not installed in the Python that was read; vLLM may run in another \
                 environment",
                package.display()
            ),
            fact,
        },
        other => Installed {
            text: None,
            placement: Placement::unknown(),
            missing: format!("the {} version is {other}", package.display()),
            fact,
        },
    }
}

/// The answer given to `q`: the answers are keyed by question id, the form they are given in.
fn answer_to<'a>(answers: &'a Answers, q: &VersionQuestion) -> Option<&'a Answer> {
    answers.get(&q.id())
}

fn user_answer(answers: &Answers, package: Package, edge: &pep440_rs::Version) -> Option<bool> {
    match answer_to(answers, &VersionQuestion::new(package, edge)) {
        Some(Answer::Yes) => Some(true),
        Some(Answer::No) => Some(false),
        Some(Answer::Unsure) | None => None,
    }
}

fn answered_any(answers: &Answers, b: &VersionBound) -> bool {
    b.range
        .edges()
        .iter()
        .any(|e| answer_to(answers, &VersionQuestion::new(b.package, e)).is_some())
}

/// One bound decided against the snapshot and the answers.
struct Decided {
    decision: Decision,
    installed: Installed,
}

fn decide(b: &VersionBound, facts: &Facts, answers: &Answers) -> Decided {
    let installed = installed(b.package, facts);
    let decision = version::decide(&b.range, &installed.placement, |e| {
        user_answer(answers, b.package, e)
    });
    Decided {
        decision,
        installed,
    }
}

fn change_at<'k>(
    kb: &'k KnowledgeBase,
    b: &VersionBound,
    edge: &pep440_rs::Version,
) -> Option<&'k Change> {
    b.change_at(edge).and_then(|id| kb.changes.get(id))
}

fn check(
    kb: &KnowledgeBase,
    subject: &str,
    b: &VersionBound,
    d: &Decided,
    answers: &Answers,
) -> VersionCheck {
    let (verdict, change) = match &d.decision {
        Decision::Inside => (Verdict::Inside, None),
        Decision::Outside { edge, .. } => (Verdict::Outside, change_at(kb, b, edge).map(view)),
        Decision::Ask { edge } => (Verdict::Unknown, change_at(kb, b, edge).map(view)),
    };
    let mut note = d.installed.placement.note.clone();
    if verdict == Verdict::Unknown && !d.installed.missing.is_empty() {
        note = Some(d.installed.missing.clone());
    }
    if answered_any(answers, b) && verdict != Verdict::Unknown {
        let answered = "decided with your answer about the version".to_string();
        note = Some(match note {
            Some(n) => format!("{n}; {answered}"),
            None => answered,
        });
    }
    VersionCheck {
        subject: subject.into(),
        package: b.package.key().into(),
        range: b.range.to_string(),
        installed: d.installed.text.clone(),
        verdict,
        change,
        note,
    }
}

/// After a walk: check the concluded conclusion's ranges. Adds a step per decided package, or
/// stops the walk at a version question when one cannot be decided.
pub(crate) fn gate(
    kb: &KnowledgeBase,
    class: &Class,
    mut walk: Walk,
    facts: &Facts,
    answers: &Answers,
) -> Walk {
    let Outcome::Concluded { conclusion } = &walk.outcome else {
        return walk;
    };
    let conclusion = conclusion.clone();
    for b in class.holds(&conclusion) {
        let d = decide(b, facts, answers);
        let pkg = b.package.display();
        let shown = d
            .installed
            .text
            .clone()
            .unwrap_or_else(|| "(not known)".into());
        let answer = match &d.decision {
            Decision::Inside => Answer::Yes,
            Decision::Outside { .. } => Answer::No,
            Decision::Ask { edge } => {
                // An "unsure" answer leaves it undecided: the finding stays, marked as such.
                if answer_to(answers, &VersionQuestion::new(b.package, edge))
                    == Some(&Answer::Unsure)
                {
                    continue;
                }
                walk.outcome = ask(kb, b, edge, &d);
                return walk;
            }
        };
        // The installed version decides unless it cannot (unknown, or a build on the edge): only
        // then did the user's answer decide (measured facts beat typed answers, issue 14).
        let by_answer = matches!(
            version::decide(&b.range, &d.installed.placement, |_| None),
            Decision::Ask { .. }
        );
        let (by, basis) = if by_answer {
            (AnsweredBy::User, Basis::Answered)
        } else {
            (
                AnsweredBy::Auto {
                    facts: vec![d.installed.fact.clone()],
                },
                Basis::Measured,
            )
        };
        let why = match &d.decision {
            Decision::Outside { edge, .. } => change_at(kb, b, edge)
                .map(|c| format!("{}: {}", capitalised(&said(c)), c.text))
                .unwrap_or_default(),
            _ => b
                .edges
                .iter()
                .filter_map(|(_, id)| kb.changes.get(id))
                .map(|c| format!("{}: {}", capitalised(&said(c)), c.text))
                .collect::<Vec<_>>()
                .join(" "),
        };
        walk.steps.push(Step {
            node: format!("{}_version", b.package.key()),
            question: format!(
                "Is {pkg} {shown} within {}, the versions {conclusion} holds for?",
                b.range
            ),
            answer,
            by,
            why,
            basis,
            typed_answer: None,
        });
        if answer == Answer::No {
            break;
        }
    }
    walk
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The version question for `edge`: about the version when it is not known, about the change
/// when the build (a nightly, an rc) sits on the edge.
fn ask(kb: &KnowledgeBase, b: &VersionBound, edge: &pep440_rs::Version, d: &Decided) -> Outcome {
    let pkg = b.package.display();
    let change = change_at(kb, b, edge);
    let question = match (&d.installed.text, change) {
        (Some(v), Some(c)) if d.installed.missing.is_empty() && !c.by.is_empty() => format!(
            "Does this {pkg} build ({v}) already have {} (first released in {pkg} {edge})?",
            c.by
        ),
        (Some(v), _) if d.installed.missing.is_empty() => {
            format!("Does this {pkg} build ({v}) already have what {pkg} {edge} changed?")
        }
        _ => format!("Is the installed {pkg} {edge} or newer?"),
    };
    let mut hint = Vec::new();
    if let Some(c) = change {
        hint.push(format!("{}: {}.", capitalised(&said(c)), c.text));
        if !c.check.is_empty() {
            hint.push(format!(
                "How to tell for a build between releases: {}.",
                c.check
            ));
        }
    }
    hint.push(format!("Version: {}.", b.package.hint()));
    let reason = if d.installed.missing.is_empty() {
        d.installed.placement.note.clone().unwrap_or_default()
    } else {
        d.installed.missing.clone()
    };
    Outcome::NeedsAnswer {
        node: VersionQuestion::new(b.package, edge).id(),
        question,
        hint: crate::value::Prose(hint.join(" ")),
        reason: reason.into(),
        yes_label: format!("yes, {pkg} {edge} or newer"),
        no_label: format!("no, older than {pkg} {edge}"),
        can_be_unsure: true,
    }
}

/// After the finding is built: a conclusion outside its range becomes "does not apply to
/// {package} {installed}: {what changed}"; one that could not be decided says so; remedies
/// outside their range are not offered, undecided ones say so in their limits.
pub fn apply(
    kb: &KnowledgeBase,
    class: &Class,
    finding: &mut Finding,
    facts: &Facts,
    answers: &Answers,
) {
    let mut checks = Vec::new();
    let mut outside: Option<(VersionCheck, Side)> = None;
    for b in class.holds(&finding.id) {
        let d = decide(b, facts, answers);
        let c = check(kb, &finding.id, b, &d, answers);
        if let (Decision::Outside { side, .. }, None) = (&d.decision, &outside) {
            outside = Some((c.clone(), *side));
        }
        checks.push(c);
    }
    if let Some((c, _side)) = outside {
        let pkg = Package::from_key(&c.package).map_or(c.package.as_str(), |p| p.display());
        let installed = c.installed.clone().unwrap_or_else(|| "(not known)".into());
        let original = std::mem::take(&mut finding.title);
        let mut evidence = Vec::new();
        let mut sources = Vec::new();
        match &c.change {
            Some(ch) => {
                finding.title = format!("Does not apply to {pkg} {installed}: {}", ch.said).into();
                evidence.push(format!("{}: {}", capitalised(&ch.said), ch.text));
                sources.extend(ch.sources.iter().cloned());
            }
            None => {
                finding.title = format!(
                    "Does not apply to {pkg} {installed}: outside {}, the versions it holds for",
                    c.range
                )
                .into();
            }
        }
        evidence.push(format!(
            "Within {pkg} {} this would read: {}",
            c.range, original.0
        ));
        if let Some(n) = &c.note {
            evidence.push(format!("{}.", capitalised(n)));
        }
        for s in std::mem::take(&mut finding.sources) {
            if !sources.contains(&s) {
                sources.push(s);
            }
        }
        finding.severity = Severity::Ok;
        finding.evidence = evidence.into_iter().map(Prose).collect();
        finding.sources = sources;
        finding.remedies.clear();
        finding.does_not_fix.clear();
        finding.contradictions.clear();
    } else {
        for c in checks.iter().filter(|c| c.verdict == Verdict::Unknown) {
            let pkg = Package::from_key(&c.package).map_or(c.package.as_str(), |p| p.display());
            let at = c
                .change
                .as_ref()
                .map(|ch| format!(" ({})", ch.said))
                .unwrap_or_default();
            finding.evidence.push(Prose(format!(
                "This holds for {pkg} {} only; whether the installed build is inside was not \
                 decided{at}: {}.",
                c.range,
                c.note.as_deref().unwrap_or("its version is not known")
            )));
        }
        let mut kept = Vec::new();
        for mut r in std::mem::take(&mut finding.remedies) {
            let mut offered = true;
            for b in kb.remedy_holds(&r.id) {
                let d = decide(b, facts, answers);
                let c = check(kb, &r.id, b, &d, answers);
                match c.verdict {
                    Verdict::Inside => {}
                    Verdict::Outside => offered = false,
                    Verdict::Unknown => {
                        let pkg = b.package.display();
                        r.limits.push(format!(
                            "Applies to {pkg} {} only; the installed {pkg} ({}) could not be \
                             placed in it.",
                            b.range,
                            c.installed.as_deref().unwrap_or("not known")
                        ));
                    }
                }
                checks.push(c);
            }
            if offered {
                kept.push(r);
            }
        }
        finding.remedies = kept;
    }
    finding.versions = checks;
}

/// One line for people: `vLLM 0.24.0 is within >=0.24.0,<0.25.0` (for the conclusion), or
/// `not offered: upgrade_for_47164 — holds for vLLM <0.25.0, installed 0.26.0` (for a remedy).
/// Report renderers call it with the report's copy of a check.
pub fn describe(
    conclusion: &str,
    subject: &str,
    package: &str,
    range: &str,
    installed: Option<&str>,
    verdict: &str,
    said: Option<&str>,
) -> String {
    let pkg = Package::from_key(package).map_or(package, |p| p.display());
    let v = installed.unwrap_or("(not known)");
    let why = said.map(|s| format!(" ({s})")).unwrap_or_default();
    match (subject == conclusion, verdict) {
        (true, "inside") => format!("{pkg} {v} is within {range}, the versions this holds for"),
        (true, "outside") => format!("{pkg} {v} is outside {range}{why}"),
        (true, _) => format!("{pkg} {v}: not decided whether within {range}{why}"),
        (false, "outside") => {
            format!("not offered: {subject}, which holds for {pkg} {range}; installed {v}{why}")
        }
        (false, "inside") => format!("remedy {subject}: {pkg} {v} is within {range}"),
        (false, _) => format!("remedy {subject}: not decided whether {pkg} {v} is within {range}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_inside_outside_and_not_offered() {
        assert_eq!(
            describe(
                "c",
                "c",
                "vllm",
                ">=0.24.0,<0.25.0",
                Some("0.24.0"),
                "inside",
                None
            ),
            "vLLM 0.24.0 is within >=0.24.0,<0.25.0, the versions this holds for"
        );
        assert_eq!(
            describe(
                "c",
                "upgrade_for_47164",
                "vllm",
                "<0.25.0",
                Some("0.26.0"),
                "outside",
                Some("fixed in vLLM 0.25.0 by PR #47164")
            ),
            "not offered: upgrade_for_47164, which holds for vLLM <0.25.0; installed 0.26.0 (fixed in vLLM 0.25.0 by PR #47164)"
        );
        assert!(
            describe("c", "c", "torch", ">=2.10.0", None, "unknown", None).contains("(not known)")
        );
    }
}
