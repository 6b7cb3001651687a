//! The literal prefilter of the streamed scan: one search that finds every occurrence of a set
//! of literals ("needles") in a block ([`NeedleScan`]). Which literals a signature's every match
//! holds is decided when the knowledge base loads ([`crate::kb::literals::required_literals`]).
//!
//! Speed: a byte-at-a-time automaton over hundreds of needles runs at about 2 ns a byte, slower
//! than `grep -E` over the whole log. So each needle is reduced to a short fingerprint (one of
//! its 4-byte substrings: the one least seen in a sample of the log, shared between needles
//! where it can be), the distinct fingerprints are searched with SIMD (Teddy, at most 64 to a
//! pass), and a fingerprint hit is checked against the needles that hold it at that offset.
//! Which fingerprints are chosen changes only the speed, never what is found.

use crate::kb::literals::rarity;
use aho_corasick::packed;

/// Longest fingerprint; Teddy looks at no more than 4 bytes of a pattern.
const FINGERPRINT: usize = 4;
/// Patterns a Teddy pass takes.
const PASS: usize = 64;
/// Bytes of the sample that fingerprints are counted in.
const SAMPLE: usize = 256 << 10;

/// A set of indexes below 256 (the signatures or run-sign entries that own a needle); beyond,
/// every index is a member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Members([u64; 4]);

impl Members {
    pub const ALL: Members = Members([u64::MAX; 4]);
    pub fn insert(&mut self, i: usize) {
        match self.0.get_mut(i / 64) {
            Some(w) => *w |= 1 << (i % 64),
            None => *self = Members::ALL,
        }
    }
    pub fn union(&mut self, o: &Members) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
    }
    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_none_or(|w| w & (1 << (i % 64)) != 0)
    }
}

/// One search for every occurrence of a set of needles.
///
/// A short text (the few KiB of a start-up log) is searched needle by needle with memchr's
/// `memmem`: building the fingerprint passes (or an automaton) costs far more than that search,
/// and was a tenth of `check --demo`. The passes are built for the first text above
/// [`SMALL_WORK`], tuned to the sample given to [`NeedleScan::new`] when it is that long, else to
/// that text. Either way every occurrence is found: the choice changes only the speed.
pub struct NeedleScan {
    needles: Vec<Vec<u8>>,
    /// The passes (or the automaton) once built: by `new` for a long sample, else for the first
    /// long text. `Some(None)`: they would not build; each needle is then searched on its own.
    search: std::sync::OnceLock<Option<Search>>,
}

/// Needle-by-needle search while needles × text bytes stay within this.
const SMALL_WORK: usize = 1 << 20;

enum Search {
    /// Teddy passes over the fingerprints.
    Fingerprints(Vec<Pass>),
    /// No SIMD searcher on this machine: one automaton over the needles themselves.
    Automaton(aho_corasick::AhoCorasick),
}

/// The needles holding one fingerprint: (needle, offset of the fingerprint in it).
type Holders = Vec<(u32, u32)>;

struct Pass {
    searcher: packed::Searcher,
    fingerprints: Vec<Vec<u8>>,
    /// Per fingerprint: the needles that hold it, and where.
    holders: Vec<Holders>,
    /// Per fingerprint: the other fingerprints of this pass that are a prefix of it or that it
    /// is a prefix of (a search reports one pattern per position).
    related: Vec<Vec<u32>>,
}

impl Search {
    /// The passes tuned to `sample`, or the automaton without SIMD (`None`: it would not build;
    /// then each needle is searched on its own).
    fn new(needles: &[Vec<u8>], sample: &[u8]) -> Option<Search> {
        match fingerprint_passes(needles, sample) {
            Some(passes) => Some(Search::Fingerprints(passes)),
            None => aho_corasick::AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(needles)
                .ok()
                .map(Search::Automaton),
        }
    }
}

impl NeedleScan {
    /// `None` when there are no needles or one is empty. `sample`: text like the text to be
    /// searched (the start of the log), to choose fingerprints it seldom holds.
    pub fn new(needles: Vec<Vec<u8>>, sample: &[u8]) -> Option<NeedleScan> {
        if needles.is_empty() || needles.iter().any(Vec::is_empty) {
            return None;
        }
        let search = std::sync::OnceLock::new();
        if !is_small(&needles, sample) {
            let _ = search.set(Search::new(&needles, sample));
        }
        Some(NeedleScan { needles, search })
    }

    pub fn needles(&self) -> &[Vec<u8>] {
        &self.needles
    }

    /// The fingerprints of each pass (empty without SIMD, or while only short texts were
    /// searched), for the benchmark's report.
    pub fn fingerprints(&self) -> Vec<Vec<Vec<u8>>> {
        match self.search.get() {
            Some(Some(Search::Fingerprints(p))) => {
                p.iter().map(|p| p.fingerprints.clone()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Every occurrence of every needle in `hay`, as (start, needle index), ordered by start
    /// then needle; `out` is cleared first.
    pub fn find_all(&self, hay: &[u8], out: &mut Vec<(usize, u32)>) {
        out.clear();
        let search = match self.search.get() {
            Some(s) => s.as_ref(),
            None if is_small(&self.needles, hay) => None,
            None => self
                .search
                .get_or_init(|| Search::new(&self.needles, hay))
                .as_ref(),
        };
        match search {
            Some(Search::Automaton(ac)) => {
                out.extend(
                    ac.find_overlapping_iter(hay)
                        .map(|m| (m.start(), m.pattern().as_u32())),
                );
            }
            Some(Search::Fingerprints(passes)) => {
                for pass in passes {
                    self.run_pass(pass, hay, out);
                }
            }
            None => find_each(&self.needles, hay, out),
        }
        out.sort_unstable();
    }

    fn run_pass(&self, pass: &Pass, hay: &[u8], out: &mut Vec<(usize, u32)>) {
        let mut at = 0usize;
        while at < hay.len() {
            let Some(m) = pass
                .searcher
                .find_in(hay, aho_corasick::Span::from(at..hay.len()))
            else {
                break;
            };
            let p = m.start();
            let found = m.pattern().as_usize();
            self.check(pass, found, hay, p, out);
            for &r in &pass.related[found] {
                if hay[p..].starts_with(&pass.fingerprints[r as usize]) {
                    self.check(pass, r as usize, hay, p, out);
                }
            }
            at = p + 1;
        }
    }

    /// The needles holding fingerprint `fp` that are in `hay` around its hit at `p`.
    fn check(&self, pass: &Pass, fp: usize, hay: &[u8], p: usize, out: &mut Vec<(usize, u32)>) {
        for &(needle, offset) in &pass.holders[fp] {
            let Some(start) = p.checked_sub(offset as usize) else {
                continue;
            };
            if hay[start..].starts_with(&self.needles[needle as usize]) {
                out.push((start, needle));
            }
        }
    }
}

/// Whether `text` is short enough to search for each needle on its own.
fn is_small(needles: &[Vec<u8>], text: &[u8]) -> bool {
    needles.len().saturating_mul(text.len()) <= SMALL_WORK
}

/// Every occurrence of each needle in `hay`, overlapping ones too (memmem's own iterator skips
/// those), appended unordered as (start, needle index).
fn find_each(needles: &[Vec<u8>], hay: &[u8], out: &mut Vec<(usize, u32)>) {
    for (k, needle) in needles.iter().enumerate() {
        let finder = memchr::memmem::Finder::new(needle);
        let mut at = 0usize;
        while let Some(p) = hay.get(at..).and_then(|rest| finder.find(rest)) {
            out.push((at + p, k as u32));
            at += p + 1;
        }
    }
}

/// A small fast hash for the fingerprints' packed keys (SipHash was most of choosing them).
#[derive(Default)]
struct KeyHash(u64);

impl std::hash::Hasher for KeyHash {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type KeyMap = std::collections::HashMap<u64, u32, std::hash::BuildHasherDefault<KeyHash>>;

/// A text of at most [`FINGERPRINT`] bytes as one number (its length in the high half).
fn key(g: &[u8]) -> u64 {
    let mut k = 0u64;
    for &b in g {
        k = (k << 8) | u64::from(b);
    }
    k | ((g.len() as u64) << 32)
}

/// The needles' possible fingerprints, each once, with how often the sample holds each.
struct Grams<'n> {
    /// Per gram id: its bytes and its count in the sample.
    text: Vec<&'n [u8]>,
    count: Vec<u32>,
    /// Per needle: the gram id of each of its windows, in order (the index is the offset).
    of: Vec<Vec<u32>>,
}

impl<'n> Grams<'n> {
    fn new(needles: &'n [Vec<u8>], sample: &[u8]) -> Grams<'n> {
        let mut ids = KeyMap::default();
        let mut text: Vec<&[u8]> = Vec::new();
        // Which 2-byte starts and single bytes begin a gram: most sample positions begin none.
        let mut starts = vec![0u64; 1 << 10];
        let mut singles = [false; 256];
        let of = needles
            .iter()
            .map(|n| {
                n.windows(n.len().min(FINGERPRINT))
                    .map(|g| {
                        let next = text.len() as u32;
                        let id = *ids.entry(key(g)).or_insert(next);
                        if id == next {
                            text.push(g);
                            match g {
                                [a] => singles[usize::from(*a)] = true,
                                [a, b, ..] => {
                                    let s = usize::from(*a) << 8 | usize::from(*b);
                                    starts[s / 64] |= 1 << (s % 64);
                                }
                                [] => {}
                            }
                        }
                        id
                    })
                    .collect()
            })
            .collect();
        let mut count = vec![0u32; text.len()];
        let sample = &sample[..sample.len().min(SAMPLE)];
        for (i, &a) in sample.iter().enumerate() {
            if singles[usize::from(a)]
                && let Some(&id) = ids.get(&key(&sample[i..=i]))
            {
                count[id as usize] += 1;
            }
            let Some(&b) = sample.get(i + 1) else {
                continue;
            };
            let s = usize::from(a) << 8 | usize::from(b);
            if starts[s / 64] & (1 << (s % 64)) == 0 {
                continue;
            }
            for k in 2..=FINGERPRINT.min(sample.len() - i) {
                if let Some(&id) = ids.get(&key(&sample[i..i + k])) {
                    count[id as usize] += 1;
                }
            }
        }
        Grams { text, count, of }
    }
}

/// Fingerprints for the needles, in Teddy passes; `None` when Teddy is not available.
fn fingerprint_passes(needles: &[Vec<u8>], sample: &[u8]) -> Option<Vec<Pass>> {
    let grams = Grams::new(needles, sample);
    // Fewest in the sample, then rarest by its bytes.
    let rarities: Vec<f32> = grams.text.iter().map(|g| rarity(g)).collect();
    let better = |a: u32, b: u32| {
        let (a, b) = (a as usize, b as usize);
        grams.count[a]
            .cmp(&grams.count[b])
            .then((-rarities[a]).total_cmp(&-rarities[b]))
    };
    // Few fingerprints make few passes: a fingerprint seldom in the sample is taken for as many
    // needles as hold it (greedy set cover); a needle with none such gets its own least seen.
    let sample_len = sample.len().min(SAMPLE);
    let seldom = (sample_len / (64 << 10)) as u32 + 1;
    let mut chosen: Vec<u32> = Vec::new();
    let mut holders: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut open: Vec<usize> = (0..needles.len()).collect();
    let mut tally = vec![0usize; grams.text.len()];
    // The needle (plus one) that last counted each gram: a needle counts a gram once.
    let mut stamp = vec![0usize; grams.text.len()];
    let mut touched: Vec<u32> = Vec::new();
    while !open.is_empty() {
        for &i in &open {
            for &g in &grams.of[i] {
                let gi = g as usize;
                if grams.count[gi] <= seldom && stamp[gi] != i + 1 {
                    stamp[gi] = i + 1;
                    if tally[gi] == 0 {
                        touched.push(g);
                    }
                    tally[gi] += 1;
                }
            }
        }
        let pick = touched.iter().copied().max_by(|&a, &b| {
            tally[a as usize]
                .cmp(&tally[b as usize])
                .then_with(|| better(b, a))
        });
        for g in touched.drain(..) {
            tally[g as usize] = 0;
            stamp[g as usize] = 0;
        }
        let Some(g) = pick else {
            break;
        };
        let mut held = Vec::new();
        open.retain(|&i| match grams.of[i].iter().position(|&w| w == g) {
            Some(o) => {
                held.push((i as u32, o as u32));
                false
            }
            None => true,
        });
        holders.push(held);
        chosen.push(g);
    }
    for i in open {
        let Some((o, g)) = grams.of[i]
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| better(a.1, b.1))
        else {
            continue;
        };
        let fp = match chosen.iter().position(|&c| c == g) {
            Some(c) => c,
            None => {
                chosen.push(g);
                holders.push(Vec::new());
                chosen.len() - 1
            }
        };
        holders[fp].push((i as u32, o as u32));
    }
    let chosen: Vec<Vec<u8>> = chosen
        .into_iter()
        .map(|g| grams.text[g as usize].to_vec())
        .collect();
    // Teddy's masks are as long as the pass's shortest pattern: short fingerprints get passes
    // of their own so that they do not slow the others.
    let mut fps: Vec<(Vec<u8>, Holders)> = chosen.into_iter().zip(holders).collect();
    fps.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    let mut passes = Vec::new();
    let mut fps = fps.into_iter().peekable();
    while fps.peek().is_some() {
        let len = fps.peek().map_or(0, |(f, _)| f.len());
        let mut fingerprints = Vec::new();
        let mut holders = Vec::new();
        while let Some((f, h)) = fps.next_if(|(f, _)| f.len() == len) {
            fingerprints.push(f);
            holders.push(h);
            if fingerprints.len() == PASS {
                break;
            }
        }
        let searcher = packed::Config::new()
            .builder()
            .extend(&fingerprints)
            .build()?;
        let related = fingerprints
            .iter()
            .enumerate()
            .map(|(k, a)| {
                (0..fingerprints.len() as u32)
                    .filter(|&j| {
                        let b = &fingerprints[j as usize];
                        j as usize != k && (b.starts_with(a) || a.starts_with(b))
                    })
                    .collect()
            })
            .collect();
        passes.push(Pass {
            searcher,
            fingerprints,
            holders,
            related,
        });
    }
    Some(passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fingerprint search finds exactly what a plain overlapping search finds.
    #[test]
    fn find_all_reports_every_occurrence() {
        let needles: Vec<Vec<u8>> = [
            "CUDA error",
            "CUDA_ERROR_",
            "CUD",
            "UDA_E",
            "error",
            "rror",
            "[E",
            "E0",
            "E00",
            "Loading weights took ",
            "Capturing CUDA graph",
            "aaa",
            "aaaa",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .chain((0..150).map(|i| format!("needle{i:03}x").into_bytes()))
        .collect();
        let line = "x CUDA error CUDA_ERROR_X [E00 E0 aaaaaa Capturing CUDA graphs needle149x needle007x\nerror rror\n";
        let ac = aho_corasick::AhoCorasick::new(&needles).expect("ac");
        // A short text is searched needle by needle, a long one with the fingerprint passes
        // (built for it, or for a long sample): all find the same.
        let short = line.repeat(3);
        let long = line.repeat(SMALL_WORK / needles.len() / line.len() + 1);
        for (sample, text) in [
            (b"CUDA error needle001x".as_slice(), &short),
            (b"CUDA error needle001x".as_slice(), &long),
            (long.as_bytes(), &short),
        ] {
            let scan = NeedleScan::new(needles.clone(), sample).expect("scan");
            let mut got = Vec::new();
            scan.find_all(text.as_bytes(), &mut got);
            let mut want: Vec<(usize, u32)> = ac
                .find_overlapping_iter(text.as_bytes())
                .map(|m| (m.start(), m.pattern().as_u32()))
                .collect();
            want.sort_unstable();
            assert_eq!(got, want);
            assert!(got.len() > 30);
            let built = !scan.fingerprints().is_empty();
            assert_eq!(built, sample.len() > 100 || text.len() > short.len());
        }
    }

    #[test]
    fn a_short_text_is_searched_without_building_the_passes() {
        let needles = vec![b"aa".to_vec(), b"b".to_vec()];
        let scan = NeedleScan::new(needles, b"ab").expect("scan");
        let mut got = Vec::new();
        scan.find_all(b"aaab", &mut got);
        assert_eq!(got, vec![(0, 0), (1, 0), (3, 1)]);
        assert!(scan.search.get().is_none());
    }
}
