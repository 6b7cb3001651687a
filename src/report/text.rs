//! Plain-text report: the same model as the Markdown one, for a terminal or an e-mail.

use super::check::{host_line, match_label};
use super::host;
use super::markdown::{counts, plan_fix_command, redaction_line};
use super::model::{Report, ReportOutcome};
use crate::engine::{Answer, Basis};
use crate::kb::schema::{CheckState, Severity};
use std::fmt::Write;

fn mark(sev: Severity) -> &'static str {
    match sev {
        Severity::Error => "[x]",
        Severity::Warning => "[!]",
        Severity::Info => "[i]",
        Severity::Ok => "[ok]",
    }
}

fn answer_str(a: Answer) -> &'static str {
    match a {
        Answer::Yes => "yes",
        Answer::No => "no",
        Answer::Unsure => "unsure",
    }
}

/// The plan first: the combined command ("Run this"), scripts, steps, what was left out.
fn plan_text(out: &mut String, r: &Report) {
    let p = &r.plan;
    if p.remedies.is_empty() && p.left_out.is_empty() {
        return;
    }
    let changed = matches!((&p.original, &p.launch), (Some(a), Some(b)) if a != b);
    let _ = writeln!(out, "Fix plan: {}", p.remedies.join(", "));
    match &p.launch {
        Some(l) if changed => {
            let _ = writeln!(out, "Run this (every remedy of the plan applied):");
            for line in l.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        Some(_) if p.files.is_empty() => {
            let _ = writeln!(out, "  the launch needs no change for this plan");
        }
        Some(_) => {
            let _ = writeln!(out, "  the launch command itself stays as it is");
        }
        None => {}
    }
    for f in &p.files {
        let _ = writeln!(out, "Change {} to:", f.name);
        for line in f.text.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    for s in &p.scripts {
        let _ = writeln!(out, "  script: {} (write it with `{}`)", s.file, s.command);
    }
    for s in &p.steps {
        let _ = writeln!(out, "  step: {s}");
    }
    if let Some(c) = plan_fix_command(r) {
        let _ = writeln!(out, "  exact command: {c}");
    }
    for l in &p.left_out {
        let _ = writeln!(out, "  left out: {} — {}", l.remedy, l.reason);
    }
    for n in &p.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = writeln!(out);
}

/// The plain-text report.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let snap = &r.snapshot;
    let counts = counts(r);
    let _ = writeln!(out, "sm120-doctor report");
    plan_text(&mut out, r);
    let _ = writeln!(out, "Host:   {}", host_line(snap));
    let _ = writeln!(out, "Source: {}", snap.origin);
    let _ = writeln!(out, "Result: {}", counts.line());
    let _ = writeln!(out);
    for f in &r.findings {
        let m = match f.state {
            CheckState::Problem => mark(f.severity),
            CheckState::Passed => mark(Severity::Ok),
            CheckState::NotChecked => "[ ]",
            CheckState::NotApplicable => "[-]",
        };
        if f.state != CheckState::Problem {
            let _ = writeln!(out, "{m} {} [{}]", f.title, f.class);
            if f.state == CheckState::NotChecked {
                let _ = writeln!(out, "    {}", super::check::not_checked_note(&f.missing));
            }
            continue;
        }
        let _ = writeln!(
            out,
            "{} {} [{} · {} · {} upstream · matched: {}]",
            m,
            f.title,
            f.class,
            f.severity.as_str(),
            f.confidence.as_str(),
            match_label(f.matched, f.answered.len(), &f.assumptions)
        );
        if f.severity == Severity::Ok {
            continue;
        }
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
        for e in &f.evidence {
            let _ = writeln!(out, "    - {e}");
        }
        for m in &f.log_lines {
            let _ = writeln!(out, "    - log {}:{}: {}", m.file, m.line, m.text);
        }
        if let Some(c) = &f.chosen_remedy
            && let Some(rem) = f.remedies.iter().find(|x| x.id == c.id)
        {
            let how = if c.chosen_by == crate::engine::plan::ChosenBy::User {
                "chosen by the user"
            } else {
                crate::engine::plan::default_words(rem.confidence)
            };
            let _ = writeln!(
                out,
                "    Remedy ({how}): {} ({}) — {}",
                rem.title,
                rem.id,
                rem.confidence.as_str()
            );
            let _ = writeln!(out, "      cost: {}", rem.cost);
            let _ = writeln!(out, "      verified: {}", rem.verified);
            for l in &rem.limits {
                let _ = writeln!(out, "      limit: {l}");
            }
            let _ = writeln!(
                out,
                "      {}",
                if c.in_plan {
                    "in the plan: its change is in the \"Run this\" command above"
                } else {
                    "not in the plan (below warning and not picked, or left out: see the plan)"
                }
            );
            for s in &c.action.steps {
                let _ = writeln!(out, "      step: {s}");
            }
            if let Some(s) = &c.action.script {
                let _ = writeln!(out, "      script: {s}");
            }
            for o in f.remedies.iter().filter(|o| o.id != c.id) {
                let _ = writeln!(out, "      other: {} ({}) — {}", o.title, o.id, o.cost);
            }
        }
        for v in &f.versions {
            let _ = writeln!(out, "    versions: {}", super::version_line(f, v));
        }
        for d in &f.does_not_fix {
            let _ = writeln!(out, "    ! does not fix: {d}");
        }
        for d in &f.contradictions {
            let _ = writeln!(out, "    ! sources disagree: {d}");
        }
        if !f.sources.is_empty() {
            let _ = writeln!(out, "    sources: {}", f.sources.join(", "));
        }
        let _ = writeln!(out);
    }
    for p in &r.pending {
        let classes = if p.classes.len() > 1 {
            p.classes.join(", ")
        } else {
            p.class.clone()
        };
        let _ = writeln!(out, "[?] {} [{classes}]", p.question);
        let _ = writeln!(out, "    - cannot decide automatically: {}", p.reason);
        if !p.hint.is_empty() {
            let _ = writeln!(out, "    - {}", p.hint);
        }
        let _ = writeln!(out, "    - answer with: --answer {}=yes|no", p.node);
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "How the tool decided");
    if r.answers.is_empty() {
        let _ = writeln!(out, "  answers given by the user: none");
    } else {
        for (node, a) in &r.answers {
            let _ = writeln!(out, "  answer {node}: {}", answer_str(*a));
        }
    }
    for w in &r.walks {
        let end = match &w.outcome {
            ReportOutcome::Concluded { conclusion } => format!("concluded {conclusion}"),
            ReportOutcome::NeedsAnswer { node, .. } => format!("waiting at {node}"),
        };
        let _ = writeln!(out, "  {} from {} -> {end}", w.class, w.start);
        for s in &w.steps {
            let by = match (s.by.as_str(), s.basis) {
                ("auto", Basis::Measured) => "tool, measured",
                ("auto", Basis::Answered) => "tool, from answers",
                ("auto", Basis::Assumed) => "tool, assumed",
                _ => "user",
            };
            let _ = writeln!(out, "    {} -> {} ({by})", s.question, answer_str(s.answer));
            for f in &s.facts {
                let assumed = if f.assumed { ", assumed" } else { "" };
                let _ = writeln!(
                    out,
                    "      {} = {} ({}{assumed})",
                    f.name, f.value, f.source
                );
            }
            if let Some(t) = s.typed_answer.as_ref().filter(|t| t.contradicted) {
                let _ = writeln!(out, "      ! your answer set aside: {}", t.note);
            }
        }
    }
    if !r.logs.is_empty() {
        let _ = writeln!(out);
        let names: Vec<&str> = r.logs.iter().map(|l| l.name.as_str()).collect();
        let _ = writeln!(out, "Logs given: {}", names.join(", "));
        for c in &r.log_classes {
            let _ = writeln!(out, "  points at: {} ({})", c.class, c.confidence);
            if !c.note.is_empty() {
                let _ = writeln!(out, "    {}", c.note);
            }
        }
        for m in &r.log_matches {
            let _ = writeln!(
                out,
                "  {}:{}: [{}/{}] {}",
                m.file, m.line, m.class, m.signature, m.text
            );
        }
    }
    if let Some(l) = snap.launch.value() {
        let _ = writeln!(out);
        let _ = writeln!(out, "Launch command:");
        for line in l.raw.trim_end().lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let _ = writeln!(out);
    out.push_str(&host::text_block(snap, r.env_not_listed));
    let _ = writeln!(out);
    if !r.signature_only_classes.is_empty() {
        let _ = writeln!(
            out,
            "Checked by log signature only (no tree yet): {}",
            r.signature_only_classes.join(", ")
        );
    }
    let _ = writeln!(out, "{}", redaction_line(r));
    let _ = writeln!(
        out,
        "{} {} · report schema {} · mode {}",
        r.tool.name, r.tool.version, r.schema_version, r.mode
    );
    out
}
