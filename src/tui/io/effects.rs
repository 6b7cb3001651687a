//! The one place side effects happen: writing files, reading logs, reading the live host,
//! starting the refresher, the allocator/IPC probe and the P2P probe. Files go through the one writer ([`crate::write`]: atomic, no
//! clobbering); an existing file comes back as [`act::Outcome::AskOverwrite`] so the user is asked first.

use crate::engine::classify::LogText;
use crate::engine::plan::Choices;
use crate::kb::schema::Severity;
use crate::report::{self, RedactOptions, ReportInput};
use crate::tui::io::event::Event;
use crate::tui::io::live;
use crate::tui::state::ExportFormat;
use crate::tui::state::action::{self as act, Action, Effect};
use crate::tui::state::app::App;
use crate::write::{self, Kind, WriteError};
use std::io::Write;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What effects need from the running program.
pub struct EffectCtx {
    /// Where background sources send events; `None` in tests (no threads are started).
    pub events: Option<Sender<Event>>,
    /// Refresh period of the live panel.
    pub period: Duration,
    /// Reads the live host (tests give a fake one).
    pub collector: live::Collector,
    /// Where OSC 52 clipboard sequences go: the terminal, or memory in tests.
    pub clipboard: Clipboard,
}

/// Where `c` sends the clipboard sequence.
#[derive(Clone)]
pub enum Clipboard {
    /// The terminal (stdout), after checking it will not be ignored.
    Terminal,
    /// A buffer (tests), no checks.
    Memory(Arc<Mutex<Vec<u8>>>),
}

impl EffectCtx {
    /// No event loop: effects that need one run in place or say they cannot; the real collector.
    pub fn headless() -> EffectCtx {
        EffectCtx {
            events: None,
            period: Duration::from_secs(1),
            collector: live::collector(crate::input::LivePython::Collect),
            clipboard: Clipboard::Memory(Arc::default()),
        }
    }
}

/// Send `text` to the clipboard; the notice for the status line.
fn copy(clipboard: &Clipboard, text: &str, what: &str) -> Action {
    let seq = crate::tui::io::clipboard::osc52(text);
    match clipboard {
        Clipboard::Memory(buf) => match buf.lock() {
            Ok(mut b) => {
                b.extend_from_slice(seq.as_bytes());
                Action::Outcome(act::Outcome::Copied(format!(
                    "copied {what} to the clipboard (OSC 52)"
                )))
            }
            Err(_) => Action::Failed("clipboard buffer poisoned".into()),
        },
        Clipboard::Terminal => {
            let var = |k: &str| std::env::var(k).ok();
            if let Some(why) = crate::tui::io::clipboard::refusal(
                &var,
                &crate::tui::io::clipboard::tmux_set_clipboard,
            ) {
                return Action::Failed(format!(
                    "not copied: {why}; w writes {what} to a file instead"
                ));
            }
            let mut out = std::io::stdout();
            match out.write_all(seq.as_bytes()).and_then(|_| out.flush()) {
                Ok(()) => Action::Outcome(act::Outcome::Copied(format!(
                    "copied {what} to the clipboard (OSC 52; if your terminal ignores it, w writes it to a file)"
                ))),
                Err(e) => Action::Failed(format!("not copied: {e}; w writes {what} to a file")),
            }
        }
    }
}

/// The user's picks the report should take: per finding, for findings above ok that offer the
/// pick (the report refuses ids no such finding offers).
pub(crate) fn report_choices(app: &App) -> Choices {
    let mut choices = Choices::default();
    for (finding, id) in &app.choices.per_finding {
        let offered = app
            .diagnosis
            .findings
            .iter()
            .filter(|f| f.severity > Severity::Ok && &f.id == finding)
            .any(|f| f.remedies.iter().any(|r| &r.id == id));
        if offered {
            choices.per_finding.insert(finding.clone(), id.clone());
        }
    }
    choices
}

/// The exported document: the redacted report in `format`.
pub fn export_text(app: &App, format: ExportFormat) -> Result<String, String> {
    let logs = app.logs();
    let choices = report_choices(app);
    let input = ReportInput {
        kb: &app.kb,
        snapshot: &app.snapshot,
        answers: &app.answers,
        logs,
        mode: app.mode,
        diagnosis: &app.diagnosis,
        choices: &choices,
        launch_source: None,
    };
    let model = report::prepare(&input, Some(RedactOptions::default()))?;
    Ok(report::render(&model, format.report_format()))
}

fn done(path: &std::path::Path, what: &str) -> Action {
    Action::Outcome(act::Outcome::Done(format!(
        "wrote {what} to {}",
        path.display()
    )))
}

/// Perform one effect; the returned actions go back into `App::update`.
pub fn perform(effect: Effect, app: &App, ctx: &EffectCtx) -> Vec<Action> {
    match effect {
        Effect::Export {
            format,
            ref path,
            overwrite,
        } => {
            let text = match export_text(app, format) {
                Ok(t) => t,
                Err(e) => return vec![Action::Failed(format!("cannot build the report: {e}"))],
            };
            let what = format!("the {} report", format.name());
            vec![
                match write::write(path, text.as_bytes(), Kind::Data, overwrite) {
                    Ok(w) => Action::Outcome(act::Outcome::Exported(format!(
                        "wrote {what} to {}",
                        w.path.display()
                    ))),
                    Err(WriteError::Exists(_)) => {
                        Action::Outcome(act::Outcome::AskOverwrite(effect))
                    }
                    Err(e) => Action::Failed(e.to_string()),
                },
            ]
        }
        Effect::WriteLaunch {
            ref path,
            ref text,
            what,
            overwrite,
        } => {
            vec![
                match write::write(path, text.as_bytes(), what.kind(), overwrite) {
                    Ok(w) => done(&w.path, what.label()),
                    Err(WriteError::Exists(_)) => {
                        Action::Outcome(act::Outcome::AskOverwrite(effect))
                    }
                    Err(e) => Action::Failed(e.to_string()),
                },
            ]
        }
        Effect::LoadLog { path } => {
            match crate::read::read_log(&path, crate::read::LOG, crate::read::Stdin::Refused) {
                Ok(text) => vec![Action::Outcome(act::Outcome::LogLoaded(LogText {
                    name: path.display().to_string(),
                    text,
                }))],
                Err(e) => vec![Action::Failed(e.to_string())],
            }
        }
        Effect::CollectHost => match &ctx.events {
            Some(tx) => {
                (ctx.collector)(tx.clone());
                Vec::new()
            }
            None => {
                // No event loop: wait here for every part, in the order they arrive.
                let (tx, rx) = mpsc::channel();
                (ctx.collector)(tx);
                rx.iter()
                    .filter_map(|ev| match ev {
                        Event::Host(s) => Some(Action::Arrival(act::Arrival::Host(s))),
                        Event::Python(p) => Some(Action::Arrival(act::Arrival::Python(p))),
                        _ => None,
                    })
                    .collect()
            }
        },
        Effect::StartRefresher => match &ctx.events {
            Some(tx) => {
                let (label, poll) = live::poll_for(&app.snapshot);
                live::start(ctx.period, poll, tx.clone());
                vec![Action::Arrival(act::Arrival::LiveSource(label))]
            }
            None => Vec::new(),
        },
        Effect::RunProbe { conf, source } => match &ctx.events {
            Some(tx) => {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let result = crate::probe::run_ipc(&probe_options(), conf, source);
                    let _ = tx.send(Event::Probe(Box::new(result)));
                });
                Vec::new()
            }
            None => vec![Action::Failed(
                "the probe runs only in the interactive program".into(),
            )],
        },
        Effect::Copy { text, what } => vec![copy(&ctx.clipboard, &text, &what)],
        Effect::RunP2pProbe { tp } => match &ctx.events {
            Some(tx) => {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let result = crate::probe::p2p::run(&crate::probe::p2p::P2pOptions::for_tp(tp));
                    let _ = tx.send(Event::P2pProbe(Box::new(result)));
                });
                Vec::new()
            }
            None => vec![Action::Failed(
                "the probe runs only in the interactive program".into(),
            )],
        },
    }
}

/// The probe as `sm120-doctor probe ipc` runs it: native path and the user's Python (the active
/// venv / conda env, else python3).
fn probe_options() -> crate::probe::ProbeOptions {
    let (python, _why) =
        crate::collect::python::find_interpreter(None, &|n| std::env::var(n).ok(), &|p| p.exists());
    crate::probe::ProbeOptions {
        python: Some(python),
        native: true,
        torch_timeout: Duration::from_secs(30),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::action::Action;

    fn ctx() -> EffectCtx {
        EffectCtx::headless()
    }

    #[test]
    fn export_writes_the_markdown_report_and_never_clobbers() {
        let mut app = App::demo();
        app.update(Action::PickRemedy);
        let choices = report_choices(&app);
        assert_eq!(
            choices.per_finding.get("allocator_ipc").map(String::as_str),
            Some("drop_expandable_segments")
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.md");
        let e = Effect::Export {
            format: ExportFormat::Markdown,
            path: p.clone(),
            overwrite: false,
        };
        let got = perform(e.clone(), &app, &ctx());
        assert!(
            matches!(&got[..], [Action::Outcome(act::Outcome::Exported(m))] if m.contains("Markdown report")),
            "{got:?}"
        );
        let text = std::fs::read_to_string(&p).expect("read");
        assert!(text.starts_with("## sm120-doctor report"), "{text}");
        std::fs::write(&p, "mine").expect("write");
        let got = perform(e, &app, &ctx());
        assert!(
            matches!(&got[..], [Action::Outcome(act::Outcome::AskOverwrite(_))]),
            "{got:?}"
        );
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "mine");
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn probe_without_an_event_loop_says_so() {
        let app = App::demo();
        let got = perform(
            Effect::RunProbe {
                conf: None,
                source: "x".into(),
            },
            &app,
            &ctx(),
        );
        assert!(matches!(&got[..], [Action::Failed(m)] if m.contains("interactive")));
    }
}
