//! `check`: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input).

use super::{CheckArgs, Format, emit, fail, resolve_and_diagnose};
use crate::kb::schema::Severity;
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, Style};

pub fn run(args: &CheckArgs) -> i32 {
    let (inputs, _, d) = match resolve_and_diagnose(&args.input, args.onboard) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let mut redactor = args.redact.then(|| {
        let mut r =
            report::redact::for_snapshot(Some(&inputs.snapshot), report::RedactOptions::default());
        report::redact::learn_logs(&mut r, &inputs.logs);
        r
    });
    let text = match args.format {
        Format::Text => {
            let t = report::check::check_text(&inputs.kb, &inputs.snapshot, &d, Style::detect());
            match redactor.as_mut() {
                Some(r) => r.whole_text(&t),
                None => t,
            }
        }
        Format::Json => {
            let mut v = report::check::check_json(&inputs.snapshot, &d);
            match redactor.as_mut() {
                Some(r) => r.json(&mut v),
                None => super::note_unredacted_json(false, "pass --redact"),
            }
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    if d.worst() >= Severity::Warning {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}
