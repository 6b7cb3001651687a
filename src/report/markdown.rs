//! Markdown report, shaped for pasting into a GitHub issue (vLLM's bug template asks for the
//! environment inside a `<details>` block under "Your current environment").

use super::check::{host_line, match_label};
use super::model::{ChosenRemedy, Report, ReportFinding, ReportOutcome};
use super::{host, redact};
use crate::engine::{Answer, Basis};
use crate::kb::schema::{CheckState, Edit, Severity};
use std::fmt::Write;

fn icon(sev: Severity) -> &'static str {
    match sev {
        Severity::Error => "❌",
        Severity::Warning => "⚠️",
        Severity::Info => "ℹ️",
        Severity::Ok => "✅",
    }
}

/// A finding's icon: its severity for a problem, else its state (✅ only for a pass).
fn finding_icon(f: &ReportFinding) -> &'static str {
    match f.state {
        CheckState::Problem => icon(f.severity),
        CheckState::Passed => icon(Severity::Ok),
        CheckState::NotChecked => "⬜",
        CheckState::NotApplicable => "➖",
    }
}

/// A fenced code block whose fence is longer than any backtick run inside.
pub fn fence(content: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let ticks = "`".repeat(longest.max(2) + 1);
    let body = content.trim_end_matches('\n');
    format!("{ticks}{lang}\n{body}\n{ticks}\n")
}

/// Inline code that survives backticks inside.
fn code(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// A table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn answer_str(a: Answer) -> &'static str {
    match a {
        Answer::Yes => "yes",
        Answer::No => "no",
        Answer::Unsure => "unsure",
    }
}

fn list(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "**{title}**\n");
    for i in items {
        let _ = writeln!(out, "- {i}");
    }
    let _ = writeln!(out);
}

/// The remedy shown for a finding: its title, whether the plan has it, its cost.
fn chosen(out: &mut String, f: &ReportFinding, c: &ChosenRemedy) {
    let Some(r) = f.remedies.iter().find(|r| r.id == c.id) else {
        return;
    };
    let how = if c.chosen_by == crate::engine::plan::ChosenBy::User {
        "chosen by the user"
    } else {
        crate::engine::plan::default_words(r.confidence)
    };
    let _ = writeln!(
        out,
        "**Remedy:** {} ({}, {}, {how})\n",
        r.title,
        code(&r.id),
        r.confidence.as_str()
    );
    let _ = writeln!(
        out,
        "- {}",
        if c.in_plan {
            "In the plan: its change is in the “Run this” command above."
        } else {
            "Not in the plan (below warning and not picked, or left out: see the plan above)."
        }
    );
    let _ = writeln!(out, "- Cost: {}\n", r.cost);
}

/// Where the remedy was verified, its limits and steps, and the other remedies.
fn chosen_details(out: &mut String, f: &ReportFinding, c: &ChosenRemedy) {
    let Some(r) = f.remedies.iter().find(|r| r.id == c.id) else {
        return;
    };
    let _ = writeln!(out, "**Remedy details**\n");
    let _ = writeln!(out, "- Verified on: {}", public_text(&r.verified));
    for l in &r.limits {
        let _ = writeln!(out, "- Limit: {}", public_text(l));
    }
    let a = &c.action;
    for s in &a.steps {
        let _ = writeln!(out, "- Step: {s}");
    }
    if let Some(s) = &a.script {
        let _ = writeln!(out, "- Script: {}", code(s));
    }
    let _ = writeln!(out);
    let others: Vec<_> = f.remedies.iter().filter(|o| o.id != c.id).collect();
    if !others.is_empty() {
        let _ = writeln!(out, "**Other remedies, cheapest first**\n");
        for o in others {
            let _ = writeln!(
                out,
                "- {} ({}, {}) — {}",
                o.title,
                code(&o.id),
                o.confidence.as_str(),
                o.cost
            );
        }
        let _ = writeln!(out);
    }
}

/// `sm120-doctor fix --launch-file LAUNCH_FILE --remedy A --remedy B` for the plan's remedies
/// that edit the launch, when there are any.
pub fn plan_fix_command(r: &Report) -> Option<String> {
    let edits_launch = |id: &str| {
        r.findings
            .iter()
            .flat_map(|f| f.remedies.iter())
            .find(|x| x.id == id)
            .is_some_and(|x| {
                x.edits
                    .iter()
                    .any(|e| !matches!(e, Edit::Manual { .. } | Edit::PatchScript { .. }))
            })
    };
    let ids: Vec<&String> = r
        .plan
        .remedies
        .iter()
        .filter(|id| edits_launch(id))
        .collect();
    if ids.is_empty() {
        return None;
    }
    let flags: Vec<String> = ids.iter().map(|id| format!("--remedy {id}")).collect();
    Some(format!(
        "sm120-doctor fix --launch-file LAUNCH_FILE {}",
        flags.join(" ")
    ))
}

/// The plan's remedies whose claim is SUSPECTED: (id, title), in plan order.
pub fn suspected_in_plan(r: &Report) -> Vec<(&str, &str)> {
    r.plan
        .remedies
        .iter()
        .filter_map(|id| {
            r.findings
                .iter()
                .flat_map(|f| f.remedies.iter())
                .find(|x| &x.id == id && x.confidence == crate::kb::schema::Confidence::Suspected)
                .map(|x| (x.id.as_str(), x.title.as_str()))
        })
        .collect()
}

/// The plan: one "Run this" block (the combined command), then scripts, steps, what was left
/// out and the notes.
fn plan_section(out: &mut String, r: &Report) {
    let p = &r.plan;
    if p.remedies.is_empty() && p.left_out.is_empty() {
        return;
    }
    let changed = matches!((&p.original, &p.launch), (Some(a), Some(b)) if a != b);
    match &p.launch {
        Some(l) if changed => {
            let _ = writeln!(out, "### Run this\n");
            let _ = writeln!(
                out,
                "Your launch with every remedy of the plan applied ({}):\n",
                p.remedies
                    .iter()
                    .map(|i| code(i))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            out.push_str(&fence(l, "bash"));
            let _ = writeln!(out);
        }
        _ => {
            let _ = writeln!(out, "### Fix plan\n");
            let _ = writeln!(
                out,
                "Remedies: {}{}\n",
                p.remedies
                    .iter()
                    .map(|i| code(i))
                    .collect::<Vec<_>>()
                    .join(", "),
                if p.launch.is_some() && p.files.is_empty() {
                    " (the launch needs no change)"
                } else if p.launch.is_some() {
                    " (the launch command itself stays as it is)"
                } else {
                    " (no launch given: the launch edits are steps)"
                }
            );
        }
    }
    // A SUSPECTED remedy in the plan is a guess: say so next to the command, not only in the
    // finding further down, so nobody runs it believing it is known to work.
    for (id, title) in suspected_in_plan(r) {
        let _ = writeln!(
            out,
            "- Likely — not confirmed: {title} ({}) is SUSPECTED to help; no report confirms it fixes this.",
            code(id)
        );
    }
    for f in &p.files {
        let _ = writeln!(out, "Change {} to:\n", code(&f.name));
        out.push_str(&fence(&f.text, "bash"));
        let _ = writeln!(out);
    }
    for s in &p.scripts {
        let _ = writeln!(
            out,
            "- Script: {} (write it with {})",
            code(&s.file),
            code(&s.command)
        );
    }
    for s in &p.steps {
        let _ = writeln!(out, "- Step: {s}");
    }
    for l in &p.left_out {
        let _ = writeln!(out, "- Left out: {} — {}", code(&l.remedy), l.reason);
    }
    if !p.notes.is_empty() {
        let _ = writeln!(out, "\n<details>\n<summary>Notes on the plan</summary>\n");
        for n in &p.notes {
            let _ = writeln!(out, "- {n}");
        }
        let _ = writeln!(out, "\n</details>");
    }
    let _ = writeln!(out);
}

/// The matched log lines of a finding, each in its context (see `excerpt`).
fn log_excerpts(out: &mut String, f: &ReportFinding) {
    if f.log_excerpts.is_empty() {
        if !f.log_lines.is_empty() {
            let _ = writeln!(out, "**Matched log lines**\n");
            let lines: Vec<String> = f
                .log_lines
                .iter()
                .map(|m| format!("{}:{}: {}", m.file, m.line, m.text))
                .collect();
            out.push_str(&fence(&lines.join("\n"), "text"));
            let _ = writeln!(out);
        }
        return;
    }
    let _ = writeln!(
        out,
        "**Matched log lines** (marked `>`, with the lines around them)\n"
    );
    for e in &f.log_excerpts {
        let last = e.first_line + e.lines.len().saturating_sub(1);
        let _ = writeln!(out, "{}, lines {}–{last}:\n", code(&e.file), e.first_line);
        out.push_str(&fence(&super::excerpt::render(e), "text"));
        let _ = writeln!(out);
    }
}

/// The finding's detail past the evidence, the log and the remedy: folded.
fn finding_details(out: &mut String, f: &ReportFinding) {
    let versions: Vec<String> = f
        .versions
        .iter()
        .map(|v| super::version_line(f, v))
        .collect();
    let mut body = String::new();
    if let Some(c) = &f.chosen_remedy {
        chosen_details(&mut body, f, c);
    }
    list(&mut body, "Versions", &versions);
    list(&mut body, "Does not fix", &f.does_not_fix);
    list(&mut body, "Sources disagree", &f.contradictions);
    let sources: Vec<String> = f
        .sources
        .iter()
        .filter(|x| !repo_only(x))
        .cloned()
        .collect();
    list(&mut body, "Sources", &sources);
    if body.trim().is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<details>\n<summary>More on this finding: remedy details, other remedies, versions, sources</summary>\n"
    );
    out.push_str(&body);
    let _ = writeln!(out, "</details>\n");
}

/// One finding, a heading level below "Findings".
fn finding(out: &mut String, r: &Report, f: &ReportFinding) {
    let _ = writeln!(out, "#### {} {}\n", icon(f.severity), f.title);
    let _ = writeln!(
        out,
        "Class {} · severity **{}** · claim **{}** upstream · matched: **{}**\n",
        code(&f.class),
        f.severity.as_str(),
        f.confidence.as_str(),
        match_label(f.matched, f.answered.len(), &f.assumptions),
    );
    if !f.answered.is_empty() {
        let qs: Vec<String> = f.answered.iter().map(|n| question(r, n)).collect();
        let _ = writeln!(out, "Rests on your answer to: {}\n", qs.join("; "));
    }
    list(
        out,
        "Your answers set aside (the input wins)",
        &f.contradicted,
    );
    let differs: Vec<String> = f
        .run_differs
        .iter()
        .map(|d| super::run_differs_words(d.what, &d.in_log, &d.on_host, &d.file, d.line))
        .collect();
    list(out, "The log's run differs from this host", &differs);
    let evidence: Vec<String> = f
        .evidence
        .iter()
        .map(|e| super::plain_unset(e).into_owned())
        .collect();
    list(out, "Evidence", &evidence);
    log_excerpts(out, f);
    if let Some(c) = &f.chosen_remedy {
        chosen(out, f, c);
    }
    finding_details(out, f);
}

/// Counts for the result line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub passed: usize,
    pub not_checked: usize,
    pub not_applicable: usize,
    /// Questions, each once (a question several walks wait at counts one).
    pub questions: usize,
}

impl Counts {
    /// `1 error(s), 0 warning(s), 0 info, 5 passed · 6 not checked · 2 do not apply, 1
    /// question(s) waiting for an answer`.
    pub fn line(&self) -> String {
        format!(
            "{} error(s), {} warning(s), {} info, {} passed · {} not checked · {} {}, {} question(s) waiting for an answer",
            self.errors,
            self.warnings,
            self.infos,
            self.passed,
            self.not_checked,
            self.not_applicable,
            if self.not_applicable == 1 {
                "does not apply"
            } else {
                "do not apply"
            },
            self.questions
        )
    }
}

pub fn counts(r: &Report) -> Counts {
    let n = |s: Severity| {
        r.findings
            .iter()
            .filter(|f| f.severity == s && f.state == CheckState::Problem)
            .count()
    };
    let st = |s: CheckState| r.findings.iter().filter(|f| f.state == s).count();
    Counts {
        errors: n(Severity::Error),
        warnings: n(Severity::Warning),
        infos: n(Severity::Info),
        passed: st(CheckState::Passed),
        not_checked: st(CheckState::NotChecked),
        not_applicable: st(CheckState::NotApplicable),
        questions: r.pending.len(),
    }
}

/// `not checked: no log given (give --log FILE)`.
fn not_checked(f: &ReportFinding) -> String {
    super::check::not_checked_note(&f.missing)
}

/// `` `class` `` or, for a question several walks wait at, each of them.
fn pending_classes(p: &super::model::Pending) -> String {
    if p.classes.len() > 1 {
        let cs: Vec<String> = p.classes.iter().map(|c| code(c)).collect();
        cs.join(", ")
    } else {
        code(&p.class)
    }
}

/// One line naming what was redacted, by kind.
pub fn redaction_line(r: &Report) -> String {
    if !r.redacted {
        return "NOT redacted (--no-redact): this report may contain tokens, user names and the hostname.".into();
    }
    if r.redactions.is_empty() {
        return "Redacted before writing: nothing sensitive found.".into();
    }
    let parts: Vec<String> = r
        .redactions
        .iter()
        .map(|x| format!("{} × {}", x.count, redact::describe(&x.kind)))
        .collect();
    format!(
        "Redacted before writing (values not shown): {}.",
        parts.join(", ")
    )
}

/// A path that exists only in sm120-doctor's own tree (its tests, sources, knowledge base):
/// meaningless to a maintainer reading the report.
fn repo_only(s: &str) -> bool {
    let s = s.trim_start_matches('(');
    ["tests/", "src/", "knowledge/", "assets/"]
        .iter()
        .any(|p| s.starts_with(p))
}

/// Prose with this repository's paths said in words ("sm120-doctor's recorded fixtures").
fn public_text(s: &str) -> String {
    s.split(' ')
        .map(|w| {
            if repo_only(w) {
                let tail: String = w
                    .chars()
                    .rev()
                    .take_while(|c| ",;:.)".contains(*c))
                    .collect();
                let open = if w.starts_with('(') { "(" } else { "" };
                format!(
                    "{open}sm120-doctor's recorded fixtures{}",
                    tail.chars().rev().collect::<String>()
                )
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A walk node by its question (the report never shows node ids).
fn question(r: &Report, node: &str) -> String {
    r.walks
        .iter()
        .flat_map(|w| w.steps.iter())
        .find(|s| s.node == node)
        .map(|s| s.question.clone())
        .or_else(|| {
            r.pending
                .iter()
                .find(|p| p.node == node || p.nodes.iter().any(|n| n == node))
                .map(|p| p.question.clone())
        })
        .unwrap_or_else(|| node.to_string())
}

/// The versions that decide most SM120 failures, visible (a maintainer's first question).
fn versions_section(out: &mut String, snap: &crate::snapshot::HostSnapshot) {
    const WANTED: &[&str] = &[
        "vLLM version",
        "PyTorch version",
        "CUDA used to build PyTorch",
        "Triton",
        "FlashInfer",
        "DeepGEMM",
        "CUDA toolkit (nvcc)",
        "Python version",
        "Nvidia driver version",
        "CUDA version (driver)",
        "Kernel module",
        "OS",
    ];
    let rows: Vec<(String, String)> = host::sections(snap)
        .into_iter()
        .flat_map(|sec| sec.rows)
        .filter(|(k, v)| WANTED.contains(&k.as_str()) && !v.starts_with("(skipped"))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Versions\n");
    let _ = writeln!(out, "| | |\n|---|---|");
    for w in WANTED {
        if let Some((k, v)) = rows.iter().find(|(k, _)| k == w) {
            let _ = writeln!(out, "| {} | {} |", cell(k), cell(v));
        }
    }
    let _ = writeln!(out);
}

/// The log lines the failure signatures matched, as they are in the log (the findings below
/// show them again with their context).
fn failing_lines(out: &mut String, r: &Report) {
    if r.log_matches.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Failing log lines\n");
    let lines: Vec<String> = r
        .log_matches
        .iter()
        .map(|m| format!("{}:{}: {}", m.file, m.line, m.text))
        .collect();
    out.push_str(&fence(&lines.join("\n"), "text"));
    let _ = writeln!(out);
}

/// The report, in the order a vLLM maintainer reads an issue: the verdict, the host, the
/// versions (visible, not folded), the failing log lines, then what to run; the findings'
/// detail, the walks and the full environment after that. Internal ids (node and conclusion
/// ids, `--answer` keys) and this repository's own paths stay out of it.
pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let snap = &r.snapshot;
    let _ = writeln!(out, "## sm120-doctor report\n");
    let (problems, rest): (Vec<&ReportFinding>, Vec<&ReportFinding>) = r
        .findings
        .iter()
        .partition(|f| f.severity >= Severity::Warning);
    verdict_section(&mut out, r, &problems, &rest);

    let _ = writeln!(out, "### Host\n");
    let _ = writeln!(out, "**GPUs:** {}  ", host_line(snap));
    let _ = writeln!(out, "**Source:** {}\n", snap.origin);
    versions_section(&mut out, snap);
    failing_lines(&mut out, r);
    plan_section(&mut out, r);
    findings_section(&mut out, r, &problems, &rest);
    questions_section(&mut out, r);
    decisions_section(&mut out, r);
    logs_note(&mut out, r);
    if let Some(l) = snap.launch.value() {
        let _ = writeln!(out, "### Launch command, as given\n");
        out.push_str(&fence(&l.raw, "bash"));
        let _ = writeln!(out);
    }
    environment_section(&mut out, r);
    out
}

/// A finding's line in the verdict.
fn summary_line(f: &ReportFinding) -> String {
    match f.state {
        CheckState::Problem => format!(
            "- {} **{}** — {} · {} · {} upstream · matched: {}",
            finding_icon(f),
            f.title,
            code(&f.class),
            f.severity.as_str(),
            f.confidence.as_str(),
            match_label(f.matched, f.answered.len(), &f.assumptions)
        ),
        CheckState::Passed => format!(
            "- {} {} — {} · passed",
            finding_icon(f),
            f.title,
            code(&f.class)
        ),
        CheckState::NotChecked => format!(
            "- {} {} — {} · {}",
            finding_icon(f),
            f.title,
            code(&f.class),
            not_checked(f)
        ),
        CheckState::NotApplicable => format!(
            "- {} {} — {} · does not apply",
            finding_icon(f),
            f.title,
            code(&f.class)
        ),
    }
}

/// The verdict: problems (warning and above) and questions first, the result line, then the
/// rest (folded when there is anything above it).
fn verdict_section(
    out: &mut String,
    r: &Report,
    problems: &[&ReportFinding],
    rest: &[&ReportFinding],
) {
    let counts = counts(r);
    let _ = writeln!(out, "### Verdict\n");
    for f in problems {
        let _ = writeln!(out, "{}", summary_line(f));
    }
    for p in &r.pending {
        let _ = writeln!(
            out,
            "- ❓ {} — {} · waiting for an answer",
            p.question,
            pending_classes(p)
        );
    }
    if r.findings.is_empty() && r.pending.is_empty() {
        let _ = writeln!(out, "- No findings.");
    }
    let _ = writeln!(out, "\n**Result:** {}", counts.line());
    if !rest.is_empty() {
        // With problems above, the rest is folded; without, it is the result.
        let fold = !problems.is_empty() || !r.pending.is_empty();
        if fold {
            let _ = writeln!(
                out,
                "\n<details>\n<summary>{} info, {} passed, {} not checked, {} {}</summary>\n",
                counts.infos,
                counts.passed,
                counts.not_checked,
                counts.not_applicable,
                if counts.not_applicable == 1 {
                    "does not apply"
                } else {
                    "do not apply"
                }
            );
        } else {
            let _ = writeln!(out);
        }
        for f in rest {
            let _ = writeln!(out, "{}", summary_line(f));
        }
        if fold {
            let _ = writeln!(out, "\n</details>");
        }
    }
    let _ = writeln!(out);
}

/// The problems in full, then the info findings folded (passes and the rest are in the
/// verdict only).
fn findings_section(
    out: &mut String,
    r: &Report,
    problems: &[&ReportFinding],
    rest: &[&ReportFinding],
) {
    if !problems.is_empty() {
        let _ = writeln!(out, "### Findings\n");
        for f in problems {
            finding(out, r, f);
        }
    }
    let infos_shown: Vec<&&ReportFinding> = rest
        .iter()
        .filter(|f| f.severity == Severity::Info)
        .collect();
    if !infos_shown.is_empty() {
        let _ = writeln!(
            out,
            "<details>\n<summary>ℹ️ Info findings ({}): notes, not failures</summary>\n",
            infos_shown.len()
        );
        for f in infos_shown {
            finding(out, r, f);
        }
        let _ = writeln!(out, "</details>\n");
    }
}

/// The questions the walks wait at, and why the tool cannot answer them itself.
fn questions_section(out: &mut String, r: &Report) {
    if r.pending.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Questions waiting for an answer\n");
    for p in &r.pending {
        let _ = writeln!(out, "- **{}** ({})", p.question, pending_classes(p));
        let _ = writeln!(out, "  - cannot decide automatically: {}", p.reason);
        if !p.hint.is_empty() {
            let _ = writeln!(out, "  - {}", p.hint);
        }
        let _ = writeln!(
            out,
            "  - the reporter can answer it in `sm120-doctor` (the TUI asks it in these words)"
        );
    }
    let _ = writeln!(out);
}

/// The user's answers, then each class's walk (folded).
fn decisions_section(out: &mut String, r: &Report) {
    let _ = writeln!(out, "### How the tool decided\n");
    if r.answers.is_empty() {
        let _ = writeln!(out, "Answers given by the user: none.\n");
    } else {
        let _ = writeln!(out, "Answers given by the user:\n");
        for (node, a) in &r.answers {
            let _ = writeln!(out, "- {}: {}", question(r, node), answer_str(*a));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "<details>\n<summary>Each class's walk: the questions, the answers and the facts used ({} walks)</summary>\n",
        r.walks.len()
    );
    for w in &r.walks {
        walk(out, r, w);
    }
    let _ = writeln!(out, "</details>\n");
}

/// One class's walk: where it ended, and a table of its steps.
fn walk(out: &mut String, r: &Report, w: &super::model::ReportWalk) {
    let end = match &w.outcome {
        ReportOutcome::Concluded { conclusion } => r
            .findings
            .iter()
            .find(|f| &f.id == conclusion && f.class == w.class)
            .map_or_else(|| "concluded".to_string(), |f| f.title.clone()),
        ReportOutcome::NeedsAnswer { node, .. } => {
            format!("waiting for an answer: {}", question(r, node))
        }
    };
    let _ = writeln!(out, "**{}** → {end}\n", w.class);
    if w.steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "| Question | Answer | By | Facts used |");
    let _ = writeln!(out, "|---|---|---|---|");
    for s in &w.steps {
        let mut facts: Vec<String> = s
            .facts
            .iter()
            .map(|f| {
                let assumed = if f.assumed { ", assumed" } else { "" };
                format!("{} = {} ({}{assumed})", code(&f.name), f.value, f.source)
            })
            .collect();
        if let Some(t) = s.typed_answer.as_ref().filter(|t| t.contradicted) {
            facts.push(format!("your answer set aside: {}", t.note));
        }
        let by = match (s.by.as_str(), s.basis) {
            ("auto", Basis::Measured) => "tool (measured)",
            ("auto", Basis::Answered) => "tool (from answers)",
            ("auto", Basis::Assumed) => "tool (assumed)",
            _ => "user",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            cell(&s.question),
            answer_str(s.answer),
            by,
            cell(&facts.join("; "))
        );
    }
    let _ = writeln!(out);
}

/// What the logs point at, and when none matched, which logs were read.
fn logs_note(out: &mut String, r: &Report) {
    if r.log_matches.is_empty() && r.logs.is_empty() {
        return;
    }
    let names: Vec<String> = r.logs.iter().map(|l| code(&l.name)).collect();
    for c in &r.log_classes {
        let note = if c.note.is_empty() {
            String::new()
        } else {
            format!(" — {}", cell(&c.note))
        };
        let _ = writeln!(
            out,
            "- the log points at {} ({}){note}",
            code(&c.class),
            c.confidence
        );
    }
    if !r.log_classes.is_empty() {
        let _ = writeln!(out);
    }
    if r.log_matches.is_empty() {
        let _ = writeln!(
            out,
            "Logs given: {}. No known failure signature matched.\n",
            names.join(", ")
        );
    }
}

/// The full host (folded, for vLLM's "Your current environment"), then what was checked by
/// signature only, the redaction line and the tool's version.
fn environment_section(out: &mut String, r: &Report) {
    let snap = &r.snapshot;
    let _ = writeln!(out, "### Your current environment\n");
    let _ = writeln!(
        out,
        "<details>\n<summary>The host as sm120-doctor saw it (from {})</summary>\n",
        snap.origin
    );
    out.push_str(&fence(&host::text_block(snap, r.env_not_listed), "text"));
    let _ = writeln!(out, "\n</details>\n");

    if !r.signature_only_classes.is_empty() {
        let _ = writeln!(
            out,
            "Classes checked by log signature only (no decision tree yet): {}.\n",
            r.signature_only_classes.join(", ")
        );
    }
    let _ = writeln!(out, "{}\n", redaction_line(r));
    let _ = writeln!(
        out,
        "<sub>{} {} · report schema {} · mode {}</sub>",
        r.tool.name, r.tool.version, r.schema_version, r.mode
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_outgrows_backticks_inside() {
        assert_eq!(fence("a", "text"), "```text\na\n```\n");
        assert_eq!(fence("x ```` y", ""), "`````\nx ```` y\n`````\n");
    }

    #[test]
    fn cells_and_code_escape() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(code("a`b"), "`` a`b ``");
    }
}
