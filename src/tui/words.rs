//! Plain words for what a person reads in the TUI: facts by their meaning instead of their
//! names, walks by their class title or checklist item, and the inputs the engine asks for by
//! the keys that give them here instead of command-line options. Node and signature ids show
//! only with the details toggle (`D`) and in the exported JSON.
//!
//! The engine and the collectors name a missing input by the command-line option that gives
//! it ("no log given (--log FILE)"). The TUI rewrites those phrases, one per input (never per
//! node), to the keys that give the same input here: [`tui_words`].

use super::state::Pane;
use crate::engine::classify::Classification;
use crate::engine::{UsedFact, Walk};
use crate::kb::KnowledgeBase;
use crate::kb::schema::ClassKind;
use crate::snapshot::{NO_LAUNCH, P2P_PROBE_NOT_RUN, PROBE_NOT_RUN};

/// The phrases that name a command-line input, and how the TUI gives that input; `live`: the
/// host is this machine, where the probes run.
fn replacements(live: bool) -> [(&'static str, String); 8] {
    let log = Pane::Log.key();
    let remedy = Pane::Remedy.key();
    let (ipc, p2p) = if live {
        ("p runs it here".to_string(), "P runs it here".to_string())
    } else {
        (
            "it measures a live host: run `sm120-doctor probe ipc` there".to_string(),
            "it measures a live host: run `sm120-doctor probe p2p` there".to_string(),
        )
    };
    [
        (
            NO_LAUNCH,
            format!("no launch command yet ({remedy}, then i: type or paste yours)"),
        ),
        (
            "(--launch or --launch-file)",
            format!("({remedy}, then i: type or paste your launch command)"),
        ),
        (
            crate::engine::NO_LOG,
            format!("no log yet (paste one anywhere, or {log}, then o: open a file)"),
        ),
        (
            "(--log FILE)",
            format!("(paste a log anywhere, or {log}, then o: open a file)"),
        ),
        (
            PROBE_NOT_RUN,
            format!("the allocator/IPC probe has not run ({ipc})"),
        ),
        (
            P2P_PROBE_NOT_RUN,
            format!("the P2P probe has not run ({p2p})"),
        ),
        (
            "Run `sm120-doctor probe ipc`",
            if live {
                "Press p to run the probe here".to_string()
            } else {
                "On the host, run `sm120-doctor probe ipc`".to_string()
            },
        ),
        (
            "Run `sm120-doctor probe p2p`",
            if live {
                "Press P to run the P2P probe here".to_string()
            } else {
                "On the host, run `sm120-doctor probe p2p`".to_string()
            },
        ),
    ]
}

/// `text` with every command-line input named by the TUI key that gives it.
pub fn tui_words(live: bool, text: &str) -> String {
    if !text.contains("--launch") && !text.contains("--log") && !text.contains("sm120-doctor probe")
    {
        return text.to_string();
    }
    let mut out = text.to_string();
    for (from, to) in replacements(live) {
        if out.contains(from) {
            out = out.replace(from, &to);
        }
    }
    out
}

/// What a fact means, from its declaration (`kb facts`): `env.X` is the variable X,
/// `launch.flag.X` the launch's --X.
pub fn fact_meaning(name: &str) -> String {
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
pub fn fact_line(c: &Classification, f: &UsedFact, live: bool, details: bool) -> String {
    let value = tui_words(live, &f.value);
    let source = tui_words(live, &f.source);
    let assumed = if f.assumed { " (assumed)" } else { "" };
    if details {
        let from = if source.is_empty() {
            String::new()
        } else {
            format!("  ← {source}{assumed}")
        };
        return format!("{} = {value}{from}", f.name);
    }
    if let Some(sig) = f
        .name
        .strip_prefix("log(")
        .and_then(|s| s.strip_suffix(')'))
    {
        return match f.value.as_str() {
            "yes" => {
                let m = c.matches.iter().find(|m| m.signature == sig);
                match m {
                    Some(m) => format!(
                        "the log shows it at {} line {}: {}",
                        log_name(&m.file),
                        m.line,
                        m.text.trim()
                    ),
                    None => format!("the log shows it ({source})"),
                }
            }
            "no" => format!("not seen in {source}"),
            _ => value
                .strip_prefix("unknown (")
                .and_then(|v| v.strip_suffix(')'))
                .map_or(value.clone(), str::to_string),
        };
    }
    let from = if source.is_empty() {
        String::new()
    } else {
        format!("  ← {source}{assumed}")
    };
    format!("{}: {value}{from}", fact_meaning(&f.name))
}

/// How a log's name reads: the pasted one is "the pasted log".
pub fn log_name(name: &str) -> String {
    if name == crate::engine::PASTED_LOG {
        "the pasted log".into()
    } else {
        name.to_string()
    }
}

/// A node's question, for status lines ("answered “…”: yes").
pub fn question_of(kb: &KnowledgeBase, node: &str) -> String {
    kb.find_node(node)
        .map(|(_, n)| n.question.clone())
        .unwrap_or_else(|| node.to_string())
}

/// Does the walk belong to a checklist class (by the class's kind in the knowledge base)?
pub fn is_checklist(kb: &KnowledgeBase, w: &Walk) -> bool {
    kb.class(&w.class)
        .is_some_and(|c| c.def.kind == ClassKind::Checklist)
}

/// The class title of a walk; a checklist walk reads "item 3 of 9: <item> · <checklist>" (the
/// item first: it is what a narrow screen keeps).
pub fn walk_title(kb: &KnowledgeBase, walks: &[Walk], w: &Walk) -> String {
    let Some(class) = kb.class(&w.class) else {
        return w.class.clone();
    };
    if !is_checklist(kb, w) {
        return class.def.title.clone();
    }
    format!("{} · {}", item_label(kb, walks, w), class.def.title)
}

/// "item 3 of 9: CUDA driver version" for a checklist walk (one of `walks`).
pub fn item_label(kb: &KnowledgeBase, walks: &[Walk], w: &Walk) -> String {
    let items: Vec<&Walk> = walks.iter().filter(|x| x.class == w.class).collect();
    let k = items.iter().position(|x| x.start == w.start).unwrap_or(0) + 1;
    let title = kb
        .class(&w.class)
        .and_then(|c| c.node(&w.start))
        .map(|n| n.title.clone().unwrap_or_else(|| n.question.clone()))
        .unwrap_or_else(|| w.start.clone());
    format!("item {k} of {}: {title}", items.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Mode;
    use crate::tui::app::App;

    #[test]
    fn command_line_inputs_are_named_by_their_tui_keys() {
        let t = tui_words(
            false,
            "not automatic: skipped: no launch command given (--launch or --launch-file)",
        );
        assert_eq!(
            t,
            "not automatic: skipped: no launch command yet (4, then i: type or paste yours)"
        );
        let t = tui_words(false, "unknown (no log given (--log FILE))");
        assert!(t.contains("paste one anywhere, or 3, then o"), "{t}");
        // The demo is not the live host: the probes run elsewhere.
        let t = tui_words(false, PROBE_NOT_RUN);
        assert!(t.contains("run `sm120-doctor probe ipc` there"), "{t}");
        assert_eq!(tui_words(false, "plain words"), "plain words");
        assert!(tui_words(true, PROBE_NOT_RUN).contains("p runs it here"));
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
        app.update(super::super::action::Action::StartOnboarding);
        let w = app.current_walk().expect("walk");
        assert!(app.is_checklist(w));
        let walks = &app.diagnosis.walks;
        assert_eq!(
            item_label(&app.kb, walks, w),
            "item 1 of 9: SM120 detected by compute capability"
        );
        assert_eq!(
            walk_title(&app.kb, walks, w),
            "item 1 of 9: SM120 detected by compute capability · Onboarding checklist for a new Blackwell SM120 workstation"
        );
    }
}
