//! Text on its way out: control characters from untrusted input (log lines, launch lines, GPU
//! names, KB strings, file names) must not reach a terminal or a script as bytes. An OSC 52 in
//! a log line would otherwise set the reader's clipboard; a CSI could move the cursor and hide a
//! line. Every text output passes through [`terminal_safe`] where it is written.
//!
//! The tool's own colours are not escape sequences until then: [`super::Style`] paints with
//! [`STYLE_MARK`] where the sequence's ESC goes, and only here does a mark followed by
//! `[digits m` become `ESC [digits m` (or nothing, without colour). An ESC that came in with a
//! log line or a launch is escaped whatever it starts, colour included.

use std::borrow::Cow;
use std::fmt::Write as _;

const ESC: char = '\u{1b}';

/// Where the tool's own colour sequences put their ESC until [`terminal_safe`] writes it: a
/// Unicode noncharacter, which no text meant for interchange holds (one that comes in anyway is
/// escaped unless a whole colour sequence follows it, and then it can set a colour, no more).
pub const STYLE_MARK: char = '\u{fdd0}';

/// `text` with every C0 and C1 control character but `\n`, `\t` and the `\r` of a CRLF shown
/// escaped (`\x1b`; DEL and C1 as `\u009b`, which is also a valid escape inside a JSON string).
/// The tool's colour marks ([`STYLE_MARK`]) become colour sequences with `keep_style`, and go
/// without it.
pub(crate) fn terminal_safe(text: &str, keep_style: bool) -> Cow<'_, str> {
    let crlf_only = |(i, c): (usize, char)| c == '\r' && text[i + 1..].starts_with('\n');
    if !text
        .char_indices()
        .any(|(i, c)| (is_unsafe(c) && !crlf_only((i, c))) || c == STYLE_MARK)
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == STYLE_MARK {
            let sgr = style_len(&rest[c.len_utf8()..]);
            if sgr > 0 {
                let seq = &rest[c.len_utf8()..c.len_utf8() + sgr];
                if keep_style {
                    out.push(ESC);
                    out.push_str(seq);
                }
                rest = &rest[c.len_utf8() + sgr..];
            } else {
                out.push_str("\\ufdd0");
                rest = &rest[c.len_utf8()..];
            }
            continue;
        }
        let n = c.len_utf8();
        if c == '\r' && rest[n..].starts_with('\n') {
            out.push('\r');
        } else if is_unsafe(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
        rest = &rest[n..];
    }
    Cow::Owned(out)
}

/// One line to standard error, made [`terminal_safe`] (no colour: stderr is never painted).
pub fn say(line: &str) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", terminal_safe(line, false));
}

/// A control character other than newline and tab (`\r` too: alone it overwrites a line).
fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn escape(c: char, out: &mut String) {
    let code = c as u32;
    if code < 0x7f {
        let _ = write!(out, "\\x{code:02x}");
    } else {
        let _ = write!(out, "\\u{code:04x}");
    }
}

/// The length of a select-graphic-rendition body (`[1;31m`, what follows the ESC) at the start
/// of `s`, or 0.
fn style_len(s: &str) -> usize {
    let Some(body) = s.strip_prefix('[') else {
        return 0;
    };
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    if params <= 16 && body.as_bytes().get(params) == Some(&b'm') {
        1 + params + 1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc_csi_and_c1_are_shown_escaped() {
        let osc52 = "log \u{1b}]52;c;cm0gLXJmIH4=\u{7} end";
        assert_eq!(
            terminal_safe(osc52, false),
            "log \\x1b]52;c;cm0gLXJmIH4=\\x07 end"
        );
        assert_eq!(terminal_safe("a\u{9b}2Jb", false), "a\\u009b2Jb");
        assert_eq!(terminal_safe("del\u{7f}", false), "del\\u007f");
        assert_eq!(terminal_safe("over\rwrite", false), "over\\x0dwrite");
    }

    #[test]
    fn newlines_tabs_crlf_and_plain_text_pass_unchanged() {
        for s in ["a\tb\nc\r\n", "ünïcode — ok\n", ""] {
            assert!(matches!(terminal_safe(s, false), Cow::Borrowed(_)), "{s:?}");
            assert_eq!(terminal_safe(s, true), s);
        }
    }

    #[test]
    fn only_the_tools_own_colour_marks_become_colour() {
        let m = STYLE_MARK;
        let painted = format!("{m}[31mred{m}[0m {m}[1;33mx{m}[0m");
        assert_eq!(
            terminal_safe(&painted, true),
            "\u{1b}[31mred\u{1b}[0m \u{1b}[1;33mx\u{1b}[0m"
        );
        assert_eq!(terminal_safe(&painted, false), "red x");
        // A colour sequence that came in with the text is escaped like any other, and so are a
        // cursor move, a title set, a lone ESC and a mark that starts no colour.
        let hostile = format!("\u{1b}[31mred\u{1b}[2J\u{1b}]0;t\u{7}\u{1b}{m}[2J{m}");
        for keep in [true, false] {
            let safe = terminal_safe(&hostile, keep);
            assert!(!safe.contains(ESC), "{safe:?}");
            assert!(!safe.contains('\u{7}'), "{safe:?}");
            assert!(!safe.contains(m), "{safe:?}");
        }
    }

    #[test]
    fn escaped_text_inside_json_stays_valid_json() {
        // serde_json writes C0 as \u00XX itself but leaves DEL and C1 raw.
        let text = "a\u{9b}2J\u{7f}\u{1b}]52;c;x\u{7}b";
        let json = serde_json::to_string(text).expect("json");
        let safe = terminal_safe(&json, false);
        assert!(!safe.contains(['\u{9b}', '\u{7f}']), "{safe}");
        let back: String = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, text);
    }
}
