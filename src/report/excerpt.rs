//! The lines around a finding's matched log lines, so a report quotes each match in its
//! context: from the Python traceback it belongs to (its `Traceback (most recent call last):`
//! line, when one starts shortly before), else a few lines before, and a few lines after.
//! Nearby matches share one excerpt.

use crate::engine::classify::LogText;
use serde::{Deserialize, Serialize};

/// Lines quoted before a match that is not in a traceback.
pub const BEFORE: usize = 3;
/// Lines quoted after a match.
pub const AFTER: usize = 2;
/// How far back a traceback's first line is looked for (and the most quoted before a match).
pub const TRACEBACK_REACH: usize = 25;
/// Longest quoted line, in characters (longer ones are cut with "…").
pub const MAX_LINE: usize = 300;

/// A run of consecutive lines of one log, with the matched ones named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LogExcerpt {
    pub file: String,
    /// 1-based number of the first line.
    pub first_line: usize,
    pub lines: Vec<String>,
    /// 1-based numbers of the matched lines in it.
    pub matched: Vec<usize>,
}

fn cut(line: &str) -> String {
    if line.chars().count() <= MAX_LINE {
        return line.to_string();
    }
    let mut s: String = line.chars().take(MAX_LINE - 1).collect();
    s.push('…');
    s
}

/// Where the context of a match on (1-based) line `n` starts: the traceback's first line when
/// one starts within reach and the traceback has not ended before `n`, else `BEFORE` lines up.
fn context_start(lines: &Window, n: usize) -> usize {
    let idx = n - 1;
    let reach = idx.saturating_sub(TRACEBACK_REACH);
    for i in (reach..idx).rev() {
        let l = lines.get(i + 1);
        if l.contains("Traceback (most recent call last):") {
            return i + 1;
        }
        // A blank line ends a traceback.
        if l.trim().is_empty() {
            break;
        }
    }
    n.saturating_sub(BEFORE).max(1)
}

/// The lines of a log an excerpt may quote (from [`TRACEBACK_REACH`] before each matched line
/// to [`AFTER`] after it), by 1-based number, and how many lines the log has: a crash-looping
/// log has millions of lines, and a slice of them all cost 16 bytes a line.
struct Window<'a> {
    kept: std::collections::BTreeMap<usize, &'a str>,
    total: usize,
}

impl<'a> Window<'a> {
    /// `ns`: the matched lines, sorted.
    fn new(text: &'a str, ns: &[usize]) -> Self {
        let mut kept = std::collections::BTreeMap::new();
        let mut total = 0;
        let mut j = 0;
        for (i, l) in text.lines().enumerate() {
            let n = i + 1;
            total = n;
            while j < ns.len() && ns[j] + AFTER < n {
                j += 1;
            }
            if j < ns.len() && ns[j].saturating_sub(TRACEBACK_REACH) <= n {
                kept.insert(n, l);
            }
        }
        Window { kept, total }
    }

    /// Line `n` (1-based); empty past the kept ones.
    fn get(&self, n: usize) -> &'a str {
        self.kept.get(&n).copied().unwrap_or("")
    }
}

/// The excerpts of `matched` (file, 1-based line) in `logs`, merged where they touch.
pub(crate) fn excerpts(logs: &[LogText], matched: &[(String, usize)]) -> Vec<LogExcerpt> {
    let mut out = Vec::new();
    for log in logs {
        let mut ns: Vec<usize> = matched
            .iter()
            .filter(|(f, _)| *f == log.name)
            .map(|(_, n)| *n)
            .collect();
        if ns.is_empty() {
            continue;
        }
        ns.sort_unstable();
        ns.dedup();
        let lines = Window::new(&log.text, &ns);
        let mut ranges: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for n in ns.into_iter().filter(|n| (1..=lines.total).contains(n)) {
            let start = context_start(&lines, n);
            let end = (n + AFTER).min(lines.total);
            match ranges.last_mut() {
                Some(last) if start <= last.1 + 1 => {
                    last.1 = last.1.max(end);
                    last.2.push(n);
                }
                _ => ranges.push((start, end, vec![n])),
            }
        }
        for (start, end, matched) in ranges {
            out.push(LogExcerpt {
                file: log.name.clone(),
                first_line: start,
                lines: (start..=end).map(|n| cut(lines.get(n))).collect(),
                matched,
            });
        }
    }
    out
}

/// The excerpt as text: each line with its number, matched lines marked `>`.
pub fn render(e: &LogExcerpt) -> String {
    let width = (e.first_line + e.lines.len().saturating_sub(1))
        .to_string()
        .len();
    let mut out = String::new();
    for (i, l) in e.lines.iter().enumerate() {
        let n = e.first_line + i;
        let mark = if e.matched.contains(&n) { '>' } else { ' ' };
        out.push_str(&format!("{mark} {n:>width$}  {l}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(text: &str) -> Vec<LogText> {
        vec![LogText {
            name: "x.log".into(),
            text: text.into(),
        }]
    }

    #[test]
    fn a_match_in_a_traceback_is_quoted_from_the_traceback() {
        let text = "start\nok\n\nTraceback (most recent call last):\n  File \"a.py\", line 1\n  File \"b.py\", line 2\nRuntimeError: Unknown recipe\nafter 1\nafter 2\nafter 3\n";
        let e = excerpts(&log(text), &[("x.log".into(), 7)]);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].first_line, 4);
        assert_eq!(
            e[0].lines.first().map(String::as_str),
            Some("Traceback (most recent call last):")
        );
        assert_eq!(e[0].lines.last().map(String::as_str), Some("after 2"));
        assert_eq!(e[0].matched, vec![7]);
        let r = render(&e[0]);
        assert!(r.contains("> 7  RuntimeError: Unknown recipe\n"), "{r}");
        assert!(r.starts_with("  4  Traceback"), "{r}");
    }

    #[test]
    fn plain_matches_get_a_few_lines_around_and_nearby_ones_share() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let e = excerpts(
            &log(&text),
            &[
                ("x.log".into(), 5),
                ("x.log".into(), 7),
                ("x.log".into(), 18),
            ],
        );
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].first_line, e[0].lines.len()), (2, 8));
        assert_eq!(e[0].matched, vec![5, 7]);
        assert_eq!((e[1].first_line, e[1].lines.len()), (15, 6));
        // Another log's match and a line past the end quote nothing.
        assert!(excerpts(&log(&text), &[("y.log".into(), 1), ("x.log".into(), 99)]).is_empty());
    }
}
