//! `check` output: flutter-doctor style text, and the JSON contract (`schema_version` 1).

use super::Style;
use crate::engine::classify::run_signs::{FailureKind, FailureLine, HangKind, RunSigns};
use crate::engine::classify::{Classification, MatchConfidence};
use crate::engine::plan::Plan;
use crate::engine::versions::Verdict;
use crate::engine::{Basis, CheckState, Diagnosis, Finding, MissingInput, Outcome};
use crate::kb::KnowledgeBase;
use crate::kb::schema::{Severity, SignatureKind};
use crate::snapshot::HostSnapshot;
use serde_json::json;
use std::fmt::Write;

pub const JSON_SCHEMA_VERSION: u32 = 1;

fn mark(sev: Severity, style: Style) -> String {
    match sev {
        Severity::Error => style.red("[✗]"),
        Severity::Warning => style.yellow("[!]"),
        Severity::Info => style.blue("[i]"),
        Severity::Ok => style.green("[✓]"),
    }
}

/// The mark of a finding: its severity for a problem, else its state. Only a check that ran
/// and passed gets ✓.
fn finding_mark(f: &Finding, style: Style) -> String {
    match f.state {
        CheckState::Problem => mark(f.severity, style),
        CheckState::Passed => style.green("[✓]"),
        CheckState::NotChecked => style.yellow("[ ]"),
        CheckState::NotApplicable => style.dim("[-]"),
    }
}

/// How to give a missing input on the command line.
pub(crate) fn how_to_give(m: MissingInput) -> &'static str {
    match m {
        MissingInput::Log => "--log FILE",
        MissingInput::Launch => "--launch CMD or --launch-file FILE",
        MissingInput::Probe => "`sm120-doctor probe ipc`",
        MissingInput::P2pProbe => "`sm120-doctor probe p2p`",
        MissingInput::Snapshot => "--snapshot FILE or --collect-env FILE",
        MissingInput::RunOutcome => {
            "the log of the whole run with --log FILE, or run the launch under `sm120-doctor run -- CMD`"
        }
    }
}

/// What a missing input is, in words.
pub(crate) fn missing_words(m: MissingInput) -> &'static str {
    match m {
        MissingInput::Log => "no log given",
        MissingInput::Launch => "no launch given",
        MissingInput::Probe => "the allocator/IPC probe did not run",
        MissingInput::P2pProbe => "the P2P probe did not run",
        MissingInput::Snapshot => "host facts not collected",
        MissingInput::RunOutcome => "the given log does not show how the run ended",
    }
}

/// `not checked: no log given (give --log FILE)`, one clause per missing input.
pub(crate) fn not_checked_note(missing: &[MissingInput]) -> String {
    if missing.is_empty() {
        return "not checked: an input is missing".into();
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|m| format!("{} (give {})", missing_words(*m), how_to_give(*m)))
        .collect();
    format!("not checked: {}", parts.join("; "))
}

/// `5 passed · 6 not checked · 2 do not apply`.
pub(crate) fn state_counts(d: &Diagnosis) -> String {
    format!(
        "{} passed · {} not checked · {} {}",
        d.count(CheckState::Passed),
        d.count(CheckState::NotChecked),
        d.count(CheckState::NotApplicable),
        if d.count(CheckState::NotApplicable) == 1 {
            "does not apply"
        } else {
            "do not apply"
        }
    )
}

/// One line about the host: what was looked at.
pub(crate) fn host_line(snap: &HostSnapshot) -> String {
    let gpus = match snap.gpus.value() {
        Some(g) if !g.is_empty() => {
            let mut names: Vec<String> = Vec::new();
            for gpu in g {
                let n = gpu
                    .name
                    .value()
                    .cloned()
                    .unwrap_or_else(|| "unknown GPU".into());
                let cc = gpu
                    .compute_capability
                    .value()
                    .map(|c| format!(" (CC {c})"))
                    .unwrap_or_default();
                let label = format!("{n}{cc}");
                if !names.contains(&label) {
                    names.push(label);
                }
            }
            format!("{}× {}", g.len(), names.join(", "))
        }
        Some(_) => "no GPUs".into(),
        None => format!("GPUs: {}", snap.gpus.why_or("unknown")),
    };
    let sm = match snap.gpus.value() {
        Some(g)
            if g.iter()
                .any(|x| x.compute_capability.value().is_some_and(|c| c.is_sm12x())) =>
        {
            "SM120 family"
        }
        Some(g) if !g.is_empty() && g.iter().all(|x| x.compute_capability.value().is_some()) => {
            "not SM120"
        }
        _ => "SM120: unknown",
    };
    format!("{gpus} — {sm}")
}

/// The two confidences, apart: the claim (upstream) and the match (this host).
/// `CONFIRMED upstream · matched: answered by you (2)`.
pub(crate) fn confidences(f: &Finding) -> String {
    format!(
        "{} upstream · matched: {}",
        f.confidence.as_str(),
        match_label(f.matched, f.answered.len(), &f.assumptions)
    )
}

/// `measured`, `answered by you (2)`, `assumed (no log given; …)`.
pub(crate) fn match_label(m: Basis, answered: usize, assumptions: &[String]) -> String {
    match m {
        Basis::Measured => "measured".into(),
        Basis::Answered if assumptions.is_empty() => format!("answered by you ({answered})"),
        Basis::Answered => format!(
            "answered by you ({answered}); assumed: {}",
            assumptions.join("; ")
        ),
        Basis::Assumed if assumptions.is_empty() => "assumed".into(),
        Basis::Assumed => format!("assumed ({})", assumptions.join("; ")),
    }
}

fn finding_text(out: &mut String, f: &Finding, style: Style) {
    // The brief form's lines come first; evidence, lines, remedies and sources follow.
    brief_problem(out, f, style);
    for d in &f.run_differs {
        let _ = writeln!(
            out,
            "    ≠ {}",
            super::run_differs_words(d.what, &d.in_log, &d.on_host, &d.file, d.line)
        );
    }
    for e in &f.evidence {
        let _ = writeln!(out, "    • {e}");
    }
    for m in f.log_lines.iter().take(5) {
        let _ = writeln!(out, "    • log {}:{}: {}", m.file, m.line, m.text);
    }
    if !f.remedies.is_empty() {
        let _ = writeln!(out, "    Remedies, cheapest first:");
        for (i, r) in f.remedies.iter().enumerate() {
            let _ = writeln!(
                out,
                "      {}. {} ({}) — {}",
                i + 1,
                r.title,
                r.id,
                r.confidence.as_str()
            );
            let _ = writeln!(out, "         cost: {}", r.cost);
            let _ = writeln!(out, "         verified: {}", r.verified);
            for l in &r.limits {
                let _ = writeln!(out, "         limit: {l}");
            }
        }
    }
    for v in &f.versions {
        let line = crate::engine::versions::describe(
            &f.id,
            &v.subject,
            &v.package,
            &v.range,
            v.installed.as_deref(),
            match v.verdict {
                Verdict::Inside => "inside",
                Verdict::Outside => "outside",
                Verdict::Unknown => "unknown",
            },
            v.change.as_ref().map(|c| c.said.as_str()),
        );
        let _ = writeln!(out, "    Versions: {line}");
    }
    for d in &f.does_not_fix {
        let _ = writeln!(out, "    ! Does not fix: {d}");
    }
    for c in &f.contradictions {
        let _ = writeln!(out, "    ! Sources disagree: {c}");
    }
    if !f.sources.is_empty() {
        let _ = writeln!(out, "    Sources: {}", f.sources.join(", "));
    }
}

/// The plan as text: the combined command first, then steps, scripts and notes. Empty when
/// the plan has nothing in it.
pub(crate) fn plan_text(plan: &Plan, style: Style) -> String {
    let mut out = String::new();
    if plan.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "{} {}",
        style.bold("Fix plan"),
        style.dim(&format!("({})", plan.remedies.join(", ")))
    );
    match &plan.launch {
        Some(l) if plan.launch_changed() => {
            let _ = writeln!(out, "    Run this (every remedy of the plan applied):");
            for line in l.lines() {
                let _ = writeln!(out, "      {line}");
            }
        }
        Some(_) if plan.files.is_empty() => {
            let _ = writeln!(out, "    The launch needs no change for this plan.");
        }
        Some(_) => {
            let _ = writeln!(out, "    The launch command itself stays as it is.");
        }
        None => {}
    }
    for f in &plan.files {
        let _ = writeln!(out, "    Change {} to:", f.name);
        for line in f.text.lines() {
            let _ = writeln!(out, "      {line}");
        }
    }
    for s in &plan.scripts {
        let _ = writeln!(
            out,
            "    script: {} (write it with `{}`)",
            s.file, s.command
        );
    }
    for s in &plan.steps {
        let _ = writeln!(out, "    step: {s}");
    }
    for n in &plan.notes {
        let _ = writeln!(out, "    {}", style.dim(&format!("note: {n}")));
    }
    out
}

/// How much `check` text says: the doctor's brief (one line per check, the plan, the
/// questions) or, with `-v`, every finding's evidence, remedies and sources as well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    Brief,
    Verbose,
}

/// The text report of `check` with every finding's evidence, remedies and sources (`-v`).
pub fn check_text(
    kb: &KnowledgeBase,
    snap: &HostSnapshot,
    d: &Diagnosis,
    plan: &Plan,
    style: Style,
) -> String {
    check_text_with(kb, snap, d, plan, style, Detail::Verbose)
}

/// The first lines: the host, and the classes the logs point at.
fn header(out: &mut String, snap: &HostSnapshot, d: &Diagnosis, style: Style) {
    let _ = writeln!(
        out,
        "{} {}",
        style.bold("sm120-doctor"),
        style.dim(&format!("— host: {}", snap.origin))
    );
    let _ = writeln!(out, "    {}", host_line(snap));
    if !d.classification.classes.is_empty() {
        let _ = writeln!(
            out,
            "    logs point at: {}",
            classes_with_confidence(&d.classification)
        );
        class_notes(out, &d.classification, style, "      ");
    }
    let _ = writeln!(out);
}

/// One line for a finding that is no problem (passed, not checked, does not apply), and for
/// one not checked the input that would check it.
fn quiet_finding(out: &mut String, f: &Finding, style: Style) {
    let _ = writeln!(
        out,
        "{} {} {}",
        finding_mark(f, style),
        f.title,
        style.dim(&format!("[{}]", f.class))
    );
    if f.state == CheckState::NotChecked {
        let _ = writeln!(out, "    {}", style.dim(&not_checked_note(&f.missing)));
    }
}

/// A problem in one line, and what it rests on when that is not a measurement: the answers
/// it rests on and the answers an input set aside.
fn brief_problem(out: &mut String, f: &Finding, style: Style) {
    let _ = writeln!(
        out,
        "{} {} {}",
        mark(f.severity, style),
        style.bold(&f.title.to_string()),
        style.dim(&format!(
            "[{} · {} · {}]",
            f.class,
            f.severity.as_str(),
            confidences(f)
        ))
    );
    if !f.answered.is_empty() {
        let _ = writeln!(
            out,
            "    ? rests on your answer to: {}",
            f.answered.join(", ")
        );
    }
    for c in &f.contradicted {
        let _ = writeln!(out, "    ! answer set aside, the input wins: {c}");
    }
}

/// The open questions: in full (why the tool cannot decide, the hint), or in brief (the
/// question and how to answer it).
fn questions(out: &mut String, d: &Diagnosis, style: Style, detail: Detail) {
    for w in d.open_questions() {
        if let Outcome::NeedsAnswer {
            node,
            question,
            hint,
            reason,
            ..
        } = &w.outcome
        {
            let _ = writeln!(
                out,
                "{} {} {}",
                style.yellow("[?]"),
                question,
                style.dim(&format!("[{}]", asked_by(d, w).join(", ")))
            );
            if detail == Detail::Verbose {
                let _ = writeln!(out, "    • cannot decide automatically: {reason}");
                if !hint.is_empty() {
                    let _ = writeln!(out, "    • {hint}");
                }
            }
            for c in w.steps.iter().filter_map(|s| s.contradiction()) {
                let _ = writeln!(out, "    ! answer set aside, the input wins: {c}");
            }
            let _ = writeln!(out, "    • answer with: --answer {node}=yes|no");
        }
    }
}

/// The classes that have signatures but no decision tree yet, in one line.
fn stubs_line(out: &mut String, kb: &KnowledgeBase, style: Style) {
    let stubs: Vec<&str> = kb
        .classes
        .iter()
        .filter(|c| c.def.stub)
        .map(|c| c.id())
        .collect();
    if !stubs.is_empty() {
        let _ = writeln!(
            out,
            "{} {}",
            style.dim("[-]"),
            style.dim(&format!(
                "signatures only (no tree yet): {}",
                stubs.join(", ")
            ))
        );
    }
}

/// The last line: the counts of every state, coloured by the worst finding.
fn summary_line(out: &mut String, d: &Diagnosis, style: Style) {
    let at = |sev: Severity| d.findings.iter().filter(|f| f.severity == sev).count();
    let (errors, warnings) = (at(Severity::Error), at(Severity::Warning));
    let pending = d.open_questions().count();
    let mut summary = format!(
        "{errors} error(s), {warnings} warning(s), {}, {pending} question(s) waiting for an answer.",
        state_counts(d)
    );
    let seen: Vec<&str> = d
        .pending_but_seen_in_logs()
        .map(|w| w.class.as_str())
        .collect();
    if !seen.is_empty() {
        // Exit 1 too: the failure is in the logs, only its cause waits for an answer.
        summary.push_str(&format!(
            " The logs show {}: answer the question(s) above to name the cause.",
            seen.join(", ")
        ));
    }
    let _ = writeln!(
        out,
        "{}",
        if errors > 0 {
            style.red(&summary)
        } else if warnings > 0 {
            style.yellow(&summary)
        } else {
            style.green(&summary)
        }
    );
}

/// The text report of `check`. Brief (the default): one line per check, problems first and
/// the checks not run last, then the fix plan, then the questions; verbose (`-v`): each
/// problem with its evidence, remedies, versions and sources, the questions with why they are
/// asked, then the plan.
pub(crate) fn check_text_with(
    kb: &KnowledgeBase,
    snap: &HostSnapshot,
    d: &Diagnosis,
    plan: &Plan,
    style: Style,
    detail: Detail,
) -> String {
    let mut out = String::new();
    header(&mut out, snap, d, style);
    let problems = d.findings.iter().filter(|f| f.severity > Severity::Ok);
    let quiet = |state: CheckState| {
        d.findings
            .iter()
            .filter(move |f| f.severity == Severity::Ok && f.state == state)
    };
    match detail {
        Detail::Verbose => {
            for f in problems {
                finding_text(&mut out, f, style);
                let _ = writeln!(out);
            }
            for f in d.findings.iter().filter(|f| f.severity == Severity::Ok) {
                quiet_finding(&mut out, f, style);
            }
            questions(&mut out, d, style, detail);
            let p = plan_text(plan, style);
            if !p.is_empty() {
                let _ = writeln!(out);
                out.push_str(&p);
            }
            stubs_line(&mut out, kb, style);
        }
        Detail::Brief => {
            for f in problems {
                brief_problem(&mut out, f, style);
            }
            // Passed, then what does not apply, then what was not checked: never mixed in
            // with the ticks.
            for state in [
                CheckState::Passed,
                CheckState::NotApplicable,
                CheckState::NotChecked,
            ] {
                for f in quiet(state) {
                    quiet_finding(&mut out, f, style);
                }
            }
            stubs_line(&mut out, kb, style);
            let p = plan_text(plan, style);
            if !p.is_empty() {
                let _ = writeln!(out);
                out.push_str(&p);
            }
            if d.open_questions().next().is_some() {
                let _ = writeln!(out);
                questions(&mut out, d, style, detail);
            }
        }
    }
    let _ = writeln!(out);
    summary_line(&mut out, d, style);
    if detail == Detail::Brief && !d.findings.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            style.dim("Evidence, every remedy and the sources: run again with -v.")
        );
    }
    out
}

/// The classes (`class` or `class:node` where one class waits at two nodes) whose walks wait
/// at a question that `w` asks first, `w`'s own class first: one question, every walk it
/// answers.
pub(crate) fn asked_by<'d>(d: &'d Diagnosis, w: &'d crate::engine::Walk) -> Vec<&'d str> {
    let mut out = vec![w.class.as_str()];
    for (_, other) in shared_with(d, w) {
        if !out.contains(&other.class.as_str()) {
            out.push(other.class.as_str());
        }
    }
    out
}

/// The later pending walks whose question is the one `w` asks (same check), with their node.
pub(crate) fn shared_with<'d>(
    d: &'d Diagnosis,
    w: &'d crate::engine::Walk,
) -> Vec<(&'d str, &'d crate::engine::Walk)> {
    d.pending()
        .filter(|o| !std::ptr::eq(*o, w))
        .filter(|o| d.asked_before(o).is_some_and(|(c, _)| c == w.class))
        .filter_map(|o| match &o.outcome {
            Outcome::NeedsAnswer { node, .. } => Some((node.as_str(), o)),
            Outcome::Concluded { .. } => None,
        })
        .collect()
}

/// The ids and titles of the findings in one state, for `check --format json`.
fn in_state(d: &Diagnosis, state: CheckState) -> Vec<serde_json::Value> {
    d.findings
        .iter()
        .filter(|f| f.state == state && f.severity == Severity::Ok)
        .map(|f| {
            let mut v = json!({"id": f.id, "class": f.class, "title": f.title});
            if !f.missing.is_empty() {
                v["missing"] = json!(f.missing);
            }
            v
        })
        .collect()
}

/// The JSON contract of `check`.
pub fn check_json(snap: &HostSnapshot, d: &Diagnosis, plan: &Plan) -> serde_json::Value {
    let findings: Vec<&Finding> = d
        .findings
        .iter()
        .filter(|f| f.severity > Severity::Ok)
        .collect();
    // One entry per question: `nodes` lists every waiting node one answer decides.
    let pending: Vec<serde_json::Value> = d
        .open_questions()
        .filter_map(|w| match &w.outcome {
            Outcome::NeedsAnswer { node, question, hint, reason, .. } => {
                let mut nodes = vec![node.as_str()];
                nodes.extend(shared_with(d, w).into_iter().map(|(n, _)| n));
                Some(json!({"class": w.class, "node": node, "nodes": nodes, "classes": asked_by(d, w), "question": question, "hint": hint, "reason": reason.to_string()}))
            }
            Outcome::Concluded { .. } => None,
        })
        .collect();
    json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "host": {"origin": snap.origin, "summary": host_line(snap), "python": python_state(snap)},
        "findings": findings,
        "passed": in_state(d, CheckState::Passed),
        "not_checked": in_state(d, CheckState::NotChecked),
        "not_applicable": in_state(d, CheckState::NotApplicable),
        "pending": pending,
        "walks": d.walks,
        "log_classes": d.classification.evidence,
        "log_matches": d.classification.matches,
        "plan": plan,
    })
}

/// Whether the Python stack (vLLM, torch, …) was read, and if not, why, as a typed code a
/// script can branch on (`not_requested` under `--no-python`) beside the words.
fn python_state(snap: &HostSnapshot) -> serde_json::Value {
    use crate::snapshot::Probed;
    match &snap.python {
        Probed::Value(_) => json!({"state": "collected"}),
        Probed::Skipped(r) => {
            json!({"state": "skipped", "code": r.code.label(), "reason": r.to_string()})
        }
        Probed::Failed(r) => {
            json!({"state": "failed", "code": r.code.label(), "reason": r.to_string()})
        }
    }
}

/// The classes the logs point at, most likely first, each with its confidence:
/// `allocator_ipc (SUSPECTED), fp8_tuning (LOW)`.
pub(crate) fn classes_with_confidence(c: &Classification) -> String {
    c.evidence
        .iter()
        .map(|e| format!("{} ({})", e.class, e.confidence.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the knowledge base says about classes the evidence does not confirm, one line each.
fn class_notes(out: &mut String, c: &Classification, style: Style, indent: &str) {
    for e in c.evidence.iter().filter(|e| !e.note.is_empty()) {
        let _ = writeln!(
            out,
            "{indent}{} {}",
            style.dim(&format!("{}:", e.class)),
            e.note
        );
    }
}

/// Failure lines `classify` quotes when no class explains them (the first few: the rest are
/// in `--format json`).
const UNEXPLAINED_SHOWN: usize = 3;

/// What kind of line shows a failure, in `classify`'s words.
fn failure_kind_words(k: FailureKind) -> &'static str {
    match k {
        FailureKind::Exception => "exception",
        FailureKind::Assertion => "assertion",
        FailureKind::CudaError => "CUDA error",
        FailureKind::NcclError => "NCCL error",
        FailureKind::Abort => "process died",
        FailureKind::ErrorLine => "error line",
        FailureKind::TracebackCut => "traceback cut before its exception",
    }
}

/// The failures and hang of the logs that no class explains, for `classify` text: a log that
/// matches no signature but shows a traceback is never printed as if nothing were there.
fn unexplained_run(out: &mut String, run: &RunSigns, hang_explained: bool, style: Style) {
    let unexplained: Vec<&FailureLine> = run.unexplained().collect();
    // Root causes first: a wrapper's "see root cause above" follows from them.
    let mut shown: Vec<&FailureLine> = unexplained
        .iter()
        .copied()
        .filter(|f| !f.consequence)
        .collect();
    shown.extend(unexplained.iter().copied().filter(|f| f.consequence));
    for f in shown.iter().take(UNEXPLAINED_SHOWN) {
        let _ = writeln!(
            out,
            "{}:{}: {} {}",
            f.file,
            f.line,
            style.bold(&format!("({})", failure_kind_words(f.kind))),
            f.text
        );
        if !f.frames.is_empty() {
            let _ = writeln!(out, "  last frames: {}", f.frames.join(" → "));
        }
    }
    if shown.len() > UNEXPLAINED_SHOWN {
        let more = shown.len() - UNEXPLAINED_SHOWN;
        let _ = writeln!(
            out,
            "  … {more} more failure line(s): --format json lists them"
        );
    }
    if let Some(h) = run.hang.as_ref().filter(|_| !hang_explained) {
        let at = match h.last_progress_line {
            Some(l) => format!("{}:{l}: last progress: {}", h.file, h.last_progress_text),
            None => format!("{}: no progress line", h.file),
        };
        let how = match h.kind {
            HangKind::StallWarnings => format!("{} stall warning(s) after it", h.stall_count),
            HangKind::Interrupted => "interrupted before start-up completed".into(),
            HangKind::EndsInStartup => "the log ends inside start-up".into(),
        };
        let _ = writeln!(out, "{} {at} ({how})", style.bold("(hang)"));
    }
}

/// Whether a class named at SUSPECTED or above matched an error line where the hang is, at or
/// after the last line that showed progress (a stall signature, a refusal that stopped the
/// start): that class is the hang's explanation, as far as signatures alone can tell.
fn hang_explained(c: &Classification) -> bool {
    let Some(h) = &c.run.hang else {
        return false;
    };
    let from = h.last_progress_line.unwrap_or(0);
    c.matches.iter().any(|m| {
        m.kind == SignatureKind::Error
            && m.file == h.file
            && m.line >= from
            && c.confidence
                .get(&m.class)
                .is_some_and(|&conf| conf >= MatchConfidence::Suspected)
    })
}

/// `classify` text output.
pub(crate) fn classify_text(c: &Classification, style: Style) -> String {
    let mut out = String::new();
    let hang_explained = hang_explained(c);
    let unexplained =
        c.run.unexplained().next().is_some() || (c.run.hang.is_some() && !hang_explained);
    if c.classes.is_empty() {
        if unexplained {
            let _ = writeln!(
                out,
                "No known failure signature found, but the log shows a failure this tool does not recognise:"
            );
            unexplained_run(&mut out, &c.run, hang_explained, style);
        } else {
            let _ = writeln!(
                out,
                "No known failure signature found, and no failure line or hang in the given log(s)."
            );
        }
    } else {
        let _ = writeln!(out, "Most likely first: {}", classes_with_confidence(c));
        class_notes(&mut out, c, style, "  ");
        if unexplained {
            let _ = writeln!(out, "Also in the log, explained by none of these classes:");
            unexplained_run(&mut out, &c.run, hang_explained, style);
        }
    }
    for m in &c.matches {
        if m.repeats_left_out > 0 {
            let n = m.repeats_left_out;
            let _ = writeln!(out, "  … {n} more matches of {} left out", m.signature);
        }
        let _ = writeln!(
            out,
            "{}:{}: {} {} {}",
            m.file,
            m.line,
            style.bold(&m.class),
            style.dim(&format!("({}, {})", m.signature, m.kind.as_str())),
            m.text
        );
    }
    out
}

/// The JSON contract of `classify`: `schema_version`, `classes` (most likely first),
/// `confidence` (class -> CONFIRMED/SUSPECTED/LOW), `evidence` (per class: confidence, score,
/// note, signatures) and `matches`.
pub(crate) fn classify_json(c: &Classification) -> serde_json::Value {
    let mut v = json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "classes": c.classes,
        "confidence": c.confidence,
        "evidence": c.evidence,
        "matches": c.matches,
    });
    // What the logs show about the run, whatever the class (left out when they show nothing).
    if !c.run.is_empty()
        && let Some(o) = v.as_object_mut()
    {
        o.insert("run".into(), json!(c.run));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{self, Answers, Mode};
    use crate::snapshot::Probed;

    /// The demo's host with no launch and no log: several checks cannot run.
    fn no_inputs() -> (KnowledgeBase, HostSnapshot, Diagnosis) {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let mut snap = crate::import::demo_snapshot();
        snap.launch = Probed::skipped("no launch command given");
        let d = engine::diagnose(&kb, &snap, &Answers::new(), &[], Mode::Failures);
        (kb, snap, d)
    }

    #[test]
    fn only_a_check_that_ran_and_passed_gets_a_tick() {
        let (kb, snap, d) = no_inputs();
        let text = check_text(&kb, &snap, &d, &Plan::default(), Style::plain());
        let ticked: Vec<&str> = text.lines().filter(|l| l.starts_with("[✓]")).collect();
        assert_eq!(ticked.len(), d.count(CheckState::Passed), "{text}");
        for f in d.findings.iter().filter(|f| f.state != CheckState::Passed) {
            assert!(
                !ticked.iter().any(|l| l.contains(&f.title.to_string())),
                "{} is {:?} but ticked",
                f.id,
                f.state
            );
        }
        assert!(d.count(CheckState::NotChecked) > 0);
        assert!(
            text.contains(&format!("{} not checked", d.count(CheckState::NotChecked))),
            "{text}"
        );
        // Out-of-memory with no log says which input to give.
        assert!(
            text.contains("not checked: no log given (give --log FILE)"),
            "{text}"
        );
    }

    #[test]
    fn the_brief_keeps_every_state_apart_and_the_ticks_honest() {
        let (kb, snap, d) = no_inputs();
        let text = check_text_with(
            &kb,
            &snap,
            &d,
            &Plan::default(),
            Style::plain(),
            Detail::Brief,
        );
        let lines: Vec<&str> = text.lines().collect();
        let starting = |m: &str| lines.iter().filter(|l| l.starts_with(m)).count();
        assert_eq!(starting("[✓]"), d.count(CheckState::Passed), "{text}");
        assert_eq!(starting("[ ]"), d.count(CheckState::NotChecked), "{text}");
        // `[-]` also marks the one line of classes with signatures only, when there are any.
        let stubs = usize::from(kb.classes.iter().any(|c| c.def.stub));
        assert_eq!(
            starting("[-]"),
            d.count(CheckState::NotApplicable) + stubs,
            "{text}"
        );
        assert_eq!(starting("[?]"), d.open_questions().count(), "{text}");
        // Every check line comes before the first unchecked one but the unchecked ones.
        let first_unchecked = lines.iter().position(|l| l.starts_with("[ ]"));
        let last_other = lines
            .iter()
            .rposition(|l| l.starts_with("[✓]") || l.starts_with("[✗]") || l.starts_with("[!]"));
        assert!(first_unchecked > last_other, "{text}");
        // No evidence, remedies or sources in the brief, and the way to get them is said.
        assert!(!text.contains("Remedies, cheapest first"), "{text}");
        assert!(!text.contains("cannot decide automatically"), "{text}");
        assert!(text.contains("run again with -v"), "{text}");
        // The verbose text is the full one.
        let full = check_text(&kb, &snap, &d, &Plan::default(), Style::plain());
        assert!(full.contains("cannot decide automatically"), "{full}");
        assert!(!full.contains("run again with -v"), "{full}");
    }

    #[test]
    fn the_json_lists_states_apart_and_each_question_once() {
        let (_, snap, d) = no_inputs();
        let v = check_json(&snap, &d, &Plan::default());
        let ids = |k: &str| -> Vec<String> {
            v[k].as_array()
                .expect(k)
                .iter()
                .filter_map(|f| f["id"].as_str().map(str::to_string))
                .collect()
        };
        assert!(ids("not_checked").contains(&"cuda_oom_no_log".to_string()));
        assert!(!ids("passed").contains(&"cuda_oom_no_log".to_string()));
        let pending = v["pending"].as_array().expect("pending");
        assert_eq!(pending.len(), d.open_questions().count());
        // "Is the model FP8 block-quantised?" waits in two walks and is listed once, with both.
        let fp8 = pending
            .iter()
            .find(|p| {
                p["nodes"]
                    .as_array()
                    .is_some_and(|n| n.iter().any(|x| x == "fp8_model"))
            })
            .expect("the FP8 question");
        assert_eq!(fp8["nodes"].as_array().map(Vec::len), Some(2), "{fp8}");
    }

    fn classified(text: &str) -> Classification {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        crate::engine::classify::classify(
            &kb,
            &[crate::engine::classify::LogText {
                name: "l.log".into(),
                text: text.into(),
            }],
        )
    }

    #[test]
    fn classify_text_never_says_nothing_over_a_failure_no_class_names() {
        let c = classified(
            "INFO x\nTraceback (most recent call last):\n  File \"/a.py\", line 3, in f\n    g()\nValueError: bad shape\n",
        );
        let text = classify_text(&c, Style::plain());
        assert!(
            text.starts_with("No known failure signature found, but the log shows a failure"),
            "{text}"
        );
        assert!(
            text.contains("l.log:5: (exception) ValueError: bad shape"),
            "{text}"
        );
        assert!(
            text.contains("last frames: File \"/a.py\", line 3, in f"),
            "{text}"
        );
        // A log with neither a class nor a failure says both were looked for.
        let quiet = classify_text(&classified("INFO all good\n"), Style::plain());
        assert!(
            quiet.starts_with("No known failure signature found, and no failure line"),
            "{quiet}"
        );
    }

    #[test]
    fn a_failure_after_a_known_warning_is_listed_beside_the_class() {
        let c = classified(
            "WARNING 05-01 10:00:05 [fused_moe.py:882] Using default MoE config. Performance might be sub-optimal! Config file not found at /x/E=128,N=768,device_name=NVIDIA_H100.json\nRuntimeError: ibv_reg_mr failed\n",
        );
        let text = classify_text(&c, Style::plain());
        assert!(text.starts_with("Most likely first: fp8_tuning"), "{text}");
        assert!(
            text.contains("Also in the log, explained by none of these classes:"),
            "{text}"
        );
        assert!(
            text.contains("l.log:2: (exception) RuntimeError: ibv_reg_mr failed"),
            "{text}"
        );
    }

    #[test]
    fn a_hang_is_explained_only_by_a_named_class_matched_where_progress_stopped() {
        // Stall warnings after the last progress line, and no class: an unexplained hang.
        let stalls = "INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m...\n\
            WARNING 05-12 10:02:01 [shm_broadcast.py:1] No available shared memory broadcast block found in 60 seconds.\n\
            WARNING 05-12 10:03:01 [shm_broadcast.py:1] No available shared memory broadcast block found in 60 seconds.\n";
        let c = classified(stalls);
        assert!(c.run.hang.is_some(), "{:?}", c.run);
        assert!(c.classes.is_empty(), "{:?}", c.classes);
        assert!(!hang_explained(&c));
        assert!(classify_text(&c, Style::plain()).contains("(hang)"));
        // The same stall after P2P was turned off is what p2p_fabric names (its stall signature
        // matched where progress stopped): the hang is that class's, not listed apart.
        let named = classified(&format!("NCCL_P2P_DISABLE=1\n{stalls}"));
        assert_eq!(
            named.classes.first().map(String::as_str),
            Some("p2p_fabric")
        );
        assert!(hang_explained(&named));
        assert!(!classify_text(&named, Style::plain()).contains("(hang)"));
        // With no hang there is nothing to explain.
        assert!(!hang_explained(&classified("INFO up\n")));
    }
}
