//! Inputs a user already has: the tool's own snapshot file, the text of `vllm collect-env` or
//! `python -m torch.utils.collect_env`, and the embedded demo scenario.
//!
//! Importers only turn text into a [`HostSnapshot`]; they never judge.

pub mod collect_env;

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

/// Read a file as UTF-8, naming the line of the first bad byte.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(&shown, 0, 0, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..valid];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = valid
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        InputError::new(
            &shown,
            line,
            column,
            "not UTF-8 text (is this a binary file?)",
        )
    })
}

/// Parse a snapshot from YAML or JSON text (JSON when it starts with `{`).
///
/// A JSON report written by `sm120-doctor report --format json` holds its snapshot under
/// `snapshot`; that form is accepted too so reports replay anywhere.
pub fn parse_snapshot(name: &str, text: &str) -> Result<HostSnapshot, InputError> {
    let trimmed = text.trim_start();
    let snap: HostSnapshot = if trimmed.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            InputError::new(name, e.line(), e.column(), format!("invalid JSON: {e}"))
        })?;
        let inner = match value.get("snapshot") {
            Some(s) if value.get("findings").is_some() => s.clone(),
            _ => value,
        };
        serde_json::from_value(inner)
            .map_err(|e| InputError::new(name, 0, 0, format!("not a snapshot: {e}")))?
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            let (line, column, message) = crate::yaml::error_parts(&e);
            InputError::new(name, line, column, message)
        })?
    };
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
    let text = read_text(path)?;
    let mut snap = parse_snapshot(&path.display().to_string(), &text)?;
    if !snap.origin.starts_with("snapshot:") {
        snap.origin = format!("snapshot:{} ({})", path.display(), snap.origin);
    }
    Ok(snap)
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

/// Longest log rebuilt from a report (lines), so a bad line number cannot exhaust memory.
const MAX_REPLAY_LINE: usize = 5_000_000;

/// `Some` when `text` is a JSON report (`snapshot` and `findings` at the top level).
pub fn parse_replay(name: &str, text: &str) -> Result<Option<Replay>, InputError> {
    if !text.trim_start().starts_with('{') {
        return Ok(None);
    }
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| InputError::new(name, e.line(), e.column(), format!("invalid JSON: {e}")))?;
    if value.get("snapshot").is_none() || value.get("findings").is_none() {
        return Ok(None);
    }
    let field =
        |f: &str, e: serde_json::Error| InputError::new(name, 0, 0, format!("field {f}: {e}"));
    let answers: crate::engine::Answers = match value.get("answers") {
        Some(a) => serde_json::from_value(a.clone()).map_err(|e| field("answers", e))?,
        None => Default::default(),
    };
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
    let refs: Vec<LogRef> = match value.get("logs") {
        Some(l) => serde_json::from_value(l.clone()).map_err(|e| field("logs", e))?,
        None => Vec::new(),
    };
    let matches: Vec<Match> = match value.get("log_matches") {
        Some(m) => serde_json::from_value(m.clone()).map_err(|e| field("log_matches", e))?,
        None => Vec::new(),
    };
    let mut names: Vec<String> = refs.into_iter().map(|r| r.name).collect();
    for m in &matches {
        if !names.contains(&m.file) {
            names.push(m.file.clone());
        }
    }
    let mut logs = Vec::new();
    for n in names {
        let mut lines: Vec<&str> = Vec::new();
        for (i, m) in matches.iter().enumerate().filter(|(_, m)| m.file == n) {
            if m.line == 0 || m.line > MAX_REPLAY_LINE {
                return Err(InputError::new(
                    name,
                    0,
                    0,
                    format!("field log_matches[{i}].line: {} is out of range", m.line),
                ));
            }
            if lines.len() < m.line {
                lines.resize(m.line, "");
            }
            lines[m.line - 1] = &m.text;
        }
        logs.push(crate::engine::classify::LogText {
            name: n,
            text: lines.join("\n"),
        });
    }
    let onboard = matches!(
        value.get("mode").and_then(|m| m.as_str()),
        Some("all" | "onboarding")
    );
    Ok(Some(Replay {
        answers,
        logs,
        onboard,
    }))
}

/// [`parse_replay`] on a file.
pub fn load_replay(path: &Path) -> Result<Option<Replay>, InputError> {
    let text = read_text(path)?;
    parse_replay(&path.display().to_string(), &text)
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
