//! `fix`: apply remedies to a vLLM launch (a command, script, `docker run`, compose file,
//! Kubernetes manifest, Helm values, systemd unit or env file, and the files it reads).

use super::{FixArgs, FixFormat, emit, fail};
use crate::engine::plan;
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

/// The remedies `check` puts in the fix plan for this launch (on the host, logs and answers
/// given; no host option: this machine), for `fix` without `--remedy`. None is a usage error.
fn plan_remedies(args: &FixArgs) -> Result<Vec<String>, UsageError> {
    let inputs = input::resolve(&args.input)?;
    let (_, d) = super::diagnose_inputs(&inputs, false);
    let plan = plan::for_findings_over(
        &inputs.kb,
        &d,
        &inputs.snapshot,
        &plan::Choices::default(),
        inputs.launch_source.as_ref(),
    );
    let host = &inputs.snapshot.origin;
    if plan.remedies.is_empty() {
        return Err(UsageError(format!(
            "no --remedy given, and the fix plan for this launch (host: {host}) has no remedy \
             (`check` finds nothing at warning or above that one fixes): nothing to apply; \
             give --remedy ID (`sm120-doctor kb remedies` lists them)"
        )));
    }
    esay!(
        "sm120-doctor: applying the fix plan's remedies for this launch (host: {host}): {} \
         (what `check` plans; --remedy ID picks others)",
        plan.remedies.join(", ")
    );
    Ok(plan.remedies)
}

pub fn run(args: &FixArgs) -> i32 {
    let launch = &args.input;
    let files = match input::launch_files(
        launch.launch.as_deref(),
        launch.launch_file.as_deref(),
        &launch.launch_with,
    ) {
        Ok(Some(mut files)) => {
            if launch.launch.is_some() {
                files[0].name = "launch".into();
            }
            files
        }
        Ok(None) => return fail(UsageError("give --launch CMD or --launch-file FILE".into())),
        Err(e) => return fail(e),
    };
    let kb = match kb::load(launch.kb.as_deref(), crate::facts::is_known_fact) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    let select = input::select(launch.service.as_deref(), launch.container.as_deref());
    // What bash (compose, systemd) reads differently from how the launch looks: said, not fixed.
    let warnings: Vec<String> = match crate::launch::locate_files(&files, &select) {
        Ok(loc) => loc
            .problems
            .iter()
            .map(|p| {
                let name = files.get(p.file).map_or("", |f| f.name.as_str());
                format!("{name}:{}: {}", p.line, p.message)
            })
            .collect(),
        Err(e) => return fail(input::launch_error(&files, e)),
    };
    // Several remedies compose as in the fix plan of `check` and the reports: moot ones are
    // left out with a note, conflicting ones refused with the reason.
    let remedies = if args.remedies.is_empty() {
        match plan_remedies(args) {
            Ok(ids) => ids,
            Err(e) => return fail(e),
        }
    } else {
        args.remedies.clone()
    };
    let (plan, texts) = match plan::for_remedies_files(&kb, &files, &select, &remedies) {
        Ok(p) => p,
        Err(plan::PlanError::Launch(e)) => return fail(input::launch_error(&files, e)),
        Err(e) => return fail(UsageError(format!("{}: {e}", files[0].name))),
    };
    for w in &warnings {
        esay!("warning: {w} (the fix does not change this)");
    }
    let mut seen = std::collections::BTreeSet::new();
    for n in plan.notes.iter().filter(|n| seen.insert(n.as_str())) {
        esay!("note: {n}");
    }
    for id in &plan.remedies {
        let Some(r) = kb.remedy(id) else { continue };
        if r.edits.is_empty() {
            esay!("note: {id}: this remedy has no edits");
        }
        for l in &r.limits {
            esay!("note: {id} (limit): {l}");
        }
    }
    for s in &plan.steps {
        esay!("step: {s}");
    }
    let changed: Vec<usize> = (0..files.len())
        .filter(|&i| files[i].text != texts[i])
        .collect();
    if changed.is_empty() {
        esay!("sm120-doctor: the launch needs no change for these remedies");
    }
    // A one-liner given with --launch is shown as a line (files are shown byte for byte).
    let nl = |t: &str| {
        if launch.launch.is_some() && !t.ends_with('\n') {
            format!("{t}\n")
        } else {
            t.to_string()
        }
    };
    // The files shown: the changed ones, or the main one when nothing changes.
    let shown_files: Vec<usize> = if changed.is_empty() { vec![0] } else { changed };
    let shown = match args.format {
        FixFormat::Text if shown_files.len() == 1 => nl(&texts[shown_files[0]]),
        FixFormat::Text => shown_files
            .iter()
            .map(|&i| format!("==> {} <==\n{}", files[i].name, nl(&texts[i])))
            .collect::<Vec<_>>()
            .join("\n"),
        FixFormat::Diff => shown_files
            .iter()
            .map(|&i| {
                crate::remedy::unified_diff(
                    &nl(&files[i].text),
                    &nl(&texts[i]),
                    &base(&files[i].name),
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
                    .map(|&i| files[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let i = shown_files[0];
        let text = &texts[i];
        // A command given with --launch becomes a launch script; a launch file is written as
        // given unless it already is a script (starts with `#!`). Other forms stay data.
        let kind = if i == 0 && (launch.launch.is_some() || text.starts_with("#!")) {
            crate::remedy::launch_file_kind(text)
        } else {
            Kind::Data
        };
        match write::write(out, text.as_bytes(), kind, args.force) {
            Ok(w) => esay!("sm120-doctor: wrote {}", w.path.display()),
            Err(e) => return fail(UsageError(e.to_string())),
        }
        if args.format == FixFormat::Diff {
            return emit(&shown);
        }
        return EXIT_OK;
    }
    emit(&shown)
}
