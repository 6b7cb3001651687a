//! The vLLM words of a shell command as arguments, and where a new one goes (continuing the
//! command's line style, before a backslash that ends the input).

use crate::launch::lex::Word;
use crate::launch::{Arg, Insert, InsertStyle, Render, indent_at};

/// Shell words as arguments: each removes itself with the blank (and continuation) before it.
pub(super) fn shell_args(file: usize, words: &[Word], prev_end: usize) -> Vec<Arg> {
    let mut prev = prev_end;
    words
        .iter()
        .map(|w| {
            let a = Arg {
                file,
                value: w.value.clone(),
                span: w.span.clone(),
                render: Render::ShellWord {
                    prefix: String::new(),
                },
                removal: prev..w.span.end,
                dynamic: w.dynamic,
                line: w.line,
            };
            prev = w.span.end;
            a
        })
        .collect()
}

/// The last word, passing over a trailing escaped blank (`\ ` at the end of a line): a new word
/// goes before it, so the line reads as bash read it before.
pub(super) fn last_real<'w>(text: &str, words: &'w [Word]) -> Option<&'w Word> {
    let flag_follows = |end: usize| {
        let rest = text[end..].trim_start_matches([' ', '\t', '\r']);
        rest.strip_prefix('\n')
            .is_some_and(|r| r.trim_start_matches([' ', '\t']).starts_with('-'))
    };
    // The escaped blank is the value of the flag before it (`--model \ `): a new word there
    // would take its place, so it is kept and the new word goes after it.
    let value_of_flag = |i: usize| {
        i.checked_sub(1)
            .and_then(|p| words.get(p))
            .is_some_and(|p| {
                p.value.starts_with('-')
                    && !p.value.contains('=')
                    && !crate::vllm::flags::is_boolean_flag(&crate::vllm::flags::long_name(
                        &p.value,
                    ))
            })
    };
    words
        .iter()
        .enumerate()
        .rev()
        .find(|(i, w)| {
            let raw = &text[w.span.clone()];
            !(raw.starts_with('\\')
                && raw.len() <= 3
                && w.value.trim().is_empty()
                && flag_follows(w.span.end)
                && !value_of_flag(*i))
        })
        .map(|(_, w)| w)
}

/// Where a new argument goes after `last_end`, continuing the command's line style.
pub(super) fn shell_arg_insert(
    file: usize,
    text: &str,
    first_line: usize,
    last: Option<&Word>,
    after: usize,
) -> Insert {
    match last {
        Some(w) if w.line > first_line => Insert {
            file,
            offset: before_dangling_escape(text, w.span.end),
            style: InsertStyle::ShellNewLine {
                indent: indent_at(text, w.span.start),
            },
        },
        _ => Insert {
            file,
            offset: last.map_or(after, |w| before_dangling_escape(text, w.span.end)),
            style: InsertStyle::ShellSameLine,
        },
    }
}

/// A word that ends the input with a backslash escaping nothing (`serve\` at the end of the
/// file): bash drops that backslash, and text appended after it would be escaped by it
/// (`serve\ --x` is the word `serve --x`). New words go before it; it stays last, escaping
/// nothing again.
pub(super) fn before_dangling_escape(text: &str, end: usize) -> usize {
    let trailing = text[..end]
        .bytes()
        .rev()
        .take_while(|&b| b == b'\\')
        .count();
    if end == text.len() && trailing % 2 == 1 {
        end - 1
    } else {
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backslash_that_ends_the_input_stays_after_new_words() {
        assert_eq!(before_dangling_escape("vllm serve m\\", 13), 12);
        assert_eq!(
            before_dangling_escape("vllm serve m\\\\", 14),
            14,
            "an escaped backslash is text"
        );
        assert_eq!(
            before_dangling_escape("vllm serve m\\", 12),
            12,
            "not at the end"
        );
        assert_eq!(before_dangling_escape("vllm serve m", 12), 12);
    }
}
