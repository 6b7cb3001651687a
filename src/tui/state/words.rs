//! Plain words for what a person reads in the TUI: facts by their meaning instead of their
//! names, walks by their class title or checklist item, and the inputs the engine asks for by
//! the keys that give them here instead of command-line options. Node and signature ids show
//! only with the details toggle (`D`) and in the exported JSON.
//!
//! The engine and the collectors name a missing input by its kind ([`Input`]); the TUI says it
//! by the keys that give the same input here ([`reason`]), where the command line names its
//! options.

use crate::engine::classify::Classification;
use crate::engine::{UsedFact, Walk};
use crate::kb::KnowledgeBase;
use crate::kb::schema::ClassKind;
use crate::tui::state::Pane;
use crate::value::{Input, Reason, Value};

/// A finding's claim and match in plain words, for someone who has not read the schema:
/// "known cause · from your log", "likely, cause not confirmed · from your host and launch", "… · from
/// your answers (2)". "CONFIRMED upstream · matched: measured" read as something about vLLM's
/// upstream; the ids stay in the details view (`D`) and in the reports.
pub fn claim(f: &crate::engine::Finding, details: bool) -> String {
    use crate::engine::Basis;
    use crate::kb::schema::Confidence;
    if details {
        return crate::report::check::confidences(f);
    }
    let claim = match f.confidence {
        Confidence::Confirmed => "known cause",
        Confidence::Suspected => "likely, cause not confirmed",
    };
    let from = match f.matched {
        Basis::Measured if !f.log_lines.is_empty() => "from your log".to_string(),
        Basis::Measured => "from your host and launch".to_string(),
        Basis::Answered => format!("from your answers ({})", f.answered.len()),
        Basis::Assumed if f.assumptions.is_empty() => "assumed, not measured".to_string(),
        Basis::Assumed => format!("assumed, not measured ({})", f.assumptions.join("; ")),
    };
    format!("{claim} · {from}")
}

/// How the TUI says that `input` was not given: by the keys that give it here. `live`: the
/// host is this machine, where the probes run.
pub fn missing_input(live: bool, input: Input) -> String {
    let log = Pane::Log.key();
    let remedy = Pane::Remedy.key();
    let elsewhere =
        |what: &str| format!("it measures a live host: run `sm120-doctor probe {what}` there");
    match input {
        Input::Log => format!("no log yet (paste one anywhere, or {log}, then o: open a file)"),
        Input::Launch => format!("no launch command yet ({remedy}, then i: type or paste yours)"),
        Input::IpcProbe if live => "the allocator/IPC probe has not run (p runs it here)".into(),
        Input::IpcProbe => format!("the allocator/IPC probe has not run ({})", elsewhere("ipc")),
        Input::P2pProbe if live => "the P2P probe has not run (P runs it here)".into(),
        Input::P2pProbe => format!("the P2P probe has not run ({})", elsewhere("p2p")),
        Input::PciFabric => "the PCI fabric (IOMMU/ACS) was not read".into(),
    }
}

/// How the TUI gives `input`: the keys, or where to run a probe that measures another host.
pub(crate) fn how_to_give(live: bool, input: Input) -> String {
    let log = Pane::Log.key();
    let remedy = Pane::Remedy.key();
    match input {
        Input::Log => format!("a log (paste one anywhere, or {log}, then o: open a file)"),
        Input::Launch => format!("the launch ({remedy}, then i: type or paste yours)"),
        Input::IpcProbe if live => "the allocator/IPC probe here (p)".into(),
        Input::P2pProbe if live => "the P2P probe here (P)".into(),
        other => format!("{} on the host", other.cli_how()),
    }
}

/// Knowledge-base prose with each `{input:NAME}` said the TUI's way.
pub(crate) fn prose(live: bool, text: &str) -> String {
    crate::value::fill_inputs(text, |i| how_to_give(live, i))
}

/// A reason in the TUI's words: a missing input by the keys that give it, anything else in
/// the producer's words.
pub fn reason(live: bool, r: &Reason) -> String {
    r.render_with(|r| match r.missing_input() {
        Some(i) => missing_input(live, i),
        None => r.own_words(),
    })
}

/// A value as the TUI shows it: an unknown one with its reason in the TUI's words.
pub fn value(live: bool, v: &Value) -> String {
    match v {
        Value::Unknown(r) => format!("unknown ({})", reason(live, r)),
        other => other.to_string(),
    }
}

/// What a fact means, from its declaration (`kb facts`): `env.X` is the variable X,
/// `launch.flag.X` the launch's --X.
pub(crate) fn fact_meaning(name: &str) -> String {
    if let Some(v) = name.strip_prefix("env.") {
        return format!("{v} in the engine's environment");
    }
    if let Some(f) = name.strip_prefix("launch.flag.") {
        return format!("--{f} in the launch");
    }
    crate::facts::catalogue()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, about)| about.to_string())
        .unwrap_or_else(|| name.to_string())
}

/// One fact a step used, in words: "the log shows it at pasted line 5: …", or "<meaning>:
/// <value>  ← <source>". With `details`, the fact's name as the knowledge base writes it.
pub(crate) fn fact_line(c: &Classification, f: &UsedFact, live: bool, details: bool) -> String {
    let shown = value(live, &f.value);
    let assumed = if f.assumed { " (assumed)" } else { "" };
    let from = if f.source.is_empty() {
        String::new()
    } else {
        format!("  ← {}{assumed}", f.source)
    };
    if details {
        return format!("{} = {shown}{from}", f.name);
    }
    if let Some(sig) = f
        .name
        .strip_prefix("log(")
        .and_then(|s| s.strip_suffix(')'))
    {
        return match &f.value {
            Value::Bool(true) => match c.matches.iter().find(|m| m.signature == sig) {
                Some(m) => format!(
                    "the log shows it at {} line {}: {}",
                    log_name(&m.file),
                    m.line,
                    m.text.trim()
                ),
                None => format!("the log shows it ({})", f.source),
            },
            Value::Bool(false) => format!("not seen in {}", f.source),
            Value::Unknown(r) => reason(live, r),
            other => other.to_string(),
        };
    }
    format!("{}: {shown}{from}", fact_meaning(&f.name))
}

/// How a log's name reads: the pasted one is "the pasted log".
pub(crate) fn log_name(name: &str) -> String {
    if name == crate::engine::PASTED_LOG {
        "the pasted log".into()
    } else {
        name.to_string()
    }
}

/// A node's question, for status lines ("answered “…”: yes").
pub(crate) fn question_of(kb: &KnowledgeBase, node: &str) -> String {
    kb.find_node(node)
        .map(|(_, n)| n.question.clone())
        .unwrap_or_else(|| node.to_string())
}

/// Does the walk belong to a checklist class (by the class's kind in the knowledge base)?
pub(crate) fn is_checklist(kb: &KnowledgeBase, w: &Walk) -> bool {
    kb.class(&w.class)
        .is_some_and(|c| c.def.kind == ClassKind::Checklist)
}

/// The class title of a walk; a checklist walk reads "item 3 of 9: <item> · <checklist>" (the
/// item first: it is what a narrow screen keeps).
pub(crate) fn walk_title(kb: &KnowledgeBase, walks: &[Walk], w: &Walk) -> String {
    let Some(class) = kb.class(&w.class) else {
        return w.class.clone();
    };
    if !is_checklist(kb, w) {
        return class.def.title.clone();
    }
    format!("{} · {}", item_label(kb, walks, w), class.def.title)
}

/// "item 3 of 9: CUDA driver version" for a checklist walk (one of `walks`).
pub(crate) fn item_label(kb: &KnowledgeBase, walks: &[Walk], w: &Walk) -> String {
    let items: Vec<&Walk> = walks.iter().filter(|x| x.class == w.class).collect();
    let k = items.iter().position(|x| x.start == w.start).unwrap_or(0) + 1;
    let title = kb
        .class(&w.class)
        .and_then(|c| c.node(&w.start))
        .map(|n| n.title.clone().unwrap_or_else(|| n.question.clone()))
        .unwrap_or_else(|| w.start.clone());
    format!("item {k} of {}: {title}", items.len())
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Mode;
    use crate::tui::state::app::App;

    #[test]
    fn missing_inputs_are_named_by_their_tui_keys() {
        let launch = Reason::missing(Input::Launch).within("skipped");
        assert_eq!(
            reason(false, &launch),
            "skipped: no launch command yet (4, then i: type or paste yours)"
        );
        let log = Value::Unknown(Reason::missing(Input::Log));
        assert!(value(false, &log).contains("paste one anywhere, or 3, then o"));
        // The demo is not the live host: the probes run elsewhere.
        let ipc = Reason::missing(Input::IpcProbe);
        assert!(reason(false, &ipc).contains("run `sm120-doctor probe ipc` there"));
        assert!(reason(true, &ipc).contains("p runs it here"));
        // Anything else keeps the producer's words.
        assert_eq!(reason(true, &Reason::from("plain words")), "plain words");
    }

    #[test]
    fn knowledge_base_hints_name_inputs_by_known_placeholders() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let hints: Vec<&str> = kb
            .classes
            .iter()
            .flat_map(|c| c.def.nodes.iter())
            .filter_map(|n| n.ask.as_ref().map(|a| a.hint.as_str()))
            .collect();
        let named: Vec<&str> = hints
            .iter()
            .copied()
            .filter(|h| h.contains(crate::value::INPUT_PLACEHOLDER))
            .collect();
        assert!(!named.is_empty(), "the probe hints name their input");
        for h in &hints {
            assert!(crate::value::unknown_inputs(h).is_empty(), "{h}");
        }
        // Filled, no placeholder is left; a probe is named by its key on the live host and
        // run on the host otherwise.
        for h in named {
            let live = prose(true, h);
            assert!(!live.contains("{input:"), "{live}");
            if h.contains("_probe}") {
                assert!(live.contains("(p)") || live.contains("(P)"), "{live}");
                assert!(prose(false, h).contains("on the host"), "{h}");
            }
        }
    }

    #[test]
    fn facts_read_as_their_meaning_and_log_lines_as_the_line() {
        let app = App::demo();
        let w = app.current_walk().expect("walk");
        let facts: Vec<&UsedFact> = w
            .steps
            .iter()
            .filter_map(|s| match &s.by {
                crate::engine::AnsweredBy::Auto { facts } => Some(facts),
                _ => None,
            })
            .flatten()
            .collect();
        let c = &app.diagnosis.classification;
        let lines: Vec<String> = facts
            .iter()
            .map(|f| fact_line(c, f, false, false))
            .collect();
        assert!(
            lines.iter().any(|l| l.starts_with(
                "the log shows it at demo:seed_crash.log line 5: (Worker_TP1 pid=2951) Failed"
            )),
            "{lines:?}"
        );
        assert!(lines.iter().all(|l| !l.contains("log(")), "{lines:?}");
        let raw: Vec<String> = facts.iter().map(|f| fact_line(c, f, false, true)).collect();
        assert!(
            raw.iter()
                .any(|l| l.starts_with("log(car_invalid_argument) = yes")),
            "{raw:?}"
        );
    }

    #[test]
    fn checklist_items_read_by_title_and_number() {
        let mut app = App::demo();
        app.mode = Mode::All;
        app.update(crate::tui::state::action::Action::StartOnboarding);
        assert!(app.current_walk().is_some_and(|w| app.is_checklist(w)));
        let walks = &app.diagnosis.walks;
        let w = walks.iter().find(|w| app.is_checklist(w)).expect("item 1");
        assert_eq!(
            item_label(&app.kb, walks, w),
            "item 1 of 9: SM120 detected by compute capability"
        );
        assert_eq!(
            walk_title(&app.kb, walks, w),
            "item 1 of 9: SM120 detected by compute capability · Onboarding checklist for a new Blackwell SM120 workstation"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(thousands(30000), "30,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
