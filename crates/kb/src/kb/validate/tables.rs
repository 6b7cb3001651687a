//! Validation of the files that hold tables, not a class: run_signs.yaml's patterns, the
//! remedies' relations and PR bases (remedies.yaml), hardware.yaml and allocator.yaml.

use super::*;

/// run_signs.yaml: ids unique, each pattern compiles and finds its examples, each has the
/// fields its sign needs (and no others), a source, and needles for the prefilter.
pub(super) fn check_run_signs(
    file: &str,
    r: &RunSignsFile,
    errors: &mut Vec<KbError>,
) -> Vec<crate::kb::CompiledRunSign> {
    let mut ids = HashSet::new();
    let mut out = Vec::new();
    for d in &r.run_signs {
        if !ids.insert(d.id.value.as_str()) {
            errors.push(at(
                file,
                &d.id,
                format!("duplicate run sign {:?}", d.id.value),
            ));
        }
        if d.sources.is_empty() {
            errors.push(at(
                file,
                &d.id,
                format!("run sign {:?} has no source", d.id.value),
            ));
        }
        let needs = |ok: bool, field: &str, what: &str, errors: &mut Vec<KbError>| {
            if !ok {
                errors.push(at(
                    file,
                    &d.id,
                    format!("`{field}` {what} (run sign {:?})", d.id.value),
                ));
            }
        };
        let failure = d.sign == RunSignKind::Failure;
        let progress = d.sign == RunSignKind::Progress;
        let level = d.sign == RunSignKind::Level;
        needs(
            d.failure.is_some() || !failure,
            "failure",
            "is required for `sign: failure`",
            errors,
        );
        needs(
            d.failure.is_none() || failure || level,
            "failure",
            "is for `failure` and `level`",
            errors,
        );
        needs(
            !d.consequence || failure,
            "consequence",
            "is for `sign: failure`",
            errors,
        );
        needs(
            d.phase.is_some() || !progress,
            "phase",
            "is required for `sign: progress`",
            errors,
        );
        needs(
            d.phase.is_none() || progress || failure,
            "phase",
            "is for `progress` and `failure`",
            errors,
        );
        needs(
            d.milestone.is_none() || progress,
            "milestone",
            "is for `sign: progress`",
            errors,
        );
        needs(
            d.min_count.is_none() || d.sign == RunSignKind::Stall,
            "min_count",
            "is for `sign: stall`",
            errors,
        );
        needs(
            d.min_count != Some(0),
            "min_count",
            "must be at least 1",
            errors,
        );
        // The reader tries progress and stall patterns on a line with its level prefix.
        let unanchored = !d.pattern.value.starts_with('^');
        needs(
            unanchored || !(progress || d.sign == RunSignKind::Stall),
            "pattern",
            "of a progress or stall line may not start with ^",
            errors,
        );
        let Some(regex) = compile_regex(file, &d.pattern, errors) else {
            continue;
        };
        let unless: Vec<LazyRegex> = d
            .unless
            .iter()
            .filter_map(|u| compile_regex(file, u, errors))
            .collect();
        let needles: Vec<String> = if d.needles.is_empty() {
            regex
                .needles()
                .iter()
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect()
        } else {
            d.needles.iter().map(|n| n.value.clone()).collect()
        };
        if needles.is_empty() || needles.iter().any(String::is_empty) {
            errors.push(at(
                file,
                &d.pattern,
                "no literal every match holds: give `needles:` for the prefilter",
            ));
        }
        if d.examples.is_empty() {
            errors.push(at(
                file,
                &d.id,
                format!("run sign {:?} has no example", d.id.value),
            ));
        }
        for e in &d.examples {
            if !regex.is_match(&e.value) || unless.iter().any(|u| u.is_match(&e.value)) {
                errors.push(at(
                    file,
                    e,
                    format!(
                        "the pattern of {:?} does not match this example",
                        d.id.value
                    ),
                ));
            }
            let found = if level {
                // The reader tests a level's needles as the start of the line.
                needles.iter().any(|n| e.value.starts_with(n.as_str()))
            } else {
                needles.iter().any(|n| e.value.contains(n.as_str()))
            };
            if !found {
                errors.push(at(
                    file,
                    e,
                    format!("no needle of {:?} is in this example", d.id.value),
                ));
            }
        }
        out.push(crate::kb::CompiledRunSign {
            id: d.id.value.clone(),
            sign: d.sign,
            regex,
            failure: d.failure,
            consequence: d.consequence,
            phase: d.phase,
            milestone: d.milestone,
            min_count: d.min_count.unwrap_or(2),
            needles,
            unless,
            sources: d.sources.clone(),
        });
    }
    out
}

/// `moots:` and `conflicts:` name other remedies, with a reason; no remedy moots itself, a
/// pair is not both moot and in conflict, and `moots` has no cycle (a plan could otherwise
/// leave out every remedy of the cycle).
pub(super) fn check_relations(
    file: &str,
    rf: &RemedyFile,
    remedies: &BTreeMap<String, Remedy>,
    errors: &mut Vec<KbError>,
) {
    for r in &rf.remedies {
        let id = &r.id.value;
        for (kind, list) in [("moots", &r.moots), ("conflicts", &r.conflicts)] {
            for rel in list {
                let other = &rel.remedy.value;
                if !remedies.contains_key(other) {
                    errors.push(at(
                        file,
                        &rel.remedy,
                        format!("remedy {id:?} {kind} unknown remedy {other:?}"),
                    ));
                } else if other == id {
                    errors.push(at(
                        file,
                        &rel.remedy,
                        format!("remedy {id:?} {kind} itself"),
                    ));
                }
                if rel.why.trim().is_empty() {
                    errors.push(at(
                        file,
                        &rel.remedy,
                        format!("remedy {id:?} {kind} {other:?} without a why"),
                    ));
                }
            }
        }
        for m in &r.moots {
            let other = &m.remedy.value;
            let conflicting = r.conflicts.iter().any(|c| &c.remedy.value == other)
                || remedies
                    .get(other)
                    .is_some_and(|o| o.conflicts.iter().any(|c| &c.remedy.value == id));
            if conflicting {
                errors.push(at(
                    file,
                    &m.remedy,
                    format!("remedy {id:?} both moots and conflicts with {other:?}"),
                ));
            }
        }
        // A cycle through `moots` from this remedy back to itself.
        let mut stack: Vec<&str> = r.moots.iter().map(|m| m.remedy.value.as_str()).collect();
        let mut seen: HashSet<&str> = HashSet::new();
        while let Some(next) = stack.pop() {
            if next == id {
                errors.push(at(
                    file,
                    &r.id,
                    format!("remedy {id:?} moots itself through a cycle of moots:"),
                ));
                break;
            }
            if seen.insert(next)
                && let Some(n) = remedies.get(next)
            {
                stack.extend(n.moots.iter().map(|m| m.remedy.value.as_str()));
            }
        }
    }
}

/// PR bases: unique, sourced, a version prefix, and one for every PR a remedy applies.
pub(super) fn check_prs(
    remedy_files: &[(String, RemedyFile)],
    remedies: &BTreeMap<String, Remedy>,
    errors: &mut Vec<KbError>,
) -> Vec<PrBase> {
    let mut prs: Vec<PrBase> = Vec::new();
    for (file, rf) in remedy_files {
        for p in &rf.prs {
            let here = |message: String| KbError {
                file: file.clone(),
                line: p.pr.referenced.line(),
                column: p.pr.referenced.column(),
                message,
            };
            if prs.iter().any(|q| q.pr.value == p.pr.value) {
                errors.push(here(format!(
                    "PR #{} is listed twice under prs:",
                    p.pr.value
                )));
            }
            if p.sources.is_empty() {
                errors.push(here(format!("PR #{} has no source", p.pr.value)));
            }
            let v = &p.expected_version.value;
            let prefix = !v.is_empty()
                && v.split('.')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if !prefix {
                errors.push(at(
                    file,
                    &p.expected_version,
                    format!("expected_version {v:?} is not a version prefix like 0.24"),
                ));
            }
            let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
            if let Some(h) = &p.head_commit
                && !hex(&h.value, 40)
            {
                errors.push(at(
                    file,
                    h,
                    format!("head_commit {:?} is not a 40-digit commit id", h.value),
                ));
            }
            if let Some(h) = &p.diff_sha256
                && !hex(&h.value, 64)
            {
                errors.push(at(
                    file,
                    h,
                    format!("diff_sha256 {:?} is not 64 hex digits", h.value),
                ));
            }
            prs.push(p.clone());
        }
    }
    for (file, rf) in remedy_files {
        for r in &rf.remedies {
            let Some(def) = remedies.get(&r.id.value) else {
                continue;
            };
            for e in &def.edits {
                if let Edit::PatchScript { pr } = e
                    && !prs.iter().any(|p| p.pr.value == *pr)
                {
                    errors.push(at(
                        file,
                        &r.id,
                        format!(
                            "remedy {:?} applies PR #{pr}, which has no entry under prs: (the \
                             vLLM version it was written for)",
                            r.id.value
                        ),
                    ));
                }
            }
        }
    }
    prs
}

/// hardware.yaml: groups and families well formed; the runtime tables.
pub(super) fn check_hardware(file: &str, h: &HardwareFile, errors: &mut Vec<KbError>) -> Hardware {
    let mut seen_devices: HashMap<&str, &str> = HashMap::new();
    for g in &h.same_chip {
        let chip = &g.chip.value;
        if g.devices.len() < 2 {
            errors.push(at(
                file,
                &g.chip,
                format!("chip {chip:?} lists fewer than two SKUs"),
            ));
        }
        if g.sources.is_empty() {
            errors.push(at(file, &g.chip, format!("chip {chip:?} has no source")));
        }
        for d in &g.devices {
            if d.value.contains(' ') || d.value.is_empty() {
                errors.push(at(
                    file,
                    d,
                    format!(
                        "{:?} is not a vLLM device name (the GPU name with spaces written as _)",
                        d.value
                    ),
                ));
            }
            if let Some(prev) = seen_devices.insert(&d.value, chip) {
                errors.push(at(
                    file,
                    d,
                    format!("{:?} is also listed under chip {prev:?}", d.value),
                ));
            }
        }
    }
    let mut ids: HashSet<&str> = HashSet::new();
    for f in &h.model_families {
        let id = &f.id.value;
        if !ids.insert(id) {
            errors.push(at(file, &f.id, format!("duplicate model family {id:?}")));
        }
        if f.sources.is_empty() {
            errors.push(at(
                file,
                &f.id,
                format!("model family {id:?} has no source"),
            ));
        }
        if f.names.is_empty() {
            errors.push(at(file, &f.id, format!("model family {id:?} has no names")));
        }
    }
    let fragments = h
        .model_families
        .iter()
        .flat_map(|f| f.names.iter())
        .chain(&h.fp8_formats)
        .chain(&h.other_formats);
    for n in fragments {
        let normal = crate::vllm::hardware::normalise_model_name(&n.value);
        if n.value.is_empty() || normal != n.value {
            errors.push(at(
                file,
                n,
                format!(
                    "{:?}: names are matched lower-case with _ read as -; write {normal:?}",
                    n.value
                ),
            ));
        }
    }
    let strs = |v: &[SpannedStr]| v.iter().map(|s| s.value.clone()).collect::<Vec<_>>();
    Hardware {
        same_chip: h
            .same_chip
            .iter()
            .map(|g| SameChip {
                chip: g.chip.value.clone(),
                devices: strs(&g.devices),
            })
            .collect(),
        model_families: h
            .model_families
            .iter()
            .map(|f| ModelFamily {
                id: f.id.value.clone(),
                names: strs(&f.names),
                block_fp8: f.block_fp8,
                sparse_attention: f.sparse_attention,
            })
            .collect(),
        fp8_formats: strs(&h.fp8_formats),
        other_formats: strs(&h.other_formats),
    }
}

/// allocator.yaml: the texts describe the precedence rule the tool applies, have sources, and
/// use only the placeholders each text may use.
pub(super) fn check_allocator(file: &str, a: &AllocatorText, errors: &mut Vec<KbError>) {
    let applied = Precedence::default();
    match Precedence::from_name(&a.precedence.value) {
        Some(p) if p == applied => {}
        Some(_) => errors.push(at(
            file,
            &a.precedence,
            format!(
                "these texts describe precedence rule {:?}, but the tool applies {:?}",
                a.precedence.value,
                applied.name()
            ),
        )),
        None => {
            let known: Vec<&str> = Precedence::ALL.iter().map(|p| p.name()).collect();
            errors.push(at(
                file,
                &a.precedence,
                format!(
                    "unknown precedence rule {:?}; known: {}",
                    a.precedence.value,
                    known.join(", ")
                ),
            ));
        }
    }
    if a.sources.is_empty() {
        errors.push(at(file, &a.precedence, "allocator texts have no source"));
    }
    let texts = a
        .fix_notes
        .texts()
        .into_iter()
        .map(|(n, t)| (n, t, AllocFixNotes::PLACEHOLDERS))
        .chain(
            a.panel
                .texts()
                .into_iter()
                .map(|(n, t)| (n, t, AllocPanel::PLACEHOLDERS)),
        );
    for (name, text, table) in texts {
        let allowed = table
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
            .unwrap_or(&[]);
        for p in placeholders(&text.value) {
            if !allowed.contains(&p.as_str()) {
                let may = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                errors.push(at(
                    file,
                    text,
                    format!("{name}: unknown placeholder {{{p}}} (this text may use: {may})"),
                ));
            }
        }
    }
}
