//! Version-boundary scenarios (every version range the KB claims is checked at its edges): for each item, a version on each side of each boundary
//! (tests/fixtures/versions/boundaries.yaml), plus the demo: vLLM 0.24.0 is inside every range
//! that applies to it, so `check --demo` still finds the seed host's crash.

use serde::Deserialize;
use sm120_doctor::engine::classify::LogText;
use sm120_doctor::engine::versions::Verdict;
use sm120_doctor::engine::{self, Answer, Answers, Diagnosis, Mode, Outcome};
use sm120_doctor::import;
use sm120_doctor::kb::{self, schema::Severity};
use sm120_doctor::snapshot::{HostSnapshot, Probed};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    item: u32,
    name: String,
    class: String,
    snapshot: String,
    #[serde(default)]
    versions: BTreeMap<String, String>,
    launch: String,
    log: String,
    #[serde(default)]
    answers: BTreeMap<String, Answer>,
    #[serde(default)]
    expect: Option<String>,
    #[serde(default)]
    severity: Option<Severity>,
    #[serde(default)]
    said: Option<String>,
    #[serde(default)]
    pending: Option<String>,
    #[serde(default)]
    remedies: Vec<String>,
    #[serde(default)]
    not_offered: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn kb() -> kb::KnowledgeBase {
    kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
}

/// `kb:NAME` is a shared KB fixture, `NAME` one of this suite's.
fn fixture(kind: &str, name: &str, ext: &str) -> PathBuf {
    match name.strip_prefix("kb:") {
        Some(n) => root().join(format!("tests/fixtures/kb/{kind}/{n}.{ext}")),
        None => root().join(format!("tests/fixtures/versions/{kind}/{name}.{ext}")),
    }
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn snapshot(c: &Case) -> HostSnapshot {
    let path = match c.snapshot.strip_prefix('@') {
        Some(rel) => root().join(rel),
        None => root().join(format!("tests/fixtures/kb/snapshots/{}.yaml", c.snapshot)),
    };
    let mut snap = import::load_snapshot(&path).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    let Probed::Value(py) = &mut snap.python else {
        panic!("{}: the snapshot has no Python stack", c.name)
    };
    for (package, version) in &c.versions {
        let v = if version == "unknown" {
            Probed::failed("not read (version-boundary test)")
        } else {
            Probed::Value(version.clone())
        };
        match package.as_str() {
            "vllm" => py.vllm = v,
            "torch" => py.torch = v,
            "flashinfer" => py.flashinfer = v,
            "deep_gemm" => py.deep_gemm = v,
            other => panic!("{}: unknown package {other}", c.name),
        }
    }
    snap.launch = Probed::Value(
        sm120_doctor::launch::parse_launch(&read(&fixture("launches", &c.launch, "sh")))
            .unwrap_or_else(|e| panic!("{}: launch: {e}", c.name)),
    );
    snap
}

fn run(kb: &kb::KnowledgeBase, c: &Case) -> Diagnosis {
    let log_path = fixture("logs", &c.log, "log");
    let logs = vec![LogText {
        name: log_path.display().to_string(),
        text: read(&log_path),
    }];
    let answers: Answers = c.answers.clone();
    engine::diagnose(kb, &snapshot(c), &answers, &logs, Mode::All)
}

fn check(kb: &kb::KnowledgeBase, c: &Case) -> Result<(), String> {
    let d = run(kb, c);
    if let Some(q) = &c.pending {
        let waiting: Vec<&str> = d
            .pending()
            .filter(|w| w.class == c.class)
            .filter_map(|w| match &w.outcome {
                Outcome::NeedsAnswer { node, .. } => Some(node.as_str()),
                Outcome::Concluded { .. } => None,
            })
            .collect();
        if waiting != [q.as_str()] {
            let found: Vec<String> = d
                .findings
                .iter()
                .filter(|f| f.class == c.class)
                .map(|f| f.title.to_string())
                .collect();
            return Err(format!(
                "expected the question {q}, waiting at {waiting:?}; findings {found:?}"
            ));
        }
        if !kb.has_question(q) {
            return Err(format!(
                "{q} is not a question the user can answer (--answer)"
            ));
        }
        return Ok(());
    }
    let Some(f) = d.findings.iter().find(|f| f.class == c.class) else {
        let waiting: Vec<String> = d
            .pending()
            .filter(|w| w.class == c.class)
            .map(|w| format!("{:?}", w.outcome))
            .collect();
        return Err(format!("no finding for {} (waiting: {waiting:?})", c.class));
    };
    if let Some(id) = &c.expect
        && &f.id != id
    {
        return Err(format!("expected {id}, got {} ({})", f.id, f.title));
    }
    if let Some(sev) = c.severity
        && f.severity != sev
    {
        return Err(format!(
            "expected severity {sev:?}, got {:?}: {}",
            f.severity, f.title
        ));
    }
    if let Some(needle) = &c.said {
        let hit = f.title.to_string().contains(needle.as_str())
            || f.evidence
                .iter()
                .any(|e| e.to_string().contains(needle.as_str()));
        if !hit {
            return Err(format!(
                "{needle:?} not in {:?} / {:?}",
                f.title, f.evidence
            ));
        }
    }
    // An outside verdict always names its change, and the change carries a source.
    if f.severity == Severity::Ok
        && let Some(v) = f
            .versions
            .iter()
            .find(|v| v.verdict == Verdict::Outside && v.subject == f.id)
    {
        match &v.change {
            Some(ch) if !ch.sources.is_empty() => {
                if !f.title.to_string().contains(&ch.said) {
                    return Err(format!("title {:?} does not say {:?}", f.title, ch.said));
                }
            }
            other => {
                return Err(format!(
                    "outside verdict without a sourced change: {other:?}"
                ));
            }
        }
    }
    let offered: Vec<&str> = f.remedies.iter().map(|r| r.id.as_str()).collect();
    for r in &c.remedies {
        if !offered.contains(&r.as_str()) {
            return Err(format!("remedy {r} not offered (offered: {offered:?})"));
        }
    }
    for r in &c.not_offered {
        if offered.contains(&r.as_str()) {
            return Err(format!("remedy {r} offered although outside its range"));
        }
    }
    Ok(())
}

fn manifest() -> Manifest {
    let text = read(&root().join("tests/fixtures/versions/boundaries.yaml"));
    serde_saphyr::from_str(&text).expect("boundaries.yaml parses")
}

#[test]
fn every_boundary_case_reaches_its_outcome() {
    let kb = kb();
    let m = manifest();
    let failures: Vec<String> = m
        .cases
        .iter()
        .filter_map(|c| {
            check(&kb, c)
                .err()
                .map(|e| format!("item {} {}: {e}", c.item, c.name))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        m.cases.len(),
        failures.join("\n")
    );
}

/// Each of items 1-9 has cases on both sides of its boundary: at least two different versions of
/// one package. For items 1-8 the boundary changes the outcome (conclusion, severity or a
/// question); for item 9 (moved log texts) the old and the new wording reach the same finding.
#[test]
fn each_item_has_both_sides() {
    let m = manifest();
    let mut names = std::collections::BTreeSet::new();
    for c in &m.cases {
        assert!(names.insert(&c.name), "duplicate case {}", c.name);
    }
    for item in 1..=9 {
        let cases: Vec<&Case> = m.cases.iter().filter(|c| c.item == item).collect();
        let versions: std::collections::BTreeSet<String> = cases
            .iter()
            .flat_map(|c| c.versions.iter().map(|(p, v)| format!("{p} {v}")))
            .collect();
        assert!(versions.len() >= 2, "item {item}: versions {versions:?}");
        let outcomes: std::collections::BTreeSet<String> = cases
            .iter()
            .map(|c| format!("{:?} {:?} {:?}", c.expect, c.severity, c.pending))
            .collect();
        if item == 9 {
            assert!(
                cases
                    .iter()
                    .all(|c| c.severity.is_some_and(|s| s > Severity::Ok)),
                "item 9: every wording is recognised"
            );
        } else {
            assert!(
                outcomes.len() >= 2,
                "item {item}: one outcome on both sides {outcomes:?}"
            );
        }
    }
}

/// `check --demo`: vLLM 0.24.0 is inside every range of every finding it reaches, and the seed
/// host's crash (allocator/IPC) is still found.
#[test]
fn the_demo_is_inside_every_range_and_still_crashes() {
    let kb = kb();
    let snap = import::demo_snapshot();
    let logs = vec![LogText {
        name: "seed_crash.log".into(),
        text: import::demo::LOG.into(),
    }];
    let d = engine::diagnose(&kb, &snap, &Answers::new(), &logs, Mode::Failures);
    assert!(
        d.findings
            .iter()
            .any(|f| f.class == "allocator_ipc" && f.severity == Severity::Error),
        "{:#?}",
        d.findings
    );
    let checks: Vec<_> = d.findings.iter().flat_map(|f| f.versions.iter()).collect();
    assert!(!checks.is_empty(), "the demo reaches no bounded conclusion");
    for v in checks {
        assert_eq!(v.verdict, Verdict::Inside, "{v:?}");
    }
    assert_eq!(d.pending().count(), 0, "the demo waits for an answer");
}

// ---------------------------------------------------------------- the release table

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReleaseTable {
    releases: BTreeMap<String, Vec<String>>,
    bounds: Vec<Bound>,
    walks: Vec<TableWalk>,
}

#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Clone)]
#[serde(deny_unknown_fields)]
struct Bound {
    subject: String,
    package: String,
    edge: String,
    below: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableWalk {
    subject: String,
    class: String,
    snapshot: String,
    launch: String,
    log: String,
    #[serde(default)]
    answers: BTreeMap<String, Answer>,
    #[serde(default)]
    versions: BTreeMap<String, String>,
}

fn release_table() -> ReleaseTable {
    let text = read(&root().join("tests/fixtures/versions/release_table.yaml"));
    serde_saphyr::from_str(&text).expect("release_table.yaml parses")
}

/// Every `holds:` bound of the KB: (subject, package, edge), and whether the subject is a remedy.
fn kb_bounds(
    kb: &kb::KnowledgeBase,
) -> BTreeMap<(String, String, String), (bool, kb::VersionBound)> {
    let mut out = BTreeMap::new();
    let mut add = |subject: &str, remedy: bool, bounds: &[kb::VersionBound]| {
        for b in bounds {
            for (edge, _) in &b.edges {
                out.insert(
                    (
                        subject.to_string(),
                        b.package.key().to_string(),
                        edge.to_string(),
                    ),
                    (remedy, b.clone()),
                );
            }
        }
    };
    for c in &kb.classes {
        for (id, bounds) in &c.holds {
            add(id, false, bounds);
        }
    }
    for (id, bounds) in &kb.remedy_holds {
        add(id, true, bounds);
    }
    out
}

#[test]
fn the_release_table_has_a_row_for_every_bound_and_only_for_bounds() {
    let kb = kb();
    let table = release_table();
    let in_kb: Vec<(String, String, String)> = kb_bounds(&kb).into_keys().collect();
    let mut in_table: Vec<(String, String, String)> = table
        .bounds
        .iter()
        .map(|b| (b.subject.clone(), b.package.clone(), b.edge.clone()))
        .collect();
    in_table.sort();
    let missing: Vec<_> = in_kb.iter().filter(|k| !in_table.contains(k)).collect();
    let extra: Vec<_> = in_table.iter().filter(|k| !in_kb.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "bounds without a release-table row: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "release-table rows that are no bound: {extra:?}"
    );
    for b in &table.bounds {
        let list = table
            .releases
            .get(&b.package)
            .unwrap_or_else(|| panic!("no release list for {}", b.package));
        let at = list
            .iter()
            .position(|r| r == &b.edge)
            .unwrap_or_else(|| panic!("{b:?}: the edge is not a release in the list"));
        assert!(at > 0, "{b:?}: no release below the edge in the list");
        assert_eq!(
            list[at - 1],
            b.below,
            "{b:?}: below is not the release before the edge"
        );
        assert!(
            table.walks.iter().any(|w| w.subject == b.subject),
            "{b:?}: no walk for the subject"
        );
    }
}

/// The versions one bound is walked at: (version, side) where side is `Some(inside)` or `None`
/// for a build the number cannot place (the walk must ask).
fn forms(b: &Bound, bound: &kb::VersionBound) -> Vec<(String, Option<bool>)> {
    let inside = |v: &str| {
        let parsed = sm120_doctor::vllm::version::parse(v).expect("a release parses");
        bound.range.contains(Some(&parsed))
    };
    let below = inside(&b.below);
    let at = inside(&b.edge);
    assert_ne!(
        below, at,
        "{b:?}: both sides of the edge are on the same side"
    );
    vec![
        (b.below.clone(), Some(below)),
        (format!("{}+cu129", b.below), Some(below)),
        (b.edge.clone(), Some(at)),
        (format!("{}+cu130", b.edge), Some(at)),
        (format!("{}rc1", b.edge), None),
        (format!("{}.dev5+g0123abc", b.edge), None),
    ]
}

#[test]
fn every_bound_is_walked_on_both_sides_and_at_its_pre_releases() {
    let kb = kb();
    let table = release_table();
    let bounds = kb_bounds(&kb);
    let mut failures = Vec::new();
    let mut walked = 0;
    for b in &table.bounds {
        let Some((is_remedy, bound)) =
            bounds.get(&(b.subject.clone(), b.package.clone(), b.edge.clone()))
        else {
            continue; // the row test reports it
        };
        let Some(w) = table.walks.iter().find(|w| w.subject == b.subject) else {
            continue;
        };
        for (version, side) in forms(b, bound) {
            // A remedy whose range cannot be decided is offered with that said: only the
            // decided sides are checked for remedies.
            if *is_remedy && side.is_none() {
                continue;
            }
            let mut versions = w.versions.clone();
            versions.insert(b.package.clone(), version.clone());
            let c = Case {
                item: 0,
                name: format!("{} {} {version}", b.subject, b.package),
                class: w.class.clone(),
                snapshot: w.snapshot.clone(),
                versions,
                launch: w.launch.clone(),
                log: w.log.clone(),
                answers: w.answers.clone(),
                expect: None,
                severity: None,
                said: None,
                pending: None,
                remedies: vec![],
                not_offered: vec![],
            };
            walked += 1;
            let d = run(&kb, &c);
            let problem = d
                .findings
                .iter()
                .any(|f| f.id == b.subject && f.severity > Severity::Ok);
            let offered = d
                .findings
                .iter()
                .filter(|f| f.class == w.class)
                .any(|f| f.remedies.iter().any(|r| r.id == b.subject));
            let waiting = d.pending().any(|p| p.class == w.class);
            let ok = match (is_remedy, side) {
                (false, Some(true)) => problem,
                (false, Some(false)) => !problem,
                (false, None) => waiting && !problem,
                (true, Some(inside)) => offered == inside,
                (true, None) => true,
            };
            if !ok {
                let found: Vec<String> = d
                    .findings
                    .iter()
                    .filter(|f| f.class == w.class)
                    .map(|f| format!("{} ({:?})", f.id, f.severity))
                    .collect();
                failures.push(format!(
                    "{}: expected {} (problem {problem}, offered {offered}, waiting {waiting}); \
                     findings {found:?}",
                    c.name,
                    match side {
                        Some(true) => "inside",
                        Some(false) => "outside",
                        None => "a version question",
                    }
                ));
            }
        }
    }
    assert!(walked >= 4 * table.bounds.len(), "{walked} walks");
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
