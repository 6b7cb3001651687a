//! Knowledge-base patterns (the run signs', the signatures') compiled a second way for ASCII
//! text: with Unicode off, over bytes.
//!
//! Why: the regex crate compiles a Unicode class (`\d`, `\w`, `[^\]]`, `.`) into a UTF-8
//! automaton of hundreds of states, forward and reverse. A vLLM level prefix
//! (`^(INFO|WARNING|DEBUG) \d\d-\d\d … [\w.-]+:\d+\]`) took about 5 M instructions to compile,
//! and the run signs compiled for a short log were almost half of `check --demo`; a signature
//! confirmed on a candidate line cost about 0.66 M. With Unicode off the same pattern is a few
//! dozen states. The regex crate has no switch that compiles a pattern for ASCII haystacks
//! only, so this keeps both forms and picks one per haystack.
//!
//! Same answers: on a haystack of ASCII bytes, every Unicode class matches exactly its ASCII
//! members (`\d` = `[0-9]`, `\w` = `[0-9A-Za-z_]`, `\s` = `[\t\n\x0B\x0C\r ]`, a negated class or
//! `.` any other ASCII byte), case folding of ASCII letters reaches only ASCII letters in such a
//! text (the Kelvin sign and long s are not in it), no match can split a character, and both
//! forms report the leftmost-first match at the same byte offsets. A pattern that does not
//! compile with Unicode off (`\p{…}`) is always asked in its Unicode form; so is any non-ASCII
//! haystack.
//!
//! The ASCII forms are built with regex-automata's `meta` builder rather than `regex::bytes`,
//! for one setting the regex crate does not expose: no literal prefilter. Each form is asked
//! about one line at a time, where a prefilter saves nothing, and building its Teddy searcher
//! was about half of every form's compile time.

use crate::kb::LazyRegex;
use crate::kb::lazy_regex::ascii_word_boundaries;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::{meta, util::syntax};
use std::sync::OnceLock;

/// Per pattern, its ASCII form, compiled on first use (`None` inside: it does not compile with
/// Unicode off).
pub struct AsciiForms {
    forms: Vec<OnceLock<Option<meta::Regex>>>,
}

impl AsciiForms {
    /// Room for `n` patterns, indexed as the caller's list.
    pub fn new(n: usize) -> AsciiForms {
        AsciiForms {
            forms: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The ASCII form of pattern `i` (`re`), when the haystack is ASCII and the form compiles.
    fn form(&self, i: usize, re: &LazyRegex, ascii: bool) -> Option<&meta::Regex> {
        if !ascii {
            return None;
        }
        self.forms
            .get(i)?
            .get_or_init(|| {
                meta::Regex::builder()
                    .syntax(syntax::Config::new().unicode(false).utf8(false))
                    .configure(
                        meta::Config::new()
                            .auto_prefilter(false)
                            .utf8_empty(false)
                            // Only whole matches are asked for: no capture-group states.
                            .which_captures(WhichCaptures::Implicit),
                    )
                    .build(&ascii_word_boundaries(re.as_str()))
                    .ok()
            })
            .as_ref()
    }

    /// `re.is_match(hay)`; `i`: the pattern's index; `ascii`: `hay.is_ascii()` (the caller
    /// tests a line once for all the patterns it tries).
    pub fn is_match(&self, i: usize, re: &LazyRegex, hay: &str, ascii: bool) -> bool {
        match self.form(i, re, ascii) {
            Some(a) => a.is_match(hay.as_bytes()),
            None => re.regex().is_match(hay),
        }
    }

    /// Where `re`'s leftmost match in `hay` ends, when it starts at 0 (`i`, `ascii`: as for
    /// [`AsciiForms::is_match`]).
    pub fn match_at_start(
        &self,
        i: usize,
        re: &LazyRegex,
        hay: &str,
        ascii: bool,
    ) -> Option<usize> {
        let span = match self.form(i, re, ascii) {
            Some(a) => a.find(hay.as_bytes()).map(|m| (m.start(), m.end())),
            None => re.find(hay).map(|m| (m.start(), m.end())),
        };
        span.filter(|&(start, _)| start == 0).map(|(_, end)| end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms agree on ASCII text; non-ASCII text and `\p` patterns take the Unicode form.
    #[test]
    fn the_ascii_form_answers_as_the_unicode_form() {
        let patterns = [
            r"^(INFO|WARNING|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? (\[[^\]]*\]|[\w.-]+:\d+\]) ?",
            r"(?i)\bcuda error\b",
            r"^\s*File .*, line \d+",
            r"\p{Greek}+",
            r"^.+?:\d+",
            r"(?i)k",
        ];
        let texts = [
            "INFO 06-20 08:42:31 [gpu_model_runner.py:2653] Model loading took 9.41 GiB",
            "WARNING 06-20 08:42:31 worker_base.py:464] x",
            "INFO 06-20 08:42:31 wörker.py:464] x",
            "RuntimeError: CUDA Error: illegal",
            "  File \"/x.py\", line 12, in f",
            "\u{212A} kelvin",
            "αβγ x:1",
            "x_cuda errors",
            "",
        ];
        for (i, p) in patterns.iter().enumerate() {
            let re = LazyRegex::new(p).expect("valid");
            let forms = AsciiForms::new(patterns.len());
            for t in texts {
                let ascii = t.is_ascii();
                assert_eq!(
                    forms.is_match(i, &re, t, ascii),
                    re.is_match(t),
                    "{p} on {t:?}"
                );
                let want = re.find(t).filter(|m| m.start() == 0).map(|m| m.end());
                let got = forms.match_at_start(i, &re, t, ascii);
                assert_eq!(got, want, "{p} on {t:?}");
            }
        }
        let greek = LazyRegex::new(r"\p{Greek}").expect("valid");
        let forms = AsciiForms::new(1);
        assert!(!forms.is_match(0, &greek, "abc", true));
        assert!(matches!(forms.forms[0].get(), Some(None)));
    }
}
