//! A knowledge-base regex that is compiled when it is first needed, not when the knowledge base
//! loads.
//!
//! Compiling the signatures' regexes was a third of every start (about 80 µs each). The loader
//! still compiles each one once to validate it (for the embedded knowledge base that happens in
//! build.rs, when the binary is built); the knowledge base then keeps the pattern and, from the
//! regex's syntax, the *needles*: literals one of which every match contains (its prefix or
//! suffix literals, as the regex crate's own prefilter finds them). Asked about a short text
//! that holds none of them, [`LazyRegex`] answers "no match" without compiling; otherwise it
//! compiles once and asks the regex. Every other method of [`Regex`] is reached through `Deref`
//! (which compiles on first use).
//!
//! Every pattern is compiled with ASCII word boundaries ([`ascii_word_boundaries`]): the regex
//! crate's fast engines (its lazy DFA) cannot decide a *Unicode* `\b` on non-ASCII text and fall
//! back to the PikeVM, about 25 times slower; a tqdm bar (`|█████`) on every line made a 2 MB
//! log take 2 s. The knowledge base's words are ASCII, so the ASCII boundary means the same.

use regex::{Match, Matches, Regex};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// At most this many needles; a pattern with more (a wide alternation, case variants) is not
/// gated.
const MAX_NEEDLES: usize = 64;
/// Haystacks longer than this skip the needle test and compile: a long text most likely holds a
/// needle, and the regex's own prefilter searches it faster.
const MAX_GATED_LEN: usize = 64 * 1024;

#[derive(Clone, Serialize, Deserialize)]
pub struct LazyRegex {
    pattern: String,
    /// Every match of the pattern contains one of these (empty: nothing known, always compile).
    needles: Vec<Vec<u8>>,
    /// Shared by clones: a regex compiled through one copy is compiled for all.
    #[serde(skip)]
    compiled: Arc<OnceLock<Regex>>,
}

impl LazyRegex {
    /// Compile `pattern` now (to validate it) and keep it compiled.
    pub fn new(pattern: &str) -> Result<LazyRegex, regex::Error> {
        let regex = compile(pattern)?;
        Ok(LazyRegex {
            pattern: pattern.to_string(),
            needles: needles(pattern),
            compiled: Arc::new(OnceLock::from(regex)),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The literals every match contains (for tests and the benchmark).
    pub fn needles(&self) -> &[Vec<u8>] {
        &self.needles
    }

    /// Whether the regex has been compiled in this process.
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// The compiled regex (compiled now if it was not).
    pub fn regex(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            // The pattern compiled when the knowledge base was built (build.rs, or the loader
            // for `--kb DIR`), with this same regex crate; a failure here would be a bug in the
            // build, so it matches nothing rather than panicking.
            compile(&self.pattern).unwrap_or_else(|_| {
                Regex::new(r"[^\s\S]").unwrap_or_else(|_| unreachable!("a valid empty class"))
            })
        })
    }

    /// `false` when `haystack` is short, the regex is not compiled, and none of the needles is in
    /// it: then no match is possible.
    fn may_match(&self, haystack: &str) -> bool {
        haystack.len() > MAX_GATED_LEN || self.is_compiled() || self.may_occur_in(haystack)
    }

    /// Whether a match may lie in `text`: one of the needles is in it (or no needles are
    /// known). `false` means no match anywhere in `text`, at any size.
    pub fn may_occur_in(&self, text: &str) -> bool {
        let hay = text.as_bytes();
        self.needles.is_empty()
            || self
                .needles
                .iter()
                .any(|n| memchr::memmem::find(hay, n).is_some())
    }

    /// [`Regex::is_match`], without compiling when no needle is in `haystack`.
    pub fn is_match(&self, haystack: &str) -> bool {
        self.may_match(haystack) && self.regex().is_match(haystack)
    }

    /// [`Regex::find`], without compiling when no needle is in `haystack`.
    pub fn find<'h>(&self, haystack: &'h str) -> Option<Match<'h>> {
        if !self.may_match(haystack) {
            return None;
        }
        self.regex().find(haystack)
    }

    /// [`Regex::find_iter`], without compiling when no needle is in `haystack`.
    pub fn find_iter<'r, 'h>(
        &'r self,
        haystack: &'h str,
    ) -> std::iter::Flatten<std::option::IntoIter<Matches<'r, 'h>>> {
        self.may_match(haystack)
            .then(|| self.regex().find_iter(haystack))
            .into_iter()
            .flatten()
    }

    /// [`Regex::find_at`], without compiling when no needle is in `haystack[start..]` (a match
    /// found from `start` lies there, needle and all).
    pub fn find_at<'h>(&self, haystack: &'h str, start: usize) -> Option<Match<'h>> {
        if let Some(rest) = haystack.get(start..)
            && !self.may_match(rest)
        {
            return None;
        }
        self.regex().find_at(haystack, start)
    }
}

impl From<Regex> for LazyRegex {
    /// Keep an already compiled regex (and find its needles).
    fn from(regex: Regex) -> LazyRegex {
        LazyRegex {
            pattern: regex.as_str().to_string(),
            needles: needles(regex.as_str()),
            compiled: Arc::new(OnceLock::from(regex)),
        }
    }
}

impl Deref for LazyRegex {
    type Target = Regex;
    fn deref(&self) -> &Regex {
        self.regex()
    }
}

impl fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.pattern).finish()
    }
}

impl PartialEq for LazyRegex {
    fn eq(&self, other: &LazyRegex) -> bool {
        self.pattern == other.pattern && self.needles == other.needles
    }
}

/// `pattern` compiled with ASCII word boundaries (see the module doc).
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&ascii_word_boundaries(pattern))
}

/// `pattern` with each `\b` / `\B` outside a character class written `(?-u:\b)` / `(?-u:\B)`.
///
/// Written by hand because the regex crate offers no switch for this alone (turning Unicode
/// off for the whole pattern would also change `.`, `\w` and `\s` and is refused for `&str`
/// regexes where a match could split a UTF-8 sequence). An escaped backslash (`\\b`) is kept.
pub fn ascii_word_boundaries(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains("\\b") && !pattern.contains("\\B") {
        return std::borrow::Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    // Depth of nested character classes, and whether the class just opened (where a `]` is a
    // literal, as in `[]a]` or `[^]a]`).
    let mut class_depth = 0usize;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::take(&mut class_start);
        match c {
            '\\' => match chars.next() {
                Some(b @ ('b' | 'B')) if class_depth == 0 => {
                    out.push_str("(?-u:\\");
                    out.push(b);
                    out.push(')');
                }
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '[' => {
                class_depth += 1;
                class_start = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
            }
            ']' if class_depth > 0 && !at_class_start => {
                class_depth -= 1;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Literals one of which every match of `pattern` contains: its prefix literals, else its
/// suffix literals, when that set is finite, small and has no empty literal; else none.
fn needles(pattern: &str) -> Vec<Vec<u8>> {
    let Ok(hir) = regex_syntax::parse(pattern) else {
        return Vec::new();
    };
    for kind in [ExtractKind::Prefix, ExtractKind::Suffix] {
        let mut seq = Extractor::new().kind(kind).extract(&hir);
        seq.dedup();
        if let Some(lits) = seq.literals()
            && !lits.is_empty()
            && lits.len() <= MAX_NEEDLES
            && lits.iter().all(|l| !l.as_bytes().is_empty())
        {
            return lits.iter().map(|l| l.as_bytes().to_vec()).collect();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(pattern: &str) -> LazyRegex {
        // As the embedded knowledge base has it: pattern and needles, not compiled.
        let built = LazyRegex::new(pattern).expect("valid");
        let bytes = postcard::to_allocvec(&built).expect("serialises");
        postcard::from_bytes(&bytes).expect("reads back")
    }

    #[test]
    fn word_boundaries_become_ascii_outside_classes_only() {
        let a = |p: &str| ascii_word_boundaries(p).into_owned();
        assert_eq!(a(r"\bfoo\B"), r"(?-u:\b)foo(?-u:\B)");
        assert_eq!(a(r"no boundary"), "no boundary");
        // An escaped backslash before `b` is a literal backslash and a `b`.
        assert_eq!(a(r"C:\\bin\b"), r"C:\\bin(?-u:\b)");
        // Inside a class (and a class whose first member is `]`) nothing changes.
        assert_eq!(a(r"[\b\]x]\b"), r"[\b\]x](?-u:\b)");
        assert_eq!(a(r"[]\b]\b"), r"[]\b](?-u:\b)");
        assert_eq!(a(r"[^]a[b]]\bz"), r"[^]a[b]](?-u:\b)z");
        assert_eq!(a("\\"), "\\");
    }

    #[test]
    fn ascii_boundaries_match_as_before_on_ascii_and_fast_on_bars() {
        let re = LazyRegex::new(r"\bError\b").expect("valid");
        assert!(!re.is_match("RuntimeError: x"));
        assert!(re.is_match("Error: x"));
        assert!(re.is_match("█ Error █"));
        assert!(!re.is_match("█Errorx"));
        // Unicode letters next to the word are not word characters for the ASCII boundary.
        assert!(re.is_match("éError"));
    }

    #[test]
    fn needles_are_prefix_or_suffix_literals() {
        let n = |p: &str| -> Vec<String> {
            needles(p)
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect()
        };
        assert_eq!(
            n(r"custom_all_reduce\.cuh:\d+ 'invalid argument'"),
            ["custom_all_reduce.cuh:"]
        );
        assert_eq!(n(r"\brank \d+ nranks"), ["rank "]);
        // No prefix (a Unicode class starts it): the suffix.
        assert_eq!(
            n(r"\d+ leaked shared_memory objects"),
            [" leaked shared_memory objects"]
        );
        assert_eq!(
            n(r"(torch\.OutOfMemoryError|RuntimeError): CUDA"),
            ["torch.OutOfMemoryError: CUDA", "RuntimeError: CUDA"]
        );
        // Nothing finite on either side.
        assert!(n(r"\w+ and \w+").is_empty());
        assert!(n(r"a|\d").is_empty());
    }

    #[test]
    fn a_text_without_needles_is_answered_without_compiling() {
        let r = lazy(r"custom_all_reduce\.cuh:\d+ 'invalid argument'");
        assert!(!r.is_compiled());
        assert!(!r.is_match("INFO all fine"));
        assert_eq!(r.find("INFO all fine"), None);
        assert_eq!(r.find_iter("INFO all fine").count(), 0);
        assert_eq!(
            r.find_at("custom_all_reduce.cuh:1 'invalid argument' then", 5),
            None
        );
        assert!(!r.is_compiled());
        // A clone shares the compiled regex.
        let copy = r.clone();
        assert!(copy.is_match("x custom_all_reduce.cuh:12 'invalid argument'"));
        assert!(r.is_compiled());
        assert!(!r.is_match("custom_all_reduce.cuh: 'invalid argument'"));
        assert_eq!(
            r.find_at("ab custom_all_reduce.cuh:1 'invalid argument'", 1)
                .map(|m| m.start()),
            Some(3)
        );
    }

    #[test]
    fn gated_and_compiled_answers_agree() {
        let patterns = [
            r"custom_all_reduce\.cuh:\d+ 'invalid argument'",
            r"\brank \d+ nranks \d+ cudaDev \d+\b.*Init COMPLETE",
            r"(?i)out of memory",
            r"\d+ leaked shared_memory objects",
            r"^\s*$",
        ];
        let texts = [
            "",
            "rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
            "xrank 0 nranks 2 cudaDev 0 - Init COMPLETE",
            "CUDA Out Of Memory",
            "There appear to be 3 leaked shared_memory objects",
            "custom_all_reduce.cuh:368 'invalid argument'",
            "   ",
            "nothing here",
        ];
        for p in patterns {
            let reference = Regex::new(p).expect("valid");
            for t in texts {
                let r = lazy(p);
                assert_eq!(r.is_match(t), reference.is_match(t), "{p:?} on {t:?}");
                let r = lazy(p);
                assert_eq!(
                    r.find_iter(t).map(|m| m.range()).collect::<Vec<_>>(),
                    reference
                        .find_iter(t)
                        .map(|m| m.range())
                        .collect::<Vec<_>>(),
                    "{p:?} on {t:?}"
                );
                let r = lazy(p);
                assert_eq!(
                    r.find(t).map(|m| m.range()),
                    reference.find(t).map(|m| m.range()),
                    "{p:?} on {t:?}"
                );
                for start in 0..=t.len() {
                    let r = lazy(p);
                    assert_eq!(
                        r.find_at(t, start).map(|m| m.range()),
                        reference.find_at(t, start).map(|m| m.range()),
                        "{p:?} on {t:?} from {start}"
                    );
                }
            }
        }
    }

    #[test]
    fn other_methods_compile_through_deref() {
        let r = lazy(r"(\d+) leaked");
        let caps = r.captures("3 leaked").expect("matches");
        assert_eq!(&caps[1], "3");
        assert_eq!(r.as_str(), r"(\d+) leaked");
    }
}
