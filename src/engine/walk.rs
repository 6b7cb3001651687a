//! Walking one class's decision tree: each node decided by what the inputs measure, the
//! user's answer, or the assumptions that stand for inputs not given, in that order; a node
//! none of them decides is asked.

use super::{
    Answer, AnsweredBy, Basis, EvalContext, Outcome, Reading, SetAside, Step, UsedFact, Walk,
};
use crate::kb::Class;
use crate::kb::expr;
use crate::value::{Prose, Reason, Value};

/// How one node was decided, or why it has to be asked.
enum Decided {
    Yes {
        answer: Answer,
        by: AnsweredBy,
        basis: Basis,
        typed_answer: Option<SetAside>,
    },
    Ask {
        reason: Reason,
    },
}

pub(super) fn bool_answer(b: bool) -> Answer {
    if b { Answer::Yes } else { Answer::No }
}

fn answer_word(a: Answer) -> &'static str {
    match a {
        Answer::Yes => "yes",
        Answer::No => "no",
        Answer::Unsure => "unsure",
    }
}

/// The facts (and log signatures) a check reads, with their values and sources.
fn used_facts(check: &expr::Expr, ctx: &EvalContext<'_>) -> Vec<UsedFact> {
    let refs = expr::references(check);
    refs.facts
        .iter()
        .map(|name| {
            let f = ctx.facts.get(name);
            UsedFact {
                name: name.clone(),
                value: f.value,
                source: f.source,
                assumed: f.assumed,
            }
        })
        .chain(refs.signatures.iter().map(|s| UsedFact {
            name: format!("log({s})"),
            value: ctx.log(s),
            source: ctx.log_source(s),
            assumed: false,
        }))
        .collect()
}

/// "you answered no; launch command (--launch) says launch.tp = 2".
fn contradiction_note(typed: Answer, used: &[UsedFact]) -> String {
    let said: Vec<String> = used
        .iter()
        .filter(|f| !f.assumed && !matches!(f.value, Value::Unknown(_)))
        .map(|f| {
            if f.source.is_empty() {
                format!("{} = {}", f.name, f.value)
            } else {
                format!("{} says {} = {}", f.source, f.name, f.value)
            }
        })
        .collect();
    format!("you answered {}; {}", answer_word(typed), said.join("; "))
}

/// Decide a node. Precedence: what the inputs measure, then the user's answer to this node,
/// then the check read with typed answers (`answer(...)`), then with the assumptions that stand
/// for inputs not given; otherwise ask.
fn decide(class: &Class, node: &crate::kb::schema::Node, ctx: &EvalContext<'_>) -> Decided {
    let id = &node.id.value;
    // This node's own answer; else the answer to a node asking the same question, which
    // counts only where the inputs do not decide (it is never "set aside" here: its own node
    // reports that).
    let own = ctx.answers.get(id).copied();
    let typed = own.or_else(|| ctx.peer_answer(id));
    let Some(check) = class.checks.get(id) else {
        return match typed {
            Some(a) => Decided::Yes {
                answer: a,
                by: AnsweredBy::User,
                basis: Basis::Answered,
                typed_answer: None,
            },
            None => Decided::Ask {
                reason: "needs a person to answer".into(),
            },
        };
    };
    let used = || used_facts(check, ctx);
    if let Value::Bool(b) = ctx.eval(check, Reading::Inputs) {
        let answer = bool_answer(b);
        let facts = used();
        let typed_answer = own.map(|t| {
            // "Not sure" claims nothing, so an input cannot contradict it.
            let contradicted = t != answer && t != Answer::Unsure;
            SetAside {
                answer: t,
                contradicted,
                note: if contradicted {
                    contradiction_note(t, &facts)
                } else {
                    String::new()
                },
            }
        });
        return Decided::Yes {
            answer,
            by: AnsweredBy::Auto { facts },
            basis: Basis::Measured,
            typed_answer,
        };
    }
    if let Some(a) = typed {
        return Decided::Yes {
            answer: a,
            by: AnsweredBy::User,
            basis: Basis::Answered,
            typed_answer: None,
        };
    }
    for (reading, basis) in [
        (Reading::Answers, Basis::Answered),
        (Reading::Everything, Basis::Assumed),
    ] {
        match ctx.eval(check, reading) {
            Value::Bool(b) => {
                return Decided::Yes {
                    answer: bool_answer(b),
                    by: AnsweredBy::Auto { facts: used() },
                    basis,
                    typed_answer: None,
                };
            }
            Value::Unknown(why) if reading == Reading::Everything => {
                return Decided::Ask { reason: why };
            }
            Value::Unknown(_) => {}
            other => {
                return Decided::Ask {
                    reason: format!("check gave {other}, not yes/no").into(),
                };
            }
        }
    }
    Decided::Ask {
        reason: "needs a person to answer".into(),
    }
}

pub(super) fn walk(class: &Class, start: &str, ctx: &EvalContext<'_>) -> Walk {
    let mut steps = Vec::new();
    let mut current = start.to_string();
    // The validator rejects cycles; the bound only guards a KB built without it.
    for _ in 0..=class.def.nodes.len() {
        if class.conclusion(&current).is_some() {
            return Walk {
                class: class.id().into(),
                start: start.into(),
                steps,
                outcome: Outcome::Concluded {
                    conclusion: current,
                },
            };
        }
        let Some(node) = class.node(&current) else {
            break;
        };
        let decided = decide(class, node, ctx);
        let (answer, by, reason, basis, typed_answer) = match decided {
            Decided::Yes {
                answer,
                by,
                basis,
                typed_answer,
            } => (
                Some(answer),
                by,
                Reason::from("decided"),
                basis,
                typed_answer,
            ),
            Decided::Ask { reason } => (None, AnsweredBy::User, reason, Basis::Answered, None),
        };
        let next = match answer {
            Some(Answer::Yes) => Some(&node.yes.value),
            Some(Answer::No) => Some(&node.no.value),
            Some(Answer::Unsure) => node.unsure.as_ref().map(|u| &u.value),
            None => None,
        };
        let Some(next) = next else {
            let ask = node.ask.as_ref();
            return Walk {
                class: class.id().into(),
                start: start.into(),
                steps,
                outcome: Outcome::NeedsAnswer {
                    node: node.id.value.clone(),
                    question: node.question.clone(),
                    hint: Prose(ask.map(|a| a.hint.clone()).unwrap_or_default()),
                    reason,
                    yes_label: ask.map_or("yes".into(), |a| a.yes_label.clone()),
                    no_label: ask.map_or("no".into(), |a| a.no_label.clone()),
                    can_be_unsure: node.unsure.is_some(),
                },
            };
        };
        steps.push(Step {
            node: node.id.value.clone(),
            question: node.question.clone(),
            answer: answer.unwrap_or(Answer::Unsure),
            by,
            why: node.why.clone(),
            basis,
            typed_answer,
        });
        current = next.clone();
    }
    Walk {
        class: class.id().into(),
        start: start.into(),
        steps,
        outcome: Outcome::NeedsAnswer {
            node: current.clone(),
            question: format!("internal: walk did not end at {current}"),
            hint: Prose::default(),
            reason: "tree has a cycle or a dangling reference; run `sm120-doctor kb lint`".into(),
            yes_label: "yes".into(),
            no_label: "no".into(),
            can_be_unsure: false,
        },
    }
}
