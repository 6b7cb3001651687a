//! `log.run.*`: what the given logs show about how the run went, whatever the class (a
//! failure, a hang, the milestones reached). Declared here so checks and evidence may name
//! them; the values come from the log reader's run signs, which the engine reads after the
//! classifier ran (`engine::run_facts`). Until then: with no log, "nothing seen"; with a log,
//! unknown.

use super::{Fact, FactDef, Input};
use crate::value::Value;

/// Before the engine fills it in.
fn pending(i: &Input<'_>, none_seen: Value) -> Fact {
    if i.logs.is_empty() {
        Fact::nothing_seen(none_seen, "no log given")
    } else {
        Fact::unknown("read from the given logs by the engine")
    }
}

fn flag(i: &Input<'_>) -> Fact {
    pending(i, Value::Bool(false))
}

fn detail(i: &Input<'_>) -> Fact {
    if i.logs.is_empty() {
        Fact::unknown("no log given")
    } else {
        Fact::unknown("read from the given logs by the engine")
    }
}

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "log.run.failure",
        about: "a given log shows a failure line (an exception, an assertion, a CUDA or NCCL error, an abort, an ERROR line)",
        derive: flag,
    },
    FactDef {
        name: "log.run.hang",
        about: "a given log shows a hang (stall warnings after the last progress, or it ends inside start-up)",
        derive: flag,
    },
    FactDef {
        name: "log.run.unrecognized_failure",
        about: "a given log shows a failure line and no failure class is named at SUSPECTED or above",
        derive: flag,
    },
    FactDef {
        name: "log.run.unrecognized_hang",
        about: "a given log shows a hang and no failure class is named at SUSPECTED or above",
        derive: flag,
    },
    FactDef {
        name: "log.run.came_up",
        about: "a given log shows the run came up: the API server's start-up complete, a request served, or serving/generation progress",
        derive: flag,
    },
    FactDef {
        name: "log.run.no_outcome",
        about: "a given log shows no failure line, no hang and no sign that the run came up, and no failure class is named at SUSPECTED or above: it cannot tell whether the run worked",
        derive: flag,
    },
    FactDef {
        name: "log.run.reached.weights_loaded",
        about: "a given log shows the weights loaded",
        derive: flag,
    },
    FactDef {
        name: "log.run.reached.graph_capture_done",
        about: "a given log shows CUDA graph capture finished",
        derive: flag,
    },
    FactDef {
        name: "log.run.reached.warmup_done",
        about: "a given log shows kernel warmup finished",
        derive: flag,
    },
    FactDef {
        name: "log.run.reached.startup_complete",
        about: "a given log shows the API server's start-up complete",
        derive: flag,
    },
    FactDef {
        name: "log.run.reached.request_served",
        about: "a given log shows a request served",
        derive: flag,
    },
    FactDef {
        name: "log.run.first_error.file",
        about: "the log of the first failure line no class explains",
        derive: detail,
    },
    FactDef {
        name: "log.run.first_error.line",
        about: "the line number of the first failure line no class explains",
        derive: detail,
    },
    FactDef {
        name: "log.run.first_error.text",
        about: "the text of the first failure line no class explains",
        derive: detail,
    },
    FactDef {
        name: "log.run.frames",
        about: "the last traceback frames before that failure, last frame last",
        derive: detail,
    },
    FactDef {
        name: "log.run.phase",
        about: "the start-up phase the log was in at the failure or hang (load, compile, profile, graph capture, warmup, serving)",
        derive: detail,
    },
    FactDef {
        name: "log.run.hang.last_line",
        about: "for a hang: the last line that showed progress",
        derive: detail,
    },
    FactDef {
        name: "log.run.hang.last_text",
        about: "for a hang: that line's text",
        derive: detail,
    },
    FactDef {
        name: "log.run.hang.stall_count",
        about: "for a hang: how many stall warnings followed the last progress line",
        derive: detail,
    },
    FactDef {
        name: "log.run.hang.how",
        about: "for a hang: what shows it (stall warnings follow, the run was interrupted, or the log ends there)",
        derive: detail,
    },
];
