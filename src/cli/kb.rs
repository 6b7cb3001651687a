//! `kb lint`, `kb facts` and `kb remedies`.

use super::{KbCommand, emit};
use crate::kb;
use crate::report::EXIT_USAGE;
use std::path::Path;

pub fn run(command: &KbCommand) -> i32 {
    match command {
        KbCommand::Lint { dir } => lint(dir.as_deref()),
        KbCommand::Facts => {
            // Read from the facts' declarations (open families `env.NAME`, `launch.flag.NAME` last).
            let mut s = String::new();
            for (name, what) in crate::facts::catalogue() {
                s.push_str(&format!("{name:32} {what}\n"));
            }
            emit(&s)
        }
        KbCommand::Remedies { kb: dir } => {
            match kb::load(dir.as_deref(), crate::facts::is_known_fact) {
                Ok(kb) => emit(&remedy_list(&kb)),
                Err(e) => {
                    esay!("{e}");
                    esay!("sm120-doctor: knowledge base has {} error(s)", e.0.len());
                    EXIT_USAGE
                }
            }
        }
    }
}

/// One line per remedy (cheapest first, as the plan offers them), then the conclusions that
/// offer it.
fn remedy_list(kb: &kb::KnowledgeBase) -> String {
    let mut remedies: Vec<&crate::kb::schema::Remedy> = kb.remedies.values().collect();
    remedies.sort_by(|a, b| (a.cost.rank, &a.id.value).cmp(&(b.cost.rank, &b.id.value)));
    let mut s = String::new();
    for r in remedies {
        s.push_str(&format!(
            "{:36} {:9}  {}\n",
            r.id.value,
            r.confidence.as_str(),
            r.title
        ));
        s.push_str(&format!("    cost: {}\n", r.cost.text));
        let offered: Vec<String> = kb
            .classes
            .iter()
            .flat_map(|c| {
                c.def
                    .conclusions
                    .iter()
                    .filter(|k| k.remedies.iter().any(|x| x.value == r.id.value))
                    .map(move |k| format!("{}/{}", c.id(), k.id.value))
            })
            .collect();
        if offered.is_empty() {
            s.push_str("    offered by: no finding (fix --remedy only)\n");
        } else {
            s.push_str(&format!("    offered by: {}\n", offered.join(", ")));
        }
    }
    s
}

fn lint(dir: Option<&Path>) -> i32 {
    match kb::load(dir, crate::facts::is_known_fact) {
        Ok(kb) => {
            let lints = kb::lints(&kb);
            let mut s = String::new();
            for l in &lints {
                s.push_str(&format!("warning: {}: {}\n", l.file, l.message));
            }
            let nodes: usize = kb.classes.iter().map(|c| c.def.nodes.len()).sum();
            s.push_str(&format!(
                "ok: {} ({} classes, {} nodes, {} signatures, {} remedies; {} warning(s))\n",
                kb.origin,
                kb.classes.len(),
                nodes,
                kb.signatures.len(),
                kb.remedies.len(),
                lints.len()
            ));
            emit(&s)
        }
        Err(e) => {
            esay!("{e}");
            esay!("sm120-doctor: knowledge base has {} error(s)", e.0.len());
            EXIT_USAGE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_remedy_is_listed_once_with_who_offers_it() {
        let kb = kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let text = remedy_list(&kb);
        for id in kb.remedies.keys() {
            let lines = text
                .lines()
                .filter(|l| l.split_whitespace().next() == Some(id))
                .count();
            assert_eq!(lines, 1, "{id} in:\n{text}");
        }
        assert!(
            text.contains("allocator_ipc/"),
            "the allocator remedies name their class:\n{text}"
        );
    }
}
