//! Inputs a user already has: the tool's own snapshot file, the text of `vllm collect-env` or
//! `python -m torch.utils.collect_env`, and the embedded demo scenario.
//!
//! Importers only turn text into a [`HostSnapshot`]; they never judge.

pub mod collect_env;
pub mod json;

use crate::snapshot::{HostSnapshot, SNAPSHOT_SCHEMA_VERSION};
use std::fmt;
use std::path::Path;

/// An input error that names the file and, where known, the line and column or the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl InputError {
    pub fn new(file: &str, line: usize, column: usize, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (l, 0) => write!(f, "{}:{}: {}", self.file, l, self.message),
            (l, c) => write!(f, "{}:{}:{}: {}", self.file, l, c, self.message),
        }
    }
}

impl std::error::Error for InputError {}

impl From<crate::read::ReadError> for InputError {
    fn from(e: crate::read::ReadError) -> Self {
        match e {
            crate::read::ReadError::NotUtf8 { path, line, column } => InputError::new(
                &path,
                line,
                column,
                "not UTF-8 text (is this a binary file?)",
            ),
            other => {
                // The message already starts with the input's name.
                let path = other.path().to_string();
                let full = other.to_string();
                let message = full
                    .strip_prefix(&format!("{path}: "))
                    .unwrap_or(&full)
                    .to_string();
                InputError::new(&path, 0, 0, message)
            }
        }
    }
}

/// Read a user's file as UTF-8 text under `limit` (`-` is standard input), naming the line
/// of the first bad byte. See [`crate::read`] for the rules.
pub fn read_text(path: &Path, limit: crate::read::Limit) -> Result<String, InputError> {
    Ok(crate::read::read_text(
        path,
        limit,
        crate::read::Stdin::Allowed,
    )?)
}

/// Parse a snapshot from YAML or JSON text (JSON when it starts with `{`).
///
/// A JSON report written by `sm120-doctor report --format json` holds its snapshot under
/// `snapshot`; that form is accepted too so reports replay anywhere.
pub fn parse_snapshot(name: &str, text: &str) -> Result<HostSnapshot, InputError> {
    let trimmed = text.trim_start();
    let snap: HostSnapshot = if trimmed.starts_with('{') {
        json::check(name, text)?;
        if is_json_report(name, text)? {
            #[derive(serde::Deserialize)]
            struct InReport {
                snapshot: HostSnapshot,
            }
            json::from_str::<InReport>(name, text)?.snapshot
        } else {
            json::from_str::<HostSnapshot>(name, text)?
        }
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            let (line, column, message) = crate::yaml::error_parts(&e);
            InputError::new(name, line, column, message)
        })?
    };
    let max_pairs =
        (crate::snapshot::MAX_PAIR_GPUS * (crate::snapshot::MAX_PAIR_GPUS - 1) / 2) as usize;
    if let Some(p) = snap.gpu_pairs.value()
        && p.len() > max_pairs
    {
        return Err(InputError::new(
            name,
            0,
            0,
            format!(
                "field gpu_pairs: {} pairs; a snapshot holds at most {max_pairs} (pairs are recorded for at most {} GPUs)",
                p.len(),
                crate::snapshot::MAX_PAIR_GPUS
            ),
        ));
    }
    if snap.schema_version != SNAPSHOT_SCHEMA_VERSION {
        return Err(InputError::new(
            name,
            0,
            0,
            format!(
                "field schema_version: {} is not supported (this build reads version {SNAPSHOT_SCHEMA_VERSION})",
                snap.schema_version
            ),
        ));
    }
    Ok(snap)
}

pub fn load_snapshot(path: &Path) -> Result<HostSnapshot, InputError> {
    load_snapshot_and_replay(path).map(|(s, _)| s)
}

/// Read a snapshot file once (`-` is standard input): the snapshot, and what a JSON report adds
/// for replaying it.
pub(crate) fn load_snapshot_and_replay(
    path: &Path,
) -> Result<(HostSnapshot, Option<Replay>), InputError> {
    let text = read_text(path, crate::read::SNAPSHOT)?;
    let name = crate::read::shown(path);
    let mut snap = parse_snapshot(&name, &text)?;
    snap.origin = crate::snapshot::Origin::recorded_in(name.as_str(), snap.origin);
    let replay = parse_replay(&name, &text)?;
    Ok((snap, replay))
}

/// What a JSON report adds to its snapshot so that replaying it gives the same findings: the
/// user's answers and the logs, rebuilt from the matched lines (each at its line number).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    pub answers: crate::engine::Answers,
    pub logs: Vec<crate::engine::classify::LogText>,
    /// The report was made with `--onboard` (mode `all` or `onboarding`).
    pub onboard: bool,
}

/// Highest line number a replayed log match may have.
pub const MAX_REPLAY_LINE: usize = 5_000_000;
/// Lines of all logs rebuilt from one report together (each costs one byte).
pub const MAX_REPLAY_LINES: usize = 8_000_000;

/// Does this JSON text have `snapshot` and `findings` at the top level (a JSON report)?
fn is_json_report(name: &str, text: &str) -> Result<bool, InputError> {
    #[derive(serde::Deserialize)]
    struct Top {
        snapshot: Option<serde::de::IgnoredAny>,
        findings: Option<serde::de::IgnoredAny>,
    }
    let top: Top = json::from_str(name, text)?;
    Ok(top.snapshot.is_some() && top.findings.is_some())
}

/// `Some` when `text` is a JSON report (`snapshot` and `findings` at the top level).
pub fn parse_replay(name: &str, text: &str) -> Result<Option<Replay>, InputError> {
    if !text.trim_start().starts_with('{') {
        return Ok(None);
    }
    json::check(name, text)?;
    if !is_json_report(name, text)? {
        return Ok(None);
    }
    #[derive(serde::Deserialize)]
    struct LogRef {
        name: String,
    }
    #[derive(serde::Deserialize)]
    struct Match {
        file: String,
        line: usize,
        text: String,
    }
    #[derive(serde::Deserialize)]
    struct ReplayDoc {
        #[serde(default)]
        answers: crate::engine::Answers,
        #[serde(default)]
        logs: Vec<LogRef>,
        #[serde(default)]
        log_matches: Vec<Match>,
        #[serde(default)]
        mode: Option<String>,
    }
    let doc: ReplayDoc = json::from_str(name, text)?;
    let (answers, refs, matches) = (doc.answers, doc.logs, doc.log_matches);
    // The logs, in the order the report names them, each rebuilt from its matched lines at
    // their line numbers. Lines in between are empty: one byte each (a newline), not a slot per
    // line, and the rebuilt logs together hold at most MAX_REPLAY_LINES lines.
    let mut names: Vec<String> = refs.into_iter().map(|r| r.name).collect();
    let mut by_file: std::collections::HashMap<&str, Vec<(usize, &str)>> = Default::default();
    for (i, m) in matches.iter().enumerate() {
        if m.line == 0 || m.line > MAX_REPLAY_LINE {
            return Err(InputError::new(
                name,
                0,
                0,
                format!("field log_matches[{i}].line: {} is out of range", m.line),
            ));
        }
        by_file
            .entry(m.file.as_str())
            .or_default()
            .push((m.line, m.text.as_str()));
    }
    let mut seen: std::collections::HashSet<String> = names.iter().cloned().collect();
    for m in &matches {
        if seen.insert(m.file.clone()) {
            names.push(m.file.clone());
        }
    }
    let total: usize = by_file
        .values()
        .map(|v| v.iter().map(|(l, _)| *l).max().unwrap_or(0))
        .sum();
    if total > MAX_REPLAY_LINES {
        return Err(InputError::new(
            name,
            0,
            0,
            format!(
                "field log_matches: the matched lines lie {total} lines deep in all; a report replays at most {MAX_REPLAY_LINES}"
            ),
        ));
    }
    let mut logs = Vec::new();
    for n in names {
        let mut lines = by_file.remove(n.as_str()).unwrap_or_default();
        lines.sort_by_key(|(l, _)| *l);
        lines.dedup_by_key(|(l, _)| *l);
        let mut text = String::new();
        let mut at = 1usize;
        for (l, t) in lines {
            text.extend(std::iter::repeat_n('\n', l - at));
            // A matched line is one line: a newline inside it would shift every later line.
            text.push_str(&t.replace(['\n', '\r'], " "));
            at = l;
        }
        logs.push(crate::engine::classify::LogText { name: n, text });
    }
    let onboard = matches!(doc.mode.as_deref(), Some("all" | "onboarding"));
    Ok(Some(Replay {
        answers,
        logs,
        onboard,
    }))
}

/// The embedded demo: the seed reporter's host (#47266), its launch and its crash log.
pub mod demo {
    pub const SNAPSHOT: &str = include_str!("../../assets/demo/seed_host.yaml");
    pub const LAUNCH: &str = include_str!("../../assets/demo/seed_launch.sh");
    pub const LOG: &str = include_str!("../../assets/demo/seed_crash.log");
    pub const LOG_NAME: &str = "demo:seed_crash.log";
    /// How facts name the demo's launch.
    pub const LAUNCH_SOURCE: &str = "the demo's seed_launch.sh";
}

/// The demo snapshot with its launch parsed in.
pub fn demo_snapshot() -> HostSnapshot {
    // The embedded files are tested; a failure here is a build defect, not user input.
    let mut snap = parse_snapshot("assets/demo/seed_host.yaml", demo::SNAPSHOT)
        .unwrap_or_else(|e| panic!("embedded demo snapshot is invalid: {e}"));
    snap.launch = match crate::launch::parse_launch(demo::LAUNCH) {
        Ok(mut l) => {
            l.source = demo::LAUNCH_SOURCE.into();
            crate::snapshot::Probed::Value(l)
        }
        Err(e) => panic!("embedded demo launch is invalid: {e}"),
    };
    snap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_snapshot_keeps_its_nested_origin_through_a_replay_and_a_save() {
        use crate::snapshot::Origin;
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let path = Path::new(dir).join("origin/replayed_collect_env.yaml");
        let snap = load_snapshot(&path).expect("an old file reads");
        let want = Origin::Snapshot {
            file: "report (1).json".into(),
            inner: Some(Box::new(Origin::CollectEnv("env.txt".into()))),
        };
        assert_eq!(
            snap.origin, want,
            "a snapshot of a snapshot keeps the first"
        );
        assert_eq!(snap.origin.first(), &Origin::CollectEnv("env.txt".into()));
        let saved = serde_saphyr::to_string(&snap).expect("yaml");
        let back = parse_snapshot("saved.yaml", &saved).expect("reads back");
        assert_eq!(back.origin, want, "{saved}");
        // A file with no inner origin, and a fresh recording of a live read.
        let planted =
            load_snapshot(&Path::new(dir).join("report/planted_host.yaml")).expect("planted");
        assert_eq!(
            planted.origin.to_string(),
            "snapshot:/home/alice/captures/gpu-box-7.yaml"
        );
        let live_file = Path::new(dir).join("h200-live-2026-11-30/snapshot.yaml");
        let live = load_snapshot(&live_file).expect("live capture");
        assert!(live.origin.is_live_read() && !live.origin.is_live());
        assert_eq!(
            live.origin,
            Origin::recorded_in(live_file.display().to_string(), Origin::Live)
        );
    }

    #[test]
    fn demo_parses_and_is_the_seed_host() {
        let s = demo_snapshot();
        let gpus = s.gpus.value().expect("gpus");
        assert_eq!(gpus.len(), 2);
        assert_eq!(
            gpus[0].name.value().map(String::as_str),
            Some("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")
        );
        assert_eq!(
            s.launch.value().and_then(|l| l.tensor_parallel_size),
            Some(2)
        );
    }

    #[test]
    fn replay_rebuilds_answers_and_logs_at_their_lines() {
        let text = r#"{"snapshot": {}, "findings": [], "answers": {"q1": "yes"},
            "logs": [{"name": "a.log"}, {"name": "empty.log"}],
            "log_matches": [{"class": "c", "signature": "s", "file": "a.log", "line": 3, "text": "boom"},
                            {"class": "c", "signature": "t", "file": "a.log", "line": 3, "text": "boom"}]}"#;
        let r = parse_replay("r.json", text)
            .expect("parses")
            .expect("is a report");
        assert_eq!(r.answers.get("q1"), Some(&crate::engine::Answer::Yes));
        assert_eq!(r.logs.len(), 2);
        assert_eq!(r.logs[0].name, "a.log");
        assert_eq!(r.logs[0].text, "\n\nboom");
        assert_eq!(r.logs[1].text, "");
        assert!(!r.onboard);
        let onboard = r#"{"snapshot": {}, "findings": [], "mode": "all"}"#;
        assert!(
            parse_replay("r.json", onboard)
                .expect("parses")
                .expect("report")
                .onboard
        );
        assert!(
            parse_replay("s.yaml", "schema_version: 1\n")
                .expect("yaml")
                .is_none()
        );
        assert!(
            parse_replay("s.json", "{\"schema_version\": 1}")
                .expect("json")
                .is_none()
        );
        let bad = r#"{"snapshot": {}, "findings": [], "answers": {"q1": "maybe"}}"#;
        let e = parse_replay("r.json", bad).expect_err("bad answer");
        assert!(e.to_string().contains("field answers"), "{e}");
    }

    #[test]
    fn wrong_schema_version_names_the_field() {
        let e = parse_snapshot("x.yaml", "schema_version: 9\norigin: t\n").expect_err("rejects");
        assert!(e.to_string().contains("schema_version"), "{e}");
    }

    #[test]
    fn yaml_errors_have_line_and_column() {
        let e = parse_snapshot(
            "x.yaml",
            "schema_version: 1\norigin: t\ngpus:\n  value: 3\n",
        )
        .expect_err("rejects");
        assert_eq!(e.line, 4, "{e}");
        assert!(e.column > 0, "{e}");
    }
}
