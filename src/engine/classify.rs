//! Log classification: which signatures match which lines.
//!
//! All patterns are joined into one regex so a large log is scanned once (the regex engine's
//! literal prefilters do most of the work); only matching lines are re-checked per signature.
//! Nothing is compiled before a log is scanned, and a small log is scanned with only the
//! signatures it can match (those with one of their regex's needles in it, see
//! [`crate::kb::LazyRegex`]), so a start with a short log or none compiles few regexes or none.

use super::log_scope::{LogScope, LogState};
use crate::kb::schema::Strength;
use crate::kb::{CompiledSignature, KnowledgeBase};
use regex::Regex;
use serde::Serialize;
use std::sync::OnceLock;

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
    signatures: &'kb [CompiledSignature],
    /// Built when the first log is scanned.
    prepared: OnceLock<Prepared>,
}

struct Prepared {
    combined: Option<Regex>,
    /// Log-wide context (`after`, `unless_log`), applied at each log's end.
    scope: LogScope,
}

/// Logs up to this size are scanned with only the signatures they can match.
const SMALL_LOG: usize = 64 * 1024;

/// Longest line kept in a match's `text` (logs can hold megabyte-long lines).
const MAX_LINE_SHOWN: usize = 400;

impl<'kb> Scanner<'kb> {
    pub fn new(kb: &'kb KnowledgeBase) -> Self {
        Scanner::over(&kb.signatures)
    }

    fn over(signatures: &'kb [CompiledSignature]) -> Self {
        Scanner {
            signatures,
            prepared: OnceLock::new(),
        }
    }

    fn prepared(&self) -> &Prepared {
        self.prepared.get_or_init(|| {
            let sigs = self.signatures;
            let joined: Vec<String> = sigs
                .iter()
                .map(|s| format!("(?:{})", s.regex.as_str()))
                .collect();
            let combined = if joined.is_empty() {
                None
            } else {
                // Every part compiled on its own, so the alternation compiles too; if the size
                // limit is hit, fall back to per-signature scanning.
                Regex::new(&format!("(?m){}", joined.join("|"))).ok()
            };
            Prepared {
                combined,
                scope: LogScope::new(sigs),
            }
        })
    }

    /// Scan one log held in memory, appending matches.
    pub fn scan(&self, log: &LogText, out: &mut Vec<LogMatch>) {
        if log.text.len() <= SMALL_LOG {
            // A signature none of whose needles is in the log cannot match a line of it, nor
            // be another's `after`; its `unless_log` only cancels its own matches.
            let possible: Vec<CompiledSignature> = self
                .signatures
                .iter()
                .filter(|s| s.regex.may_occur_in(&log.text))
                .cloned()
                .collect();
            if possible.len() < self.signatures.len() {
                Scanner::over(&possible).scan_all(log, out);
                return;
            }
        }
        self.scan_all(log, out);
    }

    /// [`Scanner::scan`] with every signature of the scanner.
    fn scan_all(&self, log: &LogText, out: &mut Vec<LogMatch>) {
        let from = out.len();
        let scope = &self.prepared().scope;
        let mut state = scope.start(self.signatures);
        self.scan_text(&log.name, &log.text, 1, out);
        scope.see(&log.text, &mut state);
        self.end_of_log(&state, out, from);
    }

    /// Drop the matches of one log (`out[from..]`) whose log-wide context is not met.
    fn end_of_log(&self, state: &LogState, out: &mut Vec<LogMatch>, from: usize) {
        let log: Vec<(&str, usize)> = out[from..]
            .iter()
            .map(|m| (m.signature.as_str(), m.line))
            .collect();
        let mut keep = self
            .prepared()
            .scope
            .keep(self.signatures, state, &log)
            .into_iter();
        let mut i = 0usize;
        out.retain(|_| {
            i += 1;
            i <= from || keep.next().unwrap_or(true)
        });
    }

    /// Scan a log from a reader in chunks, so a large file is never held whole in memory.
    pub fn scan_reader(
        &self,
        name: &str,
        reader: impl std::io::Read,
        out: &mut Vec<LogMatch>,
    ) -> std::io::Result<()> {
        self.scan_chunked(name, reader, 4 << 20, out)
    }

    /// `scan_reader` with a given chunk size (small in tests, to cross chunk boundaries).
    fn scan_chunked(
        &self,
        name: &str,
        mut reader: impl std::io::Read,
        chunk: usize,
        out: &mut Vec<LogMatch>,
    ) -> std::io::Result<()> {
        let mut buf: Vec<u8> = Vec::with_capacity(chunk);
        let from = out.len();
        let scope = &self.prepared().scope;
        let mut state = scope.start(self.signatures);
        let mut next_line = 1usize;
        let mut eof = false;
        while !eof {
            // Fill up to `chunk` bytes beyond what is carried over from the last chunk.
            let target = buf.len() + chunk;
            while buf.len() < target {
                let start = buf.len();
                buf.resize(target, 0);
                let n = match reader.read(&mut buf[start..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(e),
                };
                buf.truncate(start + n);
                if n == 0 {
                    eof = true;
                    break;
                }
            }
            // Scan whole lines only; keep a trailing partial line for the next round.
            let end = if eof {
                buf.len()
            } else {
                memchr::memrchr(b'\n', &buf).map_or(0, |p| p + 1)
            };
            if end == 0 && !eof {
                continue; // one line longer than the buffer: read more
            }
            let text = String::from_utf8_lossy(&buf[..end]);
            next_line += self.scan_text(name, &text, next_line, out);
            scope.see(&text, &mut state);
            buf.drain(..end);
        }
        self.end_of_log(&state, out, from);
        Ok(())
    }

    /// Scan `text` whose first line is number `first_line`; returns the newlines it holds.
    fn scan_text(
        &self,
        name: &str,
        text: &str,
        first_line: usize,
        out: &mut Vec<LogMatch>,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut line_no = first_line;
        let mut counted_to = 0usize;
        let mut search_from = 0usize;
        loop {
            let start = match &self.prepared().combined {
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
                        file: name.to_string(),
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
        (line_no - first_line) + memchr::memchr_iter(b'\n', &bytes[counted_to..]).count()
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
    rank(matches)
}

/// Order classes by the weight of their matches.
pub fn rank(matches: Vec<LogMatch>) -> Classification {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kb() -> KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    const LOG: &str = "a\nb\nFailed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\nc\r\nWorker proc VllmWorker-1 died unexpectedly\n";

    #[test]
    fn in_memory_and_streamed_scans_agree_on_lines() {
        let kb = kb();
        let scanner = Scanner::new(&kb);
        let mut a = Vec::new();
        scanner.scan(
            &LogText {
                name: "l".into(),
                text: LOG.into(),
            },
            &mut a,
        );
        assert_eq!(a.iter().map(|m| m.line).collect::<Vec<_>>(), [3, 5]);
        // Small chunks cross chunk boundaries mid-line; 13 bytes is shorter than a line.
        let big = LOG.repeat(200);
        for chunk in [13, 256, 4 << 20] {
            let mut b = Vec::new();
            scanner
                .scan_chunked("l", big.as_bytes(), chunk, &mut b)
                .expect("read");
            assert_eq!(b.len(), 400, "chunk {chunk}");
            assert_eq!(b[398].line, 5 * 199 + 3, "chunk {chunk}");
            assert_eq!(b[399].line, 5 * 200, "chunk {chunk}");
        }
    }

    #[test]
    fn a_small_log_compiles_only_the_signatures_it_can_match() {
        let kb = kb();
        let log = LogText {
            name: "l".into(),
            text: LOG.into(),
        };
        let c = classify(&kb, std::slice::from_ref(&log));
        let compiled: Vec<&str> = kb
            .signatures
            .iter()
            .filter(|s| s.regex.is_compiled())
            .map(|s| s.id.as_str())
            .collect();
        assert!(
            !compiled.is_empty() && compiled.len() * 5 < kb.signatures.len(),
            "{compiled:?}"
        );
        let mut all = Vec::new();
        Scanner::new(&kb).scan_all(&log, &mut all);
        assert_eq!(c.matches, all);
    }

    /// The scan with only the possible signatures finds what the scan with all of them finds,
    /// on every log of the corpus.
    #[test]
    fn the_small_log_scan_agrees_with_the_full_scan_on_the_corpus() {
        let kb = kb();
        let scanner = Scanner::new(&kb);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/cases");
        let mut logs = 0;
        let mut matched = 0;
        for e in std::fs::read_dir(&dir).expect("corpus") {
            let path = e.expect("entry").path();
            if path.extension().is_none_or(|x| x != "log") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("read");
            let log = LogText {
                name: path.display().to_string(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            };
            assert!(log.text.len() <= SMALL_LOG, "{}", log.name);
            let (mut small, mut all) = (Vec::new(), Vec::new());
            scanner.scan(&log, &mut small);
            scanner.scan_all(&log, &mut all);
            assert_eq!(small, all, "{}", log.name);
            logs += 1;
            matched += usize::from(!all.is_empty());
        }
        assert!(
            logs > 150 && matched > 100,
            "{logs} logs, {matched} with matches"
        );
    }

    #[test]
    fn supporting_lines_alone_name_no_class() {
        let c = classify(
            &kb(),
            &[LogText {
                name: "l".into(),
                text: "Worker proc VllmWorker-0 died unexpectedly\n".into(),
            }],
        );
        assert!(c.classes.is_empty());
        assert_eq!(c.matches.len(), 1);
    }

    #[test]
    fn invalid_utf8_does_not_stop_the_scan() {
        let kb = kb();
        let mut bytes = b"\xff\xfe junk\n".to_vec();
        bytes.extend_from_slice(b"RuntimeError: launch_cooperative_cluster, cooperative_topk launch failed: invalid argument\n");
        let mut out = Vec::new();
        Scanner::new(&kb)
            .scan_reader("b", bytes.as_slice(), &mut out)
            .expect("read");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].line, 2);
    }
}
