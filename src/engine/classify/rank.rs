//! Ranking: weigh the matches of a scan into named classes with a confidence each (see the
//! parent module's doc), and tie each failure line of the run to the class that explains it.

use super::{
    ClassEvidence, Classification, FRAMES_SUSPECTED_WEIGHT, LineRef, LogMatch, MatchConfidence,
    NAME_MIN_WEIGHT, run_reader, run_signs,
};
use crate::facts::Facts;
use crate::kb::expr;
use crate::kb::schema::{Severity, SignatureKind};
use crate::kb::{CompiledSignature, KnowledgeBase};
use crate::value::{Context, Value};
use std::collections::BTreeMap;

/// Answers fact questions from the host's facts; knows nothing about logs or answers.
struct HostFacts<'a>(&'a Facts);

impl Context for HostFacts<'_> {
    fn fact(&self, path: &str) -> Value {
        self.0.get(path).value
    }
    fn log(&self, _: &str) -> Value {
        Value::Unknown("not asked of the host".into())
    }
    fn answer(&self, _: &str) -> Value {
        Value::Unknown("not asked of the host".into())
    }
}

/// What one class's evidence adds up to.
struct Tally {
    class: String,
    score: u32,
    /// Matched signatures (indexes), each once.
    sigs: Vec<usize>,
    first: usize,
    severity: Severity,
}

/// Weigh the matches: keep those whose context conditions hold, add up each class's evidence,
/// name and order the classes, and give each a confidence.
pub fn rank(kb: &KnowledgeBase, matches: Vec<LogMatch>) -> Classification {
    rank_on_host(kb, matches, None)
}

/// [`rank`], with the host's facts for context signatures that have a `when`.
pub fn rank_on_host(
    kb: &KnowledgeBase,
    matches: Vec<LogMatch>,
    facts: Option<&Facts>,
) -> Classification {
    rank_with_run(kb, matches, run_signs::RunSigns::default(), facts)
}

/// [`rank_on_host`], with what the logs show about the run: signatures' `requires_run` are
/// decided on it, each failure line learns the class that explains it, and a class with only
/// warning-level evidence before an unexplained failure is not the answer.
pub fn rank_with_run(
    kb: &KnowledgeBase,
    mut matches: Vec<LogMatch>,
    mut run: run_signs::RunSigns,
    facts: Option<&Facts>,
) -> Classification {
    let sigs = &kb.signatures;
    let index: BTreeMap<&str, usize> = sigs
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let mut present = vec![false; sigs.len()];
    for m in &matches {
        if let Some(&i) = index.get(m.signature.as_str()) {
            present[i] = true;
        }
    }
    // What the log itself shows, before the host's facts fill in context: the log's own
    // context outranks the host's (see `Presence::excluded`).
    let in_log = present.clone();
    if let Some(facts) = facts {
        let host = HostFacts(facts);
        for (i, s) in sigs.iter().enumerate() {
            if let Some(when) = &s.when
                && expr::eval(when, &host) == Value::Bool(true)
            {
                present[i] = true;
            }
        }
    }
    let presence = Presence {
        any: &present,
        in_log: &in_log,
    };
    let counted = counted_signatures(sigs, &presence, &run);
    matches.retain(|m| index.get(m.signature.as_str()).is_some_and(|&i| counted[i]));

    // Per class: distinct signatures, their weights, the first line.
    let mut tallies: Vec<Tally> = Vec::new();
    for (pos, m) in matches.iter().enumerate() {
        let Some(&i) = index.get(m.signature.as_str()) else {
            continue;
        };
        let Some(class) = kb.class(&m.class) else {
            continue;
        };
        if class.def.kind != crate::kb::schema::ClassKind::Failure {
            continue;
        }
        let t = match tallies.iter_mut().position(|t| t.class == m.class) {
            Some(p) => &mut tallies[p],
            None => {
                tallies.push(Tally {
                    class: m.class.clone(),
                    score: 0,
                    sigs: Vec::new(),
                    first: pos,
                    severity: class
                        .def
                        .conclusions
                        .iter()
                        .map(|c| c.severity)
                        .max()
                        .unwrap_or(Severity::Ok),
                });
                let last = tallies.len() - 1;
                &mut tallies[last]
            }
        };
        if !t.sigs.contains(&i) {
            t.sigs.push(i);
            t.score += sigs[i].weight;
        }
    }
    tallies.retain(|t| t.score >= NAME_MIN_WEIGHT);
    // A fallback class stands for "none of the known classes": it goes when another named
    // class has an error line.
    let is_fallback = |class: &str| kb.class(class).is_some_and(|c| c.def.fallback);
    let specific_error = tallies.iter().any(|t| {
        !is_fallback(&t.class) && t.sigs.iter().any(|&i| sigs[i].kind == SignatureKind::Error)
    });
    if specific_error {
        let dropped: Vec<String> = tallies
            .iter()
            .filter(|t| is_fallback(&t.class))
            .map(|t| t.class.clone())
            .collect();
        tallies.retain(|t| !is_fallback(&t.class));
        matches.retain(|m| !dropped.contains(&m.class));
    }
    tallies.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(b.severity.cmp(&a.severity))
            .then(a.first.cmp(&b.first))
    });
    let mut evidence: Vec<ClassEvidence> = tallies
        .iter()
        .map(|t| class_evidence(t, sigs, &present, is_fallback(&t.class)))
        .collect();
    explain_failures(&mut run, &evidence, &matches);
    let warning_only: Vec<bool> = tallies
        .iter()
        .map(|t| {
            t.sigs.iter().all(|&i| {
                matches!(
                    sigs[i].kind,
                    SignatureKind::Warning | SignatureKind::Supporting | SignatureKind::Context
                )
            })
        })
        .collect();
    for (e, only_warnings) in evidence.iter_mut().zip(warning_only) {
        if only_warnings {
            e.unexplained_failure_after = failure_after_first_line(&e.class, &matches, &run);
            if e.unexplained_failure_after.is_some() {
                e.confidence = e.confidence.min(MatchConfidence::Low);
            }
        }
    }
    // A class that is not the answer goes after those that may be (the sort is stable).
    evidence.sort_by_key(|e| e.unexplained_failure_after.is_some());
    Classification {
        classes: evidence.iter().map(|e| e.class.clone()).collect(),
        confidence: evidence
            .iter()
            .map(|e| (e.class.clone(), e.confidence))
            .collect(),
        evidence,
        matches,
        run,
    }
}

/// Set each failure line's `explained_by`: the first named class (SUSPECTED or CONFIRMED, in
/// ranking order) with a match on the same line or inside the same traceback; a consequence
/// line (a wrapper's report, a worker that died) takes the explanation of the nearest other
/// failure of its log, the one before it first.
fn explain_failures(
    run: &mut run_signs::RunSigns,
    evidence: &[ClassEvidence],
    matches: &[LogMatch],
) {
    let named: Vec<&str> = evidence
        .iter()
        .filter(|e| e.confidence >= MatchConfidence::Suspected)
        .map(|e| e.class.as_str())
        .collect();
    for f in &mut run.failures {
        let from = f.traceback_from.unwrap_or(f.line);
        f.explained_by = named
            .iter()
            .find(|c| {
                matches.iter().any(|m| {
                    m.class == **c && m.file == f.file && m.line >= from && m.line <= f.line
                })
            })
            .map(|c| c.to_string());
    }
    let explained: Vec<(String, usize, bool, Option<String>)> = run
        .failures
        .iter()
        .map(|f| {
            (
                f.file.clone(),
                f.line,
                f.consequence,
                f.explained_by.clone(),
            )
        })
        .collect();
    for f in run
        .failures
        .iter_mut()
        .filter(|f| f.consequence && f.explained_by.is_none())
    {
        let cause = |before: bool| {
            let mut causes = explained
                .iter()
                .filter(|(file, line, consequence, _)| {
                    *file == f.file && !consequence && (*line < f.line) == before
                })
                .map(|(_, _, _, by)| by);
            if before {
                causes.next_back()
            } else {
                causes.next()
            }
            .cloned()
        };
        f.explained_by = cause(true).or_else(|| cause(false)).flatten();
    }
}

/// The first failure line no class explains that comes after `class`'s first matched line, in
/// the same log.
fn failure_after_first_line(
    class: &str,
    matches: &[LogMatch],
    run: &run_signs::RunSigns,
) -> Option<LineRef> {
    run.unexplained()
        .find(|f| {
            matches
                .iter()
                .any(|m| m.class == class && m.file == f.file && m.line < f.line)
        })
        .map(|f| LineRef {
            file: f.file.clone(),
            line: f.line,
        })
}

/// Which matched signatures count: their `requires` hold (through counted signatures) and no
/// `excluded_by` signature is in the log without a `confirm_with` one.
/// Which signatures are present: from the log's lines or the host's facts (`any`), and from
/// the log alone (`in_log`).
struct Presence<'a> {
    any: &'a [bool],
    in_log: &'a [bool],
}

impl Presence<'_> {
    /// Whether a signature's `excluded_by` sets its match aside. When the log itself shows an
    /// excluding or a confirming context, the log decides: a log that names only an L20 ran
    /// on an L20, whatever GPU the host running this tool has. Otherwise the host's facts count.
    fn excluded(&self, excluded_by: &[usize], confirm_with: &[usize]) -> bool {
        let any_in = |set: &[bool], list: &[usize]| list.iter().any(|&j| set.get(j) == Some(&true));
        let from = if any_in(self.in_log, excluded_by) || any_in(self.in_log, confirm_with) {
            self.in_log
        } else {
            self.any
        };
        any_in(from, excluded_by) && !any_in(from, confirm_with)
    }
}

fn counted_signatures(
    sigs: &[CompiledSignature],
    presence: &Presence<'_>,
    run: &run_signs::RunSigns,
) -> Vec<bool> {
    // 0 = not decided, 1 = counts, 2 = does not; `requires` chains are acyclic (the loader
    // checks), and the depth bound guards a KB built without the loader.
    fn decide(
        i: usize,
        sigs: &[CompiledSignature],
        presence: &Presence<'_>,
        run: &run_signs::RunSigns,
        memo: &mut [u8],
        depth: usize,
    ) -> bool {
        if memo[i] != 0 {
            return memo[i] == 1;
        }
        let s = &sigs[i];
        let ok = presence.any[i]
            && depth < sigs.len()
            && (s.requires.is_empty()
                || s.requires
                    .iter()
                    .any(|&j| j < sigs.len() && decide(j, sigs, presence, run, memo, depth + 1)))
            && s.requires_run.iter().all(|c| run_reader::holds(c, run))
            && !presence.excluded(&s.excluded_by, &s.confirm_with);
        memo[i] = if ok { 1 } else { 2 };
        ok
    }
    let mut memo = vec![0u8; sigs.len()];
    (0..sigs.len())
        .map(|i| decide(i, sigs, presence, run, &mut memo, 0))
        .collect()
}

fn class_evidence(
    t: &Tally,
    sigs: &[CompiledSignature],
    present: &[bool],
    fallback: bool,
) -> ClassEvidence {
    let confirmed = |s: &CompiledSignature| {
        s.confirm_with.is_empty()
            || s.confirm_with
                .iter()
                .any(|&j| present.get(j) == Some(&true))
    };
    let errors: Vec<&CompiledSignature> = t
        .sigs
        .iter()
        .map(|&i| &sigs[i])
        .filter(|s| s.kind == SignatureKind::Error)
        .collect();
    let frames: u32 = t
        .sigs
        .iter()
        .map(|&i| &sigs[i])
        .filter(|s| s.kind == SignatureKind::Frame)
        .map(|s| s.weight)
        .sum();
    let mut confidence = if errors.iter().any(|s| confirmed(s)) {
        MatchConfidence::Confirmed
    } else if !errors.is_empty() || frames >= FRAMES_SUSPECTED_WEIGHT {
        MatchConfidence::Suspected
    } else {
        MatchConfidence::Low
    };
    if fallback {
        confidence = confidence.min(MatchConfidence::Suspected);
    }
    let mut ordered: Vec<&CompiledSignature> = t.sigs.iter().map(|&i| &sigs[i]).collect();
    ordered.sort_by_key(|s| std::cmp::Reverse(s.weight));
    // The note: an unconfirmed error's text first, else the strongest signature's.
    let note = if confidence == MatchConfidence::Confirmed && !fallback {
        String::new()
    } else {
        ordered
            .iter()
            .filter(|s| !s.unconfirmed.is_empty())
            .find(|s| s.kind == SignatureKind::Error && !confirmed(s))
            .or_else(|| ordered.iter().find(|s| !s.unconfirmed.is_empty()))
            .map(|s| s.unconfirmed.clone())
            .unwrap_or_default()
    };
    ClassEvidence {
        class: t.class.clone(),
        confidence,
        score: t.score,
        note,
        signatures: ordered.iter().map(|s| s.id.clone()).collect(),
        unexplained_failure_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::Presence;

    // Signature 0 excludes, 1 confirms (say: "another GPU named", "an SM12x GPU named").
    fn excluded(any: [bool; 2], in_log: [bool; 2]) -> bool {
        Presence {
            any: &any,
            in_log: &in_log,
        }
        .excluded(&[0], &[1])
    }

    #[test]
    fn the_logs_own_gpu_outranks_the_hosts() {
        // The log names only another GPU; the host has an SM12x one: set aside.
        assert!(excluded([true, true], [true, false]));
        // The log names both: the confirming context wins.
        assert!(!excluded([true, true], [true, true]));
        // The log names an SM12x GPU; the host has another one: counts.
        assert!(!excluded([true, true], [false, true]));
    }

    #[test]
    fn the_host_decides_when_the_log_names_no_gpu() {
        assert!(excluded([true, false], [false, false]));
        assert!(!excluded([true, true], [false, false]));
        assert!(!excluded([false, false], [false, false]));
    }
}
