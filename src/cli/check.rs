//! `check`: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input).

use super::{CheckArgs, Format, emit, fail, resolve_and_diagnose};
use crate::engine::plan;
use crate::input::UsageError;
use crate::kb::schema::Severity;
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, Style};

pub fn run(args: &CheckArgs) -> i32 {
    let (inputs, _, d) = match resolve_and_diagnose(&args.input, args.onboard) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let offered = |id: &String| {
        d.findings
            .iter()
            .any(|f| f.remedies.iter().any(|r| &r.id == id))
    };
    if let Some(id) = args.remedies.iter().find(|id| !offered(id)) {
        return fail(UsageError(format!("--remedy {id}: no finding offers it")));
    }
    let plan = plan::for_findings(
        &inputs.kb,
        &d,
        &inputs.snapshot,
        &plan::Choices::preferred(&args.remedies),
    );
    let text = match args.format {
        Format::Text => {
            report::check::check_text(&inputs.kb, &inputs.snapshot, &d, &plan, Style::detect())
        }
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report::check::check_json(
                &inputs.snapshot,
                &d,
                &plan,
            ))
            .unwrap_or_default();
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
