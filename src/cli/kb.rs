//! `kb lint` and `kb facts`.

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
    }
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
            eprintln!("{e}");
            eprintln!("sm120-doctor: knowledge base has {} error(s)", e.0.len());
            EXIT_USAGE
        }
    }
}
