//! Validation: every reference resolves, expressions and regexes compile, no cycles, no
//! unreachable node, every path ends in a conclusion, every finding and remedy has a source.

use super::LazyRegex;
use super::expr::{self, CmpOp, Expr};
use super::schema::{
    AllocFixNotes, AllocPanel, AllocatorText, Change, ClassFile, ClassKind, Conclusion, Edit,
    HardwareFile, PrBase, Remedy, RemedyFile, RunSignKind, RunSignsFile, Severity, Signature,
    SignatureKind, SpannedStr,
};
use super::versions::VersionBound;
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

/// Validate and assemble a knowledge base: the tables first (remedies, versions, hardware,
/// allocator, run signs), then the classes. Errors come in that order; any error refuses it.
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
    let remedies = collect_remedies(&remedy_files, &mut errors);
    one(&remedy_files, super::REMEDIES_FILE, origin, &mut errors);
    for (file, rf) in &remedy_files {
        check_relations(file, rf, &remedies, &mut errors);
    }
    let prs = check_prs(&remedy_files, &remedies, &mut errors);
    let versions = check_versions(&remedy_files, &mut classes, &mut errors);
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
    check_probes(&classes, &mut errors);
    let ids = index_classes(&classes, is_known_fact, &mut errors);

    let families: HashSet<&str> = hardware
        .model_families
        .iter()
        .map(|f| f.id.as_str())
        .collect();
    for c in &mut classes {
        check_class(
            c,
            &remedies,
            &ids.sig_ids,
            &ids.node_ids,
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
            signatures: ids.signatures,
            prs,
            hardware,
            allocator,
            run_signs,
            changes: versions.changes,
            change_files: versions.change_files,
            remedy_holds: versions.remedy_holds,
            origin: origin.to_string(),
        }),
        _ => Err(KbErrors(errors)),
    }
}

/// Remedies by id: unique, each with a source.
fn collect_remedies(
    remedy_files: &[(String, RemedyFile)],
    errors: &mut Vec<KbError>,
) -> BTreeMap<String, Remedy> {
    let mut remedies: BTreeMap<String, Remedy> = BTreeMap::new();
    for (file, rf) in remedy_files {
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
    remedies
}

/// The version knowledge of a knowledge base (kb/versions.rs).
struct Versions {
    changes: BTreeMap<String, Change>,
    /// The file of each change, by change id.
    change_files: BTreeMap<String, String>,
    remedy_holds: BTreeMap<String, Vec<VersionBound>>,
}

/// Every change (in remedy and class files), then the `holds` ranges that name them: a
/// remedy's kept in [`Versions`], a conclusion's in its class.
fn check_versions(
    remedy_files: &[(String, RemedyFile)],
    classes: &mut [Class],
    errors: &mut Vec<KbError>,
) -> Versions {
    let change_sources = remedy_files
        .iter()
        .map(|(f, rf)| (f.as_str(), rf.changes.as_slice()))
        .chain(
            classes
                .iter()
                .map(|c| (c.file.as_str(), c.def.changes.as_slice())),
        );
    let changes = super::versions::collect_changes(change_sources, errors);
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
    for (file, rf) in remedy_files {
        for r in &rf.remedies {
            let owner = format!("remedy {:?}", r.id.value);
            let bounds = super::versions::compile_holds(file, &owner, &r.holds, &changes, errors);
            if !bounds.is_empty() {
                remedy_holds.insert(r.id.value.clone(), bounds);
            }
        }
    }
    for c in classes {
        c.holds = conclusion_holds(c, &changes, errors);
    }
    Versions {
        changes,
        change_files,
        remedy_holds,
    }
}

/// The `holds` ranges of a class's conclusions, by conclusion id.
fn conclusion_holds(
    c: &Class,
    changes: &BTreeMap<String, Change>,
    errors: &mut Vec<KbError>,
) -> BTreeMap<String, Vec<VersionBound>> {
    let mut holds = BTreeMap::new();
    for k in &c.def.conclusions {
        super::versions::check_holds_severity(&c.file, &k.id, k.severity, &k.holds, errors);
        let owner = format!("conclusion {:?}", k.id.value);
        let bounds = super::versions::compile_holds(&c.file, &owner, &k.holds, changes, errors);
        if !bounds.is_empty() {
            holds.insert(k.id.value.clone(), bounds);
        }
    }
    holds
}

/// At most one class names each probe.
fn check_probes(classes: &[Class], errors: &mut Vec<KbError>) {
    let mut probes: HashMap<super::schema::ProbeKind, String> = HashMap::new();
    for c in classes {
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
}

/// A signature's regexes, compiled: the line regex, `unless`, `unless_log`, and the errors.
type CompiledRegexes = (
    Option<LazyRegex>,
    Vec<LazyRegex>,
    Vec<LazyRegex>,
    Vec<KbError>,
);

/// Every class's signature regexes, one thread per class: compiling them is a third of the
/// load time.
fn compile_all_regexes(classes: &[Class]) -> Vec<Vec<CompiledRegexes>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = classes
            .iter()
            .map(|c| {
                scope.spawn(move || {
                    c.def
                        .signatures
                        .iter()
                        .map(|s| compile_regexes(&c.file, s))
                        .collect::<Vec<CompiledRegexes>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

fn compile_regexes(file: &str, s: &Signature) -> CompiledRegexes {
    let mut errs = Vec::new();
    let regex = compile_signature(file, s, &mut errs);
    let unless = s
        .unless
        .iter()
        .filter_map(|u| compile_regex(file, u, &mut errs))
        .collect();
    let unless_log = s
        .unless_log
        .iter()
        .filter_map(|u| compile_regex(file, u, &mut errs))
        .collect();
    (regex, unless, unless_log, errs)
}

/// The global id spaces (answers refer to nodes by id alone) and the compiled signatures.
#[derive(Default)]
struct Ids {
    sig_ids: HashSet<String>,
    node_ids: HashSet<String>,
    signatures: Vec<CompiledSignature>,
}

/// Class, signature and node ids unique across classes; each class's shape; every signature
/// compiled, its references (requires / excluded_by / confirm_with) resolved once every id is
/// known.
fn index_classes(classes: &[Class], is_known_fact: KnownFact, errors: &mut Vec<KbError>) -> Ids {
    let compiled = compile_all_regexes(classes);
    let mut class_ids: HashMap<String, String> = HashMap::new();
    let mut ids = Ids::default();
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
        check_class_shape(file, d, errors);
        for s in &d.signatures {
            if !ids.sig_ids.insert(s.id.value.clone()) {
                errors.push(at(
                    file,
                    &s.id,
                    format!("duplicate signature id {:?}", s.id.value),
                ));
            }
            // One entry per signature, in order; a panicked thread left none (reported here).
            let (regex, unless, unless_log, errs) = class_regexes.next().unwrap_or_else(|| {
                let err = at(file, &s.id, "the regex compiler panicked on this class");
                (None, Vec::new(), Vec::new(), vec![err])
            });
            errors.extend(errs);
            if let Some(regex) = regex {
                pending_refs.push((file.clone(), ids.signatures.len(), s));
                let when = s
                    .when
                    .as_ref()
                    .and_then(|w| compile_when(file, s, w, is_known_fact, errors));
                let sig = compiled_signature(&d.class.value, s, (regex, unless, unless_log), when);
                ids.signatures.push(sig);
            }
        }
        for n in &d.nodes {
            if !ids.node_ids.insert(n.id.value.clone()) {
                errors.push(at(
                    file,
                    &n.id,
                    format!("duplicate node id {:?}", n.id.value),
                ));
            }
        }
    }
    resolve_signature_refs(&mut ids.signatures, &pending_refs, errors);
    ids
}

/// A signature of `class` as the scanner uses it; its references are resolved later.
fn compiled_signature(
    class: &str,
    s: &Signature,
    (regex, unless, unless_log): (LazyRegex, Vec<LazyRegex>, Vec<LazyRegex>),
    when: Option<Expr>,
) -> CompiledSignature {
    let search = match (&s.file, &s.function) {
        (None, None) => regex.as_str().to_string(),
        (f, g) => frame_trigger(
            f.as_ref().map(|x| x.value.as_str()),
            g.as_ref().map(|x| x.value.as_str()),
        ),
    };
    CompiledSignature {
        search,
        needles: super::literals::required_literals(regex.as_str()),
        id: s.id.value.clone(),
        class: class.to_string(),
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
        when,
        unconfirmed: s.unconfirmed.clone(),
        note: s.note.clone(),
        sources: s.sources.clone(),
    }
}

/// What a check may name: facts (the caller's predicate) and model family ids.
struct Known<'a> {
    fact: KnownFact,
    families: &'a HashSet<&'a str>,
}
