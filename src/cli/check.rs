//! `check`: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input).

use super::{CheckArgs, CheckFormat, emit, fail, resolve_and_diagnose};
use crate::input::UsageError;
use crate::kb::schema::Severity;
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, Style};

pub fn run(args: &CheckArgs) -> i32 {
    let (inputs, _, d) = match resolve_and_diagnose(&args.input, args.onboard) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let text = match args.format {
        CheckFormat::Text => {
            report::check::check_text(&inputs.kb, &inputs.snapshot, &d, Style::detect())
        }
        CheckFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&report::check::check_json(&inputs.snapshot, &d))
                    .unwrap_or_default();
            s.push('\n');
            s
        }
        CheckFormat::Prometheus => {
            let run = report::prometheus::RunInfo {
                timestamp_seconds: report::textfile::now_unix_seconds(),
            };
            report::prometheus::render(&inputs.kb, &inputs.snapshot, &d, &run)
        }
    };
    let rc = match &args.output {
        None => emit(&text),
        Some(path) => match report::textfile::write_replace(path, text.as_bytes(), args.force) {
            Ok(()) => EXIT_OK,
            Err(e) => fail(UsageError(e)),
        },
    };
    if rc != EXIT_OK {
        return rc;
    }
    if d.worst() >= Severity::Warning {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}
