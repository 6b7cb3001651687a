//! Where every line of the given logs is (built once when the logs change): the display rows
//! (a header per log, then its lines), the matched rows, and the search over them. Plain data,
//! used by the state (`state/app/`) and drawn by `view/log.rs`.

use crate::engine::classify::{Classification, LogText};
use std::collections::HashMap;

/// One display row: a log's header, or one of its lines (log index, 0-based line index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowRef {
    Header(usize),
    Line(usize, usize),
}

/// Where every line of the given logs is, and which ones matched a signature.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogIndex {
    /// Per log, each line's byte range in its text.
    lines: Vec<Vec<(usize, usize)>>,
    pub rows: Vec<RowRef>,
    /// Rows of matched lines, in order.
    pub matched: Vec<usize>,
    /// Row → index of its match in the classification.
    pub match_of: HashMap<usize, usize>,
    /// Digits of the longest line number (for the gutter).
    pub digits: usize,
}

impl LogIndex {
    pub fn build(logs: &[LogText], c: &Classification) -> LogIndex {
        let mut idx = LogIndex::default();
        let mut first_row: HashMap<&str, usize> = HashMap::new();
        let mut most = 0;
        for (i, log) in logs.iter().enumerate() {
            let mut ranges = Vec::new();
            let mut start = 0;
            let bytes = log.text.as_bytes();
            while start < bytes.len() {
                let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
                let line_end = if end > start && bytes[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
                ranges.push((start, line_end));
                start = end + 1;
            }
            first_row.entry(log.name.as_str()).or_insert(idx.rows.len());
            idx.rows.push(RowRef::Header(i));
            idx.rows
                .extend((0..ranges.len()).map(|n| RowRef::Line(i, n)));
            most = most.max(ranges.len());
            idx.lines.push(ranges);
        }
        for (k, m) in c.matches.iter().enumerate() {
            let Some(&head) = first_row.get(m.file.as_str()) else {
                continue;
            };
            let row = head + m.line;
            if m.line >= 1 && row < idx.rows.len() && !idx.match_of.contains_key(&row) {
                idx.match_of.insert(row, k);
                idx.matched.push(row);
            }
        }
        idx.matched.sort_unstable();
        idx.digits = most.to_string().len().max(4);
        idx
    }

    /// The text of a line row ("" for a header).
    pub fn text<'a>(&self, logs: &'a [LogText], row: usize) -> &'a str {
        match self.rows.get(row) {
            Some(RowRef::Line(i, n)) => match (logs.get(*i), self.lines.get(*i)) {
                (Some(log), Some(r)) => {
                    let (a, b) = r[*n];
                    log.text.get(a..b).unwrap_or("")
                }
                _ => "",
            },
            _ => "",
        }
    }

    /// Lines in log `i`.
    pub(crate) fn line_count(&self, i: usize) -> usize {
        self.lines.get(i).map_or(0, Vec::len)
    }

    /// The rows whose text contains `query` (ASCII case ignored).
    pub fn search(&self, logs: &[LogText], query: &str) -> Vec<usize> {
        if query.is_empty() {
            return Vec::new();
        }
        let lower = query.to_lowercase();
        (0..self.rows.len())
            .filter(|&r| contains_ci(self.text(logs, r), query, &lower))
            .collect()
    }
}

/// Does `hay` contain `needle`, case ignored (ASCII without allocating)?
fn contains_ci(hay: &str, needle: &str, needle_lower: &str) -> bool {
    if needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    } else {
        hay.to_lowercase().contains(needle_lower)
    }
}

/// Where a hit occurs in `hay` (byte range), case ignored, for highlighting.
pub(crate) fn find_ci(hay: &str, needle: &str) -> Option<(usize, usize)> {
    if needle.is_empty() || !needle.is_ascii() {
        return None;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..=h.len().checked_sub(n.len())?)
        .find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n) && hay.is_char_boundary(i))
        .filter(|&i| hay.is_char_boundary(i + n.len()))
        .map(|i| (i, i + n.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::classify::LogMatch;

    fn logs() -> Vec<LogText> {
        vec![
            LogText {
                name: "a.log".into(),
                text: "one\r\ntwo ERROR here\nthree\n".into(),
            },
            LogText {
                name: "pasted".into(),
                text: "x\ny error".into(),
            },
        ]
    }

    #[test]
    fn the_index_places_every_line_and_match() {
        let c = Classification {
            classes: vec!["k".into()],
            matches: vec![LogMatch {
                class: "k".into(),
                signature: "s".into(),
                file: "pasted".into(),
                line: 2,
                text: "y error".into(),
                kind: crate::kb::schema::SignatureKind::Error,
                repeats_left_out: 0,
            }],
            ..Default::default()
        };
        let l = logs();
        let idx = LogIndex::build(&l, &c);
        assert_eq!(
            idx.rows,
            vec![
                RowRef::Header(0),
                RowRef::Line(0, 0),
                RowRef::Line(0, 1),
                RowRef::Line(0, 2),
                RowRef::Header(1),
                RowRef::Line(1, 0),
                RowRef::Line(1, 1),
            ]
        );
        assert_eq!(idx.text(&l, 2), "two ERROR here");
        assert_eq!(idx.text(&l, 6), "y error");
        assert_eq!(idx.matched, vec![6]);
        assert_eq!(idx.search(&l, "error"), vec![2, 6]);
        assert_eq!(find_ci("two ERROR here", "error"), Some((4, 9)));
        assert!(idx.search(&l, "").is_empty());
    }
}
