//! Validation of one class: its conclusions and their texts, evidence placeholders, checks
//! (compiled, naming only known facts and model families), and the walk from its start.

use super::*;

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

/// Validate one class and keep its compiled checks in it: `after` references, conclusions,
/// starts, each node's targets and check, then the walk from the starts.
pub(super) fn check_class(
    c: &mut Class,
    remedies: &BTreeMap<String, Remedy>,
    sig_ids: &HashSet<String>,
    node_ids: &HashSet<String>,
    known: &Known<'_>,
    errors: &mut Vec<KbError>,
) {
    let file = c.file.clone();
    let d: &ClassFile = &c.def;
    check_after(&file, d, sig_ids, errors);
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
        check_conclusion(&file, k, remedies, known.fact, errors);
    }
    let resolves = |s: &SpannedStr| {
        nodes.contains_key(s.value.as_str()) || conclusions.contains(s.value.as_str())
    };
    check_starts(&file, d, &resolves, errors);

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
        if let Some(ask) = &n.ask {
            for message in input_errors(&ask.hint) {
                errors.push(at(
                    &file,
                    &n.id,
                    format!("node {:?}: hint {message}", n.id.value),
                ));
            }
        }
        if let Some(check) = &n.check
            && let Some(e) = compile_check(&file, check, sig_ids, node_ids, known, errors)
        {
            checks.insert(n.id.value.clone(), e);
        }
    }
    check_reachable(&file, d, &nodes, errors);
    c.checks = checks;
}

/// Each signature's `after` names another signature.
fn check_after(file: &str, d: &ClassFile, sig_ids: &HashSet<String>, errors: &mut Vec<KbError>) {
    for s in &d.signatures {
        for a in &s.after {
            if !sig_ids.contains(&a.value) {
                errors.push(at(
                    file,
                    a,
                    format!("after: {:?} names no signature", a.value),
                ));
            } else if a.value == s.id.value {
                errors.push(at(file, a, "after: a signature cannot follow itself"));
            }
        }
    }
}

/// One conclusion on its own: a source, titles shown as written, consistent states, known
/// remedies, evidence placeholders naming known facts.
fn check_conclusion(
    file: &str,
    k: &Conclusion,
    remedies: &BTreeMap<String, Remedy>,
    is_known_fact: KnownFact,
    errors: &mut Vec<KbError>,
) {
    if k.sources.is_empty() {
        errors.push(at(
            file,
            &k.id,
            format!("conclusion {:?} has no source", k.id.value),
        ));
    }
    if !fact_placeholders(&k.title).is_empty() {
        errors.push(at(
            file,
            &k.id,
            format!(
                "conclusion {:?}: the title is shown as written; put {{fact}} placeholders in evidence",
                k.id.value
            ),
        ));
    }
    let prose = std::iter::once(k.title.as_str())
        .chain(k.title_unmeasured.as_deref())
        .chain(k.evidence.iter().map(|e| e.value.as_str()));
    for text in prose {
        for message in input_errors(text) {
            errors.push(at(
                file,
                &k.id,
                format!("conclusion {:?}: {message}", k.id.value),
            ));
        }
    }
    for message in state_errors(k) {
        errors.push(at(
            file,
            &k.id,
            format!("conclusion {:?}: {message}", k.id.value),
        ));
    }
    if let Some(t) = &k.title_unmeasured {
        if t.trim().is_empty() {
            errors.push(at(
                file,
                &k.id,
                format!("conclusion {:?}: title_unmeasured is empty", k.id.value),
            ));
        }
        if !fact_placeholders(t).is_empty() {
            errors.push(at(
                file,
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
            errors.push(at(file, r, format!("unknown remedy {:?}", r.value)));
        }
    }
    for ev in &k.evidence {
        for name in fact_placeholders(&ev.value) {
            if !is_known_fact(&name) {
                errors.push(at(file, ev, format!("unknown fact {{{name}}} in evidence")));
            }
        }
    }
}

/// A class that is walked has a start (a failure class exactly one), each a node or
/// conclusion of the class.
fn check_starts(
    file: &str,
    d: &ClassFile,
    resolves: &dyn Fn(&SpannedStr) -> bool,
    errors: &mut Vec<KbError>,
) {
    if d.start.is_empty() && !d.stub && d.kind != ClassKind::Context {
        errors.push(KbError {
            file: file.to_string(),
            line: 0,
            column: 0,
            message: format!("class {:?} has no start node", d.class.value),
        });
    }
    if d.kind == ClassKind::Failure && d.start.len() > 1 {
        errors.push(at(
            file,
            &d.start[1],
            "a failure class has one start; use kind: checklist for several",
        ));
    }
    for s in &d.start {
        if !resolves(s) {
            errors.push(at(
                file,
                s,
                format!(
                    "start {:?} is not a node or conclusion of this class",
                    s.value
                ),
            ));
        }
    }
}

/// A node's `check`, compiled: it names known facts, signatures, nodes and model families.
/// `None` when it does not parse.
fn compile_check(
    file: &str,
    check: &SpannedStr,
    sig_ids: &HashSet<String>,
    node_ids: &HashSet<String>,
    known: &Known<'_>,
    errors: &mut Vec<KbError>,
) -> Option<Expr> {
    let e = match expr::parse(&check.value) {
        Ok(e) => e,
        Err(e) => {
            errors.push(KbError {
                file: file.to_string(),
                line: check.referenced.line(),
                column: check.referenced.column(),
                message: format!(
                    "in check {:?} at character {}: {}",
                    shorten(&check.value, 80),
                    e.offset + 1,
                    e.message
                ),
            });
            return None;
        }
    };
    let refs = expr::references(&e);
    for f in &refs.facts {
        if !(known.fact)(f) {
            errors.push(at(
                file,
                check,
                format!("unknown fact {f:?} (see `sm120-doctor kb facts`)"),
            ));
        }
    }
    for s in &refs.signatures {
        if !sig_ids.contains(s) {
            errors.push(at(file, check, format!("log({s:?}) names no signature")));
        }
    }
    for a in &refs.answers {
        if !node_ids.contains(a) {
            errors.push(at(file, check, format!("answer({a:?}) names no node")));
        }
    }
    let mut hints = Vec::new();
    type_hint_literals(&e, &mut hints);
    for h in hints {
        if !known.families.contains(h.as_str()) {
            errors.push(at(
                file,
                check,
                format!("{h:?} is not a model family of hardware.yaml (model.type_hint)"),
            ));
        }
    }
    Some(e)
}

/// Walk from every start: no cycle, and every node and conclusion reached.
fn check_reachable(
    file: &str,
    d: &ClassFile,
    nodes: &HashMap<&str, usize>,
    errors: &mut Vec<KbError>,
) {
    let mut reached: HashSet<String> = HashSet::new();
    for s in &d.start {
        let mut stack: Vec<String> = Vec::new();
        visit(d, nodes, &s.value, &mut stack, &mut reached, file, errors);
    }
    for n in &d.nodes {
        if !reached.contains(&n.id.value) {
            errors.push(at(
                file,
                &n.id,
                format!("node {:?} is unreachable from the start", n.id.value),
            ));
        }
    }
    for k in &d.conclusions {
        if !reached.contains(&k.id.value) {
            errors.push(at(
                file,
                &k.id,
                format!("conclusion {:?} is unreachable", k.id.value),
            ));
        }
    }
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

/// The `{fact}` placeholders of `text`: `{input:NAME}` ones are each front end's to fill.
fn fact_placeholders(text: &str) -> Vec<String> {
    placeholders(text)
        .into_iter()
        .filter(|p| !format!("{{{p}").starts_with(crate::reason::INPUT_PLACEHOLDER))
        .collect()
}

/// The command line's ways to give an input, which knowledge-base prose names through
/// `{input:NAME}` instead, so the TUI can say its own keys.
const CLI_INPUT_WORDS: [&str; 4] = [
    "--launch CMD",
    "--launch-file FILE",
    "sm120-doctor probe ipc",
    "sm120-doctor probe p2p",
];

/// What is wrong with how `text` names inputs: an unknown `{input:NAME}`, or an input named
/// in the command line's words.
fn input_errors(text: &str) -> Vec<String> {
    let unknown = crate::reason::unknown_inputs(text).into_iter().map(|n| {
        let known: Vec<&str> = crate::reason::Input::ALL.iter().map(|i| i.name()).collect();
        format!("unknown input {{input:{n}}} (one of: {})", known.join(", "))
    });
    let cli = CLI_INPUT_WORDS
        .iter()
        .filter(|w| text.contains(**w))
        .map(|w| format!("names an input the command line's way ({w}): write {{input:NAME}}, which each front end says in its own words"));
    unknown.chain(cli).collect()
}

#[cfg(test)]
mod tests {
    use super::{fact_placeholders, input_errors};

    #[test]
    fn input_placeholders_are_not_facts() {
        assert_eq!(
            fact_placeholders("TP={launch.tp}; give {input:launch}"),
            vec!["launch.tp"]
        );
    }

    #[test]
    fn inputs_are_named_by_placeholder_not_by_the_command_line() {
        assert!(input_errors("Give {input:launch}.").is_empty());
        let unknown = input_errors("Give {input:lunch}.");
        assert!(
            unknown[0].contains("unknown input {input:lunch}"),
            "{unknown:?}"
        );
        let cli = input_errors("Run `sm120-doctor probe p2p` first.");
        assert!(cli[0].contains("sm120-doctor probe p2p"), "{cli:?}");
        assert_eq!(
            input_errors("Give --launch CMD or --launch-file FILE.").len(),
            2
        );
    }
}
