//! The `log.run.*` facts: what the log reader's run signs (see [`super::classify::run_signs`])
//! show, as facts a KB check or evidence line may name. Filled in after the classifier ran, so
//! "no failure class named" can be part of a fact (`log.run.unrecognized_failure`).

use super::classify::run_signs::{
    FailureKind, FailureLine, Hang, HangKind, Milestone, Phase, RunSigns,
};
use super::classify::{Classification, LogMatch, MatchConfidence};
use crate::facts::{Fact, Facts};
use crate::kb::KnowledgeBase;
use crate::kb::schema::{ClassKind, SignatureKind};
use crate::value::Value;

/// The fact name of a milestone reached.
fn reached_fact(m: Milestone) -> &'static str {
    match m {
        Milestone::WeightsLoaded => "log.run.reached.weights_loaded",
        Milestone::GraphCaptureDone => "log.run.reached.graph_capture_done",
        Milestone::WarmupDone => "log.run.reached.warmup_done",
        Milestone::StartupComplete => "log.run.reached.startup_complete",
        Milestone::RequestServed => "log.run.reached.request_served",
    }
}

const MILESTONES: [Milestone; 5] = [
    Milestone::WeightsLoaded,
    Milestone::GraphCaptureDone,
    Milestone::WarmupDone,
    Milestone::StartupComplete,
    Milestone::RequestServed,
];

/// A phase in words, for evidence ("the log stops during graph capture").
pub(crate) fn phase_words(p: Phase) -> &'static str {
    match p {
        Phase::Start => "starting (arguments and configuration)",
        Phase::CommInit => "process-group / NCCL communicator set-up",
        Phase::Load => "loading the model",
        Phase::Compile => "compilation",
        Phase::Profile => "memory profiling",
        Phase::GraphCapture => "graph capture",
        Phase::Warmup => "warmup",
        Phase::Serving => "serving",
    }
}

/// What shows a hang, in words ("3 stall warning(s) follow").
pub(crate) fn hang_words(h: &Hang) -> String {
    match h.kind {
        HangKind::StallWarnings => format!("{} stall warning(s) follow", h.stall_count),
        HangKind::Interrupted => match h.interrupt_line {
            Some(l) => format!(
                "then the run was interrupted at line {l} (SIGINT/Ctrl-C or SIGTERM) before start-up completed: it was given up on while it stood still"
            ),
            None => "then the run was interrupted before start-up completed".into(),
        },
        HangKind::EndsInStartup if h.phase == Some(Phase::CommInit) => {
            "the log ends there, inside communicator set-up, where every rank waits for its peers (unless the log was only cut there: then give the whole log)"
                .into()
        }
        HangKind::EndsInStartup => {
            "the log ends there, before start-up completed (unless the log was only cut there: then give the whole log)"
                .into()
        }
    }
}

/// The log shows the run came up: the API server's start-up completed, a request was served,
/// or it printed serving or generation progress. Without one of these, a log with no failure
/// and no hang does not show the run worked (it may be cut, or another program's output).
pub(crate) fn came_up(run: &RunSigns) -> bool {
    run.reached(Milestone::StartupComplete).is_some()
        || run.reached(Milestone::RequestServed).is_some()
        || run.last_phase == Some(Phase::Serving)
}

/// A failure class of the knowledge base named at SUSPECTED or above.
pub(crate) fn class_named(kb: &KnowledgeBase, c: &Classification) -> bool {
    c.confidence.iter().any(|(class, conf)| {
        *conf >= MatchConfidence::Suspected
            && kb
                .class(class)
                .is_some_and(|k| k.def.kind == ClassKind::Failure)
    })
}

/// The failure to quote first: among the lines no class explains (else all of them), the first
/// that names what failed (an exception, assertion, CUDA or NCCL error, an abort) and does not
/// only follow from another failure; a bare `ERROR` line such as vLLM's "EngineCore failed to
/// start." is printed before the traceback that says why, so it comes after those.
pub(crate) fn first_error(run: &RunSigns) -> Option<&FailureLine> {
    let pool: Vec<&FailureLine> = if run.unexplained().next().is_some() {
        run.unexplained().collect()
    } else {
        run.failures.iter().collect()
    };
    pool.iter()
        .find(|f| !f.consequence && f.kind != FailureKind::ErrorLine)
        .or_else(|| pool.iter().find(|f| !f.consequence))
        .or(pool.first())
        .copied()
}

/// Set every `log.run.*` fact from the run signs. With no log given the facts keep their
/// "nothing seen" values.
pub fn apply(facts: &mut Facts, kb: &KnowledgeBase, c: &Classification, logs: &[String]) {
    if logs.is_empty() {
        return;
    }
    let run = &c.run;
    let searched = logs.join(", ");
    let flag = |b: bool| Fact::new(Value::Bool(b), searched.clone());
    let named = class_named(kb, c);
    let unexplained = run.unexplained().next().is_some();
    facts.set("log.run.failure", flag(!run.failures.is_empty()));
    facts.set("log.run.hang", flag(run.hang.is_some()));
    facts.set("log.run.unrecognized_failure", flag(unexplained && !named));
    facts.set(
        "log.run.unrecognized_hang",
        flag(run.hang.is_some() && !named),
    );
    let came_up = came_up(run);
    facts.set("log.run.came_up", flag(came_up));
    facts.set(
        "log.run.no_outcome",
        flag(!came_up && !named && run.failures.is_empty() && run.hang.is_none()),
    );
    for m in MILESTONES {
        let f = match run.reached(m) {
            Some(l) => Fact::new(Value::Bool(true), format!("{}:{}", l.file, l.line)),
            None => flag(false),
        };
        facts.set(reached_fact(m), f);
    }
    let none = |what: &str| Fact::unknown(format!("the given logs show no {what}"));
    match first_error(run) {
        Some(e) => {
            let at = format!("{}:{}", e.file, e.line);
            facts.set(
                "log.run.first_error.file",
                Fact::new(Value::Str(e.file.clone()), at.clone()),
            );
            facts.set(
                "log.run.first_error.line",
                Fact::new(Value::Num(e.line as f64), at.clone()),
            );
            // A cut traceback is quoted by its last frame: say that the exception is missing.
            let text = match e.kind {
                FailureKind::TracebackCut => format!(
                    "{} (the log stops in this traceback, before the exception that ends it)",
                    e.text
                ),
                _ => e.text.clone(),
            };
            facts.set(
                "log.run.first_error.text",
                Fact::new(Value::Str(text), at.clone()),
            );
            let frames = if e.frames.is_empty() {
                "none shown".to_string()
            } else {
                e.frames.join(" → ")
            };
            facts.set("log.run.frames", Fact::new(Value::Str(frames), at));
        }
        None => {
            for n in [
                "log.run.first_error.file",
                "log.run.first_error.line",
                "log.run.first_error.text",
                "log.run.frames",
            ] {
                facts.set(n, none("failure line"));
            }
        }
    }
    let phase = first_error(run)
        .and_then(|e| e.phase)
        .or(run.hang.as_ref().and_then(|h| h.phase))
        .or(run.last_phase);
    facts.set(
        "log.run.phase",
        Fact::new(
            Value::Str(
                phase
                    .map_or("a phase the log does not show", phase_words)
                    .into(),
            ),
            searched.clone(),
        ),
    );
    match &run.hang {
        Some(h) => {
            let at = h
                .last_progress_line
                .map_or(h.file.clone(), |l| format!("{}:{l}", h.file));
            facts.set(
                "log.run.hang.last_line",
                h.last_progress_line.map_or_else(
                    || Fact::unknown("no progress line before the stop"),
                    |l| Fact::new(Value::Num(l as f64), at.clone()),
                ),
            );
            facts.set(
                "log.run.hang.last_text",
                Fact::new(Value::Str(h.last_progress_text.clone()), at.clone()),
            );
            facts.set(
                "log.run.hang.stall_count",
                Fact::new(Value::Num(h.stall_count as f64), at.clone()),
            );
            facts.set("log.run.hang.how", Fact::new(Value::Str(hang_words(h)), at));
        }
        None => {
            for n in [
                "log.run.hang.last_line",
                "log.run.hang.last_text",
                "log.run.hang.stall_count",
                "log.run.hang.how",
            ] {
                facts.set(n, none("hang"));
            }
        }
    }
}

/// The log lines a finding built on the run signs quotes: the failure lines no class explains
/// (the first few), else the first failure lines, and a hang's last progress line.
pub(crate) fn quoted_lines(class: &str, run: &RunSigns) -> Vec<LogMatch> {
    const MAX: usize = 5;
    let failures: Vec<&FailureLine> = if run.unexplained().next().is_some() {
        run.unexplained().take(MAX).collect()
    } else {
        run.failures.iter().take(MAX).collect()
    };
    let mut out: Vec<LogMatch> = failures
        .into_iter()
        .map(|f| LogMatch {
            class: class.into(),
            signature: String::new(),
            kind: SignatureKind::Error,
            file: f.file.clone(),
            line: f.line,
            text: f.text.clone(),
            repeats_left_out: 0,
        })
        .collect();
    if let Some(h) = &run.hang
        && let Some(l) = h.last_progress_line
    {
        out.push(LogMatch {
            class: class.into(),
            signature: String::new(),
            kind: SignatureKind::Supporting,
            file: h.file.clone(),
            line: l,
            text: h.last_progress_text.clone(),
            repeats_left_out: 0,
        });
    }
    out
}

/// The model and tensor-parallel size a vLLM log names in its engine config line
/// (`model='…'`, `tensor_parallel_size=N`), first occurrence each.
pub(crate) fn log_launch(texts: &[&str]) -> (Option<String>, Option<u32>) {
    let mut model = None;
    let mut tp = None;
    for t in texts {
        for line in t.lines() {
            if model.is_none()
                && let Some(rest) = line.split("model='").nth(1)
                && let Some(m) = rest.split('\'').next()
                && !m.is_empty()
            {
                model = Some(m.to_string());
            }
            if tp.is_none()
                && let Some(rest) = line.split("tensor_parallel_size=").nth(1)
            {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                tp = digits.parse().ok();
            }
        }
    }
    (model, tp)
}

/// A milestone in words ("got past graph capture").
pub(crate) fn milestone_words(m: Milestone) -> &'static str {
    match m {
        Milestone::WeightsLoaded => "loading the weights",
        Milestone::GraphCaptureDone => "graph capture",
        Milestone::WarmupDone => "warmup",
        Milestone::StartupComplete => "start-up (complete)",
        Milestone::RequestServed => "serving a request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logs_engine_config_names_model_and_tp() {
        let log = "INFO [core.py:93] Initializing a V1 LLM engine (v0.24.0) with config: model='Qwen/Qwen3.6-27B-FP8', dtype=torch.bfloat16, tensor_parallel_size=2, quantization=fp8\n";
        assert_eq!(
            log_launch(&[log]),
            (Some("Qwen/Qwen3.6-27B-FP8".into()), Some(2))
        );
        assert_eq!(log_launch(&["nothing here\n"]), (None, None));
    }

    fn line(kind: FailureKind, line: usize, consequence: bool) -> FailureLine {
        FailureLine {
            kind,
            file: "run.log".into(),
            line,
            text: format!("line {line}"),
            phase: None,
            frames: Vec::new(),
            explained_by: None,
            traceback_from: None,
            consequence,
        }
    }

    #[test]
    fn the_first_error_quoted_is_the_root_not_the_wrapper() {
        // vLLM logs "EngineCore failed to start." (an ERROR line) before the traceback whose
        // exception says why; a worker-died line after it only follows from it.
        let run = RunSigns {
            failures: vec![
                line(FailureKind::ErrorLine, 3, false),
                line(FailureKind::Exception, 9, false),
                line(FailureKind::Abort, 12, true),
            ],
            ..RunSigns::default()
        };
        assert_eq!(first_error(&run).map(|f| f.line), Some(9));
        // With only ERROR lines, the first of them.
        let run = RunSigns {
            failures: vec![
                line(FailureKind::ErrorLine, 4, true),
                line(FailureKind::ErrorLine, 5, false),
            ],
            ..RunSigns::default()
        };
        assert_eq!(first_error(&run).map(|f| f.line), Some(5));
        assert!(first_error(&RunSigns::default()).is_none());
    }
}
