//! `check`: findings with evidence, sources and remedies (exit 0 ok, 1 findings, 2 bad input,
//! 3 a given log does not show how the run ended, or with `--strict` a check was not run).
//! `--probe p2p` runs the functional peer-to-peer probe on this host first (issue 19).

use super::{
    CheckArgs, CheckFormat, CheckProbe, diagnose_inputs, emit, fail, resolve_and_diagnose,
};
use crate::engine::plan;
use crate::input::{self, UsageError};
use crate::probe::p2p::{self, P2pOptions};
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, EXIT_UNDETERMINED, Style};
use crate::snapshot::Probed;

pub fn run(args: &CheckArgs) -> i32 {
    let started = std::time::Instant::now();
    let python = input::LivePython::unless(args.no_python);
    let (inputs, d, probe) = match args.probe {
        None => match resolve_and_diagnose(&args.input, args.onboard, python) {
            Ok((inputs, _, d)) => (inputs, d, None),
            Err(e) => return fail(e),
        },
        Some(CheckProbe::P2p) => {
            if !args.input.is_live() {
                return fail(UsageError(
                    "--probe p2p measures this machine; it cannot be combined with --snapshot, --collect-env or --demo".into(),
                ));
            }
            let mut inputs = match input::resolve_with(&args.input, python) {
                Ok(i) => i,
                Err(e) => return fail(e),
            };
            let tp = inputs
                .snapshot
                .launch
                .value()
                .and_then(|l| l.tensor_parallel_size);
            let result = p2p::run(&P2pOptions::for_tp(tp));
            inputs.snapshot.p2p_probe = Probed::Value(result.clone());
            let (_, d) = diagnose_inputs(&inputs, args.onboard);
            (inputs, d, Some(result))
        }
    };
    let offered = |id: &String| {
        d.findings
            .iter()
            .any(|f| f.remedies.iter().any(|r| &r.id == id))
    };
    if let Some(id) = args.remedies.iter().find(|id| !offered(id)) {
        return fail(UsageError(format!("--remedy {id}: no finding offers it")));
    }
    let plan = plan::for_findings_over(
        &inputs.kb,
        &d,
        &inputs.snapshot,
        &plan::Choices::preferred(&args.remedies),
        inputs.launch_source.as_ref(),
    );
    let mut redactor = args.redact.then(|| {
        let mut r =
            report::redact::for_snapshot(Some(&inputs.snapshot), report::RedactOptions::default());
        report::redact::learn_logs(&mut r, &inputs.logs);
        r
    });
    let text = match args.format {
        CheckFormat::Text => {
            let mut t = probe.as_ref().map(p2p::render_text).unwrap_or_default();
            if !t.is_empty() {
                t.push('\n');
            }
            t.push_str(&report::check::check_text_with(
                &inputs.kb,
                &inputs.snapshot,
                &d,
                &plan,
                Style::detect(),
                if args.verbose {
                    report::check::Detail::Verbose
                } else {
                    report::check::Detail::Brief
                },
            ));
            if let Some(note) = python_not_collected(&inputs.snapshot) {
                t.push_str(&note);
            }
            match redactor.as_mut() {
                Some(r) => r.whole_text(&t),
                None => t,
            }
        }
        CheckFormat::Json => {
            let mut v = report::check::check_json(&inputs.snapshot, &d, &plan);
            if let (Some(p), Some(map)) = (&probe, v.as_object_mut()) {
                map.insert(
                    "p2p_probe".into(),
                    serde_json::to_value(p).unwrap_or_default(),
                );
            }
            match redactor.as_mut() {
                Some(r) => r.json(&mut v),
                None => super::note_unredacted_json(args.output.is_some(), "pass --redact"),
            }
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        CheckFormat::Prometheus => {
            let run = report::prometheus::RunInfo {
                timestamp_seconds: report::textfile::now_unix_seconds(),
                duration_seconds: started.elapsed().as_secs_f64(),
            };
            report::prometheus::render(&inputs.kb, &inputs.snapshot, &d, &run)
        }
    };
    let rc = match &args.output {
        None => emit(&text),
        Some(path) => match report::textfile::write_replace(
            path,
            report::sanitize::terminal_safe(&text, Style::detect().color).as_bytes(),
            args.force,
        ) {
            Ok(()) => EXIT_OK,
            Err(e) => fail(UsageError(e)),
        },
    };
    if rc != EXIT_OK {
        return rc;
    }
    let code = outcome_code(&d, args.strict);
    // `check` ends the process: freeing the knowledge base and the inputs one allocation at a
    // time was a sixth of a short run's instructions (benches/startup.py --callgrind), and the
    // OS takes the memory back at exit anyway. Nothing here holds a file or a terminal.
    std::mem::forget((inputs, d, plan));
    code
}

/// The exit code for a written diagnosis: findings before "undetermined" before ok. With
/// `strict`, a check that could not run (not checked) is not taken as passed.
fn outcome_code(d: &crate::engine::Diagnosis, strict: bool) -> i32 {
    if d.needs_attention() {
        EXIT_FINDINGS
    } else if d.undetermined() || (strict && d.count(crate::engine::CheckState::NotChecked) > 0) {
        EXIT_UNDETERMINED
    } else {
        EXIT_OK
    }
}

/// `--no-python`'s line under the text report: the Python stack was not requested, so no
/// package versions were read (none is "not installed"). `None` for any other snapshot.
fn python_not_collected(snap: &crate::snapshot::HostSnapshot) -> Option<String> {
    match &snap.python {
        Probed::Skipped(r) if r.code == crate::snapshot::ReasonCode::NotRequested => Some(format!(
            "{r}: no package versions (vLLM, torch, …) were read; checks that need them are not checked.\n"
        )),
        _ => None,
    }
}
