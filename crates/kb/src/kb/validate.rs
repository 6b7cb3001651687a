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

mod class;
mod tables;
mod text;

use class::check_class;
use tables::{check_allocator, check_hardware, check_prs, check_relations, check_run_signs};
pub use text::{lints, placeholders};
use text::{shorten, state_errors};

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

/// What a check may name: facts (the caller's predicate) and model family ids.
struct Known<'a> {
    fact: KnownFact,
    families: &'a HashSet<&'a str>,
}
