//! Log classification: which signatures match which lines.
//!
//! All patterns are joined into one regex so a large log is scanned once (the regex engine's
//! literal prefilters do most of the work); only matching lines are re-checked per signature.

use crate::kb::schema::Strength;
use crate::kb::{CompiledSignature, KnowledgeBase};
use regex::Regex;
use serde::Serialize;

/// One log given to the tool.
#[derive(Debug, Clone, PartialEq)]
pub struct LogText {
    /// What to call it in output (the file name, or `pasted`).
    pub name: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogMatch {
    pub class: String,
    pub signature: String,
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
    #[serde(skip)]
    pub strong: bool,
}

/// The result of classifying logs: classes ordered most likely first, and every match.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classification {
    pub classes: Vec<String>,
    pub matches: Vec<LogMatch>,
}

impl Classification {
    pub fn matched(&self, signature: &str) -> bool {
        self.matches.iter().any(|m| m.signature == signature)
    }
}

/// A prepared scanner for one knowledge base.
pub struct Scanner<'kb> {
    combined: Option<Regex>,
    signatures: &'kb [CompiledSignature],
}

/// Longest line kept in a match's `text` (logs can hold megabyte-long lines).
const MAX_LINE_SHOWN: usize = 400;

impl<'kb> Scanner<'kb> {
    pub fn new(kb: &'kb KnowledgeBase) -> Self {
        let sigs = &kb.signatures;
        let joined: Vec<String> = sigs
            .iter()
            .map(|s| format!("(?:{})", s.regex.as_str()))
            .collect();
        let combined = if joined.is_empty() {
            None
        } else {
            // Every part compiled on its own, so the alternation compiles too; if the size limit
            // is hit, fall back to per-signature scanning.
            Regex::new(&format!("(?m){}", joined.join("|"))).ok()
        };
        Scanner {
            combined,
            signatures: sigs,
        }
    }

    /// Scan one log, appending matches.
    pub fn scan(&self, log: &LogText, out: &mut Vec<LogMatch>) {
        let text = log.text.as_str();
        let bytes = text.as_bytes();
        let mut line_no = 1usize;
        let mut counted_to = 0usize;
        let mut search_from = 0usize;
        loop {
            let start = match &self.combined {
                Some(re) => match re.find_at(text, search_from) {
                    Some(m) => m.start(),
                    None => break,
                },
                None => match self
                    .signatures
                    .iter()
                    .filter_map(|s| s.regex.find_at(text, search_from))
                    .map(|m| m.start())
                    .min()
                {
                    Some(s) => s,
                    None => break,
                },
            };
            let line_start = memchr::memrchr(b'\n', &bytes[..start]).map_or(0, |p| p + 1);
            let line_end =
                memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
            line_no += memchr::memchr_iter(b'\n', &bytes[counted_to..line_start]).count();
            counted_to = line_start;
            let line = text[line_start..line_end].trim_end_matches('\r');
            for sig in self.signatures {
                if sig.regex.is_match(line) && !sig.unless.iter().any(|u| u.is_match(line)) {
                    out.push(LogMatch {
                        class: sig.class.clone(),
                        signature: sig.id.clone(),
                        file: log.name.clone(),
                        line: line_no,
                        text: shorten(line),
                        strong: sig.strength == Strength::Strong,
                    });
                }
            }
            if line_end >= bytes.len() {
                break;
            }
            search_from = line_end + 1;
        }
    }
}

fn shorten(line: &str) -> String {
    let line = line.trim();
    if line.len() <= MAX_LINE_SHOWN {
        return line.to_string();
    }
    let mut cut = MAX_LINE_SHOWN;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &line[..cut])
}

/// Classify logs: every match, and classes ordered by weight (strong matches count ten times a
/// supporting one), ties broken by the earliest match.
pub fn classify(kb: &KnowledgeBase, logs: &[LogText]) -> Classification {
    let scanner = Scanner::new(kb);
    let mut matches = Vec::new();
    for log in logs {
        scanner.scan(log, &mut matches);
    }
    let mut scored: Vec<(String, u64, usize)> = Vec::new();
    for (i, m) in matches.iter().enumerate() {
        let w = if m.strong { 10 } else { 1 };
        match scored.iter_mut().find(|(c, _, _)| *c == m.class) {
            Some(entry) => entry.1 += w,
            None => scored.push((m.class.clone(), w, i)),
        }
    }
    // A class seen only through supporting lines is not named on its own.
    let strong_classes: Vec<&str> = matches
        .iter()
        .filter(|m| m.strong)
        .map(|m| m.class.as_str())
        .collect();
    scored.retain(|(c, _, _)| strong_classes.contains(&c.as_str()));
    scored.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    Classification {
        classes: scored.into_iter().map(|(c, _, _)| c).collect(),
        matches,
    }
}
