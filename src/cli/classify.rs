//! `classify`: match log files against the known failure signatures only.

use super::{ClassifyArgs, Format, emit, fail};
use crate::engine;
use crate::input::UsageError;
use crate::kb;
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, Style};

pub fn run(args: &ClassifyArgs) -> i32 {
    let kb = match kb::load(args.kb.as_deref(), crate::facts::is_known_fact) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    // Stream each file: a 100 MB log is never held whole in memory.
    let scanner = engine::classify::Scanner::new(&kb);
    let mut matches = Vec::new();
    for p in &args.logs {
        let scanned = std::fs::File::open(p)
            .and_then(|f| scanner.scan_reader(&p.display().to_string(), f, &mut matches));
        if let Err(e) = scanned {
            return fail(UsageError(format!("{}: cannot read log: {e}", p.display())));
        }
    }
    let c = scanner.rank(matches);
    let text = match args.format {
        Format::Text => report::check::classify_text(&c, Style::detect()),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&report::check::classify_json(&c)).unwrap_or_default()
        ),
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    if c.classes.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}
