//! `report`: the diagnostic report (Markdown, JSON or text), redacted by default.

use super::{ReportArgs, emit, fail, resolve_and_diagnose};
use crate::input::UsageError;
use crate::report::{self, EXIT_OK};
use crate::write::{self, Kind};

/// Build, redact and render the report for these arguments (the `report` mode without output).
pub fn text(args: &ReportArgs) -> Result<String, UsageError> {
    let (inputs, mode, d) = resolve_and_diagnose(
        &args.input,
        args.onboard,
        crate::input::LivePython::unless(args.no_python),
    )?;
    let choices = crate::engine::plan::Choices::preferred(&args.remedies);
    let input = report::ReportInput {
        kb: &inputs.kb,
        snapshot: &inputs.snapshot,
        answers: &inputs.answers,
        logs: &inputs.logs,
        mode,
        diagnosis: &d,
        choices: &choices,
        launch_source: inputs.launch_source.as_ref(),
    };
    let redact = (!args.no_redact).then_some(report::RedactOptions {
        gpu_uuids: args.redact_gpu_uuids,
    });
    let model = report::prepare(&input, redact).map_err(UsageError)?;
    Ok(report::render(&model, args.format.into()))
}

/// `report`: exit 0 when written, 2 on bad input or when the file exists without --force.
pub fn run(args: &ReportArgs) -> i32 {
    let text = match text(args) {
        Ok(t) => report::sanitize::terminal_safe(&t, false).into_owned(),
        Err(e) => return fail(e),
    };
    if args.no_redact && args.format == super::ReportFormatArg::Json {
        super::note_unredacted_json(args.output.is_some(), "leave out --no-redact");
    }
    match &args.output {
        None => emit(&text),
        Some(path) => match write::write(path, text.as_bytes(), Kind::Data, args.force) {
            Ok(w) => {
                esay!(
                    "sm120-doctor: wrote {} ({} bytes)",
                    w.path.display(),
                    w.bytes
                );
                EXIT_OK
            }
            Err(e) => fail(UsageError(e.to_string())),
        },
    }
}
