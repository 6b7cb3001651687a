//! Paste damage undone before log lines are matched.
//!
//! Logs reach the tool through terminals, chat windows, issue trackers and editors. Before the
//! signatures are matched, each line is cleaned of what those add: ANSI colour codes, markdown
//! bold and backticks, `\r` progress-bar redraws (each redraw becomes its own line, so an error
//! glued to the last one is a line of its own), Windows path separators, typographic quotes and
//! CRLF endings. Blank lines and the prefixes that logging stacks put in front of a message
//! (`(EngineCore_DP0 pid=…)`, `(VllmWorker rank=0 pid=…)`, `name-1  | `, journal and ISO
//! timestamps, `[rank0]:`) are recognised so wrapped lines can be joined to the line they
//! continue (see `classify`).
//!
//! Everything here works on one block of whole lines at a time, so the scanner stays streaming:
//! a block without any byte that needs work is used as it is (no copy).

use std::borrow::Cow;

/// A block of lines after normalisation.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalised<'a> {
    pub text: Cow<'a, str>,
    /// For each line of `text`, the 0-based index of the physical line it came from. `None`
    /// when they are the same (no `\r` split a line).
    pub physical: Option<Vec<u32>>,
}

impl Normalised<'_> {
    /// The physical line (0-based within the block) of normalised line `i`.
    pub fn physical_line(&self, i: usize) -> usize {
        match &self.physical {
            Some(map) => map.get(i).map_or(i, |&p| p as usize),
            None => i,
        }
    }
}

const ESC: u8 = 0x1b;
/// First byte of the UTF-8 typographic quotes (U+2018, U+2019, U+201C, U+201D).
const E2: u8 = 0xe2;

/// Does this text hold a byte that normalisation changes?
fn needs_work(bytes: &[u8]) -> bool {
    memchr::memchr3(ESC, b'\r', b'`', bytes).is_some()
        || memchr::memchr3(b'*', b'\\', E2, bytes).is_some()
}

/// The start of the note the log reader puts at the end of a line it cut
/// ([`crate::read::cut_note`]): ` [sm120-doctor: line cut at `. The note names this tool, and
/// "sm120" in it matched the SM12x GPU context signature on every cut line, so the note is
/// taken off before matching. Taken from `cut_note` itself so the two cannot drift apart.
fn cut_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        let note = crate::read::cut_note(0, 0);
        let at = note.find('0').unwrap_or(note.len());
        note[..at].to_string()
    })
}

/// Does this block hold a cut line's note?
fn has_cut_note(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, cut_mark().as_bytes()).is_some()
}

/// A line without the cut note at its end (the note always ends the line it is put on).
fn strip_cut_note(line: &str) -> &str {
    match line.rfind(cut_mark()) {
        Some(at) if line.ends_with(']') => &line[..at],
        _ => line,
    }
}

/// Normalise a block of whole lines (each ends with `\n`, except perhaps the last).
pub fn normalise_block(text: &str) -> Normalised<'_> {
    match uniform_tag(text) {
        Some(tag) => {
            let untagged = strip_tag(text, tag);
            let n = normalise_untagged(&untagged);
            Normalised {
                text: Cow::Owned(n.text.into_owned()),
                physical: n.physical,
            }
        }
        None => normalise_untagged(text),
    }
}

/// The tag that starts (nearly) every line of a block: the pod or container name that log
/// tools put before each line (`kserve-container `, `[pod/vllm-0/vllm] `), which hides every
/// anchored pattern (a traceback header, a level prefix) behind it. A tag is a name with a `-`
/// or `_` in it (so no word of a message, level or timestamp is taken for one), or
/// `kubectl logs --prefix`'s `[pod/…]`; it must start at least 90 % of at least four non-blank
/// lines. Docker compose's `name-1  | ` is left to [`strip_prefixes`].
fn uniform_tag(text: &str) -> Option<&str> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let tag = leading_tag(lines.next()?)?;
    let (mut n, mut tagged) = (1usize, 1usize);
    for line in lines {
        n += 1;
        tagged += usize::from(has_tag(line, tag));
    }
    (n >= 4 && tagged * 10 >= n * 9).then_some(tag)
}

/// The candidate tag at the start of a line, without the space after it.
fn leading_tag(line: &str) -> Option<&str> {
    let tag = if line.starts_with("[pod/") {
        &line[..=line.find(']')?]
    } else {
        let len = line
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            .count();
        let tag = &line[..len];
        if !(3..=63).contains(&len)
            || !tag.starts_with(|c: char| c.is_ascii_alphabetic())
            || !tag.contains(['-', '_'])
        {
            return None;
        }
        tag
    };
    let after = line[tag.len()..].trim_start_matches(' ');
    (has_tag(line, tag) && !after.starts_with('|')).then_some(tag)
}

/// Does the line start with the tag and a space?
fn has_tag(line: &str, tag: &str) -> bool {
    line.starts_with(tag) && line.as_bytes().get(tag.len()) == Some(&b' ')
}

/// The block with the tag and one space taken off each line that has it (the indentation of a
/// traceback's code lines stays).
fn strip_tag(text: &str, tag: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(if has_tag(line, tag) {
            &line[tag.len() + 1..]
        } else {
            line
        });
    }
    out
}

/// [`normalise_block`] once a tag is off.
fn normalise_untagged(text: &str) -> Normalised<'_> {
    let bytes = text.as_bytes();
    let cut = has_cut_note(bytes);
    if !cut && !needs_work(bytes) {
        return Normalised {
            text: Cow::Borrowed(text),
            physical: None,
        };
    }
    let mut out = String::with_capacity(text.len());
    let mut physical: Option<Vec<u32>> = None;
    let mut out_lines = 0u32;
    let mut start = 0usize;
    let mut phys = 0u32;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
        let line = &text[start..end];
        let line = if cut { strip_cut_note(line) } else { line };
        if needs_work(line.as_bytes()) {
            let segments = normalise_line(line, &mut out);
            if segments > 1 {
                let map = physical.get_or_insert_with(|| (0..out_lines).collect());
                map.extend(std::iter::repeat_n(phys, segments));
            } else if let Some(map) = physical.as_mut() {
                map.push(phys);
            }
            out_lines += segments as u32;
        } else {
            out.push_str(line);
            if let Some(map) = physical.as_mut() {
                map.push(phys);
            }
            out_lines += 1;
        }
        if end < bytes.len() {
            out.push('\n');
        }
        start = end + 1;
        phys += 1;
    }
    Normalised {
        text: Cow::Owned(out),
        physical,
    }
}

/// Is this byte part of a path component (for telling `C:\dir\file` from other backslashes)?
fn path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'~' | b'$' | b':')
}

/// Append the normalised form of one line (without its `\n`) to `out`; returns how many lines
/// it became (a `\r` in the middle starts a new one).
pub fn normalise_line(line: &str, out: &mut String) -> usize {
    let b = line.as_bytes();
    let mut segments = 1usize;
    let mut i = 0usize;
    // Copy runs of plain bytes whole; handle the special ones.
    let mut plain_from = 0usize;
    while i < b.len() {
        let c = b[i];
        let skip = match c {
            ESC => Some(ansi_len(&b[i..])),
            b'\r' => {
                out.push_str(&line[plain_from..i]);
                // A \r at the end of the line (CRLF, or a redraw nothing followed) ends nothing.
                if b[i..].iter().any(|&x| x != b'\r') {
                    out.push('\n');
                    segments += 1;
                }
                plain_from = i + 1;
                i += 1;
                continue;
            }
            b'`' => Some(1),
            // Markdown bold (`**`) goes; a longer run (`make: ***`, glibc's `*** Error in`,
            // absl's `*** SIGSEGV`) is the tool's own text and stays.
            b'*' if b.get(i + 1) == Some(&b'*') => {
                let run = b[i..].iter().take_while(|&&x| x == b'*').count();
                if run != 2 {
                    i += run;
                    continue;
                }
                Some(2)
            }
            b'\\' => {
                let before = out.as_bytes().last().copied().filter(|_| plain_from == i);
                let prev = if plain_from < i {
                    Some(b[i - 1])
                } else {
                    before
                };
                let next = b.get(i + 1).copied();
                if prev.is_some_and(path_byte)
                    && next.is_some_and(|n| path_byte(n) || n == b' ' || n == b'(')
                {
                    out.push_str(&line[plain_from..i]);
                    out.push('/');
                    plain_from = i + 1;
                }
                i += 1;
                continue;
            }
            E2 if b.get(i + 1) == Some(&0x80) => match b.get(i + 2) {
                Some(0x98 | 0x99) => {
                    out.push_str(&line[plain_from..i]);
                    out.push('\'');
                    plain_from = i + 3;
                    i += 3;
                    continue;
                }
                Some(0x9c | 0x9d) => {
                    out.push_str(&line[plain_from..i]);
                    out.push('"');
                    plain_from = i + 3;
                    i += 3;
                    continue;
                }
                _ => None,
            },
            _ => None,
        };
        match skip {
            Some(n) => {
                out.push_str(&line[plain_from..i]);
                i += n.max(1);
                plain_from = i;
            }
            None => i += 1,
        }
    }
    if plain_from < b.len() {
        out.push_str(&line[plain_from..]);
    }
    segments
}

/// Length of the escape sequence at the start of `b` (which starts with ESC): CSI
/// (`ESC [ params final`), OSC (`ESC ] … BEL` or `ESC ] … ESC \`), or ESC and one byte.
fn ansi_len(b: &[u8]) -> usize {
    match b.get(1) {
        Some(b'[') => b[2..]
            .iter()
            .position(|x| (0x40..=0x7e).contains(x))
            .map_or(b.len(), |p| p + 3),
        Some(b']') => {
            let mut j = 2;
            while j < b.len() {
                if b[j] == 0x07 {
                    return j + 1;
                }
                if b[j] == ESC && b.get(j + 1) == Some(&b'\\') {
                    return j + 2;
                }
                j += 1;
            }
            b.len()
        }
        // ESC and one character: a whole character, never half of a multi-byte one.
        Some(&c) => 1 + utf8_width(c),
        None => 1,
    }
}

/// Bytes in the UTF-8 character that starts with `lead`.
fn utf8_width(lead: u8) -> usize {
    match lead {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// The message of a line without the prefixes that logging stacks add, and whether one of them
/// marked the start of a new log record (a process, journal, rank or timestamp prefix; a
/// compose/container name alone does not: it is repeated on wrapped lines).
pub fn strip_prefixes(line: &str) -> (&str, bool) {
    let mut s = line;
    let mut record = false;
    for _ in 0..4 {
        let before = s.len();
        if let Some(rest) = strip_container(s) {
            s = rest;
        }
        if let Some(rest) = strip_process(s)
            .or_else(|| strip_rank(s))
            .or_else(|| strip_mpi_tag(s))
            .or_else(|| strip_journal(s))
            .or_else(|| strip_iso_time(s))
            .or_else(|| strip_host(s))
        {
            s = rest;
            record = true;
        }
        if let Some(rest) = s.strip_prefix("> ").or_else(|| strip_pytest(s)) {
            s = rest;
        }
        if s.len() == before {
            break;
        }
    }
    (s, record)
}

/// pytest's failure report marks the raised exception's lines with `E` and at least three
/// spaces (`E       RuntimeError: …`, from `_pytest/_code/code.py`'s `fail_marker`).
fn strip_pytest(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('E')?;
    let spaces = rest.bytes().take_while(|&c| c == b' ').count();
    (spaces >= 3).then(|| &rest[spaces..])
}

/// `name-1  | ` (docker compose) or `name | `.
fn strip_container(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let name = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        .count();
    if name == 0 {
        return None;
    }
    let spaces = b[name..].iter().take_while(|&&c| c == b' ').count();
    if spaces == 0 || b.get(name + spaces) != Some(&b'|') {
        return None;
    }
    let rest = &s[name + spaces + 1..];
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// `(EngineCore_DP0 pid=12)`, `(VllmWorker rank=0 pid=7)`, `(RayWorkerWrapper pid=1, ip=…)`:
/// parentheses around a name and `pid=`/`rank=`.
fn strip_process(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('(')?;
    let close = rest.find(')')?;
    let inner = &rest[..close];
    if close > 120 || inner.contains('(') || !(inner.contains("pid=") || inner.contains("rank=")) {
        return None;
    }
    let after = &rest[close + 1..];
    Some(after.strip_prefix(' ').unwrap_or(after))
}

/// `[rank0]: ` (torchrun).
fn strip_rank(s: &str) -> Option<&str> {
    let rest = s.strip_prefix("[rank")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let rest = rest[digits..].strip_prefix("]:")?;
    (digits > 0).then(|| rest.strip_prefix(' ').unwrap_or(rest))
}

/// `[1,0]<stderr>:` (Open MPI's `--tag-output`: job and rank, then the stream).
fn strip_mpi_tag(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('[')?;
    let close = rest.find("]<")?;
    let ids = &rest[..close];
    if ids.is_empty() || !ids.bytes().all(|c| c.is_ascii_digit() || c == b',') {
        return None;
    }
    let rest = &rest[close + 2..];
    let end = rest.find(">:")?;
    if !matches!(&rest[..end], "stdout" | "stderr" | "stddiag") {
        return None;
    }
    let rest = &rest[end + 2..];
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// `node-2: ` or `10.0.0.2: ` before a record, as pdsh, `parallel --tag` and cluster launchers
/// prefix each line with the host or worker it came from. A bare `word: ` is also how a message
/// begins (`RuntimeError: …`, `bash: …`), so it only goes when what follows starts a record by
/// itself: a traceback, a level word or an exception's name.
fn strip_host(s: &str) -> Option<&str> {
    let name_len = s
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        .count();
    let name = &s[..name_len];
    let rest = s[name_len..].strip_prefix(": ")?;
    if name_len == 0 || name_len > 64 || exception_head(name) || is_level(name) {
        return None;
    }
    let strong = rest.starts_with("Traceback (most recent call last)")
        || is_level_start(rest)
        || (exception_head(rest) && rest.contains(':'));
    strong.then_some(rest)
}

/// `Oct 04 13:19:39 host unit[394]: ` (systemd journal).
fn strip_journal(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if b.len() < 16 || !b[..3].iter().all(u8::is_ascii_alphabetic) || b[3] != b' ' {
        return None;
    }
    let time_ok = b[6] == b' '
        && b[7..15].iter().enumerate().all(|(i, c)| {
            if i == 2 || i == 5 {
                *c == b':'
            } else {
                c.is_ascii_digit()
            }
        });
    if !time_ok {
        return None;
    }
    // host, then `unit[pid]:` or `unit:`
    let rest = &s[15..];
    let rest = rest.strip_prefix(' ')?;
    let host_end = rest.find(' ')?;
    let rest = &rest[host_end + 1..];
    let colon = rest.find(": ")?;
    let unit = &rest[..colon];
    if unit.is_empty() || unit.contains(' ') || colon > 80 {
        return None;
    }
    Some(&rest[colon + 2..])
}

/// A date and time that starts a log record, as logging stacks write it: `2025-06-10T03:12:40Z `
/// or `2025-06-10T03:12:40.123456789+00:00 ` (docker logs -t, zap, slog), `2024-05-01
/// 10:00:00,123 ` (Python logging's asctime), `2024-05-01 10:00:00.123 ` (loguru); also in
/// brackets with more inside (`[2024-05-01 10:00:00,123] `, SGLang's `[2025-10-04 04:40:50 TP0] `).
/// Python's ` - ` separator after it goes too. The separator after the time is a space or a tab.
fn strip_iso_time(s: &str) -> Option<&str> {
    let (bracketed, t) = match s.strip_prefix('[') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let date_time = b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !date_time {
        return None;
    }
    let rest = if bracketed {
        // Whatever else the bracket holds (fractions, a rank, a zone) goes with it.
        let close = t.get(..120.min(t.len()))?.find(']')?;
        &t[close + 1..]
    } else {
        // Fractions and a zone run up to the first space or tab.
        let end = t[19..].find([' ', '\t']).map(|i| i + 19)?;
        &t[end..]
    };
    let rest = rest.trim_start_matches([' ', '\t']);
    Some(rest.strip_prefix("- ").unwrap_or(rest))
}

/// Log levels that start a record.
const LEVELS: &[&str] = &[
    "INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL", "TRACE", "NOTICE",
];

/// Does this message (prefixes already stripped) begin a new record, as opposed to possibly
/// continuing a line the terminal or editor wrapped?
pub fn is_record_start(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    match first {
        // An indented block (traceback code, tables); a single space may be a wrap at a space.
        b' ' | b'\t' => b.get(1).is_some_and(|c| *c == b' ' || *c == b'\t'),
        b'[' => true,
        b'#' | b'$' | b'+' | b'>' | b'|' | b'%' => b.get(1) == Some(&b' '),
        b'0'..=b'9' => {
            // A timestamp or counter: digits, then one of - : / . and a digit.
            let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
            matches!(b.get(digits), Some(b'-' | b':' | b'/' | b'.'))
                && b.get(digits + 1).is_some_and(u8::is_ascii_digit)
        }
        _ => {
            if s.starts_with("Traceback (most recent call last)")
                || s.starts_with("File \"")
                || s.starts_with("During handling")
                || s.starts_with("The above exception")
            {
                return true;
            }
            if is_level_start(s) {
                return true;
            }
            exception_head(s)
        }
    }
}

/// Does the message begin with a level word (`ERROR …`, `INFO:`, `WARNING]`)?
fn is_level_start(s: &str) -> bool {
    LEVELS.iter().any(|l| {
        s.strip_prefix(l)
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', ':', ']', '\t']))
    })
}

/// Is this word a level word, in any case (`error`, `Warning`)?
fn is_level(word: &str) -> bool {
    LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word))
}

/// `RuntimeError:`, `torch.OutOfMemoryError:`, `AssertionError` …: a dotted name ending in
/// Error/Exception/Warning/Interrupt/Exit, then `:` or the end.
fn exception_head(s: &str) -> bool {
    let name_len = s
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
        .count();
    let name = &s[..name_len];
    let rest = &s[name_len..];
    ["Error", "Exception", "Warning", "Interrupt", "Exit"]
        .iter()
        .any(|k| name.ends_with(k))
        && (rest.is_empty() || rest.starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalise_block(s).text.into_owned()
    }

    /// The reader's note on a cut line names the tool ("sm120-doctor"), which the SM12x context
    /// signature matched (review D11); it is not log text, so it is not matched.
    #[test]
    fn a_tag_on_every_line_comes_off_and_a_word_or_a_compose_prefix_does_not() {
        let tagged = "kserve-container INFO 09-03 11:20:37 [__init__.py:245] No platform\n\
kserve-container Traceback (most recent call last):\n\
kserve-container   File \"/w/m.py\", line 164, in <module>\n\
kserve-container     parser = f(parser)\n";
        assert_eq!(
            norm(tagged),
            "INFO 09-03 11:20:37 [__init__.py:245] No platform\nTraceback (most recent call last):\n  File \"/w/m.py\", line 164, in <module>\n    parser = f(parser)\n"
        );
        let pod = "[pod/vllm-0/vllm] ERROR x\n[pod/vllm-0/vllm] a\n[pod/vllm-0/vllm] b\n[pod/vllm-0/vllm] c\n";
        assert_eq!(norm(pod), "ERROR x\na\nb\nc\n");
        // Three lines are too few to call it a tag; a line without it stays as it is.
        assert_eq!(
            norm("my-app a\nmy-app b\nmy-app c\n"),
            "my-app a\nmy-app b\nmy-app c\n"
        );
        // Words, levels and timestamps are not tags, nor is compose's `name-1  | `.
        let words = "INFO a\nINFO b\nINFO c\nINFO d\n";
        assert_eq!(norm(words), words);
        let compose = "vllm-1  | a\nvllm-1  | b\nvllm-1  | c\nvllm-1  | d\n";
        assert_eq!(norm(compose), compose);
        let dates = "2024-07-03 a\n2024-07-03 b\n2024-07-03 c\n2024-07-03 d\n";
        assert_eq!(norm(dates), dates);
        // Fewer than nine in ten lines tagged: not a tag.
        let mixed = "a-b x\na-b y\nother\nmore\n";
        assert_eq!(norm(mixed), mixed);
    }

    #[test]
    fn the_cut_note_is_not_log_text() {
        let note = crate::read::cut_note(65536, 4464);
        let block = format!("xxxx{note}\nnext\r\nlast{note}\n");
        assert_eq!(norm(&block), "xxxx\nnext\nlast\n");
        // A line that only mentions the words keeps them.
        let said = "user wrote [sm120-doctor: line cut at] by hand\n";
        assert_eq!(norm(said), said);
    }

    #[test]
    fn clean_blocks_are_borrowed() {
        let n = normalise_block("plain line\nanother\n");
        assert!(matches!(n.text, Cow::Borrowed(_)));
        assert_eq!(n.physical, None);
    }

    #[test]
    fn a_run_of_three_stars_is_text_not_markup() {
        assert_eq!(
            norm("make: *** [all] Error 1 and **bold**"),
            "make: *** [all] Error 1 and bold"
        );
    }

    #[test]
    fn ansi_markdown_and_quotes_go() {
        assert_eq!(
            norm("\x1b[1;36m(EngineCore_DP0 pid=1)\x1b[0;0m \x1b[31mERROR\x1b[0m x\n"),
            "(EngineCore_DP0 pid=1) ERROR x\n"
        );
        assert_eq!(
            norm("**RuntimeError: `a` failed**\n"),
            "RuntimeError: a failed\n"
        );
        assert_eq!(norm("GPU\u{2019}s \u{201c}x\u{201d}\n"), "GPU's \"x\"\n");
        assert_eq!(norm("\x1b]0;title\x07text\n"), "text\n");
    }

    #[test]
    fn carriage_returns_split_redraws_and_crlf_goes() {
        let n = normalise_block("a\nbar 10%\rbar 20%\rFailed: x\nlast\r\n");
        assert_eq!(n.text, "a\nbar 10%\nbar 20%\nFailed: x\nlast\n");
        assert_eq!(n.physical, Some(vec![0, 1, 1, 1, 2]));
        assert_eq!(n.physical_line(3), 1);
        assert_eq!(n.physical_line(4), 2);
    }

    #[test]
    fn windows_paths_get_forward_slashes_other_backslashes_stay() {
        assert_eq!(
            norm("  File \"C:\\Python310\\lib\\site-packages\\x.py\", line 3\n"),
            "  File \"C:/Python310/lib/site-packages/x.py\", line 3\n"
        );
        assert_eq!(norm("say \\\"hi\\\"\n"), "say \\\"hi\\\"\n");
    }

    #[test]
    fn prefixes_are_stripped_and_records_recognised() {
        let cases = [
            ("(Worker_TP0_EP0 pid=12) INFO x", "INFO x", true),
            ("(VllmWorker rank=0 pid=7) ERROR y", "ERROR y", true),
            (
                "(RayWorkerWrapper pid=1, ip=10.0.0.1) Failed: z",
                "Failed: z",
                true,
            ),
            (
                "qwen-dual-1  | (EngineCore_DP0 pid=64) ERROR a",
                "ERROR a",
                true,
            ),
            ("llm-1  | rgument'", "rgument'", false),
            (
                "Oct 04 13:19:39 llm sd-webui[394]: RuntimeError: b",
                "RuntimeError: b",
                true,
            ),
            (
                "2025-06-10T03:12:40Z NVIDIA GeForce",
                "NVIDIA GeForce",
                true,
            ),
            (
                "2024-05-01 10:00:00,123 - kserve - ERROR - e",
                "kserve - ERROR - e",
                true,
            ),
            (
                "2024-05-01 10:00:00.123 | ERROR    | m",
                "| ERROR    | m",
                true,
            ),
            (
                "2024-05-01T10:00:00.123Z\terror\tx.go:1\tf",
                "error\tx.go:1\tf",
                true,
            ),
            ("[2024-05-01 10:00:00,123] ERROR x", "ERROR x", true),
            (
                "[2025-10-04 04:40:50 DP7 TP7] Scheduler hit",
                "Scheduler hit",
                true,
            ),
            // A date alone, or a bracket that is not a time, is not a record prefix.
            ("2024-05-01 was the day", "2024-05-01 was the day", false),
            (
                "[4/32] Building CUDA object",
                "[4/32] Building CUDA object",
                false,
            ),
            (
                "[rank0]: torch.OutOfMemoryError: c",
                "torch.OutOfMemoryError: c",
                true,
            ),
            (
                "(trial 3 of the same command)",
                "(trial 3 of the same command)",
                false,
            ),
            // pytest's exception marker; a glog line (`E1201 …`) and one space are not it.
            (
                "E       RuntimeError: Failed: d",
                "RuntimeError: Failed: d",
                false,
            ),
            (
                "E1201 10:00:00.123 1 x.py:1] e",
                "E1201 10:00:00.123 1 x.py:1] e",
                false,
            ),
            ("E x", "E x", false),
            // Open MPI's tag, and a host before a record (pdsh); a message's own `word: ` stays.
            (
                "[1,0]<stderr>:Traceback (most recent call last):",
                "Traceback (most recent call last):",
                true,
            ),
            ("worker-0: RuntimeError: f", "RuntimeError: f", true),
            ("10.0.0.2: ERROR x", "ERROR x", true),
            (
                "bash: vllm: command not found",
                "bash: vllm: command not found",
                false,
            ),
            ("ValueError: KeyError: g", "ValueError: KeyError: g", false),
            ("error: RuntimeError: h", "error: RuntimeError: h", false),
            ("note: see RuntimeError", "note: see RuntimeError", false),
        ];
        for (line, content, record) in cases {
            assert_eq!(strip_prefixes(line), (content, record), "{line}");
        }
    }

    #[test]
    fn record_starts_and_continuations() {
        for s in [
            "INFO 06-20 x",
            "RuntimeError: y",
            "torch.OutOfMemoryError: CUDA out of memory",
            "Traceback (most recent call last):",
            "    return f()",
            "2025-04-23 10:26:20 x",
            "[2026-04-24 18:02:11 TP0] x",
            "$ vllm serve",
            "KeyboardInterrupt",
        ] {
            assert!(is_record_start(s), "{s}");
        }
        for s in [
            "rgument'",
            "ce/.deps/deepgemm-src/csrc/utils/layout.hpp:76): Unkno",
            "wn recipe",
            " with sm75 or higher\")",
            "ConfigTokenizer but got 'TRUE'",
            "a kernel launch error has occurred due to cluster misconfiguration",
            "20' is not defined for option 'gpu-name'",
            "higher",
        ] {
            assert!(!is_record_start(s), "{s}");
        }
    }

    #[test]
    fn an_escape_before_a_multibyte_character_keeps_the_character_whole() {
        for line in ["\u{1b}é rest", "a\u{1b}€b", "\u{1b}😀", "\u{1b}"] {
            let mut out = String::new();
            normalise_line(line, &mut out);
            assert!(!out.contains('\u{1b}'), "{line:?} -> {out:?}");
        }
    }
}
