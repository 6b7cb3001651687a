//! `fix`: apply remedies to a vLLM launch command, script, `docker run` or compose file.

use super::{FixArgs, FixFormat, emit, fail};
use crate::input::{self, UsageError};
use crate::kb;
use crate::report::EXIT_OK;
use crate::write::{self, Kind};
use std::path::Path;

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
    let outcome = match crate::remedy::fix(&text, &kb, &args.remedies) {
        Ok(o) => o,
        Err(e) => return fail(UsageError(format!("{name}: {e}"))),
    };
    for n in &outcome.notes {
        eprintln!("note: {n}");
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
