//! The literals one of which every match of a pattern holds ([`required_literals`]): the
//! classifier's prefilter searches a log for these before it runs any signature's regex.
//!
//! Kept here, beside the loader, so that the embedded knowledge base carries each signature's
//! set (computed in build.rs): parsing the patterns again at every start cost a fifth of
//! `check --demo`'s instructions. A `--kb DIR` is analysed when it loads.
//!
//! Written by hand: regex-syntax's own extractor gives prefix and suffix sets only, and a
//! pattern such as `\d+ leaked objects` has neither that is useful.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most literals a product of fixed parts may make.
const MAX_SET: usize = 64;
/// Most literals the alternatives of a pattern may need together.
const MAX_UNION: usize = 128;
/// Literals shorter than this make too many hits to be worth a prefilter.
pub const MIN_NEEDLE: usize = 3;

/// Literals one of which every match of `pattern` holds, each at least [`MIN_NEEDLE`] bytes,
/// or `None` when no such set is known (then the pattern must be searched as a regex).
///
/// Unlike a prefix or suffix set this looks inside: of a concatenation it takes the best of its
/// parts (a run of fixed parts multiplied out, or what one part requires), so
/// `not (yet )?supported for \w+` gives `not yet supported for ` / `not supported for `.
pub fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::parse(pattern).ok()?;
    let mut set = required(literals(&hir))?;
    minimise(&mut set);
    (set.iter().all(|l| l.len() >= MIN_NEEDLE) && set.len() <= MAX_UNION).then_some(set)
}

/// What a sub-pattern says about the text it matches.
enum Lits {
    /// It matches exactly one of these strings.
    Exact(Vec<Vec<u8>>),
    /// Each of its matches holds one of these (`None`: nothing known).
    Within(Option<Vec<Vec<u8>>>),
}

fn required(l: Lits) -> Option<Vec<Vec<u8>>> {
    match l {
        Lits::Exact(v) => (!v.iter().any(Vec::is_empty)).then_some(v),
        Lits::Within(v) => v,
    }
}

fn literals(h: &Hir) -> Lits {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Lits::Exact(vec![Vec::new()]),
        HirKind::Literal(l) => Lits::Exact(vec![l.0.to_vec()]),
        HirKind::Class(c) => class_literals(c).map_or(Lits::Within(None), Lits::Exact),
        HirKind::Capture(c) => literals(&c.sub),
        HirKind::Repetition(r) => {
            let sub = literals(&r.sub);
            match (r.min, r.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => match sub {
                    Lits::Exact(mut v) => {
                        v.push(Vec::new());
                        dedup(&mut v);
                        Lits::Exact(v)
                    }
                    Lits::Within(_) => Lits::Within(None),
                },
                (0, _) => Lits::Within(None),
                _ => Lits::Within(required(sub)),
            }
        }
        HirKind::Alternation(subs) => {
            let parts: Vec<Lits> = subs.iter().map(literals).collect();
            if parts.iter().all(|p| matches!(p, Lits::Exact(_))) {
                let mut all: Vec<Vec<u8>> = parts
                    .into_iter()
                    .flat_map(|p| match p {
                        Lits::Exact(v) => v,
                        Lits::Within(_) => Vec::new(),
                    })
                    .collect();
                dedup(&mut all);
                if all.len() <= MAX_SET {
                    return Lits::Exact(all);
                }
                if all.iter().any(Vec::is_empty) {
                    return Lits::Within(None);
                }
                minimise(&mut all);
                return Lits::Within((all.len() <= MAX_UNION).then_some(all));
            }
            let mut all = Vec::new();
            for p in parts {
                match required(p) {
                    Some(v) => all.extend(v),
                    None => return Lits::Within(None),
                }
            }
            minimise(&mut all);
            Lits::Within((all.len() <= MAX_UNION).then_some(all))
        }
        HirKind::Concat(subs) => {
            let mut best: Option<Vec<Vec<u8>>> = None;
            let mut run: Vec<Vec<u8>> = vec![Vec::new()];
            let mut exact = true;
            for s in subs {
                match literals(s) {
                    Lits::Exact(v) => match cross(&run, &v) {
                        Some(r) => run = r,
                        None => {
                            exact = false;
                            consider(&mut best, std::mem::replace(&mut run, v));
                        }
                    },
                    Lits::Within(w) => {
                        exact = false;
                        consider(&mut best, std::mem::replace(&mut run, vec![Vec::new()]));
                        if let Some(w) = w {
                            consider(&mut best, w);
                        }
                    }
                }
            }
            if exact {
                return Lits::Exact(run);
            }
            consider(&mut best, run);
            Lits::Within(best)
        }
    }
}

/// The strings a small class matches (a case-insensitive letter, `[Cc]`, `[01]`).
fn class_literals(c: &Class) -> Option<Vec<Vec<u8>>> {
    const MAX_CLASS: u32 = 8;
    match c {
        Class::Unicode(u) => {
            let n: u32 = u
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            (n <= MAX_CLASS).then(|| {
                u.iter()
                    .flat_map(|r| (r.start()..=r.end()).map(|ch| ch.to_string().into_bytes()))
                    .collect()
            })
        }
        Class::Bytes(b) => {
            let n: u32 = b
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            (n <= MAX_CLASS).then(|| {
                b.iter()
                    .flat_map(|r| (r.start()..=r.end()).map(|x| vec![x]))
                    .collect()
            })
        }
    }
}

/// Every `a` followed by every `b`, unless that makes too many.
fn cross(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    let mut out: Vec<Vec<u8>> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat()))
        .collect();
    dedup(&mut out);
    Some(out)
}

fn dedup(v: &mut Vec<Vec<u8>>) {
    v.sort();
    v.dedup();
}

/// Drop each literal that holds another one of the set: a text holding it holds the other, so
/// the set requires the same and is searched with fewer needles.
fn minimise(v: &mut Vec<Vec<u8>>) {
    v.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
    v.dedup();
    let mut kept: Vec<Vec<u8>> = Vec::with_capacity(v.len());
    for l in v.drain(..) {
        let holds_kept = kept
            .iter()
            .any(|k| !k.is_empty() && l.windows(k.len()).any(|w| w == k.as_slice()));
        if !holds_kept {
            kept.push(l);
        }
    }
    kept.sort();
    *v = kept;
}

/// Keep the better of two requirement sets (a set holding the empty string requires nothing).
fn consider(best: &mut Option<Vec<Vec<u8>>>, mut cand: Vec<Vec<u8>>) {
    if cand.is_empty() || cand.iter().any(Vec::is_empty) || cand.len() > MAX_UNION {
        return;
    }
    minimise(&mut cand);
    if best
        .as_ref()
        .is_none_or(|b| set_score(&cand) > set_score(b))
    {
        *best = Some(cand);
    }
}

/// How selective a set is: its weakest literal, less a little for each literal more.
fn set_score(set: &[Vec<u8>]) -> f32 {
    let weakest = set.iter().map(|l| rarity(l)).fold(f32::INFINITY, f32::min);
    weakest - (set.len() as f32).log2() * 0.5
}

/// A rough rarity of a literal in log text: the sum of its bytes' rarity.
pub fn rarity(lit: &[u8]) -> f32 {
    lit.iter().map(|&b| byte_rarity(b)).sum()
}

/// Lower-case letters, digits and spaces fill log lines; capitals, most punctuation and
/// non-ASCII bytes are rarer.
fn byte_rarity(b: u8) -> f32 {
    match b {
        b' ' => 0.3,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 0.6,
        b'0'..=b'9' => 0.6,
        b'a'..=b'z' => 1.0,
        b'.' | b':' | b'/' | b'_' | b'-' | b'=' | b',' | b'[' | b']' | b'(' | b')' => 1.0,
        b'A'..=b'Z' => 1.5,
        0x80.. => 2.0,
        _ => 1.8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(p: &str) -> Option<Vec<String>> {
        required_literals(p).map(|v| {
            v.into_iter()
                .map(|l| String::from_utf8_lossy(&l).into_owned())
                .collect()
        })
    }

    #[test]
    fn required_literals_look_inside_the_pattern() {
        assert_eq!(req(r"\brank \d+ nranks"), Some(vec![" nranks".into()]));
        assert_eq!(
            req(r"not (yet )?supported for (Blackwell|SM ?12[0-9])\b"),
            Some(vec![
                "not supported for ".into(),
                "not yet supported for ".into()
            ])
        );
        assert_eq!(
            req(r"[Cc]uda error\b"),
            Some(vec!["Cuda error".into(), "cuda error".into()])
        );
        // An alternative with no literal, or a literal too short: nothing is required.
        assert_eq!(req(r"foo bar|\d+"), None);
        assert_eq!(req(r"\d+ x"), None);
        assert_eq!(req(r"(abc)*"), None);
        // Every alternative's own best.
        assert_eq!(
            req(r"\d+ leaked objects|GB10\b"),
            Some(vec![" leaked objects".into(), "GB10".into()])
        );
    }

    /// Each required set is found in every match of its pattern (the prefilter's soundness).
    #[test]
    fn every_match_holds_a_required_literal() {
        let cases = [
            (
                r"RTX[\s_]?50[5-9]0|GB10\b|(sm|SM)_?12[01]([^-]|$)",
                "an RTX 5090 and sm_120a and GB10",
            ),
            (
                r"(?i)cuda error: (an )?illegal",
                "CUDA Error: an illegal x; cuda error: illegal",
            ),
            (
                r"Assertion `.*` failed\.?|device-side assert(ion)? triggered",
                "Assertion `x` failed. device-side assertion triggered",
            ),
        ];
        for (p, text) in cases {
            let set = required_literals(p).unwrap_or_else(|| panic!("{p}"));
            let re = regex::Regex::new(p).expect("valid");
            let mut n = 0;
            for m in re.find_iter(text) {
                n += 1;
                let s = m.as_str().as_bytes();
                assert!(
                    set.iter()
                        .any(|l| s.windows(l.len()).any(|w| w == l.as_slice())),
                    "{p}: {:?} holds none of {set:?}",
                    m.as_str()
                );
            }
            assert!(n > 0, "{p}");
        }
    }
}
