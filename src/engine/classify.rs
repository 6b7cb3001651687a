//! Log classification: which signatures match which lines, and which classes that evidence
//! points at, with a confidence for each.
//!
//! Scanning is streaming: a log is read in blocks of whole lines; each block is normalised
//! ([`normalise`]: ANSI, markdown, `\r` redraws, Windows paths), then the signatures' required
//! literals are searched in it ([`needles`]: one memmem per needle for a short text, a few SIMD
//! passes over chosen fingerprints for a long one) and only lines holding a needle are tried
//! against the signatures that own it; a pattern with no required literal is searched as a
//! regex. Lines that a terminal or editor wrapped are tried joined
//! to the line they continue (with and without a space), through the patterns joined into a few
//! regexes, compiled at the first such join; the look-back is one logical line carried across
//! blocks.
//!
//! Ranking ([`rank`]) weighs the evidence per class: each signature that matched counts once,
//! with the weight the knowledge base gives it; `requires` / `excluded_by` / `confirm_with`
//! relate a match to context found anywhere in the logs (an SM12x GPU named, expandable segments
//! in the environment). Classes are ordered by total weight, then by the severity of their
//! conclusions, then by the first line. A class is named from a total weight of
//! [`NAME_MIN_WEIGHT`]; its confidence is CONFIRMED only through an error line whose
//! confirmation (if it needs one) is in the log.

use super::log_scope::{LogScope, LogState};
mod ascii;
pub mod needles;
pub mod normalise;
mod rank;
pub mod run_reader;
pub mod run_signs;

pub use rank::{rank, rank_on_host, rank_with_run};

use crate::facts::Facts;
use crate::kb::lazy_regex::ascii_word_boundaries;
use crate::kb::schema::SignatureKind;
use crate::kb::{CompiledSignature, KnowledgeBase};
use regex::{Regex, RegexBuilder};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
    /// error, warning, frame, supporting or context.
    pub kind: SignatureKind,
    pub file: String,
    /// 1-based line number (of the first line, for a match across a wrapped line).
    pub line: usize,
    /// The line after normalisation (joined, for a match across a wrapped line).
    pub text: String,
    /// Matches of the same signature in this log left out just before this one: of a line
    /// repeated past [`KEEP_EACH_END`] times each way, the first and last are kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub repeats_left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Matches of one signature kept per log from each end (a crash-looping log repeats one line
/// millions of times: every copy kept cost 1.2 GB for 128 MB of log).
pub const KEEP_EACH_END: usize = 8;

/// Leave out the middle matches of each signature past [`KEEP_EACH_END`] from each end of
/// `out[from..]` (one log), counting them on the first kept match after them.
fn bound_repeats(out: &mut Vec<LogMatch>, from: usize) {
    let mut by_signature: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, m) in out[from..].iter().enumerate() {
        by_signature.entry(&m.signature).or_default().push(i);
    }
    let mut left_out = vec![false; out.len() - from];
    let mut credit = Vec::new();
    for idx in by_signature
        .values()
        .filter(|v| v.len() > 2 * KEEP_EACH_END)
    {
        let middle = &idx[KEEP_EACH_END..idx.len() - KEEP_EACH_END];
        let n: usize = middle
            .iter()
            .map(|&i| 1 + out[from + i].repeats_left_out)
            .sum();
        middle.iter().for_each(|&i| left_out[i] = true);
        credit.push((idx[idx.len() - KEEP_EACH_END], n));
    }
    if credit.is_empty() {
        return;
    }
    for (i, n) in credit {
        out[from + i].repeats_left_out += n;
    }
    let mut i = 0usize;
    out.retain(|_| {
        i += 1;
        i <= from || !left_out[i - 1 - from]
    });
}

/// How sure the classifier is that a class is what the logs show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum MatchConfidence {
    /// Only weak evidence: a warning, one frame, supporting lines.
    #[serde(rename = "LOW")]
    Low,
    /// An error line whose confirming context is not in the log, or traceback frames only.
    #[serde(rename = "SUSPECTED")]
    Suspected,
    /// An error line of the class, with its confirming context where it needs one.
    #[serde(rename = "CONFIRMED")]
    Confirmed,
}

impl MatchConfidence {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchConfidence::Low => "LOW",
            MatchConfidence::Suspected => "SUSPECTED",
            MatchConfidence::Confirmed => "CONFIRMED",
        }
    }
}

/// The evidence for one named class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassEvidence {
    pub class: String,
    pub confidence: MatchConfidence,
    /// Sum of the weights of the signatures that matched (each counted once).
    pub score: u32,
    /// What the knowledge base says when the evidence does not confirm the class.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The signatures that matched, strongest first.
    pub signatures: Vec<String>,
    /// This class's evidence is only warning, supporting or context lines, and the log shows a
    /// failure no class explains after its first line: it is not the answer (at most LOW).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unexplained_failure_after: Option<LineRef>,
}

/// A line of a log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineRef {
    pub file: String,
    pub line: usize,
}

/// The result of classifying logs: classes ordered most likely first, each with its confidence
/// and evidence, and every match that counts.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Classification {
    pub classes: Vec<String>,
    /// Per named class.
    pub confidence: BTreeMap<String, MatchConfidence>,
    /// Per named class, in `classes` order.
    pub evidence: Vec<ClassEvidence>,
    pub matches: Vec<LogMatch>,
    /// What the logs show about how the run went, whatever the class (see [`run_signs`]).
    #[serde(skip_serializing_if = "run_signs::RunSigns::is_empty")]
    pub run: run_signs::RunSigns,
}

impl Classification {
    pub fn matched(&self, signature: &str) -> bool {
        self.matches.iter().any(|m| m.signature == signature)
    }
    /// The evidence for a named class.
    pub fn evidence_for(&self, class: &str) -> Option<&ClassEvidence> {
        self.evidence.iter().find(|e| e.class == class)
    }
}

/// A class is named from this total weight (an error line alone is 10, a warning 4).
pub const NAME_MIN_WEIGHT: u32 = 3;
/// Without an error line, traceback frames of this total weight make a class SUSPECTED.
pub const FRAMES_SUSPECTED_WEIGHT: u32 = 6;

/// Longest line kept in a match's `text` (logs can hold megabyte-long lines).
const MAX_LINE_SHOWN: usize = 400;
/// How much of a wrapped line is kept to join with the next one.
const JOIN_KEEP: usize = 400;

/// Words that make a line worth joining with a continuation line after it: wrapped lines that
/// matter are error, warning, assertion and traceback lines.
const ALERT: &str = "rror|ailed|ssert|xception|arning|WARN|atal|FATAL|upported|not compatible|\
    out of memory|not defined|File \"|Traceback|Using default|Free memory|not found";

/// A prepared scanner for one knowledge base. Its regexes are compiled when the first log is
/// scanned, so a run with no log compiles none.
pub struct Scanner<'kb> {
    kb: &'kb KnowledgeBase,
    prepared: OnceLock<Prepared>,
    /// The signatures that can match the log at hand (`None`: all). A small log is scanned
    /// with only those in its searches and log-wide context ([`Scanner::scan`]).
    only: Option<Vec<bool>>,
    /// With `only`: a signature left out matched across a join of wrapped lines (its literal
    /// spanning the join), so the scan must be redone with all signatures.
    joined: AtomicBool,
    /// The run-sign patterns, compiled on first use and shared with the narrowed scanner of a
    /// small log (they do not depend on `only`).
    run_patterns: Arc<OnceLock<run_reader::RunPatterns>>,
    /// What the logs scanned since the last [`Scanner::rank`] show about the run.
    run: Mutex<run_signs::RunSigns>,
}

/// Logs held in memory up to this size are first scanned with only the signatures they can
/// match.
const SMALL_LOG: usize = 64 * 1024;

struct Prepared {
    /// The signatures' search patterns joined into a few regexes (see [`Scanner::new`]), for
    /// matches across wrapped lines. Empty when a join would not compile. Compiled at the first
    /// join of wrapped lines: most short logs have none, and these were a third of a start.
    searches: OnceLock<Vec<Regex>>,
    /// What finds a block's candidate lines: the literals the signatures' matches hold (built
    /// with the first block, which its needle search is tuned to).
    lines: OnceLock<LineFilter>,
    /// The signatures' patterns in their ASCII form (see ascii.rs), for candidate lines that
    /// are ASCII: most are, and that form compiles at a fraction of the Unicode one's cost.
    forms: ascii::AsciiForms,
    alert: Regex,
    /// Log-wide context (`after`, `unless_log`), applied at each log's end.
    scope: LogScope,
}

/// The line before the current one, for joining wrapped lines.
#[derive(Debug, Clone, Default)]
enum Prev {
    #[default]
    None,
    /// A line of the current block: byte range of its message in the normalised text.
    Slice {
        start: usize,
        end: usize,
        line: usize,
    },
    /// A line carried from an earlier block, or lines already joined: the tail of the joined
    /// text without and with a space at each join.
    Owned {
        tight: String,
        spaced: String,
        line: usize,
    },
}

/// Where the scanner is: the log, the normalised block, its first line number, and where the
/// block's matches start in the output.
struct Cursor<'a> {
    name: &'a str,
    norm: &'a normalise::Normalised<'a>,
    block_start: usize,
}

impl<'kb> Scanner<'kb> {
    /// Two searches: the failure classes' own signatures, then context and fallback
    /// signatures (GPU names, generic arch errors). Kept apart because together their many short
    /// alternatives spoil the literal prefilter that makes one pass over a large log cheap.
    pub fn new(kb: &'kb KnowledgeBase) -> Self {
        Scanner {
            kb,
            prepared: OnceLock::new(),
            only: None,
            joined: AtomicBool::new(false),
            run_patterns: Arc::new(OnceLock::new()),
            run: Mutex::new(run_signs::RunSigns::default()),
        }
    }

    /// `sample`: the text of the first block scanned (the needle search is tuned to it).
    fn run_patterns(&self, sample: &str) -> &run_reader::RunPatterns {
        self.run_patterns
            .get_or_init(|| run_reader::RunPatterns::new(&self.kb.run_signs, sample.as_bytes()))
    }

    /// What the logs scanned since the last call show about the run (and start afresh).
    pub fn take_run(&self) -> run_signs::RunSigns {
        match self.run.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }

    fn add_run(&self, f: impl FnOnce(&mut run_signs::RunSigns)) {
        match self.run.lock() {
            Ok(mut r) => f(&mut r),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    fn prepared(&self) -> &Prepared {
        self.prepared
            .get_or_init(|| Scanner::prepare(self.kb, self.only.as_deref()))
    }

    fn prepare(kb: &KnowledgeBase, only: Option<&[bool]>) -> Prepared {
        let included = |i: usize| only.is_none_or(|o| o.get(i).copied().unwrap_or(true));
        Prepared {
            lines: OnceLock::new(),
            forms: ascii::AsciiForms::new(kb.signatures.len()),
            scope: LogScope::for_signatures(&kb.signatures, included),
            searches: OnceLock::new(),
            // A constant pattern, exercised by the tests below.
            alert: Regex::new(ALERT).unwrap_or_else(|e| panic!("bad built-in pattern: {e}")),
        }
    }

    /// The joined searches of [`Prepared::searches`], compiled on first use.
    fn searches(&self) -> &[Regex] {
        self.prepared()
            .searches
            .get_or_init(|| joined_searches(self.kb, self.only.as_deref()))
    }

    /// Scan one log held in memory, appending matches (the same path as a file).
    ///
    /// A small log is first scanned with only the signatures one of whose needles (literals every
    /// match holds, see [`crate::kb::LazyRegex`]) is in its normalised text: no other can match
    /// a line of it, so only those go into the joined searches and the log-wide context, and a
    /// start with a short log compiles a few regexes instead of all. If that scan joins wrapped
    /// lines and a signature left out matches across a join (its literal spanning it), it is
    /// redone with every signature.
    pub fn scan(&self, log: &LogText, out: &mut Vec<LogMatch>) {
        if self.only.is_none() && log.text.len() <= SMALL_LOG {
            let norm = normalise::normalise_block(&log.text);
            let only: Vec<bool> = self
                .kb
                .signatures
                .iter()
                .map(|s| s.regex.may_occur_in(&norm.text))
                .collect();
            if only.contains(&false) {
                let small = Scanner {
                    only: Some(only),
                    run_patterns: Arc::clone(&self.run_patterns),
                    ..Scanner::new(self.kb)
                };
                let mut found = Vec::new();
                let _ = small.scan_reader(&log.name, log.text.as_bytes(), &mut found);
                if !small.joined.load(Ordering::Relaxed) {
                    out.append(&mut found);
                    let run = small.take_run();
                    self.add_run(|r| merge_run(r, run));
                    return;
                }
            }
        }
        // Reading from a slice cannot fail.
        let _ = self.scan_reader(&log.name, log.text.as_bytes(), out);
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
            .keep(&self.kb.signatures, state, &log)
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

    /// Rank the matches of this scanner's knowledge base, with what the logs scanned since the
    /// last `rank` show about the run.
    pub fn rank(&self, matches: Vec<LogMatch>) -> Classification {
        rank_with_run(self.kb, matches, self.take_run(), None)
    }

    /// [`Scanner::rank`] with the host's facts (see [`rank_on_host`]).
    pub fn rank_on_host(&self, matches: Vec<LogMatch>, facts: Option<&Facts>) -> Classification {
        rank_with_run(self.kb, matches, self.take_run(), facts)
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
        let mut state = scope.start(&self.kb.signatures);
        let mut run = run_reader::RunState::new(name);
        let mut next_line = 1usize;
        let mut prev = Prev::None;
        let mut eof = false;
        while !eof {
            // Read up to `chunk` bytes beyond what is carried over from the last chunk, into the
            // buffer's spare capacity (zero-filling the whole chunk first cost a short log more
            // than scanning it: 4 MiB of memset and page faults).
            let want = chunk as u64;
            let mut next = std::io::Read::take(&mut reader, want);
            let n = std::io::Read::read_to_end(&mut next, &mut buf)?;
            if (n as u64) < want {
                eof = true;
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
            let text = block_text(&buf[..end]);
            next_line += self.scan_block(name, &text, next_line, &mut prev, &mut run, out);
            bound_repeats(out, from);
            scope.see(&text, &mut state);
            buf.drain(..end);
        }
        self.end_of_log(&state, out, from);
        run.ends_at(next_line - 1);
        self.add_run(|r| run.finish(r));
        Ok(())
    }

    /// Scan a block of whole lines whose first line is number `first_line`; returns the number
    /// of newlines it holds.
    fn scan_block(
        &self,
        name: &str,
        raw: &str,
        first_line: usize,
        prev: &mut Prev,
        run: &mut run_reader::RunState,
        out: &mut Vec<LogMatch>,
    ) -> usize {
        let norm = normalise::normalise_block(raw);
        self.run_patterns(&norm.text)
            .read_block(&self.kb.run_signs, &norm, first_line, run);
        let before = out.len();
        self.match_lines(name, &norm, first_line, out);
        self.match_wraps(name, &norm, first_line, prev, before, out);
        // Matches across wrapped lines were appended after the block's line matches.
        out[before..].sort_by_key(|m| m.line);
        memchr::memchr_iter(b'\n', raw.as_bytes()).count()
    }

    /// Every line of the block with a hit, checked against each signature.
    fn match_lines(
        &self,
        name: &str,
        norm: &normalise::Normalised<'_>,
        first_line: usize,
        out: &mut Vec<LogMatch>,
    ) {
        let text: &str = &norm.text;
        let bytes = text.as_bytes();
        let sigs = &self.kb.signatures;
        let only = self.only.as_deref();
        let included = |i: usize| only.is_none_or(|o| o.get(i).copied().unwrap_or(true));
        let prepared = self.prepared();
        let lines = prepared
            .lines
            .get_or_init(|| LineFilter::new(sigs, &included, bytes))
            .candidates(sigs, text);
        let mut line_idx = 0usize;
        let mut counted_to = 0usize;
        for (line_start, line_end, owners) in lines {
            line_idx += memchr::memchr_iter(b'\n', &bytes[counted_to..line_start]).count();
            counted_to = line_start;
            let line = &text[line_start..line_end];
            let ascii = line.is_ascii();
            let line_no = first_line + norm.physical_line(line_idx);
            for (i, sig) in sigs.iter().enumerate() {
                if owners.contains(i)
                    && prepared.forms.is_match(i, &sig.regex, line, ascii)
                    && !sig.unless.iter().any(|u| u.is_match(line))
                {
                    push_match(out, sig, name, line_no, line);
                }
            }
        }
    }

    /// Join lines that continue a wrapped line and look for matches across the join.
    ///
    /// Only lines worth it start a join: error, warning, assertion and traceback lines (the
    /// `ALERT` words), found with one literal search over the block; each is followed by the
    /// lines that continue it (not a record start, blank lines skipped). A join still open at
    /// the end of the block is carried into the next one in `prev`.
    fn match_wraps(
        &self,
        name: &str,
        norm: &normalise::Normalised<'_>,
        first_line: usize,
        prev: &mut Prev,
        block_start: usize,
        out: &mut Vec<LogMatch>,
    ) {
        let text: &str = &norm.text;
        let bytes = text.as_bytes();
        let at = Cursor {
            name,
            norm,
            block_start,
        };
        let (mut pos, mut idx) = (0usize, 0usize);
        let mut carry = Prev::None;
        let mut chain = std::mem::take(prev);
        if !matches!(chain, Prev::None) {
            let (p, i, open) = self.follow(&at, 0, 0, &mut chain, out);
            (pos, idx) = (p, i);
            if open {
                carry = chain;
            }
        }
        while pos < bytes.len() {
            let Some(m) = self.prepared().alert.find_at(text, pos) else {
                break;
            };
            let line_start = memchr::memrchr(b'\n', &bytes[..m.start()]).map_or(0, |p| p + 1);
            let line_end =
                memchr::memchr(b'\n', &bytes[m.start()..]).map_or(bytes.len(), |p| m.start() + p);
            idx += memchr::memchr_iter(b'\n', &bytes[pos..line_start]).count();
            let (content, _) = normalise::strip_prefixes(&text[line_start..line_end]);
            let mut chain = Prev::Slice {
                start: line_end - content.len(),
                end: line_end,
                line: first_line + norm.physical_line(idx),
            };
            let (p, i, open) = self.follow(&at, line_end + 1, idx + 1, &mut chain, out);
            (pos, idx) = (p, i);
            carry = if open { chain } else { Prev::None };
        }
        // Carry an open join into the next block.
        *prev = match carry {
            Prev::Slice { start, end, line } => {
                let t = tail(&text[start..end], JOIN_KEEP).to_string();
                Prev::Owned {
                    spaced: t.clone(),
                    tight: t,
                    line,
                }
            }
            other => other,
        };
    }

    /// Join the lines from byte `pos` (line `idx` of the block) that continue `chain`; returns
    /// where the first line that does not continue it starts, its index, and whether the join is
    /// still open at the end of the block.
    fn follow(
        &self,
        at: &Cursor<'_>,
        mut pos: usize,
        mut idx: usize,
        chain: &mut Prev,
        out: &mut Vec<LogMatch>,
    ) -> (usize, usize, bool) {
        let text: &str = &at.norm.text;
        let bytes = text.as_bytes();
        while pos < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |p| pos + p);
            let (content, record) = normalise::strip_prefixes(&text[pos..end]);
            if !content.trim().is_empty() {
                if record || normalise::is_record_start(content) {
                    return (pos, idx, false);
                }
                *chain = self.join(at, text, chain, content, out);
            }
            pos = end + 1;
            idx += 1;
        }
        (pos.min(bytes.len()), idx, true)
    }

    /// Look for matches across the join of `prev` and `content`; returns the joined line to
    /// continue with.
    fn join(
        &self,
        at: &Cursor<'_>,
        text: &str,
        prev: &Prev,
        content: &str,
        out: &mut Vec<LogMatch>,
    ) -> Prev {
        let (tight, spaced, line) = match prev {
            Prev::None => return Prev::None,
            Prev::Slice { start, end, line } => {
                let t = &text[*start..*end];
                (tail(t, JOIN_KEEP), tail(t, JOIN_KEEP), *line)
            }
            Prev::Owned {
                tight,
                spaced,
                line,
            } => (tight.as_str(), spaced.as_str(), *line),
        };
        let right = head(content, JOIN_KEEP);
        for (left, sep) in [(tight, ""), (spaced, " ")] {
            self.match_across(at.name, left, sep, right, line, at.block_start, out);
        }
        Prev::Owned {
            tight: tail(&format!("{tight}{right}"), JOIN_KEEP).to_string(),
            spaced: tail(&format!("{spaced} {right}"), JOIN_KEEP).to_string(),
            line,
        }
    }

    /// Matches in `left + sep + right` that cross the join.
    #[allow(clippy::too_many_arguments)]
    fn match_across(
        &self,
        name: &str,
        left: &str,
        sep: &str,
        right: &str,
        line: usize,
        block_start: usize,
        out: &mut Vec<LogMatch>,
    ) {
        let joined = format!("{left}{sep}{right}");
        let boundary = left.len();
        let after = boundary + sep.len();
        if let Some(only) = &self.only {
            // A signature left out of this scan (none of its literals in the text) may still
            // match across the join, its literal spanning it: then the scan is redone with all.
            let left_out_crosses = self.kb.signatures.iter().enumerate().any(|(i, sig)| {
                !only.get(i).copied().unwrap_or(true)
                    && sig
                        .regex
                        .find_iter(&joined)
                        .any(|m| m.start() < boundary && m.end() > after)
            });
            if left_out_crosses {
                self.joined.store(true, Ordering::Relaxed);
                return;
            }
        }
        let searches = self.searches();
        let hit = searches.is_empty() || searches.iter().any(|re| re.is_match(&joined));
        if !hit {
            return;
        }
        for sig in &self.kb.signatures {
            let crosses = sig
                .regex
                .find_iter(&joined)
                .any(|m| m.start() < boundary && m.end() > after);
            if !crosses || sig.unless.iter().any(|u| u.is_match(&joined)) {
                continue;
            }
            let seen = out
                .iter()
                .skip(block_start.min(out.len()))
                .any(|m| m.line == line && m.signature == sig.id && m.file == name)
                || out[..block_start.min(out.len())]
                    .iter()
                    .rev()
                    .take_while(|m| m.line >= line)
                    .any(|m| m.line == line && m.signature == sig.id && m.file == name);
            if !seen {
                push_match(out, sig, name, line, &joined);
            }
        }
    }
}

/// The search patterns of the signatures `only` includes (`None`: all), joined into two regexes
/// (see [`Scanner::new`]); empty when a join does not compile.
fn joined_searches(kb: &KnowledgeBase, only: Option<&[bool]>) -> Vec<Regex> {
    let fallback = |class: &str| kb.class(class).is_some_and(|c| c.def.fallback);
    let included = |i: usize| only.is_none_or(|o| o.get(i).copied().unwrap_or(true));
    let (first, second): (Vec<&CompiledSignature>, Vec<&CompiledSignature>) = kb
        .signatures
        .iter()
        .enumerate()
        .filter(|(i, _)| included(*i))
        .map(|(_, s)| s)
        .partition(|s| s.kind != SignatureKind::Context && !fallback(&s.class));
    [first, second]
        .iter()
        .filter(|group| !group.is_empty())
        .map(|group| {
            let joined: Vec<String> = group.iter().map(|s| format!("(?:{})", s.search)).collect();
            // Multi-line: `$` in a pattern means the end of a line, as it does per line.
            RegexBuilder::new(&ascii_word_boundaries(&joined.join("|")))
                .multi_line(true)
                .size_limit(64 << 20)
                .build()
        })
        .collect::<Result<Vec<Regex>, _>>()
        .unwrap_or_default()
}

/// Finds the lines of a block a signature can match, and which signatures: one search for the
/// literals every match of a signature holds ([`CompiledSignature::needles`]), and a regex for
/// the signatures that have none.
struct LineFilter {
    /// The needles and, per needle, the signatures whose every match holds one of them.
    scan: Option<needles::NeedleScan>,
    owners: Vec<needles::Members>,
    /// The signatures without needles, and their search patterns joined (`None`: the join did
    /// not compile, each is searched on its own).
    rest: needles::Members,
    rest_ids: Vec<usize>,
    rest_search: Option<Regex>,
}

impl LineFilter {
    fn new(
        sigs: &[CompiledSignature],
        included: &impl Fn(usize) -> bool,
        sample: &[u8],
    ) -> LineFilter {
        let mut needles: Vec<Vec<u8>> = Vec::new();
        let mut owner_of: Vec<(usize, usize)> = Vec::new();
        let mut rest = needles::Members::default();
        let mut rest_ids = Vec::new();
        for (i, s) in sigs.iter().enumerate().filter(|(i, _)| included(*i)) {
            match &s.needles {
                Some(lits) => {
                    for l in lits {
                        owner_of.push((needles.len(), i));
                        needles.push(l.clone());
                    }
                }
                None => {
                    rest.insert(i);
                    rest_ids.push(i);
                }
            }
        }
        // One needle per distinct literal, owned by every signature that needs it.
        let mut order: Vec<usize> = (0..needles.len()).collect();
        order.sort_by(|&a, &b| needles[a].cmp(&needles[b]));
        let mut distinct: Vec<Vec<u8>> = Vec::new();
        let mut owners: Vec<needles::Members> = Vec::new();
        let mut slot = vec![0usize; needles.len()];
        for &k in &order {
            if distinct.last() != Some(&needles[k]) {
                distinct.push(needles[k].clone());
                owners.push(needles::Members::default());
            }
            slot[k] = distinct.len() - 1;
        }
        for (k, i) in owner_of {
            owners[slot[k]].insert(i);
        }
        let scan = needles::NeedleScan::new(distinct, sample);
        if scan.is_none() {
            // No usable needle: every signature is searched by its pattern.
            rest = needles::Members::default();
            rest_ids = (0..sigs.len()).filter(|&i| included(i)).collect();
            for &i in &rest_ids {
                rest.insert(i);
            }
        }
        let joined: Vec<String> = rest_ids
            .iter()
            .map(|&i| format!("(?:{})", sigs[i].search))
            .collect();
        let rest_search = (!joined.is_empty())
            .then(|| {
                RegexBuilder::new(&ascii_word_boundaries(&joined.join("|")))
                    .multi_line(true)
                    .size_limit(64 << 20)
                    .build()
                    .ok()
            })
            .flatten();
        LineFilter {
            scan,
            owners,
            rest,
            rest_ids,
            rest_search,
        }
    }

    /// Start and end of every line of `text` a signature may match, in order, each once, with
    /// the signatures to try on it.
    fn candidates(
        &self,
        sigs: &[CompiledSignature],
        text: &str,
    ) -> Vec<(usize, usize, needles::Members)> {
        let bytes = text.as_bytes();
        let bounds = |at: usize| {
            let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |p| p + 1);
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
            (start, end)
        };
        let mut lines: Vec<(usize, usize, needles::Members)> = Vec::new();
        if let Some(scan) = &self.scan {
            let mut hits = Vec::new();
            scan.find_all(bytes, &mut hits);
            let mut i = 0;
            while let Some(&(at, _)) = hits.get(i) {
                let (start, end) = bounds(at);
                let mut owners = needles::Members::default();
                while let Some(&(p, k)) = hits.get(i)
                    && p < end
                {
                    owners.union(&self.owners[k as usize]);
                    i += 1;
                }
                lines.push((start, end, owners));
            }
        }
        let scanned = lines.len();
        let mut add = |at: usize, owners: needles::Members| {
            let (start, end) = bounds(at);
            lines.push((start, end, owners));
            end + 1
        };
        match &self.rest_search {
            Some(re) => {
                let mut from = 0;
                while from <= bytes.len() {
                    let Some(m) = re.find_at(text, from) else {
                        break;
                    };
                    from = add(m.start(), self.rest);
                }
            }
            None => {
                for &i in &self.rest_ids {
                    let mut only = needles::Members::default();
                    only.insert(i);
                    let mut from = 0;
                    while from <= bytes.len() {
                        let Some(m) = sigs[i].regex.find_at(text, from) else {
                            break;
                        };
                        from = add(m.start(), only);
                    }
                }
            }
        }
        if lines.len() > scanned {
            lines.sort_unstable_by_key(|l| l.0);
            lines.dedup_by(|b, a| {
                let same = a.0 == b.0;
                if same {
                    a.2.union(&b.2);
                }
                same
            });
        }
        lines
    }
}

fn push_match(
    out: &mut Vec<LogMatch>,
    sig: &CompiledSignature,
    file: &str,
    line: usize,
    text: &str,
) {
    out.push(LogMatch {
        class: sig.class.clone(),
        signature: sig.id.clone(),
        kind: sig.kind,
        file: file.to_string(),
        line,
        text: shorten(text),
        repeats_left_out: 0,
    });
}

/// A block's bytes as text. Logs are nearly always valid UTF-8: the validator's word-at-a-time
/// ASCII path is several times faster than `from_utf8_lossy`'s chunking (16% of classifying a
/// 100 MB log), which is kept for blocks with invalid bytes.
fn block_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The last `n` bytes of `s` (at a character boundary).
fn tail(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut cut = s.len() - n;
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    &s[cut..]
}

/// The first `n` bytes of `s` (at a character boundary).
fn head(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut cut = n;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

fn shorten(line: &str) -> String {
    let line = line.trim();
    if line.len() <= MAX_LINE_SHOWN {
        return line.to_string();
    }
    format!("{}…", head(line, MAX_LINE_SHOWN))
}

/// Classify logs: scan each (the same streaming path as a file) and rank the matches.
pub fn classify(kb: &KnowledgeBase, logs: &[LogText]) -> Classification {
    classify_on_host(kb, logs, None)
}

/// Classify logs of a host whose facts are known: a context signature whose `when` holds on
/// the host counts as present (expandable segments set in the snapshot confirms the IPC line).
pub fn classify_on_host(
    kb: &KnowledgeBase,
    logs: &[LogText],
    facts: Option<&Facts>,
) -> Classification {
    let scanner = Scanner::new(kb);
    let mut matches = Vec::new();
    for log in logs {
        scanner.scan(log, &mut matches);
    }
    scanner.rank_on_host(matches, facts)
}

/// Add one scanner's run signs to another's (the narrowed scan of a small log).
fn merge_run(into: &mut run_signs::RunSigns, from: run_signs::RunSigns) {
    into.failures.extend(from.failures);
    for m in from.milestones {
        if into.reached(m.milestone).is_none() {
            into.milestones.push(m);
        }
    }
    if into.hang.is_none() {
        into.hang = from.hang;
    }
    if from.last_phase.is_some() {
        into.last_phase = from.last_phase;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb() -> KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    fn run(text: &str) -> Classification {
        classify(
            &kb(),
            &[LogText {
                name: "l".into(),
                text: text.into(),
            }],
        )
    }

    const LOG: &str = "a\nb\nFailed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\nc\r\nWorker proc VllmWorker-1 died unexpectedly\n";

    /// The full scan of a log (every signature), as a file is scanned.
    fn full_scan(kb: &KnowledgeBase, log: &LogText) -> Vec<LogMatch> {
        let mut out = Vec::new();
        Scanner::new(kb)
            .scan_reader(&log.name, log.text.as_bytes(), &mut out)
            .expect("read");
        out
    }

    #[test]
    fn a_small_log_compiles_only_the_signatures_it_can_match() {
        let kb = kb();
        let log = LogText {
            name: "l".into(),
            text: LOG.into(),
        };
        let mut found = Vec::new();
        Scanner::new(&kb).scan(&log, &mut found);
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
        assert_eq!(found, full_scan(&kb, &log));
        // No log, nothing compiled.
        let fresh = self::kb();
        let c = classify(&fresh, &[]);
        assert!(c.matches.is_empty());
        assert!(fresh.signatures.iter().all(|s| !s.regex.is_compiled()));
    }

    /// The scan with only the signatures a small log can match finds what the scan with all of
    /// them finds, on every log of the corpus; most logs take that path.
    #[test]
    fn the_small_log_scan_agrees_with_the_full_scan_on_the_corpus() {
        let kb = kb();
        let scanner = Scanner::new(&kb);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/cases");
        let (mut logs, mut narrowed, mut matched) = (0, 0, 0);
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
            let full = full_scan(&kb, &log);
            let mut got = Vec::new();
            scanner.scan(&log, &mut got);
            assert_eq!(got, full, "{}", log.name);
            // The narrowed scan on its own, where it stands (no left-out signature across a join).
            let norm = normalise::normalise_block(&log.text);
            let only: Vec<bool> = kb
                .signatures
                .iter()
                .map(|s| s.regex.may_occur_in(&norm.text))
                .collect();
            let small = Scanner {
                only: Some(only),
                ..Scanner::new(&kb)
            };
            let mut part = Vec::new();
            small
                .scan_reader(&log.name, log.text.as_bytes(), &mut part)
                .expect("read");
            if !small.joined.load(Ordering::Relaxed) {
                assert_eq!(part, full, "{}", log.name);
                narrowed += 1;
            }
            logs += 1;
            matched += usize::from(!full.is_empty());
        }
        assert!(
            logs > 150 && matched > 100 && narrowed * 2 > logs,
            "{logs} logs, {matched} with matches, {narrowed} narrowed"
        );
        eprintln!("{logs} logs, {matched} with matches, {narrowed} scanned narrowed");
    }

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
            // Two signatures, 200 matches each: the first and last KEEP_EACH_END of each kept,
            // every match counted.
            assert_eq!(b.len(), 4 * KEEP_EACH_END, "chunk {chunk}");
            let counted: usize = b.iter().map(|m| 1 + m.repeats_left_out).sum();
            assert_eq!(counted, 400, "chunk {chunk}");
            let n = b.len();
            assert_eq!(b[n - 2].line, 5 * 199 + 3, "chunk {chunk}");
            assert_eq!(b[n - 1].line, 5 * 200, "chunk {chunk}");
            assert_eq!(b[0].line, 3, "chunk {chunk}");
        }
    }

    #[test]
    fn supporting_lines_alone_name_no_class() {
        let c = run("Worker proc VllmWorker-0 died unexpectedly\n");
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

    #[test]
    fn the_ipc_line_without_expandable_segments_is_only_suspected() {
        let c = run("Failed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n");
        assert_eq!(c.classes, ["allocator_ipc"]);
        assert_eq!(c.confidence["allocator_ipc"], MatchConfidence::Suspected);
        assert!(
            c.evidence[0].note.contains("PYTORCH_CUDA_ALLOC_CONF"),
            "{:?}",
            c.evidence
        );
        let c = run(
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nFailed: Cuda error csrc/custom_all_reduce.cuh:455 'invalid argument'\n",
        );
        assert_eq!(c.confidence["allocator_ipc"], MatchConfidence::Confirmed);
        assert!(c.evidence[0].note.is_empty());
    }

    #[test]
    fn the_joined_searches_are_compiled_at_the_first_join_only() {
        let kb = kb();
        let scanner = Scanner::new(&kb);
        let mut out = Vec::new();
        let whole =
            "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'\n";
        scanner
            .scan_reader("l", whole.as_bytes(), &mut out)
            .expect("read");
        assert!(!out.is_empty());
        assert!(scanner.prepared().searches.get().is_none());
        let wrapped =
            "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid a\nrgument'\n";
        scanner
            .scan_reader("l", wrapped.as_bytes(), &mut out)
            .expect("read");
        assert!(scanner.prepared().searches.get().is_some());
    }

    #[test]
    fn a_wrapped_line_is_matched_across_the_wrap_and_counted_once() {
        for text in [
            "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid a\nrgument'\n",
            "ValueError: Expected 'True' or 'False' at index 2 in\nConfigTokenizer but got 'TRUE'\n",
            "(X pid=1) ERROR RuntimeError: Assertion error (/workspa\nce/csrc/utils/layout.hpp:76): Unkno\nwn recipe\n",
        ] {
            let c = run(text);
            assert!(!c.classes.is_empty(), "{text:?}");
            let mut sigs: Vec<&str> = c.matches.iter().map(|m| m.signature.as_str()).collect();
            let n = sigs.len();
            sigs.dedup();
            assert_eq!(sigs.len(), n, "counted once: {:?}", c.matches);
            assert_eq!(c.matches[0].line, 1, "{text:?}");
        }
    }

    #[test]
    fn wrapped_lines_join_across_block_boundaries() {
        let kb = kb();
        let scanner = Scanner::new(&kb);
        let log = "INFO start\n(Worker_TP0 pid=1) ERROR RuntimeError: Assertion error (/workspa\n\nce/csrc/utils/layout.hpp:76): Unkno\nwn recipe\nINFO next\n";
        for chunk in [5, 16, 40, 4 << 20] {
            let mut out = Vec::new();
            scanner
                .scan_chunked("l", log.as_bytes(), chunk, &mut out)
                .expect("read");
            let hits: Vec<(&str, usize)> =
                out.iter().map(|m| (m.signature.as_str(), m.line)).collect();
            // The joined line is DeepGEMM's assertion: the Unknown-recipe signature and the
            // generic SM12x-gap one both match it, once each, at line 2 (the gap class is only
            // named when no known class explains the log).
            assert_eq!(
                hits,
                [("gap_arch_error", 2), ("dg_unknown_recipe", 2)],
                "chunk {chunk}"
            );
        }
    }

    fn top(c: &Classification) -> Option<(&str, MatchConfidence)> {
        c.evidence.first().map(|e| (e.class.as_str(), e.confidence))
    }

    #[test]
    fn no_kernel_image_needs_an_sm12x_gpu_to_be_certain() {
        let line =
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";
        let on = |gpu: &str| run(&format!("{gpu}\n{line}"));
        use MatchConfidence::*;
        assert_eq!(
            top(&on("GPU 0: NVIDIA GeForce RTX 5090")),
            Some(("sm120_kernel_missing", Confirmed))
        );
        assert_eq!(
            top(&on("started")),
            Some(("sm120_kernel_missing", Suspected))
        );
        assert_eq!(
            top(&on("|   0  NVIDIA GeForce GTX 1050 Ti     Off |")),
            None
        );
    }

    #[test]
    fn the_harmless_gb10_capability_warning_is_no_error() {
        let c = run(
            "UserWarning: Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability supported by this version of PyTorch is\n    (8.0) - (12.0)\n",
        );
        assert!(c.classes.is_empty(), "{:?}", c.evidence);
        // The same warning from a build that stops before 12.0 is the missing-kernel class.
        let c = run(
            "Found GPU0 NVIDIA GeForce RTX 5090 which is of cuda capability 12.0.\nMinimum and Maximum cuda capability supported by this version of PyTorch is (3.7) - (9.0)\n",
        );
        assert_eq!(top(&c).map(|t| t.0), Some("sm120_kernel_missing"));
    }

    #[test]
    fn a_named_kernel_ranks_above_the_generic_message() {
        let c = run(
            "GPU 0: NVIDIA RTX PRO 6000 Blackwell Workstation Edition\nRuntimeError: CUDA error: no kernel image is available for execution on the device\nRuntimeError: launch_cooperative_cluster, cooperative_topk launch failed: invalid argument\n",
        );
        assert_eq!(c.classes, ["cooperative_topk", "sm120_kernel_missing"]);
    }

    #[test]
    fn old_and_new_wordings_are_one_signature() {
        for line in [
            "RuntimeError: Failed: Assertion error csrc/utils/layout.hpp:57 'Unknown recipe'",
            "RuntimeError: Assertion error (/workspace/deepgemm/csrc/utils/layout.hpp:76): Unknown recipe",
        ] {
            let c = run(line);
            assert!(c.matched("dg_unknown_recipe"), "{line}");
        }
        for line in [
            "ValueError: Free memory on device (3.41/95.00 GiB) on startup is less than desired GPU memory utilization (0.9, 85.50 GiB).",
            "ValueError: Free memory on device cuda:0 (3.41/95.00 GiB) on startup is less than desired GPU memory utilization (0.9, 85.50 GiB).",
        ] {
            assert!(run(line).matched("ow_free_memory_low"), "{line}");
        }
    }

    #[test]
    fn the_gap_outcome_needs_an_sm12x_gpu_and_no_known_class() {
        let ptxas = "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'\n";
        assert!(
            run(&format!("GPU: NVIDIA H100 80GB HBM3\n{ptxas}"))
                .classes
                .is_empty()
        );
        let c = run(
            "GPU 0: NVIDIA GeForce RTX 5090\nValueError: No valid attention backend found for cuda with AttentionSelectorConfig(use_mla=True)\n",
        );
        assert_eq!(
            top(&c),
            Some(("sm12x_unknown_gap", MatchConfidence::Suspected))
        );
        // A known class's error line takes precedence, and the gap is not named at all.
        let c = run(
            "GPU 0: NVIDIA GeForce RTX 5090\nRuntimeError: Assertion error (csrc/apis/attention.hpp:211): Unsupported architecture\n",
        );
        assert_eq!(c.classes, ["deepgemm_warmup"]);
        assert!(c.matches.iter().all(|m| m.class != "sm12x_unknown_gap"));
    }

    #[test]
    fn weak_evidence_names_a_class_at_lower_confidence() {
        let c = run(
            "WARNING 07-06 [fp8_utils.py:851] Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! Config file not found at /x/N=576,K=7168,device_name=NVIDIA_GeForce_RTX_5090.json\n",
        );
        assert_eq!(top(&c), Some(("fp8_tuning", MatchConfidence::Low)));
        // Warmup frames without the error line (a cut paste): suspected.
        let c = run(
            "  File \"/v/vllm/model_executor/warmup/deep_gemm_warmup.py\", line 406, in deep_gemm_warmup\n    deepgemm_fp8_gemm_nt_warmup(model, max_tokens, pbar)\n  File \"/v/vllm/model_executor/warmup/deep_gemm_warmup.py\", line 227, in _deepgemm_fp8_gemm_nt_warmup\n",
        );
        assert_eq!(
            top(&c),
            Some(("deepgemm_warmup", MatchConfidence::Suspected))
        );
        assert!(!c.evidence[0].note.is_empty());
    }

    #[test]
    fn paste_damage_does_not_hide_the_line() {
        for text in [
            "\x1b[1;36m(Worker_TP0_EP0 pid=1)\x1b[0;0m \x1b[31mERROR\x1b[0m RuntimeError: FlashInfer requires GPUs with sm75 or higher\n",
            "**RuntimeError: `FlashInfer requires GPUs with sm75 or higher`**\n",
            "Capturing graphs 50%|##  | 1/2\rRuntimeError: FlashInfer requires GPUs with sm75 or higher\r\n",
            "(VllmWorker rank=0 pid=7) RuntimeError: FlashInfer requires GPUs with sm75 or\n\nhigher\n",
            "  File \"C:\\env\\lib\\site-packages\\flashinfer\\jit\\core.py\", line 108, in check_cuda_arch\nRuntimeError: FlashInfer requires GPU\u{2019}s with sm75 or higher\n",
        ] {
            assert_eq!(run(text).classes, ["flashinfer_sampler"], "{text:?}");
        }
    }

    #[test]
    fn joins_do_not_cross_record_starts() {
        // The second line starts a new record: no join, no match.
        let c = run(
            "ERROR x Failed: Cuda error csrc/custom_all_reduce.cuh:164 'inv\nINFO alid argument'\n",
        );
        assert!(
            c.matches
                .iter()
                .all(|m| m.signature != "car_invalid_argument"),
            "{:?}",
            c.matches
        );
    }

    const FP8_WARNING: &str = "WARNING 07-06 [fp8_utils.py:851] Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! Config file not found at /x/N=576,K=7168,device_name=NVIDIA_GeForce_RTX_5090.json\n";

    #[test]
    fn a_warning_class_is_not_the_answer_before_an_unexplained_failure() {
        let failure = "RuntimeError: transport retry counter exceeded on mlx5_0\n";
        let c = run(&format!("{FP8_WARNING}{failure}"));
        let e = c.evidence_for("fp8_tuning").expect("named");
        assert_eq!(e.confidence, MatchConfidence::Low);
        assert_eq!(
            e.unexplained_failure_after,
            Some(LineRef {
                file: "l".into(),
                line: 2
            })
        );
        assert_eq!(c.run.unexplained().count(), 1);
        // The warning alone, or after the failure, is the class as before.
        assert_eq!(run(FP8_WARNING).evidence[0].unexplained_failure_after, None);
        let c = run(&format!("{failure}{FP8_WARNING}"));
        assert_eq!(c.evidence[0].unexplained_failure_after, None);
    }

    #[test]
    fn a_class_explains_the_failures_of_its_traceback() {
        // DeepGEMM warmup frames (a SUSPECTED class) inside the traceback of an exception the
        // class has no signature for.
        let c = run(
            "Traceback (most recent call last):\n  File \"/v/vllm/model_executor/warmup/deep_gemm_warmup.py\", line 406, in deep_gemm_warmup\n    deepgemm_fp8_gemm_nt_warmup(model, max_tokens, pbar)\n  File \"/v/vllm/model_executor/warmup/deep_gemm_warmup.py\", line 227, in _deepgemm_fp8_gemm_nt_warmup\nRuntimeError: something new\nWorker proc VllmWorker-0 died unexpectedly\n",
        );
        assert_eq!(
            top(&c),
            Some(("deepgemm_warmup", MatchConfidence::Suspected))
        );
        let by: Vec<(usize, Option<&str>)> = c
            .run
            .failures
            .iter()
            .map(|f| (f.line, f.explained_by.as_deref()))
            .collect();
        assert_eq!(
            by,
            [(5, Some("deepgemm_warmup")), (6, Some("deepgemm_warmup"))]
        );
        // The same exception with no class: unexplained, and so is the worker that died.
        let c = run("RuntimeError: something new\nWorker proc VllmWorker-0 died unexpectedly\n");
        assert_eq!(c.run.unexplained().count(), 2);
    }

    #[test]
    fn the_allocator_preconditions_and_an_abort_rank_allocator_ipc_low() {
        let launch = "+ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n+ exec vllm serve m --tensor-parallel-size 2\n";
        let died = "(EngineCore_DP0 pid=204) ERROR 06-20 08:43:19 [multiproc_executor.py:150] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.\n";
        let c = run(&format!("{launch}{died}"));
        assert_eq!(top(&c), Some(("allocator_ipc", MatchConfidence::Low)));
        assert!(c.matched("aipc_launch_tp_expandable_abort"));
        // No abort, TP 1, or no expandable segments: not named.
        assert!(run(launch).classes.is_empty());
        let tp1 = launch.replace("size 2", "size 1");
        assert!(run(&format!("{tp1}{died}")).classes.is_empty());
        let plain = launch.replace("expandable_segments:True", "max_split_size_mb:512");
        assert!(run(&format!("{plain}{died}")).classes.is_empty());
        // With the .cuh line the error line decides, and the preconditions do not count.
        let c = run(&format!(
            "{launch}Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'\n{died}"
        ));
        assert_eq!(top(&c), Some(("allocator_ipc", MatchConfidence::Confirmed)));
        assert!(!c.matched("aipc_launch_tp_expandable_abort"));
        assert!(c.run.unexplained().next().is_none(), "{:#?}", c.run);
    }
}
