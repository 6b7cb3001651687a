//! Knowledge-base scenarios: every class walked on realistic snapshot + log + launch fixtures
//! (tests/fixtures/kb/scenarios.yaml), positives, negatives and near-miss logs.

use serde::Deserialize;
use sm120_doctor::engine::classify::LogText;
use sm120_doctor::engine::{self, Answer, Answers, Diagnosis, Mode};
use sm120_doctor::import;
use sm120_doctor::kb::{self, schema::Severity};
use sm120_doctor::snapshot::{HostSnapshot, Probed};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    scenarios: Vec<Scenario>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    class: String,
    snapshot: String,
    log: String,
    launch: String,
    expect: String,
    kind: Kind,
    classified: bool,
    #[serde(default)]
    answers: BTreeMap<String, Answer>,
    /// Text the finding's evidence must contain (filled facts).
    #[serde(default)]
    evidence: Vec<String>,
}

#[derive(Debug, Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Positive,
    Negative,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(dir: &str, name: &str, ext: &str) -> PathBuf {
    root()
        .join("tests/fixtures/kb")
        .join(dir)
        .join(format!("{name}.{ext}"))
}

fn manifest() -> Manifest {
    let text = std::fs::read_to_string(root().join("tests/fixtures/kb/scenarios.yaml"))
        .expect("scenarios.yaml");
    serde_saphyr::from_str(&text).expect("scenarios.yaml parses")
}

fn snapshot(name: &str) -> HostSnapshot {
    let path = match name.strip_prefix('@') {
        Some(rel) => root().join(rel),
        None => fixture("snapshots", name, "yaml"),
    };
    import::load_snapshot(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(kb: &kb::KnowledgeBase, s: &Scenario) -> Diagnosis {
    let mut snap = snapshot(&s.snapshot);
    let launch_text =
        std::fs::read_to_string(fixture("launches", &s.launch, "sh")).expect("launch file");
    snap.launch =
        Probed::Value(sm120_doctor::launch::parse_launch(&launch_text).expect("launch parses"));
    let log_path = fixture("logs", &s.log, "log");
    let logs = vec![LogText {
        name: log_path.display().to_string(),
        text: std::fs::read_to_string(&log_path).expect("log file"),
    }];
    let answers: Answers = s.answers.clone();
    engine::diagnose(kb, &snap, &answers, &logs, Mode::All)
}

fn check(kb: &kb::KnowledgeBase, s: &Scenario) -> Result<(), String> {
    let d = run(kb, s);
    let Some(f) = d.findings.iter().find(|f| f.class == s.class) else {
        let pending: Vec<String> = d
            .pending()
            .filter(|w| w.class == s.class)
            .map(|w| format!("{:?}", w.outcome))
            .collect();
        return Err(format!("no finding for {} (pending: {pending:?})", s.class));
    };
    if f.id != s.expect {
        return Err(format!("expected {}, got {} ({})", s.expect, f.id, f.title));
    }
    let hit = f.severity >= Severity::Warning;
    match (s.kind, hit) {
        (Kind::Positive, false) => {
            return Err(format!("positive scenario got severity {:?}", f.severity));
        }
        (Kind::Negative, true) => {
            return Err(format!("negative scenario got severity {:?}", f.severity));
        }
        _ => {}
    }
    for needle in &s.evidence {
        if !f
            .evidence
            .iter()
            .any(|e| e.to_string().contains(needle.as_str()))
        {
            return Err(format!("evidence lacks {needle:?}: {:?}", f.evidence));
        }
    }
    let named = d.classification.classes.contains(&s.class);
    if named != s.classified {
        return Err(format!(
            "classify named {:?}; expected {} to be {}named",
            d.classification.classes,
            s.class,
            if s.classified { "" } else { "not " }
        ));
    }
    // Every finding of every class keeps its sources, and so does every remedy offered.
    for f in &d.findings {
        if f.sources.is_empty() {
            return Err(format!("finding {} has no source", f.id));
        }
        for r in &f.remedies {
            if r.sources.is_empty() {
                return Err(format!("remedy {} of {} has no source", r.id, f.id));
            }
        }
    }
    Ok(())
}

#[test]
fn every_scenario_reaches_its_conclusion() {
    let m = manifest();
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    let failures: Vec<String> = m
        .scenarios
        .iter()
        .filter_map(|s| check(&kb, s).err().map(|e| format!("{}: {e}", s.name)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failures.len(),
        m.scenarios.len(),
        failures.join("\n")
    );
}

#[test]
fn each_failure_class_has_three_positive_and_three_negative_scenarios() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    let m = manifest();
    for class in kb
        .classes
        .iter()
        .filter(|c| c.def.kind == kb::schema::ClassKind::Failure)
    {
        let count = |k: Kind| {
            m.scenarios
                .iter()
                .filter(|s| s.class == class.id() && s.kind == k)
                .count()
        };
        assert!(
            count(Kind::Positive) >= 3 && count(Kind::Negative) >= 3,
            "{}: {} positive, {} negative scenarios",
            class.id(),
            count(Kind::Positive),
            count(Kind::Negative)
        );
    }
}

#[test]
fn scenario_names_are_unique_and_fixtures_exist() {
    let m = manifest();
    let mut seen = std::collections::BTreeSet::new();
    for s in &m.scenarios {
        assert!(seen.insert(&s.name), "duplicate scenario {}", s.name);
        assert!(fixture("logs", &s.log, "log").exists(), "{}: log", s.name);
        assert!(
            fixture("launches", &s.launch, "sh").exists(),
            "{}: launch",
            s.name
        );
        if !s.snapshot.starts_with('@') {
            assert!(
                Path::new(&fixture("snapshots", &s.snapshot, "yaml")).exists(),
                "{}: snapshot",
                s.name
            );
        }
    }
}

#[test]
fn a_crash_is_named_before_speed_warnings_in_the_same_log() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    let path = fixture("logs", "crash_after_fp8_warnings", "log");
    let logs = vec![LogText {
        name: "log".into(),
        text: std::fs::read_to_string(path).expect("log"),
    }];
    let c = engine::classify::classify(&kb, &logs);
    // The crash first; the speed warnings name fp8_tuning after it, at low confidence.
    assert_eq!(
        c.classes,
        ["allocator_ipc", "fp8_tuning"],
        "{:?}",
        c.matches
    );
    assert_eq!(
        c.confidence["fp8_tuning"],
        engine::classify::MatchConfidence::Low
    );
    assert_eq!(
        c.matches
            .iter()
            .filter(|m| m.signature == "fp8_default_dense")
            .count(),
        3
    );
}

#[test]
fn the_hosts_facts_confirm_what_the_log_leaves_open() {
    // The IPC line alone is SUSPECTED; on a host whose snapshot sets expandable_segments:True
    // (the walk's own evidence) the same log is CONFIRMED.
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads");
    let logs = vec![LogText {
        name: "log".into(),
        text: "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'\n"
            .into(),
    }];
    let alone = engine::classify::classify(&kb, &logs);
    assert_eq!(
        alone.confidence["allocator_ipc"],
        engine::classify::MatchConfidence::Suspected
    );
    let mut snap = snapshot("sm120_ws2");
    let launch_text =
        std::fs::read_to_string(fixture("launches", "qwen36_fp8_tp2_expandable", "sh"))
            .expect("launch file");
    snap.launch =
        Probed::Value(sm120_doctor::launch::parse_launch(&launch_text).expect("launch parses"));
    let d = engine::diagnose(&kb, &snap, &Answers::new(), &logs, Mode::All);
    assert_eq!(
        d.classification.confidence["allocator_ipc"],
        engine::classify::MatchConfidence::Confirmed,
        "{:?}",
        d.classification.evidence
    );
    // Without expandable segments on the host, it stays SUSPECTED.
    let mut snap = snapshot("sm120_ws2");
    let launch_text =
        std::fs::read_to_string(fixture("launches", "qwen36_fp8_tp2", "sh")).expect("launch file");
    snap.launch =
        Probed::Value(sm120_doctor::launch::parse_launch(&launch_text).expect("launch parses"));
    let d = engine::diagnose(&kb, &snap, &Answers::new(), &logs, Mode::All);
    assert_eq!(
        d.classification.confidence["allocator_ipc"],
        engine::classify::MatchConfidence::Suspected
    );
}
