//! `fix`: apply remedies to a vLLM launch command, script, `docker run` or compose file.

use super::{FixArgs, FixFormat, emit, fail};
use crate::engine::plan;
use crate::input::{self, UsageError};
use crate::kb;
use crate::report::EXIT_OK;
use crate::write::{self, Kind};
use std::path::Path;

/// The launch before and after the plan.
struct Outcome {
    original: String,
    text: String,
}

impl Outcome {
    fn changed(&self) -> bool {
        self.original != self.text
    }
}

pub fn run(args: &FixArgs) -> i32 {
    let (text, name) =
        match input::launch_source(args.launch.as_deref(), args.launch_file.as_deref()) {
            Ok(Some((text, _))) if args.launch.is_some() => (text, "launch".to_string()),
            Ok(Some(source)) => source,
            Ok(None) => return fail(UsageError("give --launch CMD or --launch-file FILE".into())),
            Err(e) => return fail(e),
        };
    let kb = match kb::load(args.kb.as_deref(), crate::facts::is_known_fact) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    // Several remedies compose as in the fix plan of `check` and the reports: moot ones are
    // left out with a note, conflicting ones refused with the reason.
    let plan = match plan::for_remedies(&kb, &text, &args.remedies) {
        Ok(p) => p,
        Err(e) => return fail(UsageError(format!("{name}: {e}"))),
    };
    let outcome = Outcome {
        original: text.clone(),
        text: plan.launch.clone().unwrap_or_else(|| text.clone()),
    };
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    for id in &plan.remedies {
        let Some(r) = kb.remedy(id) else { continue };
        if r.edits.is_empty() {
            eprintln!("note: {id}: this remedy has no edits");
        }
        for l in &r.limits {
            eprintln!("note: {id} (limit): {l}");
        }
    }
    for s in &plan.steps {
        eprintln!("step: {s}");
    }
    if !outcome.changed() {
        eprintln!("sm120-doctor: the launch needs no change for these remedies");
    }
    let diff_name = Path::new(&name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "launch".into());
    // A one-liner given with --launch is shown as a line (files are shown byte for byte).
    let nl = |t: &str| {
        if args.launch.is_some() && !t.ends_with('\n') {
            format!("{t}\n")
        } else {
            t.to_string()
        }
    };
    let shown = match args.format {
        FixFormat::Text => nl(&outcome.text),
        FixFormat::Diff => {
            crate::remedy::unified_diff(&nl(&outcome.original), &nl(&outcome.text), &diff_name)
        }
    };
    if let Some(out) = &args.output {
        // A command given with --launch becomes a launch script; a launch file is written as
        // given unless it already is a script (starts with `#!`). A compose file stays data.
        let kind = if args.launch.is_some() || outcome.text.starts_with("#!") {
            crate::remedy::launch_file_kind(&outcome.text)
        } else {
            Kind::Data
        };
        match write::write(out, outcome.text.as_bytes(), kind, args.force) {
            Ok(w) => eprintln!("sm120-doctor: wrote {}", w.path.display()),
            Err(e) => return fail(UsageError(e.to_string())),
        }
        if args.format == FixFormat::Diff {
            return emit(&shown);
        }
        return EXIT_OK;
    }
    emit(&shown)
}
