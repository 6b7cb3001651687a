//! `fix`: apply remedies to a vLLM launch (a command, script, `docker run`, compose file,
//! Kubernetes manifest, Helm values, systemd unit or env file, and the files it reads).

use super::{FixArgs, FixFormat, emit, fail};
use crate::input::{self, UsageError};
use crate::kb;
use crate::report::EXIT_OK;
use crate::write::{self, Kind};
use std::path::Path;

fn base(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "launch".into())
}

pub fn run(args: &FixArgs) -> i32 {
    let files = match input::launch_files(
        args.launch.as_deref(),
        args.launch_file.as_deref(),
        &args.launch_with,
    ) {
        Ok(Some(mut files)) => {
            if args.launch.is_some() {
                files[0].name = "launch".into();
            }
            files
        }
        Ok(None) => return fail(UsageError("give --launch CMD or --launch-file FILE".into())),
        Err(e) => return fail(e),
    };
    let kb = match kb::load(args.kb.as_deref(), crate::facts::is_known_fact) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    let select = input::select(args.service.as_deref(), args.container.as_deref());
    let outcome = match crate::remedy::fix_files(&files, &select, &kb, &args.remedies) {
        Ok(o) => o,
        Err(crate::remedy::RemedyError::Launch(e)) => return fail(input::launch_error(&files, e)),
        Err(e) => return fail(UsageError(format!("{}: {e}", files[0].name))),
    };
    for w in &outcome.warnings {
        eprintln!("warning: {w} (the fix does not change this)");
    }
    for n in &outcome.notes {
        eprintln!("note: {n}");
    }
    let changed = outcome.changed();
    if changed.is_empty() {
        eprintln!("sm120-doctor: the launch needs no change for these remedies");
    }
    // A one-liner given with --launch is shown as a line (files are shown byte for byte).
    let nl = |t: &str| {
        if args.launch.is_some() && !t.ends_with('\n') {
            format!("{t}\n")
        } else {
            t.to_string()
        }
    };
    // The files shown: the changed ones, or the main one when nothing changes.
    let shown_files: Vec<usize> = if changed.is_empty() {
        vec![0]
    } else {
        changed.clone()
    };
    let shown = match args.format {
        FixFormat::Text if shown_files.len() == 1 => nl(&outcome.texts[shown_files[0]]),
        FixFormat::Text => shown_files
            .iter()
            .map(|&i| {
                format!(
                    "==> {} <==\n{}",
                    outcome.originals[i].name,
                    nl(&outcome.texts[i])
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        FixFormat::Diff => shown_files
            .iter()
            .map(|&i| {
                crate::remedy::unified_diff(
                    &nl(&outcome.originals[i].text),
                    &nl(&outcome.texts[i]),
                    &base(&outcome.originals[i].name),
                )
            })
            .collect(),
    };
    if let Some(out) = &args.output {
        if shown_files.len() > 1 {
            return fail(UsageError(format!(
                "the fix changes {} files ({}); -o writes one: use --format diff (and `patch`), \
                 or fix them one at a time",
                shown_files.len(),
                shown_files
                    .iter()
                    .map(|&i| outcome.originals[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let i = shown_files[0];
        let text = &outcome.texts[i];
        // A command given with --launch becomes a launch script; a launch file is written as
        // given unless it already is a script (starts with `#!`). Other forms stay data.
        let kind = if i == 0 && (args.launch.is_some() || text.starts_with("#!")) {
            crate::remedy::launch_file_kind(text)
        } else {
            Kind::Data
        };
        match write::write(out, text.as_bytes(), kind, args.force) {
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
