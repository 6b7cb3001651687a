//! Validation: every reference resolves, expressions and regexes compile, no cycles, no
//! unreachable node, every path ends in a conclusion, every finding and remedy has a source.

use super::LazyRegex;
use super::expr::{self, CmpOp, Expr};
use super::schema::{
    AllocFixNotes, AllocPanel, AllocatorText, ClassFile, ClassKind, Conclusion, Edit, HardwareFile,
    PrBase, Remedy, RemedyFile, RunSignKind, RunSignsFile, Severity, Signature, SignatureKind,
    SpannedStr,
};
use super::{Class, CompiledSignature, KbError, KbErrors, KnowledgeBase, KnownFact};
use crate::value::Value;
use crate::vllm::alloc_conf::Precedence;
use crate::vllm::hardware::{Hardware, ModelFamily, SameChip};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Findings of `kb lint` that are not errors.
#[derive(Debug, Clone, PartialEq)]
pub struct Lint {
    pub file: String,
    pub message: String,
}

fn at(file: &str, s: &SpannedStr, message: impl Into<String>) -> KbError {
    KbError {
        file: file.to_string(),
        line: s.referenced.line(),
        column: s.referenced.column(),
        message: message.into(),
    }
}

/// Compile a pattern (to validate it); the result stays compiled.
fn compile_regex(file: &str, s: &SpannedStr, errors: &mut Vec<KbError>) -> Option<LazyRegex> {
    match LazyRegex::new(&s.value) {
        Ok(r) => Some(r),
        Err(e) => {
            let first = e
                .to_string()
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .to_string();
            errors.push(at(file, s, format!("invalid regex {:?}: {first}", s.value)));
            None
        }
    }
}

/// The line regex of a `frame` given by file and/or function: a Python traceback frame
/// (`File "PATH", line N, in FUNC`) or the `PATH:N in FUNC` form of rich and pytest.
pub fn frame_regex(file: Option<&str>, function: Option<&str>) -> String {
    match (file, function) {
        (Some(f), Some(g)) => format!("(?:{f})(?:\", line \\d+,|:\\d+:?) in (?:{g})\\b"),
        (Some(f), None) => format!("(?:{f})(?:\", line \\d+|:\\d+:? in )"),
        (None, Some(g)) => format!("(?:\", line \\d+,|:\\d+:?) in (?:{g})\\b"),
        (None, None) => String::new(),
    }
}

/// What the scanner searches the whole text for, to find candidate lines: the file (or else the
/// function) part of a frame, which carries a literal the regex engine can look for fast; the
/// frame regex then checks the line. Other signatures are searched as they are.
pub fn frame_trigger(file: Option<&str>, function: Option<&str>) -> String {
    file.or(function).unwrap_or_default().to_string()
}

/// Compile a signature's line regex: its `pattern`, or for a frame its file/function.
fn compile_signature(file: &str, s: &Signature, errors: &mut Vec<KbError>) -> Option<LazyRegex> {
    let kind = s.effective_kind();
    if s.kind.is_some() && s.strength.is_some() {
        errors.push(at(
            file,
            &s.id,
            "give `kind` or the older `strength`, not both",
        ));
    }
    let frame_parts = s.file.is_some() || s.function.is_some();
    if frame_parts && kind != SignatureKind::Frame {
        errors.push(at(
            file,
            &s.id,
            "`file`/`function` are for `kind: frame` signatures",
        ));
        return None;
    }
    match (&s.pattern, frame_parts) {
        (Some(p), false) => compile_regex(file, p, errors),
        (Some(p), true) => {
            errors.push(at(file, p, "give `pattern` or `file`/`function`, not both"));
            None
        }
        (None, true) => {
            // Each part must compile on its own, so errors point at the part.
            for part in [&s.file, &s.function].into_iter().flatten() {
                compile_regex(file, part, errors)?;
            }
            let source = frame_regex(
                s.file.as_ref().map(|f| f.value.as_str()),
                s.function.as_ref().map(|f| f.value.as_str()),
            );
            match LazyRegex::new(&source) {
                Ok(r) => Some(r),
                Err(e) => {
                    errors.push(at(
                        file,
                        &s.id,
                        format!("frame regex does not compile: {e}"),
                    ));
                    None
                }
            }
        }
        (None, false) => {
            errors.push(at(
                file,
                &s.id,
                format!("signature {:?} has no `pattern`", s.id.value),
            ));
            None
        }
    }
}

/// A context signature's `when`: an expression over known facts only (no `log()` or
/// `answer()`: it speaks about the host, not the log).
fn compile_when(
    file: &str,
    s: &Signature,
    when: &SpannedStr,
    is_known_fact: KnownFact,
    errors: &mut Vec<KbError>,
) -> Option<Expr> {
    if s.effective_kind() != SignatureKind::Context {
        errors.push(at(file, when, "`when` is for `kind: context` signatures"));
        return None;
    }
    match expr::parse(&when.value) {
        Ok(e) => {
            let refs = expr::references(&e);
            for f in &refs.facts {
                if !is_known_fact(f) {
                    errors.push(at(file, when, format!("unknown fact {f:?} in when")));
                }
            }
            if !refs.signatures.is_empty() || !refs.answers.is_empty() {
                errors.push(at(
                    file,
                    when,
                    "`when` reads facts only (no log() or answer())",
                ));
            }
            Some(e)
        }
        Err(e) => {
            errors.push(at(
                file,
                when,
                format!(
                    "in when {:?} at character {}: {}",
                    when.value,
                    e.offset + 1,
                    e.message
                ),
            ));
            None
        }
    }
}

/// Class-level rules about signatures: a `context` class holds only context signatures and no
/// tree; only a failure class may be a `fallback`.
fn check_class_shape(file: &str, d: &ClassFile, errors: &mut Vec<KbError>) {
    if d.fallback && d.kind != ClassKind::Failure {
        errors.push(at(file, &d.class, "only a failure class can be a fallback"));
    }
    if d.kind == ClassKind::Context {
        if !d.start.is_empty() || !d.nodes.is_empty() || !d.conclusions.is_empty() {
            errors.push(at(
                file,
                &d.class,
                "a context class holds signatures only (no start, nodes or conclusions)",
            ));
        }
        for s in &d.signatures {
            if s.effective_kind() != SignatureKind::Context {
                errors.push(at(
                    file,
                    &s.id,
                    "a context class holds only `kind: context` signatures",
                ));
            }
        }
    }
}

/// Resolve `requires`, `excluded_by` and `confirm_with` to signature indexes. They must name
/// signatures that exist; `requires` may not form a cycle.
fn resolve_signature_refs(
    signatures: &mut [CompiledSignature],
    pending: &[(String, usize, &Signature)],
    errors: &mut Vec<KbError>,
) {
    let index: HashMap<String, usize> = signatures
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id.clone(), i))
        .collect();
    for (file, i, s) in pending {
        let mut resolve = |list: &[SpannedStr], field: &str| -> Vec<usize> {
            list.iter()
                .filter_map(|r| match index.get(&r.value) {
                    Some(&j) if j == *i => {
                        errors.push(at(file, r, format!("{field} names the signature itself")));
                        None
                    }
                    Some(&j) => Some(j),
                    None => {
                        errors.push(at(
                            file,
                            r,
                            format!("{field}: {:?} names no signature", r.value),
                        ));
                        None
                    }
                })
                .collect()
        };
        let requires = resolve(&s.requires, "requires");
        let excluded_by = resolve(&s.excluded_by, "excluded_by");
        let confirm_with = resolve(&s.confirm_with, "confirm_with");
        if let Some(sig) = signatures.get_mut(*i) {
            sig.requires = requires;
            sig.excluded_by = excluded_by;
            sig.confirm_with = confirm_with;
        }
    }
    // `requires` chains must end: walk each with a depth bound of the number of signatures.
    for (file, i, s) in pending {
        let mut seen = vec![false; signatures.len()];
        let mut stack = vec![*i];
        let mut cyclic = false;
        while let Some(j) = stack.pop() {
            for &k in &signatures[j].requires {
                if k == *i {
                    cyclic = true;
                }
                if !seen[k] {
                    seen[k] = true;
                    stack.push(k);
                }
            }
        }
        if cyclic {
            errors.push(at(
                file,
                &s.id,
                format!("requires of {:?} leads back to itself", s.id.value),
            ));
        }
    }
}

/// Is `id` an identifier: a lower-case letter, then lower-case letters, digits and `_`?
/// Ids go into commands the tool prints (`fix --remedy ID`), file names and Prometheus labels,
/// so a `|`, a blank or a `$(…)` in one would be a command of its own.
pub fn is_identifier(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && id.len() <= 80
}

/// Every id of the knowledge base (classes, signatures, nodes, conclusions, changes, remedies,
/// model families, run signs) is an identifier ([`is_identifier`]), at its file:line:col.
fn check_identifiers(
    classes: &[Class],
    remedy_files: &[(String, RemedyFile)],
    hardware_files: &[(String, HardwareFile)],
    run_sign_files: &[(String, RunSignsFile)],
    errors: &mut Vec<KbError>,
) {
    let mut check = |file: &str, what: &str, id: &SpannedStr| {
        if !is_identifier(&id.value) {
            errors.push(at(
                file,
                id,
                format!(
                    "{what} id {:?} is not an identifier (a lower-case letter, then lower-case \
                     letters, digits and _, at most 80)",
                    id.value
                ),
            ));
        }
    };
    for c in classes {
        let (f, d) = (c.file.as_str(), &c.def);
        check(f, "class", &d.class);
        d.signatures
            .iter()
            .for_each(|x| check(f, "signature", &x.id));
        d.nodes.iter().for_each(|x| check(f, "node", &x.id));
        d.conclusions
            .iter()
            .for_each(|x| check(f, "conclusion", &x.id));
        d.changes.iter().for_each(|x| check(f, "change", &x.id));
    }
    for (f, rf) in remedy_files {
        rf.remedies.iter().for_each(|x| check(f, "remedy", &x.id));
        rf.changes.iter().for_each(|x| check(f, "change", &x.id));
    }
    for (f, hf) in hardware_files {
        hf.model_families
            .iter()
            .for_each(|x| check(f, "model family", &x.id));
    }
    for (f, rs) in run_sign_files {
        rs.run_signs
            .iter()
            .for_each(|x| check(f, "run sign", &x.id));
    }
}

/// The parsed files of one knowledge base, by kind.
#[derive(Default)]
pub(super) struct Files {
    pub classes: Vec<Class>,
    pub remedies: Vec<(String, RemedyFile)>,
    pub hardware: Vec<(String, HardwareFile)>,
    pub allocator: Vec<(String, AllocatorText)>,
    pub run_signs: Vec<(String, RunSignsFile)>,
}

/// The one file of a table kind: missing or repeated is an error.
fn one<'a, T>(
    found: &'a [(String, T)],
    name: &str,
    origin: &str,
    errors: &mut Vec<KbError>,
) -> Option<&'a (String, T)> {
    for (file, _) in found.iter().skip(1) {
        errors.push(KbError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("a second {name} (the first is {})", found[0].0),
        });
    }
    if found.is_empty() {
        errors.push(KbError {
            file: origin.to_string(),
            line: 0,
            column: 0,
            message: format!("no {name}"),
        });
    }
    found.first()
}

pub(super) fn build(
    files: Files,
    origin: &str,
    is_known_fact: KnownFact,
) -> Result<KnowledgeBase, KbErrors> {
    let Files {
        mut classes,
        remedies: remedy_files,
        hardware: hardware_files,
        allocator: allocator_files,
        run_signs: run_sign_files,
    } = files;
    let mut errors = Vec::new();
    check_identifiers(
        &classes,
        &remedy_files,
        &hardware_files,
        &run_sign_files,
        &mut errors,
    );

    // Remedies, unique by id, each with a source.
    let mut remedies: BTreeMap<String, Remedy> = BTreeMap::new();
    for (file, rf) in &remedy_files {
        for r in &rf.remedies {
            if remedies.contains_key(&r.id.value) {
                errors.push(at(
                    file,
                    &r.id,
                    format!("duplicate remedy id {:?}", r.id.value),
                ));
            }
            if r.sources.is_empty() {
                errors.push(at(
                    file,
                    &r.id,
                    format!("remedy {:?} has no source", r.id.value),
                ));
            }
            remedies.insert(r.id.value.clone(), r.clone());
        }
    }
    one(&remedy_files, super::REMEDIES_FILE, origin, &mut errors);
    for (file, rf) in &remedy_files {
        check_relations(file, rf, &remedies, &mut errors);
    }
    let prs = check_prs(&remedy_files, &remedies, &mut errors);
    // Version knowledge: every change, then the ranges that name them (kb/versions.rs).
    let change_sources = remedy_files
        .iter()
        .map(|(f, rf)| (f.as_str(), rf.changes.as_slice()))
        .chain(
            classes
                .iter()
                .map(|c| (c.file.as_str(), c.def.changes.as_slice())),
        );
    let changes = super::versions::collect_changes(change_sources, &mut errors);
    let mut change_files = BTreeMap::new();
    for (file, list) in remedy_files
        .iter()
        .map(|(f, rf)| (f, &rf.changes))
        .chain(classes.iter().map(|c| (&c.file, &c.def.changes)))
    {
        for ch in list {
            change_files.insert(ch.id.value.clone(), file.clone());
        }
    }
    let mut remedy_holds = BTreeMap::new();
    for (file, rf) in &remedy_files {
        for r in &rf.remedies {
            let owner = format!("remedy {:?}", r.id.value);
            let bounds =
                super::versions::compile_holds(file, &owner, &r.holds, &changes, &mut errors);
            if !bounds.is_empty() {
                remedy_holds.insert(r.id.value.clone(), bounds);
            }
        }
    }
    for c in &mut classes {
        let mut holds = BTreeMap::new();
        for k in &c.def.conclusions {
            super::versions::check_holds_severity(
                &c.file,
                &k.id,
                k.severity,
                &k.holds,
                &mut errors,
            );
            let owner = format!("conclusion {:?}", k.id.value);
            let bounds =
                super::versions::compile_holds(&c.file, &owner, &k.holds, &changes, &mut errors);
            if !bounds.is_empty() {
                holds.insert(k.id.value.clone(), bounds);
            }
        }
        c.holds = holds;
    }
    let hardware = one(&hardware_files, super::HARDWARE_FILE, origin, &mut errors)
        .map(|(file, h)| check_hardware(file, h, &mut errors))
        .unwrap_or_default();
    let allocator =
        one(&allocator_files, super::ALLOCATOR_FILE, origin, &mut errors).map(|(file, a)| {
            check_allocator(file, a, &mut errors);
            a.clone()
        });
    let run_signs = one(&run_sign_files, super::RUN_SIGNS_FILE, origin, &mut errors)
        .map(|(file, r)| check_run_signs(file, r, &mut errors))
        .unwrap_or_default();
    let mut probes: HashMap<super::schema::ProbeKind, String> = HashMap::new();
    for c in &classes {
        if let Some(p) = c.def.probe
            && let Some(prev) = probes.insert(p, c.id().to_string())
        {
            errors.push(at(
                &c.file,
                &c.def.class,
                format!(
                    "class {:?} names probe {p:?}, which class {prev:?} names already",
                    c.id()
                ),
            ));
        }
    }

    // Global id spaces: classes, signatures, nodes (answers refer to nodes by id alone).
    let mut class_ids: HashMap<String, String> = HashMap::new();
    let mut sig_ids: HashSet<String> = HashSet::new();
    let mut node_ids: HashSet<String> = HashSet::new();
    let mut signatures = Vec::new();
    // Compiling the signature regexes is a third of the load time; do it per class in parallel.
    type Compiled = (
        Option<LazyRegex>,
        Vec<LazyRegex>,
        Vec<LazyRegex>,
        Vec<KbError>,
    );
    let compiled: Vec<Vec<Compiled>> = std::thread::scope(|scope| {
        let handles: Vec<_> = classes
            .iter()
            .map(|c| {
                scope.spawn(move || {
                    c.def
                        .signatures
                        .iter()
                        .map(|s| {
                            let mut errs = Vec::new();
                            let regex = compile_signature(&c.file, s, &mut errs);
                            let unless = s
                                .unless
                                .iter()
                                .filter_map(|u| compile_regex(&c.file, u, &mut errs))
                                .collect();
                            let unless_log = s
                                .unless_log
                                .iter()
                                .filter_map(|u| compile_regex(&c.file, u, &mut errs))
                                .collect();
                            (regex, unless, unless_log, errs)
                        })
                        .collect::<Vec<Compiled>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    // Signature references (requires / excluded_by / confirm_with), resolved once every id is known.
    let mut pending_refs: Vec<(String, usize, &Signature)> = Vec::new();
    for (c, class_regexes) in classes.iter().zip(compiled) {
        let mut class_regexes = class_regexes.into_iter();
        let file = &c.file;
        let d = &c.def;
        if let Some(prev) = class_ids.insert(d.class.value.clone(), file.clone()) {
            errors.push(at(
                file,
                &d.class,
                format!("class {:?} is also defined in {prev}", d.class.value),
            ));
        }
        check_class_shape(file, d, &mut errors);
        for s in &d.signatures {
            if !sig_ids.insert(s.id.value.clone()) {
                errors.push(at(
                    file,
                    &s.id,
                    format!("duplicate signature id {:?}", s.id.value),
                ));
            }
            // One entry per signature, in order; a panicked thread left none (reported below).
            let (regex, unless, unless_log, errs) = class_regexes.next().unwrap_or_else(|| {
                let err = at(file, &s.id, "the regex compiler panicked on this class");
                (None, Vec::new(), Vec::new(), vec![err])
            });
            errors.extend(errs);
            if let Some(regex) = regex {
                pending_refs.push((file.clone(), signatures.len(), s));
                let search = match (&s.file, &s.function) {
                    (None, None) => regex.as_str().to_string(),
                    (f, g) => frame_trigger(
                        f.as_ref().map(|x| x.value.as_str()),
                        g.as_ref().map(|x| x.value.as_str()),
                    ),
                };
                signatures.push(CompiledSignature {
                    search,
                    id: s.id.value.clone(),
                    class: d.class.value.clone(),
                    kind: s.effective_kind(),
                    weight: s.effective_weight(),
                    regex,
                    unless,
                    after: s.after.iter().map(|a| a.value.clone()).collect(),
                    unless_log,
                    requires: Vec::new(),
                    excluded_by: Vec::new(),
                    confirm_with: Vec::new(),
                    requires_run: s.requires_run.clone(),
                    when: s
                        .when
                        .as_ref()
                        .and_then(|w| compile_when(file, s, w, is_known_fact, &mut errors)),
                    unconfirmed: s.unconfirmed.clone(),
                    note: s.note.clone(),
                    sources: s.sources.clone(),
                });
            }
        }
        for n in &d.nodes {
            if !node_ids.insert(n.id.value.clone()) {
                errors.push(at(
                    file,
                    &n.id,
                    format!("duplicate node id {:?}", n.id.value),
                ));
            }
        }
    }
    resolve_signature_refs(&mut signatures, &pending_refs, &mut errors);

    let families: HashSet<&str> = hardware
        .model_families
        .iter()
        .map(|f| f.id.as_str())
        .collect();
    for c in &mut classes {
        check_class(
            c,
            &remedies,
            &sig_ids,
            &node_ids,
            &Known {
                fact: is_known_fact,
                families: &families,
            },
            &mut errors,
        );
    }

    match allocator {
        Some(allocator) if errors.is_empty() => Ok(KnowledgeBase {
            classes,
            remedies,
            signatures,
            prs,
            hardware,
            allocator,
            run_signs,
            changes,
            change_files,
            remedy_holds,
            origin: origin.to_string(),
        }),
        _ => Err(KbErrors(errors)),
    }
}

/// run_signs.yaml: ids unique, each pattern compiles and finds its examples, each has the
/// fields its sign needs (and no others), a source, and needles for the prefilter.
fn check_run_signs(
    file: &str,
    r: &RunSignsFile,
    errors: &mut Vec<KbError>,
) -> Vec<super::CompiledRunSign> {
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
        out.push(super::CompiledRunSign {
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
fn check_relations(
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
fn check_prs(
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
fn check_hardware(file: &str, h: &HardwareFile, errors: &mut Vec<KbError>) -> Hardware {
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
fn check_allocator(file: &str, a: &AllocatorText, errors: &mut Vec<KbError>) {
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

/// What a check may name: facts (the caller's predicate) and model family ids.
struct Known<'a> {
    fact: KnownFact,
    families: &'a HashSet<&'a str>,
}

/// String literals a check compares `model.type_hint` with (`==`, `!=`, `in [...]`).
fn type_hint_literals(e: &Expr, out: &mut Vec<String>) {
    let is_hint = |e: &Expr| matches!(e, Expr::Path(p) if p == "model.type_hint");
    let lit = |e: &Expr| match e {
        Expr::Lit(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    match e {
        Expr::Cmp(CmpOp::Eq | CmpOp::Ne, a, b) => {
            if is_hint(a) {
                out.extend(lit(b));
            }
            if is_hint(b) {
                out.extend(lit(a));
            }
        }
        Expr::In(a, b) if is_hint(a) => {
            if let Expr::List(items) = b.as_ref() {
                out.extend(items.iter().filter_map(lit));
            }
        }
        _ => {}
    }
    match e {
        Expr::Not(x) => type_hint_literals(x, out),
        Expr::And(a, b) | Expr::Or(a, b) | Expr::Cmp(_, a, b) | Expr::In(a, b) => {
            type_hint_literals(a, out);
            type_hint_literals(b, out);
        }
        Expr::List(xs) | Expr::Call(_, xs) => xs.iter().for_each(|x| type_hint_literals(x, out)),
        Expr::Lit(_) | Expr::Path(_) => {}
    }
}

fn check_class(
    c: &mut Class,
    remedies: &BTreeMap<String, Remedy>,
    sig_ids: &HashSet<String>,
    node_ids: &HashSet<String>,
    known: &Known<'_>,
    errors: &mut Vec<KbError>,
) {
    let is_known_fact = known.fact;
    let file = c.file.clone();
    let d: &ClassFile = &c.def;
    for s in &d.signatures {
        for a in &s.after {
            if !sig_ids.contains(&a.value) {
                errors.push(at(
                    &file,
                    a,
                    format!("after: {:?} names no signature", a.value),
                ));
            } else if a.value == s.id.value {
                errors.push(at(&file, a, "after: a signature cannot follow itself"));
            }
        }
    }
    let nodes: HashMap<&str, usize> = d
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.value.as_str(), i))
        .collect();
    let mut conclusions: HashSet<&str> = HashSet::new();
    for k in &d.conclusions {
        if nodes.contains_key(k.id.value.as_str()) || !conclusions.insert(k.id.value.as_str()) {
            errors.push(at(
                &file,
                &k.id,
                format!(
                    "duplicate id {:?} (node and conclusion ids share one space)",
                    k.id.value
                ),
            ));
        }
        if k.sources.is_empty() {
            errors.push(at(
                &file,
                &k.id,
                format!("conclusion {:?} has no source", k.id.value),
            ));
        }
        if !placeholders(&k.title).is_empty() {
            errors.push(at(
                &file,
                &k.id,
                format!(
                    "conclusion {:?}: the title is shown as written; put {{fact}} placeholders in evidence",
                    k.id.value
                ),
            ));
        }
        for message in state_errors(k) {
            errors.push(at(
                &file,
                &k.id,
                format!("conclusion {:?}: {message}", k.id.value),
            ));
        }
        if let Some(t) = &k.title_unmeasured {
            if t.trim().is_empty() {
                errors.push(at(
                    &file,
                    &k.id,
                    format!("conclusion {:?}: title_unmeasured is empty", k.id.value),
                ));
            }
            if !placeholders(t).is_empty() {
                errors.push(at(
                    &file,
                    &k.id,
                    format!(
                        "conclusion {:?}: title_unmeasured is shown as written; put {{fact}} placeholders in evidence",
                        k.id.value
                    ),
                ));
            }
        }
        for r in &k.remedies {
            if !remedies.contains_key(&r.value) {
                errors.push(at(&file, r, format!("unknown remedy {:?}", r.value)));
            }
        }
        for ev in &k.evidence {
            for name in placeholders(&ev.value) {
                if !is_known_fact(&name) {
                    errors.push(at(
                        &file,
                        ev,
                        format!("unknown fact {{{name}}} in evidence"),
                    ));
                }
            }
        }
    }
    let resolves = |s: &SpannedStr| {
        nodes.contains_key(s.value.as_str()) || conclusions.contains(s.value.as_str())
    };

    if d.start.is_empty() && !d.stub && d.kind != ClassKind::Context {
        errors.push(KbError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("class {:?} has no start node", d.class.value),
        });
    }
    if d.kind == ClassKind::Failure && d.start.len() > 1 {
        errors.push(at(
            &file,
            &d.start[1],
            "a failure class has one start; use kind: checklist for several",
        ));
    }
    for s in &d.start {
        if !resolves(s) {
            errors.push(at(
                &file,
                s,
                format!(
                    "start {:?} is not a node or conclusion of this class",
                    s.value
                ),
            ));
        }
    }

    let mut checks = BTreeMap::new();
    for n in &d.nodes {
        for target in [Some(&n.yes), Some(&n.no), n.unsure.as_ref()]
            .into_iter()
            .flatten()
        {
            if !resolves(target) {
                errors.push(at(
                    &file,
                    target,
                    format!(
                        "{:?} is not a node or conclusion of class {:?}",
                        target.value, d.class.value
                    ),
                ));
            }
        }
        if let Some(check) = &n.check {
            match expr::parse(&check.value) {
                Ok(e) => {
                    let refs = expr::references(&e);
                    for f in &refs.facts {
                        if !is_known_fact(f) {
                            errors.push(at(
                                &file,
                                check,
                                format!("unknown fact {f:?} (see `sm120-doctor kb facts`)"),
                            ));
                        }
                    }
                    for s in &refs.signatures {
                        if !sig_ids.contains(s) {
                            errors.push(at(&file, check, format!("log({s:?}) names no signature")));
                        }
                    }
                    for a in &refs.answers {
                        if !node_ids.contains(a) {
                            errors.push(at(&file, check, format!("answer({a:?}) names no node")));
                        }
                    }
                    let mut hints = Vec::new();
                    type_hint_literals(&e, &mut hints);
                    for h in hints {
                        if !known.families.contains(h.as_str()) {
                            errors.push(at(
                                &file,
                                check,
                                format!(
                                    "{h:?} is not a model family of hardware.yaml (model.type_hint)"
                                ),
                            ));
                        }
                    }
                    checks.insert(n.id.value.clone(), e);
                }
                Err(e) => errors.push(KbError {
                    file: file.clone(),
                    line: check.referenced.line(),
                    column: check.referenced.column(),
                    message: format!(
                        "in check {:?} at character {}: {}",
                        shorten(&check.value, 80),
                        e.offset + 1,
                        e.message
                    ),
                }),
            }
        }
    }

    // Walk from every start: cycles and reachability.
    let mut reached: HashSet<String> = HashSet::new();
    for s in &d.start {
        let mut stack: Vec<String> = Vec::new();
        visit(d, &nodes, &s.value, &mut stack, &mut reached, &file, errors);
    }
    for n in &d.nodes {
        if !reached.contains(&n.id.value) {
            errors.push(at(
                &file,
                &n.id,
                format!("node {:?} is unreachable from the start", n.id.value),
            ));
        }
    }
    for k in &d.conclusions {
        if !reached.contains(&k.id.value) {
            errors.push(at(
                &file,
                &k.id,
                format!("conclusion {:?} is unreachable", k.id.value),
            ));
        }
    }
    c.checks = checks;
}

fn visit(
    d: &ClassFile,
    nodes: &HashMap<&str, usize>,
    id: &str,
    stack: &mut Vec<String>,
    reached: &mut HashSet<String>,
    file: &str,
    errors: &mut Vec<KbError>,
) {
    if stack.iter().any(|s| s == id) {
        let node = &d.nodes[nodes[id]];
        errors.push(at(
            file,
            &node.id,
            format!("cycle: {} -> {id}", stack.join(" -> ")),
        ));
        return;
    }
    let first_visit = reached.insert(id.to_string());
    let Some(&i) = nodes.get(id) else { return };
    if !first_visit && !stack.is_empty() {
        // Already explored from another path; a cycle through it would have been found then.
        return;
    }
    let n = &d.nodes[i];
    stack.push(id.to_string());
    for t in [Some(&n.yes), Some(&n.no), n.unsure.as_ref()]
        .into_iter()
        .flatten()
    {
        if nodes.contains_key(t.value.as_str())
            || d.conclusions.iter().any(|k| k.id.value == t.value)
        {
            visit(d, nodes, &t.value, stack, reached, file, errors);
        }
    }
    stack.pop();
}

/// `{fact.name}` placeholders in an evidence template.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                out.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

/// `s` cut to at most `max` characters (an error quoting a 30,000-character check stays short).
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// Shell or template syntax in a knowledge-base string, described; `None` for plain text.
pub fn script_syntax(s: &str) -> Option<String> {
    const MARKS: &[(&str, &str)] = &[
        ("$(", "a shell command substitution `$(`"),
        ("`", "a backtick"),
        ("${", "a shell expansion `${`"),
        ("@@", "a template marker `@@`"),
        ("{{", "template syntax `{{`"),
        ("{%", "template syntax `{%`"),
        ("@{", "template syntax `@{`"),
        ("@%", "template syntax `@%`"),
    ];
    if let Some((_, why)) = MARKS.iter().find(|(m, _)| s.contains(m)) {
        return Some((*why).to_string());
    }
    s.chars()
        .find(|c| c.is_control())
        .map(|c| format!("a control character {c:?}"))
}

/// Words of a title that say the check did not run. Such a conclusion is `not_checked`, never
/// a pass ("Out-of-memory not checked: no log given" is not a ✓).
const UNCHECKED_WORDS: [&str; 5] = [
    "not checked",
    "not measured",
    "not compared",
    "no log given",
    "no launch given",
];

/// Words of a title that say the check is about something this host does not have.
const NOT_APPLICABLE_WORDS: [&str; 1] = ["does not apply"];

fn says_any(title: &str, words: &[&str]) -> bool {
    let t = title.to_lowercase();
    words.iter().any(|w| t.contains(w))
}

/// What is wrong with a conclusion's `state:` / `missing:` / `refuted_by:` against its severity
/// and title.
fn state_errors(k: &Conclusion) -> Vec<String> {
    use super::schema::CheckState;
    let mut out = Vec::new();
    let state = k.state();
    let ok = k.severity == Severity::Ok;
    match (state, ok) {
        (CheckState::Problem, true) => {
            out.push("state: problem needs a severity above ok".to_string())
        }
        (CheckState::Passed | CheckState::NotChecked | CheckState::NotApplicable, false) => out
            .push(format!(
                "state: {} needs severity: ok (a finding above ok is a problem)",
                state.as_str()
            )),
        _ => {}
    }
    if state == CheckState::NotChecked && k.missing.is_empty() {
        out.push("state: not_checked needs missing: [the input that was not given]".into());
    }
    if state != CheckState::NotChecked && !k.missing.is_empty() {
        out.push("missing: is only for state: not_checked".into());
    }
    if ok && state != CheckState::NotChecked && says_any(&k.title, &UNCHECKED_WORDS) {
        out.push(format!(
            "the title says the check did not run ({:?}), so it cannot be {}: give it state: not_checked and missing:",
            k.title,
            state.as_str()
        ));
    }
    if ok && state == CheckState::Passed && says_any(&k.title, &NOT_APPLICABLE_WORDS) {
        out.push(format!(
            "the title says the check does not apply ({:?}): give it state: not_applicable",
            k.title
        ));
    }
    if state != CheckState::Problem && !k.refuted_by.is_empty() {
        out.push("refuted_by: is only for a conclusion that reports a problem".into());
    }
    out
}

/// Does a title predict an outcome ("… will crash …")?
fn predicts(title: &str) -> bool {
    title
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("will"))
}

/// Non-fatal lint: stub classes, signature-only classes, PR bases no remedy applies, predictions
/// with no wording for when they are not measured, and the version lints of `kb::versions` (a
/// change with no source, a version claim with no range).
pub fn lints(kb: &KnowledgeBase) -> Vec<Lint> {
    let mut out = super::versions::lints(kb);
    out.extend(super::sources::lints(kb));
    for p in &kb.prs {
        let used = kb.remedies.values().any(|r| {
            r.edits
                .iter()
                .any(|e| matches!(e, Edit::PatchScript { pr } if *pr == p.pr.value))
        });
        if !used {
            out.push(Lint {
                file: super::REMEDIES_FILE.into(),
                message: format!(
                    "PR #{} is listed under prs: but no remedy applies it",
                    p.pr.value
                ),
            });
        }
    }
    // Strings that end up in generated scripts and reports: quoting makes them inert (the patch
    // script's filters), but shell or template syntax in a shared knowledge base is a red flag.
    for r in kb.remedies.values() {
        let mut texts: Vec<(&str, &str)> = vec![
            ("title", r.title.as_str()),
            ("verified", r.verified.as_str()),
            ("cost", r.cost.text.as_str()),
        ];
        texts.extend(r.limits.iter().map(|l| ("limit", l.as_str())));
        for (what, t) in texts {
            if let Some(why) = script_syntax(t) {
                out.push(Lint {
                    file: super::REMEDIES_FILE.into(),
                    message: format!("remedy {:?}: its {what} holds {why}: {t:?}", r.id.value),
                });
            }
        }
    }
    for p in &kb.prs {
        for (what, t) in [
            ("why", p.why.as_str()),
            ("expected_version", p.expected_version.value.as_str()),
        ] {
            if let Some(why) = script_syntax(t) {
                out.push(Lint {
                    file: super::REMEDIES_FILE.into(),
                    message: format!("PR #{}: its {what} holds {why}: {t:?}", p.pr.value),
                });
            }
        }
    }
    for c in &kb.classes {
        if c.def.stub {
            out.push(Lint {
                file: c.file.clone(),
                message: format!("class {:?} is a stub: signatures only, no tree yet", c.id()),
            });
        }
        for k in &c.def.conclusions {
            if k.severity >= super::schema::Severity::Warning
                && predicts(&k.title)
                && k.title_unmeasured.is_none()
            {
                out.push(Lint {
                    file: c.file.clone(),
                    message: format!(
                        "conclusion {:?} predicts (\"will …\") but has no title_unmeasured for when a \
                         condition rests on a typed answer or an assumption (\"would … if …\")",
                        k.id.value
                    ),
                });
            }
        }
        if c.def.signatures.is_empty()
            && c.def.kind == ClassKind::Failure
            && !c.def.no_log_signature
        {
            out.push(Lint {
                file: c.file.clone(),
                message: format!("class {:?} has no log signature", c.id()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_are_told_by_the_word_will() {
        assert!(predicts("This launch will crash"));
        assert!(predicts("Will it crash?"));
        assert!(!predicts("This launch would crash if …"));
        assert!(!predicts("willing"));
    }

    fn conclusion(yaml: &str) -> Conclusion {
        serde_saphyr::from_str(yaml).expect("conclusion")
    }

    #[test]
    fn a_title_that_says_not_checked_cannot_pass() {
        let base = "id: x\nseverity: ok\nconfidence: CONFIRMED\n";
        let k = conclusion(&format!(
            "{base}title: \"Out-of-memory not checked: no log given\"\n"
        ));
        let e = state_errors(&k);
        assert!(e.iter().any(|m| m.contains("did not run")), "{e:?}");
        let k = conclusion(&format!(
            "{base}title: \"Out-of-memory not checked\"\nstate: not_checked\nmissing: [log]\n"
        ));
        assert_eq!(state_errors(&k), Vec::<String>::new());
        // not_checked says which input is missing.
        let k = conclusion(&format!("{base}title: \"t\"\nstate: not_checked\n"));
        assert!(state_errors(&k).iter().any(|m| m.contains("missing")));
        let k = conclusion(&format!("{base}title: \"Does not apply (one GPU)\"\n"));
        assert!(
            state_errors(&k)
                .iter()
                .any(|m| m.contains("not_applicable"))
        );
    }

    #[test]
    fn the_state_agrees_with_the_severity() {
        let k =
            conclusion("id: x\nseverity: error\nconfidence: CONFIRMED\ntitle: t\nstate: passed\n");
        assert!(state_errors(&k).iter().any(|m| m.contains("severity: ok")));
        let k =
            conclusion("id: x\nseverity: ok\nconfidence: CONFIRMED\ntitle: t\nstate: problem\n");
        assert!(state_errors(&k).iter().any(|m| m.contains("above ok")));
        let k = conclusion(
            "id: x\nseverity: ok\nconfidence: CONFIRMED\ntitle: t\nrefuted_by: [startup_complete]\n",
        );
        assert!(state_errors(&k).iter().any(|m| m.contains("refuted_by")));
        let k = conclusion(
            "id: x\nseverity: error\nconfidence: CONFIRMED\ntitle: t\nrefuted_by: [graph_capture_done]\n",
        );
        assert_eq!(k.state(), super::super::schema::CheckState::Problem);
        assert_eq!(state_errors(&k), Vec::<String>::new());
    }

    #[test]
    fn placeholders_are_found() {
        assert_eq!(
            placeholders("TP={launch.tp}, conf={alloc.conf}"),
            vec!["launch.tp", "alloc.conf"]
        );
        assert!(placeholders("none").is_empty());
    }
}
