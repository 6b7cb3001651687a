//! Validation: every reference resolves, expressions and regexes compile, no cycles, no
//! unreachable node, every path ends in a conclusion, every finding and remedy has a source.

use super::expr;
use super::schema::{ClassFile, ClassKind, Remedy, RemedyFile, SpannedStr};
use super::{Class, CompiledSignature, KbError, KbErrors, KnowledgeBase, KnownFact};
use regex::Regex;
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

fn compile_regex(file: &str, s: &SpannedStr, errors: &mut Vec<KbError>) -> Option<Regex> {
    match Regex::new(&s.value) {
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

pub(super) fn build(
    mut classes: Vec<Class>,
    remedy_files: Vec<(String, RemedyFile)>,
    origin: &str,
    is_known_fact: KnownFact,
) -> Result<KnowledgeBase, KbErrors> {
    let mut errors = Vec::new();

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
    if remedy_files.is_empty() {
        errors.push(KbError {
            file: origin.to_string(),
            line: 0,
            column: 0,
            message: "no remedies.yaml".into(),
        });
    }

    // Global id spaces: classes, signatures, nodes (answers refer to nodes by id alone).
    let mut class_ids: HashMap<String, String> = HashMap::new();
    let mut sig_ids: HashSet<String> = HashSet::new();
    let mut node_ids: HashSet<String> = HashSet::new();
    let mut signatures = Vec::new();
    // Compiling the signature regexes is a third of the load time; do it per class in parallel.
    type Compiled = (Option<Regex>, Vec<Regex>, Vec<KbError>);
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
                            let regex = compile_regex(&c.file, &s.pattern, &mut errs);
                            let unless = s
                                .unless
                                .iter()
                                .filter_map(|u| compile_regex(&c.file, u, &mut errs))
                                .collect();
                            (regex, unless, errs)
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
        for s in &d.signatures {
            if !sig_ids.insert(s.id.value.clone()) {
                errors.push(at(
                    file,
                    &s.id,
                    format!("duplicate signature id {:?}", s.id.value),
                ));
            }
            // One entry per signature, in order; a panicked thread left none (reported below).
            let (regex, unless, errs) = class_regexes.next().unwrap_or_else(|| {
                let err = at(
                    file,
                    &s.pattern,
                    "the regex compiler panicked on this class",
                );
                (None, Vec::new(), vec![err])
            });
            errors.extend(errs);
            if let Some(regex) = regex {
                signatures.push(CompiledSignature {
                    id: s.id.value.clone(),
                    class: d.class.value.clone(),
                    regex,
                    unless,
                    strength: s.strength,
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

    for c in &mut classes {
        check_class(
            c,
            &remedies,
            &sig_ids,
            &node_ids,
            is_known_fact,
            &mut errors,
        );
    }

    if errors.is_empty() {
        Ok(KnowledgeBase {
            classes,
            remedies,
            signatures,
            origin: origin.to_string(),
        })
    } else {
        Err(KbErrors(errors))
    }
}

fn check_class(
    c: &mut Class,
    remedies: &BTreeMap<String, Remedy>,
    sig_ids: &HashSet<String>,
    node_ids: &HashSet<String>,
    is_known_fact: KnownFact,
    errors: &mut Vec<KbError>,
) {
    let file = c.file.clone();
    let d: &ClassFile = &c.def;
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

    if d.start.is_empty() && !d.stub {
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
                    checks.insert(n.id.value.clone(), e);
                }
                Err(e) => errors.push(KbError {
                    file: file.clone(),
                    line: check.referenced.line(),
                    column: check.referenced.column(),
                    message: format!(
                        "in check {:?} at character {}: {}",
                        check.value,
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

/// Non-fatal lint: stub classes and signature-only classes.
pub fn lints(kb: &KnowledgeBase) -> Vec<Lint> {
    let mut out = Vec::new();
    for c in &kb.classes {
        if c.def.stub {
            out.push(Lint {
                file: c.file.clone(),
                message: format!("class {:?} is a stub: signatures only, no tree yet", c.id()),
            });
        }
        if c.def.signatures.is_empty() && c.def.kind == ClassKind::Failure {
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
    fn placeholders_are_found() {
        assert_eq!(
            placeholders("TP={launch.tp}, conf={alloc.conf}"),
            vec!["launch.tp", "alloc.conf"]
        );
        assert!(placeholders("none").is_empty());
    }
}
