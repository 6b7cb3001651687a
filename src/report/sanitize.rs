//! Text on its way out: control characters from untrusted input (log lines, launch lines, GPU
//! names, KB strings, file names) must not reach a terminal or a script as bytes. An OSC 52 in
//! a log line would otherwise set the reader's clipboard; a CSI could move the cursor and hide a
//! line. Every text output passes through [`terminal_safe`] where it is written.

use std::borrow::Cow;
use std::fmt::Write as _;

const ESC: char = '\u{1b}';

/// `text` with every C0 and C1 control character but `\n`, `\t` and the `\r` of a CRLF shown
/// escaped (`\x1b`, `\u{9b}`). With `keep_style`, the colour sequences the tool paints itself
/// ([`super::Style`]: `ESC [ digits m`, nothing else) are kept.
pub fn terminal_safe(text: &str, keep_style: bool) -> Cow<'_, str> {
    let crlf_only = |(i, c): (usize, char)| c == '\r' && text[i + 1..].starts_with('\n');
    if !text
        .char_indices()
        .any(|(i, c)| is_unsafe(c) && !crlf_only((i, c)))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_style && c == ESC {
            let sgr = style_len(rest);
            if sgr > 0 {
                out.push_str(&rest[..sgr]);
                rest = &rest[sgr..];
                continue;
            }
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

/// A control character other than newline and tab (`\r` too: alone it overwrites a line).
fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn escape(c: char, out: &mut String) {
    let code = c as u32;
    if code < 0x80 {
        let _ = write!(out, "\\x{code:02x}");
    } else {
        let _ = write!(out, "\\u{{{code:x}}}");
    }
}

/// The length of a select-graphic-rendition sequence (`ESC [ 1;31 m`) at the start of `s`, or 0.
fn style_len(s: &str) -> usize {
    let Some(body) = s.strip_prefix("\u{1b}[") else {
        return 0;
    };
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    if params <= 16 && body.as_bytes().get(params) == Some(&b'm') {
        2 + params + 1
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
        assert_eq!(terminal_safe("a\u{9b}2Jb", false), "a\\u{9b}2Jb");
        assert_eq!(terminal_safe("del\u{7f}", false), "del\\x7f");
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
    fn only_colour_sequences_survive_with_keep_style() {
        let painted = "\u{1b}[31mred\u{1b}[0m \u{1b}[1;33mx\u{1b}[0m";
        assert_eq!(terminal_safe(painted, true), painted);
        assert!(!terminal_safe(painted, false).contains(ESC));
        // A cursor move, a title set and a lone ESC are not colour.
        let hostile = "\u{1b}[2J\u{1b}]0;t\u{7}\u{1b}";
        let safe = terminal_safe(hostile, true);
        assert!(!safe.contains(ESC), "{safe:?}");
        assert!(!safe.contains('\u{7}'), "{safe:?}");
    }
}
