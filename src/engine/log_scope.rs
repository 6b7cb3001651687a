//! Log-wide context for signatures (issue 19). A line can be evidence of a class only in
//! context: vLLM's "No available shared memory broadcast block found" is a stall, and it is
//! evidence of a peer-to-peer fabric hang only after NCCL finished its init and when nothing in
//! the same log reports an error (a crash prints the same stall line while it is reported).
//!
//! Two signature fields express that ([`crate::kb::schema::Signature`]):
//! - `after`: the line counts only when a line of one of these signatures came earlier in the
//!   same log;
//! - `unless_log`: the line does not count when any line of the same log matches one of these.
//!
//! The scanner feeds each log's text through [`LogScope::see`] (chunk by chunk for a streamed
//! log) and, at the log's end, asks [`LogScope::keep`] which matches keep their place.

use crate::kb::{CompiledSignature, LazyRegex};

/// The `unless_log` patterns of every signature, prepared once per scanner.
///
/// Each pattern is searched on its own (a lazily compiled regex with a literal gate), and only
/// while its signature is not yet cancelled in this log: a veto, once seen, never needs finding
/// again, and a search that stops at its first hit is cheap. (One `RegexSet` over every block
/// cost 40% of classifying a 100 MB log: its overlapping search has no literal prefilter and
/// never stops early.)
pub struct LogScope {
    /// (signature index, pattern), in signature order.
    each: Vec<(usize, LazyRegex)>,
    /// Whether any signature has log-wide context at all (else `finish` does nothing).
    any: bool,
}

/// What one log has shown so far: which signatures a line of it has cancelled.
pub struct LogState {
    vetoed: Vec<bool>,
}

impl LogScope {
    pub fn new(sigs: &[CompiledSignature]) -> LogScope {
        LogScope::for_signatures(sigs, |_| true)
    }

    /// Like [`LogScope::new`], with the `unless_log` patterns of the signatures `include` names
    /// only (the scanner leaves out signatures that cannot match the log at hand: their vetoes
    /// would cancel nothing).
    pub(crate) fn for_signatures(
        sigs: &[CompiledSignature],
        include: impl Fn(usize) -> bool,
    ) -> LogScope {
        let each = sigs
            .iter()
            .enumerate()
            .filter(|(i, _)| include(*i))
            .flat_map(|(i, s)| s.unless_log.iter().map(move |r| (i, r.clone())))
            .collect();
        LogScope {
            each,
            any: sigs
                .iter()
                .any(|s| !s.after.is_empty() || !s.unless_log.is_empty()),
        }
    }

    /// A fresh state for one log.
    pub fn start(&self, sigs: &[CompiledSignature]) -> LogState {
        LogState {
            vetoed: vec![false; sigs.len()],
        }
    }

    /// Look at a piece of the log (whole lines).
    pub fn see(&self, text: &str, state: &mut LogState) {
        for (owner, r) in &self.each {
            if !state.vetoed[*owner] && r.is_match(text) {
                state.vetoed[*owner] = true;
            }
        }
    }

    /// Which of one log's matches keep their place: `log` holds each match's signature id and
    /// line, in line order; the answer has one flag per match.
    pub fn keep(
        &self,
        sigs: &[CompiledSignature],
        state: &LogState,
        log: &[(&str, usize)],
    ) -> Vec<bool> {
        if !self.any {
            return vec![true; log.len()];
        }
        let index = |id: &str| sigs.iter().position(|s| s.id == id);
        // The first line of each signature, before any match is dropped.
        let first_line = |id: &str| log.iter().find(|(s, _)| *s == id).map(|(_, l)| *l);
        log.iter()
            .map(|(sig, line)| {
                let Some(i) = index(sig) else {
                    return true;
                };
                let s = &sigs[i];
                if state.vetoed[i] {
                    return false;
                }
                s.after.is_empty()
                    || s.after
                        .iter()
                        .any(|a| first_line(a).is_some_and(|l| l < *line))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::schema::SignatureKind;

    fn sig(id: &str, pattern: &str, after: &[&str], unless_log: &[&str]) -> CompiledSignature {
        let re = |p: &str| LazyRegex::new(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        CompiledSignature {
            id: id.into(),
            class: "c".into(),
            kind: SignatureKind::Error,
            weight: 10,
            search: pattern.into(),
            needles: None,
            regex: re(pattern),
            unless: Vec::new(),
            after: after.iter().map(|a| a.to_string()).collect(),
            unless_log: unless_log.iter().map(|p| re(p)).collect(),
            requires: Vec::new(),
            excluded_by: Vec::new(),
            confirm_with: Vec::new(),
            requires_run: Vec::new(),
            when: None,
            unconfirmed: String::new(),
            note: String::new(),
            sources: Vec::new(),
        }
    }

    /// The matches `(signature, line)` of `text` that keep their place.
    fn run(sigs: &[CompiledSignature], text: &str, log: &[(&str, usize)]) -> Vec<String> {
        let scope = LogScope::new(sigs);
        let mut state = scope.start(sigs);
        // Two pieces, as a streamed log arrives.
        let cut = text.find('\n').map_or(text.len(), |p| p + 1);
        scope.see(&text[..cut], &mut state);
        scope.see(&text[cut..], &mut state);
        let keep = scope.keep(sigs, &state, log);
        log.iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|((s, l), _)| format!("{s}@{l}"))
            .collect()
    }

    #[test]
    fn after_needs_an_earlier_line_and_unless_log_looks_at_the_whole_log() {
        let sigs = [
            sig("init", "Init COMPLETE", &[], &[]),
            sig("stall", "stall", &["init"], &["ERROR", "started"]),
        ];
        // Init, then a stall: kept.
        assert_eq!(
            run(
                &sigs,
                "Init COMPLETE\nstall\n",
                &[("init", 1), ("stall", 2)]
            ),
            ["init@1", "stall@2"]
        );
        // A stall before (or without) the init line does not count.
        assert_eq!(
            run(
                &sigs,
                "stall\nInit COMPLETE\n",
                &[("stall", 1), ("init", 2)]
            ),
            ["init@2"]
        );
        assert_eq!(run(&sigs, "stall\n", &[("stall", 1)]), Vec::<String>::new());
        // An error before, or a finished start after: the stall does not count (the init does).
        assert_eq!(
            run(
                &sigs,
                "ERROR boom\nInit COMPLETE\nstall\n",
                &[("init", 2), ("stall", 3)]
            ),
            ["init@2"]
        );
        assert_eq!(
            run(
                &sigs,
                "Init COMPLETE\nstall\nthen started\n",
                &[("init", 1), ("stall", 2)]
            ),
            ["init@1"]
        );
    }

    #[test]
    fn signatures_without_context_are_left_alone() {
        let sigs = [sig("plain", "x", &[], &[])];
        let scope = LogScope::new(&sigs);
        assert!(!scope.any);
        assert_eq!(
            scope.keep(&sigs, &scope.start(&sigs), &[("plain", 3)]),
            [true]
        );
    }

    #[test]
    fn a_veto_is_found_anywhere_in_a_piece_and_stays() {
        // Two vetoes on one line, one that spans a line break, one anchored at a line start,
        // each owned by its own signature; one that never matches.
        let sigs = [
            sig("a", "A", &[], &["first"]),
            sig("b", "B", &[], &["second"]),
            sig("c", "C", &[], &[r"broken\s+pipe"]),
            sig("d", "D", &[], &["(?m)^anchored"]),
            sig("e", "E", &[], &["never"]),
        ];
        let scope = LogScope::new(&sigs);
        let mut state = scope.start(&sigs);
        scope.see("noise\nx first and second\nbroken\npipe\n", &mut state);
        assert_eq!(state.vetoed, [true, true, true, false, false]);
        // A later piece adds its vetoes and takes none back.
        scope.see("not anchored\nanchored here\nend\n", &mut state);
        assert_eq!(state.vetoed, [true, true, true, true, false]);
    }
}
