//! Checks on the knowledge base's words: evidence placeholders, script syntax in remedy
//! texts, titles that agree with the state they claim, and the `kb lint` findings.

use super::*;

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
pub(super) fn shorten(s: &str, max: usize) -> String {
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
pub(super) fn state_errors(k: &Conclusion) -> Vec<String> {
    use crate::kb::schema::CheckState;
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
    let mut out = crate::kb::versions::lints(kb);
    out.extend(crate::kb::sources::lints(kb));
    for p in &kb.prs {
        let used = kb.remedies.values().any(|r| {
            r.edits
                .iter()
                .any(|e| matches!(e, Edit::PatchScript { pr } if *pr == p.pr.value))
        });
        if !used {
            out.push(Lint {
                file: crate::kb::REMEDIES_FILE.into(),
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
                    file: crate::kb::REMEDIES_FILE.into(),
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
                    file: crate::kb::REMEDIES_FILE.into(),
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
            if k.severity >= crate::kb::schema::Severity::Warning
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
        assert_eq!(k.state(), crate::kb::schema::CheckState::Problem);
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
