//! The labelled log corpus: case files, their header, classification through the same library
//! path as `sm120-doctor classify`, and the confusion-matrix report.
//!
//! Shared by `tests/corpus/main.rs` (which holds the floors) and `examples/corpus_eval.rs` (which
//! prints the same table for any directory of logs).
//!
//! # Case file format
//!
//! A case file may start with a header block that the classifier never sees:
//!
//! ```text
//! %%% sm120-doctor corpus case %%%
//! label: allocator_ipc            expected top-ranked class, or `none` (nothing classified)
//! kind: positive                  positive | negative | near-miss
//! source: https://...             one line per source (at least one)
//! also: cuda_oom                  classes that may also appear (comma-separated, optional)
//! not: p2p_fabric                 classes that must not appear at all (optional)
//! not_confirmed: allocator_ipc    classes that must not appear at CONFIRMED (optional)
//! damage: wrapped, ansi           paste damage applied (`none` when clean)
//! why: one line on why the label is right
//! %%% end of header %%%
//! ```
//!
//! Everything after the end line, byte for byte (CR, ANSI escapes and invalid UTF-8 included),
//! is the log. A file that does not start with the begin line has no header: it is classified
//! and shown, but not scored.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use sm120_doctor::engine::classify::{Classification, Scanner};
use sm120_doctor::kb::KnowledgeBase;

pub const HEADER_BEGIN: &str = "%%% sm120-doctor corpus case %%%";
pub const HEADER_END: &str = "%%% end of header %%%";

/// The label meaning "nothing classified".
pub const NONE: &str = "none";

/// Classes other work adds to the knowledge base. Cases carry these labels already; until the
/// class exists its recall is 0, which the floors record. (None now: `alloc_conf_invalid`,
/// `sm12x_unknown_gap` and `p2p_fabric` are KB classes under the same ids.)
pub const PENDING_CLASSES: &[&str] = &[];

/// When the KB names a pending class differently, map the KB's class id to the corpus label
/// here: `(kb_class_id, corpus_label)`. Empty: every KB class uses the corpus label as its id.
pub const LABEL_ALIASES: &[(&str, &str)] = &[];

/// Short column names for the confusion matrix (unknown classes get their first 5 letters).
const SHORT: &[(&str, &str)] = &[
    ("allocator_ipc", "aipc"),
    ("alloc_conf_invalid", "acfg"),
    ("breakable_cudagraph", "bcg"),
    ("cooperative_topk", "ctopk"),
    ("cuda_oom", "oom"),
    ("deepgemm_warmup", "dgemm"),
    ("flashinfer_sampler", "fisam"),
    ("fp8_tuning", "fp8"),
    ("orphan_workers", "orph"),
    ("p2p_fabric", "p2p"),
    ("sm120_kernel_missing", "kmiss"),
    ("sm12x_unknown_gap", "gap"),
    (NONE, "none"),
];

pub const KINDS: &[&str] = &["positive", "negative", "near-miss"];

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    pub label: String,
    pub kind: String,
    pub sources: Vec<String>,
    pub also: Vec<String>,
    pub not: Vec<String>,
    pub not_confirmed: Vec<String>,
    pub damage: Vec<String>,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// File name, e.g. `aipc_42609_3090_nvlink_tp2.log`.
    pub name: String,
    pub header: Option<Header>,
    /// The log exactly as the classifier gets it.
    pub body: Vec<u8>,
}

/// Split a case file into header and body. Errors name the file and the 1-based line.
pub fn parse_case(name: &str, bytes: &[u8]) -> Result<Case, String> {
    let begin = format!("{HEADER_BEGIN}\n");
    if !bytes.starts_with(begin.as_bytes()) {
        return Ok(Case {
            name: name.to_string(),
            header: None,
            body: bytes.to_vec(),
        });
    }
    let mut header = Header::default();
    let mut offset = begin.len();
    let mut line_no = 1usize;
    loop {
        line_no += 1;
        let rest = &bytes[offset..];
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            return Err(format!(
                "{name}:{line_no}: header not closed (no `{HEADER_END}` line)"
            ));
        };
        let line = std::str::from_utf8(&rest[..nl])
            .map_err(|_| format!("{name}:{line_no}: header line is not UTF-8"))?;
        offset += nl + 1;
        if line == HEADER_END {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "{name}:{line_no}: expected `key: value`, got {line:?}"
            ));
        };
        let value = value.trim();
        let list = || -> Vec<String> {
            value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        };
        match key.trim() {
            "label" => header.label = value.to_string(),
            "kind" => header.kind = value.to_string(),
            "source" => header.sources.push(value.to_string()),
            "also" => header.also.extend(list()),
            "not" => header.not.extend(list()),
            "not_confirmed" => header.not_confirmed.extend(list()),
            "damage" => header.damage.extend(list()),
            "why" => header.why = value.to_string(),
            other => return Err(format!("{name}:{line_no}: unknown header key `{other}`")),
        }
    }
    for (field, empty) in [
        ("label", header.label.is_empty()),
        ("kind", header.kind.is_empty()),
        ("source", header.sources.is_empty()),
        ("damage", header.damage.is_empty()),
        ("why", header.why.is_empty()),
    ] {
        if empty {
            return Err(format!("{name}: header has no `{field}`"));
        }
    }
    if !KINDS.contains(&header.kind.as_str()) {
        return Err(format!(
            "{name}: kind `{}` is not one of {KINDS:?}",
            header.kind
        ));
    }
    Ok(Case {
        name: name.to_string(),
        header: Some(header),
        body: bytes[offset..].to_vec(),
    })
}

/// Every regular, non-hidden file directly in `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Case>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if path.is_file() && !hidden {
            paths.push(path);
        }
    }
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let bytes =
            std::fs::read(&path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        cases.push(parse_case(&name, &bytes)?);
    }
    Ok(cases)
}

/// How sure the classifier says it is about a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Confirmed,
    Suspected,
    Low,
    /// The classifier named the class without any confidence. Read as certain, which is how
    /// `classify` prints it today ("Most likely first: ...").
    Unstated,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Confirmed => "confirmed",
            Level::Suspected => "suspected",
            Level::Low => "low",
            Level::Unstated => "unstated",
        }
    }
    /// Counts as CONFIRMED for `not_confirmed:` constraints.
    pub fn is_certain(self) -> bool {
        matches!(self, Level::Confirmed | Level::Unstated)
    }
}

/// Read a confidence from the classifier's serialised output: a word
/// (`confirmed`/`high`, `suspected`/`medium`, anything else is low), a number in 0..=1
/// (>= 0.9 confirmed, >= 0.5 suspected), or an object with a `level` field.
pub fn level_of(value: &serde_json::Value) -> Level {
    match value {
        serde_json::Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "confirmed" | "high" | "certain" => Level::Confirmed,
            "suspected" | "medium" | "likely" => Level::Suspected,
            _ => Level::Low,
        },
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if x >= 0.9 => Level::Confirmed,
            Some(x) if x >= 0.5 => Level::Suspected,
            _ => Level::Low,
        },
        serde_json::Value::Object(m) => m.get("level").map_or(Level::Unstated, level_of),
        _ => Level::Unstated,
    }
}

/// What the classifier said about one log: classes most likely first, each with a level.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub ranked: Vec<(String, Level)>,
    pub matches: usize,
}

/// Read `classes` (strings, or objects with `class`/`id`/`name` and `confidence`) and an
/// optional top-level `confidence` map or list from the serialised classification, so the
/// harness keeps working when the classifier adds confidence per class.
pub fn verdict_from_json(value: &serde_json::Value) -> Verdict {
    let mut ranked = Vec::new();
    if let Some(classes) = value.get("classes").and_then(|c| c.as_array()) {
        for (i, c) in classes.iter().enumerate() {
            let (name, level) = match c {
                serde_json::Value::String(s) => (s.clone(), None),
                serde_json::Value::Object(m) => {
                    let name = ["class", "id", "name"]
                        .iter()
                        .find_map(|k| m.get(*k).and_then(|v| v.as_str()))
                        .unwrap_or_default()
                        .to_string();
                    (name, m.get("confidence").map(level_of))
                }
                _ => continue,
            };
            let level = level.unwrap_or_else(|| match value.get("confidence") {
                Some(serde_json::Value::Object(map)) => {
                    map.get(&name).map_or(Level::Unstated, level_of)
                }
                Some(serde_json::Value::Array(list)) => {
                    list.get(i).map_or(Level::Unstated, level_of)
                }
                _ => Level::Unstated,
            });
            ranked.push((alias(&name).to_string(), level));
        }
    }
    let matches = value
        .get("matches")
        .and_then(|m| m.as_array())
        .map_or(0, Vec::len);
    Verdict { ranked, matches }
}

fn alias(kb_class: &str) -> &str {
    LABEL_ALIASES
        .iter()
        .find(|(kb, _)| *kb == kb_class)
        .map_or(kb_class, |(_, label)| label)
}

/// Classify one log the way `sm120-doctor classify FILE` does: stream it through the scanner,
/// then rank the matches.
pub fn classification(
    scanner: &Scanner<'_>,
    name: &str,
    body: &[u8],
) -> Result<Classification, String> {
    let mut matches = Vec::new();
    scanner
        .scan_reader(name, body, &mut matches)
        .map_err(|e| format!("{name}: {e}"))?;
    Ok(scanner.rank(matches))
}

/// Read a classification the way its JSON reads (the form `classify --format json` prints).
pub fn verdict_of(name: &str, classification: &Classification) -> Result<Verdict, String> {
    let value =
        serde_json::to_value(classification).map_err(|e| format!("{name}: serialise: {e}"))?;
    Ok(verdict_from_json(&value))
}

/// [`classification`], read as a [`Verdict`].
pub fn classify(scanner: &Scanner<'_>, name: &str, body: &[u8]) -> Result<Verdict, String> {
    verdict_of(name, &classification(scanner, name, body)?)
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub header: Option<Header>,
    pub verdict: Verdict,
    /// The top-ranked class, or `none`.
    pub top: String,
    /// Broken `not:` / `not_confirmed:` constraints, as `file: text`.
    pub violations: Vec<String>,
}

impl CaseResult {
    pub fn correct(&self) -> Option<bool> {
        self.header.as_ref().map(|h| h.label == self.top)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassStats {
    pub labelled: usize,
    pub predicted: usize,
    pub correct: usize,
}

impl ClassStats {
    /// `None` when the class was never predicted.
    pub fn precision(&self) -> Option<f64> {
        (self.predicted > 0).then(|| self.correct as f64 / self.predicted as f64)
    }
    /// `None` when no case carries this label.
    pub fn recall(&self) -> Option<f64> {
        (self.labelled > 0).then(|| self.correct as f64 / self.labelled as f64)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    pub results: Vec<CaseResult>,
    /// Per class (labels and predictions), over labelled cases.
    pub stats: BTreeMap<String, ClassStats>,
    /// (label, top-ranked) -> count, over labelled cases.
    pub confusion: BTreeMap<(String, String), usize>,
}

pub fn constraint_violations(
    name: &str,
    header: &Header,
    verdict: &Verdict,
    top: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for class in &header.not {
        if let Some((_, level)) = verdict.ranked.iter().find(|(c, _)| c == class) {
            out.push(format!(
                "{name}: not: {class} (named, {}; top {top})",
                level.as_str()
            ));
        }
    }
    for class in &header.not_confirmed {
        if let Some((_, level)) = verdict.ranked.iter().find(|(c, _)| c == class)
            && level.is_certain()
        {
            out.push(format!(
                "{name}: not_confirmed: {class} (named, {})",
                level.as_str()
            ));
        }
    }
    out
}

pub fn evaluate(kb: &KnowledgeBase, cases: &[Case]) -> Result<Report, String> {
    let scanner = Scanner::new(kb);
    let mut report = Report::default();
    for case in cases {
        let verdict = classify(&scanner, &case.name, &case.body)?;
        let top = verdict
            .ranked
            .first()
            .map_or(NONE.to_string(), |(c, _)| c.clone());
        let violations = case
            .header
            .as_ref()
            .map(|h| constraint_violations(&case.name, h, &verdict, &top))
            .unwrap_or_default();
        if let Some(h) = &case.header {
            report.stats.entry(h.label.clone()).or_default().labelled += 1;
            report.stats.entry(top.clone()).or_default().predicted += 1;
            if h.label == top {
                report.stats.entry(top.clone()).or_default().correct += 1;
            }
            *report
                .confusion
                .entry((h.label.clone(), top.clone()))
                .or_default() += 1;
        }
        report.results.push(CaseResult {
            name: case.name.clone(),
            header: case.header.clone(),
            verdict,
            top,
            violations,
        });
    }
    Ok(report)
}

impl Report {
    pub fn labelled(&self) -> impl Iterator<Item = &CaseResult> {
        self.results.iter().filter(|r| r.header.is_some())
    }
    pub fn accuracy(&self) -> Option<f64> {
        let n = self.labelled().count();
        let ok = self
            .labelled()
            .filter(|r| r.correct() == Some(true))
            .count();
        (n > 0).then(|| ok as f64 / n as f64)
    }
    pub fn violations(&self) -> Vec<String> {
        self.results
            .iter()
            .flat_map(|r| r.violations.iter().cloned())
            .collect()
    }
}

fn short(class: &str) -> String {
    SHORT
        .iter()
        .find(|(c, _)| *c == class)
        .map_or_else(|| class.chars().take(5).collect(), |(_, s)| s.to_string())
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "   -".to_string(), |v| format!("{v:4.2}"))
}

/// The confusion matrix, per-class precision/recall, per-damage accuracy, constraint
/// violations and misses, as text.
pub fn render(report: &Report, title: &str) -> String {
    let mut out = String::new();
    let labelled: Vec<&CaseResult> = report.labelled().collect();
    let _ = writeln!(
        out,
        "{title}: {} cases, {} labelled",
        report.results.len(),
        labelled.len()
    );
    if labelled.is_empty() {
        let _ = writeln!(
            out,
            "\nNo headers: classification only (file -> top class)."
        );
        for r in &report.results {
            let _ = writeln!(out, "  {:<50} {}", r.name, ranked_text(&r.verdict));
        }
        return out;
    }
    // Row and column order: labels (none last), then predicted classes that are no label.
    let mut labels: Vec<String> = report
        .stats
        .iter()
        .filter(|(_, s)| s.labelled > 0)
        .map(|(c, _)| c.clone())
        .collect();
    labels.sort_by_key(|c| (c == NONE, c.clone()));
    let mut cols = labels.clone();
    for (c, s) in &report.stats {
        if s.labelled == 0 && s.predicted > 0 {
            cols.insert(cols.len().saturating_sub(1), c.clone());
        }
    }
    let _ = writeln!(
        out,
        "\nConfusion matrix (rows: label, columns: top-ranked class; none = nothing classified)"
    );
    let _ = write!(out, "{:<22}", "");
    for c in &cols {
        let _ = write!(out, "{:>6}", short(c));
    }
    let _ = writeln!(out, "{:>7}", "total");
    for l in &labels {
        let _ = write!(out, "{l:<22}");
        let mut total = 0;
        for c in &cols {
            let n = report
                .confusion
                .get(&(l.clone(), c.clone()))
                .copied()
                .unwrap_or(0);
            total += n;
            if n == 0 {
                let _ = write!(out, "{:>6}", ".");
            } else {
                let _ = write!(out, "{n:>6}");
            }
        }
        let _ = writeln!(out, "{total:>7}");
    }
    let _ = writeln!(
        out,
        "\nPer class (P = precision, R = recall; top-ranked class vs label)"
    );
    let _ = writeln!(
        out,
        "{:<22}{:>8}{:>8}{:>8}{:>7}{:>7}",
        "class", "label", "pred", "right", "P", "R"
    );
    for c in cols.iter() {
        let s = report.stats.get(c).cloned().unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<22}{:>8}{:>8}{:>8}{:>7}{:>7}{}",
            c,
            s.labelled,
            s.predicted,
            s.correct,
            pct(s.precision()),
            pct(s.recall()),
            if PENDING_CLASSES.contains(&c.as_str()) {
                "  (pending class)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "accuracy (top == label): {} of {} = {}",
        labelled
            .iter()
            .filter(|r| r.correct() == Some(true))
            .count(),
        labelled.len(),
        pct(report.accuracy())
    );
    // Per damage kind and per case kind.
    let mut by_damage: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in &labelled {
        let Some(h) = &r.header else { continue };
        let ok = usize::from(r.correct() == Some(true));
        for d in &h.damage {
            let e = by_damage.entry(d.clone()).or_default();
            e.0 += 1;
            e.1 += ok;
        }
        let e = by_kind.entry(h.kind.clone()).or_default();
        e.0 += 1;
        e.1 += ok;
    }
    let _ = writeln!(out, "\nBy case kind (cases, right)");
    for (k, (n, ok)) in &by_kind {
        let _ = writeln!(out, "  {k:<14}{n:>5}{ok:>6}");
    }
    let _ = writeln!(out, "By damage (cases, right)");
    for (d, (n, ok)) in &by_damage {
        let _ = writeln!(out, "  {d:<14}{n:>5}{ok:>6}");
    }
    let violations = report.violations();
    let _ = writeln!(
        out,
        "\nConstraint violations (not: / not_confirmed:): {}",
        violations.len()
    );
    for v in &violations {
        let _ = writeln!(out, "  {v}");
    }
    let misses: Vec<&&CaseResult> = labelled
        .iter()
        .filter(|r| r.correct() == Some(false))
        .collect();
    let _ = writeln!(out, "\nMisses (label -> top; ranked): {}", misses.len());
    for r in misses {
        let label = r.header.as_ref().map_or("", |h| h.label.as_str());
        let _ = writeln!(
            out,
            "  {:<50} {label} -> {}; {}",
            r.name,
            r.top,
            ranked_text(&r.verdict)
        );
    }
    out
}

fn ranked_text(v: &Verdict) -> String {
    if v.ranked.is_empty() {
        return format!("[] ({} matches)", v.matches);
    }
    let parts: Vec<String> = v
        .ranked
        .iter()
        .map(|(c, l)| format!("{c}:{}", l.as_str()))
        .collect();
    format!("[{}] ({} matches)", parts.join(", "), v.matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_header_is_all_body() {
        let c = parse_case("x.log", b"line one\r\nline two\n").expect("parse");
        assert_eq!(c.header, None);
        assert_eq!(c.body, b"line one\r\nline two\n");
    }

    #[test]
    fn header_fields_and_body_bytes_are_kept() {
        let text = format!(
            "{HEADER_BEGIN}\nlabel: cuda_oom\nkind: near-miss\nsource: https://a\nsource: https://b\n\
             not: allocator_ipc, p2p_fabric\nnot_confirmed: x\ndamage: ansi, cut\nwhy: because\n\
             {HEADER_END}\n\x1b[31mERROR\x1b[0m line\r\n tail "
        );
        let mut bytes = text.into_bytes();
        bytes.push(0xff); // invalid UTF-8 stays in the body

        let c = parse_case("c.log", &bytes).expect("parse");
        let h = c.header.expect("header");
        assert_eq!(h.label, "cuda_oom");
        assert_eq!(h.kind, "near-miss");
        assert_eq!(h.sources, ["https://a", "https://b"]);
        assert_eq!(h.not, ["allocator_ipc", "p2p_fabric"]);
        assert_eq!(h.not_confirmed, ["x"]);
        assert_eq!(h.damage, ["ansi", "cut"]);
        assert!(c.body.starts_with(b"\x1b[31mERROR"));
        assert!(c.body.windows(2).any(|w| w == b"\r\n"));
        assert_eq!(c.body.last(), Some(&0xff));
    }

    #[test]
    fn header_errors_name_file_and_line() {
        let unclosed = format!("{HEADER_BEGIN}\nlabel: none\n");
        let e = parse_case("u.log", unclosed.as_bytes()).expect_err("unclosed");
        assert!(e.starts_with("u.log:3:"), "{e}");
        let bad = format!("{HEADER_BEGIN}\nlabel none\n{HEADER_END}\n");
        let e = parse_case("b.log", bad.as_bytes()).expect_err("no colon");
        assert!(e.starts_with("b.log:2:"), "{e}");
        let unknown = format!("{HEADER_BEGIN}\nlabl: none\n{HEADER_END}\n");
        let e = parse_case("k.log", unknown.as_bytes()).expect_err("unknown key");
        assert!(e.contains("unknown header key `labl`"), "{e}");
        let missing = format!("{HEADER_BEGIN}\nlabel: none\n{HEADER_END}\n");
        let e = parse_case("m.log", missing.as_bytes()).expect_err("missing");
        assert!(e.contains("no `kind`"), "{e}");
    }

    #[test]
    fn verdicts_read_today_and_tomorrow_json() {
        let today =
            serde_json::json!({"classes": ["allocator_ipc", "cuda_oom"], "matches": [1, 2, 3]});
        let v = verdict_from_json(&today);
        assert_eq!(
            v.ranked,
            [
                ("allocator_ipc".to_string(), Level::Unstated),
                ("cuda_oom".to_string(), Level::Unstated)
            ]
        );
        assert_eq!(v.matches, 3);
        let objects = serde_json::json!({"classes": [
            {"class": "allocator_ipc", "confidence": "suspected"},
            {"id": "cuda_oom", "confidence": 0.95},
            {"name": "fp8_tuning", "confidence": {"level": "low"}}
        ]});
        let v = verdict_from_json(&objects);
        assert_eq!(v.ranked[0].1, Level::Suspected);
        assert_eq!(v.ranked[1], ("cuda_oom".to_string(), Level::Confirmed));
        assert_eq!(v.ranked[2].1, Level::Low);
        let side_map = serde_json::json!({"classes": ["p2p_fabric"], "confidence": {"p2p_fabric": "CONFIRMED"}});
        assert_eq!(verdict_from_json(&side_map).ranked[0].1, Level::Confirmed);
        let side_list = serde_json::json!({"classes": ["a", "b"], "confidence": [0.2, 0.6]});
        let v = verdict_from_json(&side_list);
        assert_eq!(
            (v.ranked[0].1, v.ranked[1].1),
            (Level::Low, Level::Suspected)
        );
    }

    #[test]
    fn constraints_distinguish_named_from_confirmed() {
        let header = Header {
            not: vec!["p2p_fabric".into()],
            not_confirmed: vec!["allocator_ipc".into()],
            ..Header::default()
        };
        let suspected = Verdict {
            ranked: vec![("allocator_ipc".into(), Level::Suspected)],
            matches: 1,
        };
        assert!(constraint_violations("f", &header, &suspected, "allocator_ipc").is_empty());
        let certain = Verdict {
            ranked: vec![
                ("allocator_ipc".into(), Level::Unstated),
                ("p2p_fabric".into(), Level::Low),
            ],
            matches: 2,
        };
        let v = constraint_violations("f", &header, &certain, "allocator_ipc");
        assert_eq!(v.len(), 2, "{v:?}");
    }
}
