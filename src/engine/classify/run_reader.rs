//! The log reader that fills [`RunSigns`]: while the scanner goes through a log block by block,
//! it finds the lines that show how the run went, whatever the class — failure lines (a
//! traceback's final exception with its last frames, error records, CUDA/NCCL errors, aborts),
//! the start-up phase, milestones and stalls — and, at the log's end, whether it shows a hang.
//!
//! The wordings are data (knowledge/run_signs.yaml, [`CompiledRunSign`]); this module knows the
//! structure: a traceback runs from its header through its frames to the exception that ends
//! it, a phase lasts until the next progress line, stalls count after the last progress line.
//!
//! Speed: one needle search ([`NeedleScan`]: the entries' needles, literals only) over the
//! normalised block; only a line with a needle is read, and only the entries whose needles the
//! line holds are tried on it.
//! Nothing is allocated for a line that shows nothing new (a repeated failure is compared, not
//! copied).

use super::ascii::AsciiForms;
use super::needles::NeedleScan;
use super::normalise::{self, Normalised};
use super::run_signs::{
    FailureKind, FailureLine, Hang, HangKind, Milestone, MilestoneLine, Phase, RunSigns,
};
use crate::kb::CompiledRunSign;
use crate::kb::schema::{RunCondition, RunFailureKind, RunMilestone, RunPhase, RunSignKind};
use std::collections::VecDeque;

/// Frames kept per traceback (the last ones: where it failed).
const FRAMES_KEPT: usize = 4;
/// Failure lines kept per log (the first of each text).
const FAILURES_KEPT: usize = 64;
/// A traceback's frames go with a failure at most this many lines after its last frame (code
/// lines and `^^^` markers sit between; a stray frame long before is another story).
const FRAME_REACH: usize = 24;
/// Longest text kept for a line.
const TEXT_KEPT: usize = 400;

/// The run-sign patterns of one knowledge base, compiled for scanning.
pub struct RunPatterns {
    /// Every needle of the entries that can make a line worth reading, in one search (the
    /// needles sorted), and per needle the non-level entries that own it.
    prefilter: Option<NeedleScan>,
    owners: Vec<Candidates>,
    /// The level entries, tried in order at the start of a message.
    levels: Vec<usize>,
    /// The progress and stall entries (see [`RunPatterns::read_quiet_line`]).
    quiet: Candidates,
    /// Per needle: it is an error level's.
    level_needle: Vec<bool>,
    /// Per entry: its pattern for ASCII lines (see [`AsciiForms`]).
    ascii: AsciiForms,
}

/// A set of entry indexes (run_signs.yaml has far fewer than 256 entries; beyond, every entry
/// is a candidate).
#[derive(Debug, Clone, Copy, Default)]
struct Candidates([u64; 4]);

impl Candidates {
    const ALL: Candidates = Candidates([u64::MAX; 4]);
    fn insert(&mut self, i: usize) {
        match self.0.get_mut(i / 64) {
            Some(w) => *w |= 1 << (i % 64),
            None => *self = Candidates::ALL,
        }
    }
    fn union(&mut self, o: &Candidates) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
    }
    fn within(&self, o: &Candidates) -> bool {
        self.0.iter().zip(o.0).all(|(a, b)| a & !b == 0)
    }
    fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_none_or(|w| w & (1 << (i % 64)) != 0)
    }
}

impl RunPatterns {
    /// `sample`: the start of the first log (see [`NeedleScan::new`]).
    pub fn new(signs: &[CompiledRunSign], sample: &[u8]) -> RunPatterns {
        let mut needles: Vec<String> = signs
            .iter()
            // A level that is not an error only strips a prefix: it never makes a line worth
            // reading on its own (INFO is on every line).
            .filter(|s| s.sign != RunSignKind::Level || s.failure.is_some())
            .flat_map(|s| s.needles.iter().cloned())
            .collect();
        needles.sort();
        needles.dedup();
        let mut owners = vec![Candidates::default(); needles.len()];
        for (i, s) in signs.iter().enumerate() {
            if s.sign == RunSignKind::Level {
                continue;
            }
            for n in &s.needles {
                if let Ok(k) = needles.binary_search(n) {
                    owners[k].insert(i);
                }
            }
        }
        let prefilter = NeedleScan::new(
            needles.iter().map(|n| n.as_bytes().to_vec()).collect(),
            sample,
        );
        let levels = (0..signs.len())
            .filter(|&i| signs[i].sign == RunSignKind::Level)
            .collect();
        let mut quiet = Candidates::default();
        for (i, s) in signs.iter().enumerate() {
            if matches!(s.sign, RunSignKind::Progress | RunSignKind::Stall) {
                quiet.insert(i);
            }
        }
        // A needle of an error level makes a line more than a progress line.
        let level_needle = needles
            .iter()
            .map(|n| {
                signs.iter().any(|s| {
                    s.sign == RunSignKind::Level && s.failure.is_some() && s.needles.contains(n)
                })
            })
            .collect();
        RunPatterns {
            prefilter,
            owners,
            level_needle,
            levels,
            quiet,
            ascii: AsciiForms::new(signs.len()),
        }
    }

    /// Read one normalised block whose first line is number `first_line`.
    pub fn read_block(
        &self,
        signs: &[CompiledRunSign],
        norm: &Normalised<'_>,
        first_line: usize,
        st: &mut RunState,
    ) {
        let Some(pre) = &self.prefilter else {
            return;
        };
        let text: &str = &norm.text;
        let bytes = text.as_bytes();
        let (mut idx, mut counted_to) = (0usize, 0usize);
        // The last progress line of the block: its text is copied once, at the block's end.
        let mut last_progress: Option<&str> = None;
        let mut hits = Vec::new();
        pre.find_all(bytes, &mut hits);
        let mut i = 0usize;
        while let Some(&(at, _)) = hits.get(i) {
            let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |p| p + 1);
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
            idx += memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count();
            counted_to = start;
            let line_no = first_line + norm.physical_line(idx);
            // Every needle of the line: the entries to try.
            let mut candidates = Candidates::default();
            let mut level_hit = false;
            while let Some(&(p, k)) = hits.get(i)
                && p < end
            {
                candidates.union(&self.owners[k as usize]);
                level_hit |= self.level_needle[k as usize];
                i += 1;
            }
            let line = &text[start..end];
            let read = if !level_hit && candidates.within(&self.quiet) {
                self.read_quiet_line(
                    signs,
                    normalise::strip_prefixes(line).0,
                    line_no,
                    &candidates,
                    st,
                )
            } else {
                self.read_line(signs, line, line_no, &candidates, st)
            };
            if let Some(progress) = read {
                last_progress = Some(progress);
            }
        }
        if let Some(content) = last_progress {
            st.progress_text(self.strip_level(signs, content).0);
        }
    }

    /// One line with a needle; returns its message when it is a progress line.
    fn read_line<'t>(
        &self,
        signs: &[CompiledRunSign],
        line: &'t str,
        line_no: usize,
        candidates: &Candidates,
        st: &mut RunState,
    ) -> Option<&'t str> {
        let (content, _) = normalise::strip_prefixes(line);
        let (message, error_level) = self.strip_level(signs, content);
        let ascii = message.is_ascii();
        let mut first = [None::<usize>; 5];
        for (owner, s) in signs.iter().enumerate() {
            if !candidates.contains(owner) {
                continue;
            }
            let slot = match s.sign {
                RunSignKind::Traceback => 0,
                RunSignKind::Frame => 1,
                RunSignKind::Failure => 2,
                RunSignKind::Progress => 3,
                RunSignKind::Stall | RunSignKind::Interrupt => 4,
                RunSignKind::Level => continue,
            };
            if first[slot].is_none()
                && self.ascii.is_match(owner, &s.regex, message, ascii)
                && !s.unless.iter().any(|u| u.is_match(message))
            {
                first[slot] = Some(owner);
            }
        }
        let [traceback, frame, failure, progress, stall] = first.map(|o| o.map(|i| &signs[i]));
        if traceback.is_some() {
            st.traceback = Some(Traceback {
                header: Some(shorten(message)),
                ..Traceback::new(line_no)
            });
            return None;
        }
        if frame.is_some() {
            let tb = st.traceback.get_or_insert_with(|| Traceback::new(line_no));
            if tb.frames.len() == FRAMES_KEPT {
                tb.frames.pop_front();
            }
            tb.frames.push_back(shorten(message));
            tb.last_frame = line_no;
            return None;
        }
        if let Some(p) = progress {
            st.progress(p, message, line_no);
        }
        if let Some(s) = stall {
            st.stall(s, line_no);
        }
        // A traceback's code lines are indented; with an error-level prefix on every line of a
        // logged traceback they are still not failures of their own.
        let inside_traceback = st.traceback.is_some() && message.starts_with([' ', '\t']);
        let kind = match failure {
            Some(f) => f.failure.map(failure_kind),
            None if error_level && !inside_traceback && !message.trim().is_empty() => {
                Some(FailureKind::ErrorLine)
            }
            None => None,
        };
        if let Some(kind) = kind
            && !inside_traceback
        {
            let phase = failure.and_then(|f| f.phase).map(phase_of).or(st.phase);
            let consequence = failure.is_some_and(|f| f.consequence);
            st.failure(kind, message, line_no, phase, consequence);
        }
        progress.map(|_| content)
    }

    /// A line whose needles are only those of progress and stall entries (most lines of a
    /// start-up or serving log): their patterns are not anchored, so they are tried on the
    /// line with its level prefix, which is taken off only for a text that is kept.
    fn read_quiet_line<'t>(
        &self,
        signs: &[CompiledRunSign],
        content: &'t str,
        line_no: usize,
        candidates: &Candidates,
        st: &mut RunState,
    ) -> Option<&'t str> {
        let ascii = content.is_ascii();
        let first = |kind: RunSignKind| {
            signs.iter().enumerate().find(|(i, s)| {
                s.sign == kind
                    && candidates.contains(*i)
                    && self.ascii.is_match(*i, &s.regex, content, ascii)
                    && !s.unless.iter().any(|u| u.is_match(content))
            })
        };
        let progress = first(RunSignKind::Progress).map(|(_, s)| s);
        if let Some(p) = progress {
            let new_milestone = p
                .milestone
                .is_some_and(|m| st.milestones.iter().all(|l| l.milestone != milestone_of(m)));
            let message = if new_milestone {
                self.strip_level(signs, content).0
            } else {
                content
            };
            st.progress(p, message, line_no);
        }
        if let Some((_, s)) = first(RunSignKind::Stall) {
            st.stall(s, line_no);
        }
        progress.map(|_| content)
    }

    /// The message after a level prefix, and whether that level is an error.
    fn strip_level<'a>(&self, signs: &[CompiledRunSign], content: &'a str) -> (&'a str, bool) {
        for &i in &self.levels {
            let s = &signs[i];
            // A level's needles start its prefix (the loader checks): a cheap test first.
            if !s.needles.iter().any(|n| content.starts_with(n.as_str())) {
                continue;
            }
            let ascii = content.is_ascii();
            if let Some(end) = self.ascii.match_at_start(i, &s.regex, content, ascii) {
                return (&content[end..], s.failure.is_some());
            }
        }
        (content, false)
    }
}

/// A traceback being read.
#[derive(Debug, Clone)]
struct Traceback {
    from: usize,
    last_frame: usize,
    frames: VecDeque<String>,
    /// The header line's message (`Traceback (most recent call last):`), when one opened it.
    header: Option<String>,
}

impl Traceback {
    fn new(line: usize) -> Traceback {
        Traceback {
            from: line,
            last_frame: line,
            frames: VecDeque::new(),
            header: None,
        }
    }
}

/// A log "ends" at a line at most this many lines before its last (a code fence, a blank
/// line or a shell prompt may close a paste).
const ENDS_WITHIN: usize = 2;

/// What one log has shown so far.
#[derive(Debug)]
pub struct RunState {
    file: String,
    phase: Option<Phase>,
    traceback: Option<Traceback>,
    failures: Vec<FailureLine>,
    any_failure: bool,
    milestones: Vec<MilestoneLine>,
    /// The phases progress lines showed (bit per phase).
    phases_seen: u8,
    last_progress: Option<(usize, String, Option<Phase>)>,
    /// Stall lines since the last progress line, the first one, and the fewest any of their
    /// kinds needs to show a hang.
    stalls: usize,
    first_stall: Option<usize>,
    stall_need: u32,
    /// A failure came after the last progress line and before any stall: a crash, whose
    /// waiting processes then print stalls.
    crashed_before_stall: bool,
    /// A failure came after the last progress line.
    failed_since_progress: bool,
    /// The first interrupt (SIGINT, SIGTERM) after the last progress line, and whether a
    /// failure came before it there (then the run had crashed, not stood still).
    interrupt: Option<(usize, bool)>,
    /// The log's last line number (0 until the reader says where it ended).
    last_line: usize,
}

impl RunState {
    pub fn new(file: &str) -> RunState {
        RunState {
            file: file.to_string(),
            phase: None,
            traceback: None,
            failures: Vec::new(),
            any_failure: false,
            milestones: Vec::new(),
            phases_seen: 0,
            last_progress: None,
            stalls: 0,
            first_stall: None,
            stall_need: u32::MAX,
            crashed_before_stall: false,
            failed_since_progress: false,
            interrupt: None,
            last_line: 0,
        }
    }

    /// The log ended at line `line` (its last line, blank or not).
    pub fn ends_at(&mut self, line: usize) {
        self.last_line = line;
    }

    fn progress(&mut self, p: &CompiledRunSign, message: &str, line: usize) {
        let phase = p.phase.map(phase_of);
        if phase.is_some() {
            self.phase = phase;
        }
        if let Some(ph) = phase {
            self.phases_seen |= 1 << (ph as u8);
        }
        if let Some(m) = p.milestone.map(milestone_of)
            && !self.milestones.iter().any(|l| l.milestone == m)
        {
            self.milestones.push(MilestoneLine {
                milestone: m,
                file: self.file.clone(),
                line,
                text: shorten(message),
            });
        }
        // The text is copied at the block's end ([`RunState::progress_text`]), not per line.
        match &mut self.last_progress {
            Some((l, _, ph)) => {
                *l = line;
                *ph = self.phase;
            }
            slot => *slot = Some((line, String::new(), self.phase)),
        }
        self.stalls = 0;
        self.first_stall = None;
        self.stall_need = u32::MAX;
        self.crashed_before_stall = false;
        self.failed_since_progress = false;
        self.interrupt = None;
    }

    /// The last progress line's text (once per block).
    fn progress_text(&mut self, message: &str) {
        if let Some((_, text, _)) = &mut self.last_progress
            && !same_text(text, message)
        {
            *text = shorten(message);
        }
    }

    fn stall(&mut self, s: &CompiledRunSign, line: usize) {
        if s.sign == RunSignKind::Interrupt {
            // `KeyboardInterrupt` ends the traceback it closes: not a cut one.
            self.traceback = None;
            let crashed = self.failed_since_progress;
            self.interrupt.get_or_insert((line, crashed));
            return;
        }
        self.stalls += 1;
        self.first_stall.get_or_insert(line);
        self.stall_need = self.stall_need.min(s.min_count);
    }

    fn failure(
        &mut self,
        kind: FailureKind,
        message: &str,
        line: usize,
        phase: Option<Phase>,
        consequence: bool,
    ) {
        self.any_failure = true;
        // A failure after an interrupt follows from it (workers torn down).
        if self.interrupt.is_none() {
            self.failed_since_progress = true;
        }
        if self.first_stall.is_none() {
            self.crashed_before_stall = true;
        }
        // The traceback this line ends, when its frames are close enough to be its own.
        let tb = self
            .traceback
            .take()
            .filter(|t| line.saturating_sub(t.last_frame) <= FRAME_REACH);
        if self.failures.len() >= FAILURES_KEPT
            || self.failures.iter().any(|f| same_text(&f.text, message))
        {
            return;
        }
        let (frames, traceback_from) = match tb {
            Some(t) => (t.frames.into_iter().collect(), Some(t.from)),
            None => (Vec::new(), None),
        };
        self.failures.push(FailureLine {
            kind,
            file: self.file.clone(),
            line,
            text: shorten(message),
            phase,
            frames,
            explained_by: None,
            traceback_from,
            consequence,
        });
    }

    /// The log has ended: what it showed, with the hang if it shows one.
    pub fn finish(mut self, into: &mut RunSigns) {
        self.close_cut_traceback();
        let hang = self.hang();
        let RunState {
            failures,
            milestones,
            phase,
            ..
        } = self;
        into.failures.extend(failures);
        for m in milestones {
            if into.reached(m.milestone).is_none() {
                into.milestones.push(m);
            }
        }
        if into.hang.is_none() {
            into.hang = hang;
        }
        if phase.is_some() {
            into.last_phase = phase;
        }
    }

    /// A traceback still open when the log ends, with its last frame near the end, was cut
    /// before its exception (a paste that stops in the frames, a process killed while
    /// printing): a failure whose message is missing, quoted by its last frame. A traceback
    /// far from the end is a stray print, not where the log stopped. A header with no frame
    /// at the very end (the paste stops right after it) is the same failure, quoted by the
    /// header.
    fn close_cut_traceback(&mut self) {
        let Some(tb) = self.traceback.take() else {
            return;
        };
        if self.last_line.saturating_sub(tb.last_frame) > FRAME_REACH {
            return;
        }
        let Some(text) = tb.frames.back().cloned().or(tb.header) else {
            return;
        };
        let line = tb.last_frame;
        let phase = self.phase;
        self.any_failure = true;
        if self.first_stall.is_none() {
            self.crashed_before_stall = true;
        }
        if self.failures.len() >= FAILURES_KEPT {
            return;
        }
        self.failures.push(FailureLine {
            kind: FailureKind::TracebackCut,
            file: self.file.clone(),
            line,
            text,
            phase,
            frames: tb.frames.into_iter().collect(),
            explained_by: None,
            traceback_from: Some(tb.from),
            consequence: false,
        });
    }

    fn hang(&self) -> Option<Hang> {
        let reached = |m: Milestone| self.milestones.iter().any(|l| l.milestone == m);
        let (progress_line, progress_text, progress_phase) = match &self.last_progress {
            Some((l, t, p)) => (Some(*l), t.clone(), *p),
            None => (None, String::new(), None),
        };
        // Communicator set-up waits for every rank: a log whose last lines are set-up lines
        // (a program that printed its NCCL init, then nothing) ends waiting for a peer. A
        // closing line of a paste (a code fence, a blank) may follow.
        let ends_waiting_for_peers = progress_phase == Some(Phase::CommInit)
            && progress_line.is_some_and(|l| self.last_line.saturating_sub(l) <= ENDS_WITHIN);
        let interrupted = self
            .interrupt
            .filter(|(_, crashed)| !crashed && progress_line.is_some());
        let kind = if self.stalls > 0
            && self.stalls as u64 >= u64::from(self.stall_need)
            && !self.crashed_before_stall
        {
            HangKind::StallWarnings
        } else if interrupted.is_some() && !reached(Milestone::StartupComplete) {
            HangKind::Interrupted
        } else if !self.any_failure
            && !reached(Milestone::StartupComplete)
            && !reached(Milestone::WarmupDone)
            && (self.phases_seen.count_ones() >= 2 || ends_waiting_for_peers)
        {
            HangKind::EndsInStartup
        } else {
            return None;
        };
        Some(Hang {
            kind,
            file: self.file.clone(),
            last_progress_line: progress_line,
            last_progress_text: progress_text,
            stall_line: self.first_stall.filter(|_| kind == HangKind::StallWarnings),
            stall_count: if kind == HangKind::StallWarnings {
                self.stalls
            } else {
                0
            },
            interrupt_line: interrupted
                .map(|(l, _)| l)
                .filter(|_| kind == HangKind::Interrupted),
            phase: progress_phase,
        })
    }
}

/// Does a run-sign condition of a signature hold for what the logs show?
pub fn holds(c: &RunCondition, run: &RunSigns) -> bool {
    match *c {
        RunCondition::Failure => !run.failures.is_empty(),
        RunCondition::FailureKind(k) => run.failures.iter().any(|f| f.kind == failure_kind(k)),
        RunCondition::FailureIn(p) => run.failures.iter().any(|f| f.phase == Some(phase_of(p))),
        RunCondition::Hang => run.hang.is_some(),
        RunCondition::Reached(m) => run.reached(milestone_of(m)).is_some(),
        RunCondition::NotReached(m) => run.reached(milestone_of(m)).is_none(),
    }
}

pub fn failure_kind(k: RunFailureKind) -> FailureKind {
    match k {
        RunFailureKind::Exception => FailureKind::Exception,
        RunFailureKind::Assertion => FailureKind::Assertion,
        RunFailureKind::CudaError => FailureKind::CudaError,
        RunFailureKind::NcclError => FailureKind::NcclError,
        RunFailureKind::Abort => FailureKind::Abort,
        RunFailureKind::ErrorLine => FailureKind::ErrorLine,
    }
}

pub fn phase_of(p: RunPhase) -> Phase {
    match p {
        RunPhase::Start => Phase::Start,
        RunPhase::CommInit => Phase::CommInit,
        RunPhase::Load => Phase::Load,
        RunPhase::Compile => Phase::Compile,
        RunPhase::Profile => Phase::Profile,
        RunPhase::GraphCapture => Phase::GraphCapture,
        RunPhase::Warmup => Phase::Warmup,
        RunPhase::Serving => Phase::Serving,
    }
}

pub fn milestone_of(m: RunMilestone) -> Milestone {
    match m {
        RunMilestone::WeightsLoaded => Milestone::WeightsLoaded,
        RunMilestone::GraphCaptureDone => Milestone::GraphCaptureDone,
        RunMilestone::WarmupDone => Milestone::WarmupDone,
        RunMilestone::StartupComplete => Milestone::StartupComplete,
        RunMilestone::RequestServed => Milestone::RequestServed,
    }
}

/// `text` shortened as [`shorten`] would store it.
fn shorten(text: &str) -> String {
    let t = text.trim();
    match cut(t) {
        Some(head) => format!("{head}…"),
        None => t.to_string(),
    }
}

/// The first [`TEXT_KEPT`] bytes of `t` when it is longer.
fn cut(t: &str) -> Option<&str> {
    if t.len() <= TEXT_KEPT {
        return None;
    }
    let mut at = TEXT_KEPT;
    while !t.is_char_boundary(at) {
        at -= 1;
    }
    Some(&t[..at])
}

/// Is `stored` (a [`shorten`]ed text) the text of `message`, without copying it?
fn same_text(stored: &str, message: &str) -> bool {
    let t = message.trim();
    match cut(t) {
        Some(head) => stored.strip_suffix('…') == Some(head),
        None => stored == t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::classify::{LogText, classify};

    fn kb() -> crate::kb::KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    fn run_of(text: &str) -> RunSigns {
        classify(
            &kb(),
            &[LogText {
                name: "l".into(),
                text: text.into(),
            }],
        )
        .run
    }

    /// A logged traceback as vLLM's engine core prints it (lines from the corpus, case
    /// acfg_lowercase_true_vllm_worker: every line carries the ERROR prefix).
    const LOGGED_TRACEBACK: &str = "\
(EngineCore_DP0 pid=702) INFO 09-01 08:14:02 [core.py:90] Initializing a V1 LLM engine (v0.10.1) with config: model='m'
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012] EngineCore failed to start.
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012] Traceback (most recent call last):
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py\", line 1003, in run_engine_core
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012]     engine_core = EngineCoreProc(*args, **kwargs)
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012]   File \"/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py\", line 231, in init_device
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012]     torch.cuda.set_device(self.device)
(EngineCore_DP0 pid=702) ERROR 09-01 08:14:20 [core.py:1012] ValueError: Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'
";

    #[test]
    fn a_logged_traceback_is_one_exception_with_its_frames() {
        let run = run_of(LOGGED_TRACEBACK);
        let kinds: Vec<(FailureKind, usize, bool)> = run
            .failures
            .iter()
            .map(|f| (f.kind, f.line, f.consequence))
            .collect();
        assert_eq!(
            kinds,
            [
                (FailureKind::Exception, 2, true),
                (FailureKind::Exception, 8, false)
            ],
            "{:#?}",
            run.failures
        );
        let ex = &run.failures[1];
        assert!(
            ex.text.starts_with("ValueError: Expected 'True'"),
            "{}",
            ex.text
        );
        assert_eq!(ex.traceback_from, Some(3));
        assert_eq!(ex.frames.len(), 2);
        assert!(ex.frames[1].contains("gpu_worker.py\", line 231, in init_device"));
        // The class this line is the signature of explains it, and the wrapper's line with it.
        assert!(run.unexplained().next().is_none(), "{:#?}", run.failures);
        assert_eq!(ex.explained_by.as_deref(), Some("alloc_conf_invalid"));
    }

    #[test]
    fn a_logging_header_with_fields_before_the_level_is_an_error_record() {
        // KServe's header (process, logger, level, [function():line]) after an ISO time.
        let run = run_of(
            "2025-01-01 10:00:00.000 1 kserve ERROR [start():200] Failed to start model server\n",
        );
        assert_eq!(run.failures.len(), 1, "{:#?}", run.failures);
        assert!(
            run.failures[0]
                .text
                .contains("Failed to start model server")
        );
        // The same words inside an INFO message are not a record's level.
        let run = run_of(
            "INFO 05-01 10:00:00 [x.py:1] we saw 2 ERROR [a:1] things\n\
             2025-01-01 10:00:00,123 - root - INFO - found 3 ERROR - lines\n",
        );
        assert!(run.failures.is_empty(), "{:#?}", run.failures);
    }

    #[test]
    fn a_thread_header_or_a_traceback_after_a_message_starts_a_traceback() {
        for head in [
            "Exception in thread Thread-3 (worker):",
            "[2025-01-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        ] {
            let run = run_of(&format!(
                "{head}\n  File \"/x/sched.py\", line 10, in run\n    go()\nRuntimeError: boom\n"
            ));
            let ex = run
                .failures
                .iter()
                .find(|f| f.kind == FailureKind::Exception)
                .unwrap_or_else(|| panic!("{head}: {:#?}", run.failures));
            assert_eq!(ex.text, "RuntimeError: boom");
            assert_eq!(ex.frames.len(), 1, "{head}: {:#?}", ex.frames);
        }
        // Ray's report of a worker that died is a failure on its own.
        let run = run_of(
            "(raylet) A worker died or was killed while executing a task by an unexpected system error.\n",
        );
        assert_eq!(run.failures.len(), 1, "{:#?}", run.failures);
    }

    #[test]
    fn a_plain_traceback_keeps_the_last_frames_and_the_phase() {
        let log = "\
INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m...
INFO 05-12 10:00:41 [default_loader.py:267] Loading weights took 38.11 seconds
Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  12%|#  | 8/67 [00:01<00:09,  6.02it/s]
Traceback (most recent call last):
  File \"/a/one.py\", line 1, in a
    a()
  File \"/a/two.py\", line 2, in b
  File \"/a/three.py\", line 3, in c
  File \"/a/four.py\", line 4, in d
  File \"/a/five.py\", line 5, in e
    raise RuntimeError(\"boom\")
RuntimeError: something nobody has seen
";
        let run = run_of(log);
        assert_eq!(run.failures.len(), 1, "{:#?}", run.failures);
        let f = &run.failures[0];
        assert_eq!(f.kind, FailureKind::Exception);
        assert_eq!(f.line, 12);
        assert_eq!(f.phase, Some(Phase::GraphCapture));
        assert_eq!(f.frames.len(), FRAMES_KEPT);
        assert!(f.frames[0].contains("two.py") && f.frames[3].contains("five.py"));
        assert_eq!(f.explained_by, None);
        assert!(run.reached(Milestone::WeightsLoaded).is_some());
        assert!(run.hang.is_none(), "a failure is not a hang");
    }

    #[test]
    fn a_build_log_that_did_not_fail_shows_no_failure() {
        let run = run_of(
            "[1/3] /usr/local/cuda/bin/nvcc -c kernel.cu -o kernel.cuda.o\n\
             ptxas info    : Used 32 registers, 384 bytes cmem[0]\n\
             [3/3] c++ kernel.cuda.o -shared -o ext.so\n\
             INFO 12-02 10:00:09 [core.py:90] no error: compiled in 12.1 s\n",
        );
        assert!(run.failures.is_empty(), "{:?}", run.failures);
    }

    #[test]
    fn healthy_verdict_lines_are_not_failures() {
        let run = run_of(
            "# Out of bounds values : 0 OK\n\
             # Avg bus bandwidth    : 21.5 \n\
             INFO 12-02 10:00:09 [core.py:90] no error: all good\n\
             UserWarning: TypedStorage is deprecated\n\
             2024-05-01 10:00:00.123 | INFO     | server:launch:88 - engine up\n\
             [09/27/2020-02:51:28] [I] [TRT] building the engine\n\
             {\"level\":\"info\",\"msg\":\"no error\"}\n\
             time=2024-05-01T10:00:00Z level=INFO msg=\"error budget ok\"\n\
             INFO:     Application startup complete.\n",
        );
        assert!(run.failures.is_empty(), "{:?}", run.failures);
    }

    #[test]
    fn a_traceback_cut_before_its_exception_is_a_failure_quoted_by_its_last_frame() {
        let text = "\
(Worker_TP0 pid=1) ERROR 01-20 13:56:48 [multiproc_executor.py:749]   File \"/v/models/deepseek_v2.py\", line 1087, in __init__
(Worker_TP0 pid=1) ERROR 01-20 13:56:48 [multiproc_executor.py:749]     self.mla_attn = Wrapper(
(Worker_TP0 pid=1) ERROR 01-20 13:56:48 [multiproc_executor.py:749]   File \"/v/layers/mla.py\", line 95, in __init__
(Worker_TP0 pid=1) ERROR 01-20 13:56:48 [multiproc_executor.py:749]     self.mla_attn = MLAAttention(
";
        let run = run_of(text);
        assert_eq!(run.failures.len(), 1, "{:?}", run.failures);
        let f = &run.failures[0];
        assert_eq!(f.kind, FailureKind::TracebackCut);
        assert_eq!(f.line, 3);
        assert_eq!(f.traceback_from, Some(1));
        assert_eq!(f.frames.len(), 2);
        assert!(f.text.contains("mla.py\", line 95"), "{}", f.text);
        assert!(
            run.hang.is_none(),
            "a cut traceback is a failure, not a hang"
        );
    }

    #[test]
    fn a_log_that_stops_right_after_a_traceback_header_is_a_cut_traceback() {
        let run = run_of("INFO starting\nTraceback (most recent call last):\n");
        assert_eq!(run.failures.len(), 1, "{:?}", run.failures);
        let f = &run.failures[0];
        assert_eq!(f.kind, FailureKind::TracebackCut);
        assert_eq!(f.line, 2);
        assert!(f.frames.is_empty());
        assert!(
            f.text.starts_with("Traceback (most recent call last)"),
            "{}",
            f.text
        );
        // A header far above the end, with nothing after it, is a stray print.
        let mut far = String::from("Traceback (most recent call last):\n");
        for i in 0..200 {
            far.push_str(&format!("INFO line {i}\n"));
        }
        assert!(run_of(&far).failures.is_empty());
    }

    #[test]
    fn a_finished_traceback_and_a_stray_early_one_are_not_cut() {
        let done = run_of(
            "Traceback (most recent call last):\n  File \"/a.py\", line 1, in f\n    g()\nValueError: x\n",
        );
        assert_eq!(
            done.failures.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [FailureKind::Exception]
        );
        // Frames printed early (a stack dump in a warning), then a long healthy log.
        let mut early = String::from("  File \"/a.py\", line 1, in f\n");
        for i in 0..40 {
            early.push_str(&format!(
                "INFO 12-02 10:00:{:02} [x.py:1] step {i}\n",
                i % 60
            ));
        }
        assert!(run_of(&early).failures.is_empty());
    }

    #[test]
    fn each_failure_kind_is_recognised() {
        use FailureKind::*;
        for (line, kind) in [
            (
                "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled system error",
                NcclError,
            ),
            (
                "node1:1234:1234 [0] init.cc:905 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
                NcclError,
            ),
            (
                "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
                NcclError,
            ),
            (
                "RuntimeError: CUDA error: an illegal memory access was encountered",
                CudaError,
            ),
            ("CUDA_ERROR_INVALID_IMAGE", CudaError),
            (
                "RuntimeError: CUDA error: device-side assert triggered",
                Assertion,
            ),
            (
                "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [0,0,0] Assertion `idx >= 0 && idx < self_dim_size && \"index out of bounds\"` failed.",
                Assertion,
            ),
            ("AssertionError: Should be cudagraph only here", Assertion),
            ("Aborted (core dumped)", Abort),
            ("Fatal Python error: Aborted", Abort),
            ("Killed", Abort),
            (
                "E1201 10:00:00.123000 1234 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 0 (pid: 1) of binary: /usr/bin/python3",
                Abort,
            ),
            (
                "(EngineCore_DP0 pid=5) ERROR 06-20 08:43:19 [core.py:1] something went wrong in a way no pattern names",
                ErrorLine,
            ),
            ("ERROR:root:engine exited", ErrorLine),
            // A build tool that stopped (a JIT or source build), often with no exception after it.
            ("ninja: build stopped: subcommand failed.", ErrorLine),
            (
                "/tmp/build/kernel.cu(12): error: identifier \"__nv_fp4_e2m1\" is undefined",
                ErrorLine,
            ),
            (
                "nvcc fatal   : Unsupported gpu architecture 'compute_120a'",
                ErrorLine,
            ),
            (
                "KeyError: 'model.layers.0.mlp.experts.w13_weight'",
                Exception,
            ),
            ("Exception: Capture cuda graph failed: ", Exception),
            (
                "E       RuntimeError: Failed: Assertion error csrc/x.hpp:1 'n > 0'",
                Assertion,
            ),
            ("error: subprocess-exited-with-error", ErrorLine),
            ("# Out of bounds values : 12 FAILED", NcclError),
            (
                "[09/27/2020-02:51:28] [E] [TRT] caskUtils.cpp (98) - Assertion Error in trtSmToCask: 0 (Unsupported SM.)",
                ErrorLine,
            ),
            (
                "2024-05-01 10:00:00.123 | ERROR    | server:launch:88 - engine exited",
                ErrorLine,
            ),
            (
                "ggml/src/ggml-cuda/ggml-cuda.cu:75: GGML_ASSERT(ok) failed",
                Assertion,
            ),
            (
                "panic: runtime error: index out of range [3] with length 3",
                Abort,
            ),
            ("thread 'main' panicked at src/main.rs:10:5:", Abort),
            ("ERROR:    Application startup failed. Exiting.", ErrorLine),
            (
                "2024-05-01T10:00:00.123Z\terror\tserver/run.go:88\tmodel load failed",
                ErrorLine,
            ),
            (
                "2024-05-01 10:00:00,123 - kserve - ERROR - Failed to start model server",
                ErrorLine,
            ),
            (
                "[2024-05-01 10:00:00,123] ERROR [model_server.py:88] Failed to start",
                ErrorLine,
            ),
            (
                "{\"level\":\"error\",\"ts\":1714557600.1,\"msg\":\"failed to start\"}",
                ErrorLine,
            ),
            (
                "time=2024-05-01T10:00:00.123Z level=ERROR source=server.go:88 msg=\"runner terminated\"",
                ErrorLine,
            ),
            (" .. node1 pid 42: Test failure common.cu:1201", NcclError),
        ] {
            let run = run_of(&format!("{line}\n"));
            assert_eq!(
                run.failures.iter().map(|f| f.kind).collect::<Vec<_>>(),
                [kind],
                "{line}"
            );
        }
        // Not failures: a warning class name in a sentence, an INFO line, a zero exit code.
        for line in [
            "UserWarning: something is deprecated",
            "INFO 06-20 08:42:31 [x.py:1] retrying after a RuntimeError in the probe",
            "Worker exited with code 0",
            "WARNING 06-20 08:42:31 [x.py:1] CUDA graphs are off",
        ] {
            assert!(run_of(&format!("{line}\n")).failures.is_empty(), "{line}");
        }
    }

    #[test]
    fn repeated_failures_are_kept_once() {
        let line = "[rank{}]: RuntimeError: CUDA error: an illegal memory access was encountered\n";
        let log: String = (0..8).map(|r| line.replace("{}", &r.to_string())).collect();
        let run = run_of(&log);
        assert_eq!(run.failures.len(), 1);
        assert_eq!(run.failures[0].line, 1);
    }

    #[test]
    fn stalls_after_the_last_progress_line_are_a_hang() {
        // Shape of corpus case p2p_*: start-up progress, then the broadcast stall every 60 s.
        let stall = "(EngineCore_DP0 pid=301) INFO 01-25 19:03:13 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).\n";
        let start = "(Worker_TP0 pid=1) INFO 01-25 19:01:00 [gpu_model_runner.py:2338] Starting to load model m...\n(Worker_TP0 pid=1) INFO 01-25 19:01:40 [default_loader.py:267] Loading weights took 38.11 seconds\n";
        let run = run_of(&format!("{start}{stall}{stall}{stall}"));
        let h = run.hang.expect("hang");
        assert_eq!(h.kind, HangKind::StallWarnings);
        assert_eq!(h.last_progress_line, Some(2));
        assert_eq!(h.last_progress_text, "Loading weights took 38.11 seconds");
        assert_eq!(h.stall_line, Some(3));
        assert_eq!(h.stall_count, 3);
        assert_eq!(h.phase, Some(Phase::Load));
        // One stall line pasted alone is not a hang; nor stalls that a crash before them explains.
        assert!(run_of(stall).hang.is_none());
        let crash = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
        assert!(
            run_of(&format!("{start}{crash}{stall}{stall}"))
                .hang
                .is_none()
        );
        // Progress after the stalls (a long compile that finished) ends them.
        let run = run_of(&format!(
            "{start}{stall}{stall}INFO 01-25 19:09:00 [monitor.py:34] torch.compile took 36.18 s in total\n"
        ));
        assert_eq!(run.hang.map(|h| h.kind), Some(HangKind::EndsInStartup));
    }

    #[test]
    fn a_watchdog_timeout_is_a_hang_on_its_own() {
        let run = run_of(
            "[rank1]:[E530 18:19:16.112093 ProcessGroupNCCL.cpp:685] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600007 milliseconds before timing out.\n",
        );
        assert_eq!(run.hang.map(|h| h.kind), Some(HangKind::StallWarnings));
        assert_eq!(run.failures[0].kind, FailureKind::NcclError);
    }

    #[test]
    fn a_log_that_stops_inside_start_up_is_a_hang_and_a_finished_one_is_not() {
        let start = "\
INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m...
INFO 05-12 10:00:41 [default_loader.py:267] Loading weights took 38.11 seconds
INFO 05-12 10:01:20 [backends.py:394] Compiling a graph for compile range (1, 8192) takes 20.11 s
";
        let run = run_of(start);
        let h = run.hang.expect("hang");
        assert_eq!(h.kind, HangKind::EndsInStartup);
        assert_eq!(h.last_progress_line, Some(3));
        assert_eq!(h.phase, Some(Phase::Compile));
        // One phase only (a short excerpt) is not a hang.
        assert!(run_of("Loading weights took 3.1 seconds\n").hang.is_none());
        let done = format!(
            "{start}(APIServer pid=1) INFO:     Application startup complete.\n(APIServer pid=1) INFO:     127.0.0.1:50642 - \"POST /v1/completions HTTP/1.1\" 200 OK\n"
        );
        let run = run_of(&done);
        assert!(run.hang.is_none());
        let got: Vec<Milestone> = run.milestones.iter().map(|m| m.milestone).collect();
        assert_eq!(
            got,
            [
                Milestone::WeightsLoaded,
                Milestone::StartupComplete,
                Milestone::RequestServed
            ]
        );
        assert_eq!(run.last_phase, Some(Phase::Serving));
    }

    #[test]
    fn the_shipped_startup_log_shows_its_milestones() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kb/logs/startup_ok.log");
        let text = std::fs::read_to_string(path).expect("fixture");
        let run = run_of(&text);
        assert!(run.failures.is_empty(), "{:#?}", run.failures);
        assert!(run.hang.is_none());
        for m in [
            Milestone::WeightsLoaded,
            Milestone::GraphCaptureDone,
            Milestone::StartupComplete,
        ] {
            assert!(run.reached(m).is_some(), "{m:?}: {:#?}", run.milestones);
        }
    }

    #[test]
    fn a_shell_job_status_line_is_an_abort() {
        for line in [
            "./run_probe.sh: line 8:   775 Aborted                 ( \"$@\" )",
            "run.sh: line 3: 12 Killed                  python train.py",
            "[2]-  Segmentation fault      (core dumped) python x.py",
            "Bus error (core dumped)",
            "zsh: segmentation fault (core dumped)  python repro.py",
            "vllm.service: Main process exited, code=dumped, status=6/ABRT",
            "<SpawnProcess name='SpawnProcess-1' pid=9 parent=1 stopped exitcode=-SIGKILL>",
            "command terminated with exit code 139",
        ] {
            let run = run_of(&format!("INFO: starting\n{line}\n"));
            assert_eq!(
                run.failures.iter().map(|f| f.kind).collect::<Vec<_>>(),
                [FailureKind::Abort],
                "{line}"
            );
        }
        // Words in a sentence are not a job's status; nor a clean exit.
        for line in [
            "Killed 3 stale processes before the start",
            "Terminated the old server, starting a new one",
            "vllm.service: Main process exited, code=exited, status=0/SUCCESS",
            "<SpawnProcess name='SpawnProcess-1' pid=9 parent=1 stopped exitcode=0>",
        ] {
            assert!(run_of(&format!("{line}\n")).failures.is_empty(), "{line}");
        }
    }

    const LOADING: &str = "\
INFO 05-12 10:00:01 [gpu_model_runner.py:2338] Starting to load model m...
Loading safetensors checkpoint shards: 2/4
";

    #[test]
    fn an_interrupt_before_start_up_completed_is_a_hang_the_user_gave_up_on() {
        let log = format!(
            "{LOADING}WARNING still waiting for the worker after 20 s\nTraceback (most recent call last):\n  File \"/a/x.py\", line 1, in <module>\nKeyboardInterrupt\n"
        );
        let run = run_of(&log);
        let h = run.hang.expect("hang");
        assert_eq!(h.kind, HangKind::Interrupted);
        assert_eq!(h.interrupt_line, Some(6));
        assert_eq!(h.last_progress_line, Some(2));
        assert_eq!(h.phase, Some(Phase::Load));
        assert!(run.failures.is_empty(), "{:#?}", run.failures);
        // A crash, then the interrupt: the crash is the story, not a hang.
        let crashed = format!(
            "{LOADING}RuntimeError: CUDA error: an illegal memory access was encountered\n^C\n"
        );
        assert!(run_of(&crashed).hang.is_none());
        // Ctrl-C on a server that is up is a normal stop.
        let served = format!(
            "{LOADING}(APIServer pid=1) INFO:     Application startup complete.\nKeyboardInterrupt\n"
        );
        assert!(run_of(&served).hang.is_none());
        // An interrupt with no progress before it says nothing about a hang.
        assert!(run_of("KeyboardInterrupt\n").hang.is_none());
    }

    #[test]
    fn a_log_that_ends_in_communicator_set_up_ends_waiting_for_a_peer() {
        let init = "\
node2:182125:182125 [0] NCCL INFO Bootstrap : Using eno2:10.1.10.95<0>
node2:182125:182125 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation
node2:182125:182125 NCCL CALL ncclGetUniqueId(0x6394b9eeaad4d0af)
";
        let h = run_of(init).hang.expect("hang");
        assert_eq!(h.kind, HangKind::EndsInStartup);
        assert_eq!(h.phase, Some(Phase::CommInit));
        assert_eq!(h.last_progress_line, Some(3));
        // A code fence closing the paste still ends there.
        assert!(run_of(&format!("{init}```\n")).hang.is_some());
        // Set-up followed by the program's own output is not a hang: the run went on.
        let went_on = format!(
            "{init}step 1 loss 2.31\nstep 2 loss 2.20\nstep 3 loss 2.11\nstep 4 loss 2.05\n"
        );
        assert!(run_of(&went_on).hang.is_none());
    }

    #[test]
    fn shortened_texts_compare_without_copying() {
        let long = "x".repeat(TEXT_KEPT + 10);
        assert!(same_text(&shorten(&long), &long));
        assert!(!same_text(&shorten(&long), &"y".repeat(TEXT_KEPT + 10)));
        assert!(same_text("abc", "  abc "));
    }
}
