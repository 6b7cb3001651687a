//! A byte-span-preserving tokenizer for the bash subset that launch commands use.
//!
//! Every [`Word`] keeps the byte range it occupies in the original text (quotes included) and
//! its value after quote removal, so a rewrite can replace exactly one word and leave every other
//! byte as the user wrote it. Handled: `'…'`, `"…"` (with `\` escapes of `$ \` " \ newline`),
//! `$'…'`, backslash escapes, `\`-newline continuations, comments, `; & && || | |&`, redirections
//! (`> f`, `2>&1`, `&> f`), `$VAR` / `${…}` / `$(…)` / backquotes (kept literally, marked dynamic).
//!
//! Broken continuations are errors, never guesses: a comment or a blank line right after a
//! continuation, a space after the final backslash, or a backslash that glues two words together
//! because the next line does not start with a space.

use std::ops::Range;

/// A shell word with its place in the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// Bytes of the source that make up the word, quotes included.
    pub span: Range<usize>,
    /// The word after quote removal (what the program receives as argv).
    pub value: String,
    /// Contains an unquoted or double-quoted expansion (`$`, backquote) or a leading `~`: the
    /// value shown is the literal text, not what bash would pass.
    pub dynamic: bool,
    /// 1-based line of the word's first byte.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Word(Word),
    /// `;`, `&`, `&&`, `||`, `|`, `|&`, `(`, `)` or a newline (`"\n"`): ends a simple command.
    Separator {
        op: String,
        span: Range<usize>,
    },
    /// A redirection operator; the next word is its target, not an argument.
    Redirect {
        span: Range<usize>,
    },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LexError {
    pub line: usize,
    pub message: String,
}

/// One simple command: its words (redirection targets removed) and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
    /// Byte range from the first word's start to the last word's end.
    pub span: Range<usize>,
    pub line: usize,
}

/// 1-based line number of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

fn is_meta(b: u8) -> bool {
    matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'\n') || is_blank(b)
}

struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    tokens: Vec<Token>,
}

impl<'a> Lexer<'a> {
    fn err(&self, at: usize, message: impl Into<String>) -> LexError {
        LexError {
            line: line_of(self.text, at),
            message: message.into(),
        }
    }

    /// At `\` followed by blanks, a newline, and a line that carries on with a flag: a
    /// continuation broken by a trailing space (bash reads an escaped space and ends the command).
    fn check_space_after_backslash(&self, at: usize) -> Result<(), LexError> {
        let mut j = at + 1;
        while j < self.b.len() && (self.b[j] == b' ' || self.b[j] == b'\t' || self.b[j] == b'\r') {
            j += 1;
        }
        let next_line_is_flag = || {
            let mut k = j + 1;
            while k < self.b.len() && is_blank(self.b[k]) {
                k += 1;
            }
            self.b.get(k) == Some(&b'-')
        };
        if j > at + 1 && j < self.b.len() && self.b[j] == b'\n' && next_line_is_flag() {
            if self.b[at + 1..j].contains(&b'\r') {
                return Err(self.err(
                    at,
                    "this file has Windows (CRLF) line endings: bash reads the backslash as \
                     escaping a carriage return, so the command ends here; convert the file \
                     (e.g. `dos2unix FILE`)",
                ));
            }
            return Err(self.err(
                at,
                "a space follows the backslash at the end of this line, so it does not continue \
                 the command (the next line runs as a separate command); delete the trailing space",
            ));
        }
        Ok(())
    }

    /// After a continuation at `cont` (the backslash), the next line must carry on the command.
    fn check_after_continuation(&self, cont: usize) -> Result<(), LexError> {
        let mut j = cont + 2;
        while j < self.b.len() && is_blank(self.b[j]) {
            j += 1;
        }
        if j < self.b.len() && self.b[j] == b'#' {
            return Err(self.err(
                j,
                "a comment line breaks the backslash continuation above it; the lines after it \
                 would run as a separate command (move the comment out or delete it)",
            ));
        }
        if j < self.b.len() && self.b[j] == b'\n' {
            return Err(self.err(
                j,
                "an empty line follows a backslash continuation; the lines after it would run \
                 as a separate command",
            ));
        }
        Ok(())
    }

    fn run(mut self) -> Result<Vec<Token>, LexError> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if is_blank(c) {
                self.i += 1;
                continue;
            }
            if c == b'\\' && self.b.get(self.i + 1) == Some(&b'\n') {
                self.check_after_continuation(self.i)?;
                self.i += 2;
                continue;
            }
            if c == b'#' {
                // A comment runs to the end of the line (the newline itself is a separator).
                while self.i < self.b.len() && self.b[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            if c == b'\n' {
                self.tokens.push(Token::Separator {
                    op: "\n".into(),
                    span: self.i..self.i + 1,
                });
                self.i += 1;
                continue;
            }
            if let Some(len) = self.redirect_len(self.i) {
                self.tokens.push(Token::Redirect {
                    span: self.i..self.i + len,
                });
                self.i += len;
                continue;
            }
            if matches!(c, b';' | b'&' | b'|' | b'(' | b')') {
                let two = self.b.get(self.i + 1).copied();
                let len = match (c, two) {
                    (b'&', Some(b'&')) | (b'|', Some(b'|')) | (b'|', Some(b'&')) => 2,
                    (b';', Some(b';')) => 2,
                    _ => 1,
                };
                self.tokens.push(Token::Separator {
                    op: self.text[self.i..self.i + len].to_string(),
                    span: self.i..self.i + len,
                });
                self.i += len;
                continue;
            }
            self.word()?;
        }
        Ok(self.tokens)
    }

    /// Length of a redirection operator starting at `at` (with an optional fd number), if any.
    fn redirect_len(&self, at: usize) -> Option<usize> {
        let mut j = at;
        while j < self.b.len() && self.b[j].is_ascii_digit() {
            j += 1;
        }
        let rest = &self.b[j..];
        let op_len = if rest.starts_with(b"&>>") {
            3
        } else if rest.starts_with(b"&>")
            || rest.starts_with(b">>")
            || rest.starts_with(b">&")
            || rest.starts_with(b"<&")
            || rest.starts_with(b"<<")
            || rest.starts_with(b">|")
        {
            2
        } else if rest.starts_with(b">") || rest.starts_with(b"<") {
            1
        } else {
            return None;
        };
        // `&>` needs no fd; digits only count when directly followed by the operator.
        if j > at && rest.starts_with(b"&") {
            return None;
        }
        Some(j - at + op_len)
    }

    fn word(&mut self) -> Result<(), LexError> {
        let start = self.i;
        let mut value: Vec<u8> = Vec::new();
        let mut dynamic = self.b[start] == b'~';
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if is_meta(c) {
                break;
            }
            match c {
                b'\\' => {
                    match self.b.get(self.i + 1) {
                        Some(b'\n') => {
                            // Continuation inside a word: fine only if the next line starts
                            // with a blank (then the word ends here).
                            self.check_after_continuation(self.i)?;
                            let next = self.b.get(self.i + 2).copied();
                            match next {
                                Some(n) if is_blank(n) || n == b'\n' => {
                                    self.i += 2;
                                    break;
                                }
                                None => {
                                    self.i += 2;
                                    break;
                                }
                                Some(_) => {
                                    return Err(self.err(
                                        self.i,
                                        format!(
                                            "no space before the backslash at the end of this \
                                             line, and the next line does not start with one: \
                                             bash joins `{}` and the next line's first word \
                                             into one word; add a space before the backslash",
                                            String::from_utf8_lossy(&value)
                                        ),
                                    ));
                                }
                            }
                        }
                        Some(_) => {
                            self.check_space_after_backslash(self.i)?;
                            let ch = self.char_len(self.i + 1);
                            value.extend_from_slice(&self.b[self.i + 1..self.i + 1 + ch]);
                            self.i += 1 + ch;
                        }
                        None => {
                            self.i += 1;
                        }
                    }
                }
                b'\'' => {
                    let close = memchr::memchr(b'\'', &self.b[self.i + 1..])
                        .ok_or_else(|| self.err(self.i, "unterminated single quote"))?;
                    value.extend_from_slice(&self.b[self.i + 1..self.i + 1 + close]);
                    self.i += close + 2;
                }
                b'"' => {
                    self.i += 1;
                    loop {
                        let Some(&d) = self.b.get(self.i) else {
                            return Err(self.err(start, "unterminated double quote"));
                        };
                        match d {
                            b'"' => {
                                self.i += 1;
                                break;
                            }
                            b'\\' => match self.b.get(self.i + 1) {
                                Some(b'\n') => self.i += 2,
                                Some(&e) if matches!(e, b'$' | b'`' | b'"' | b'\\') => {
                                    value.push(e);
                                    self.i += 2;
                                }
                                _ => {
                                    value.push(b'\\');
                                    self.i += 1;
                                }
                            },
                            b'$' | b'`' => {
                                dynamic = true;
                                value.push(d);
                                self.i += 1;
                            }
                            _ => {
                                value.push(d);
                                self.i += 1;
                            }
                        }
                    }
                }
                b'$' if self.b.get(self.i + 1) == Some(&b'\'') => {
                    self.ansi_c(&mut value)?;
                }
                b'$' => {
                    dynamic = true;
                    let end = self.expansion_end(self.i)?;
                    value.extend_from_slice(&self.b[self.i..end]);
                    self.i = end;
                }
                b'`' => {
                    dynamic = true;
                    let close = memchr::memchr(b'`', &self.b[self.i + 1..])
                        .ok_or_else(|| self.err(self.i, "unterminated backquote"))?;
                    value.extend_from_slice(&self.b[self.i..self.i + close + 2]);
                    self.i += close + 2;
                }
                _ => {
                    value.push(c);
                    self.i += 1;
                }
            }
        }
        if self.i > start {
            self.tokens.push(Token::Word(Word {
                span: start..self.i,
                value: String::from_utf8_lossy(&value).into_owned(),
                dynamic,
                line: line_of(self.text, start),
            }));
        }
        Ok(())
    }

    /// Bytes in the UTF-8 character starting at `at`.
    fn char_len(&self, at: usize) -> usize {
        let mut n = 1;
        while at + n < self.b.len() && !self.text.is_char_boundary(at + n) {
            n += 1;
        }
        n
    }

    /// End of `$NAME`, `${…}`, `$(…)` starting at `at` (the `$`).
    fn expansion_end(&self, at: usize) -> Result<usize, LexError> {
        let j = at + 1;
        match self.b.get(j) {
            Some(b'{') | Some(b'(') => {
                let (open, close) = if self.b[j] == b'{' {
                    (b'{', b'}')
                } else {
                    (b'(', b')')
                };
                let mut depth = 0usize;
                let mut k = j;
                while k < self.b.len() {
                    if self.b[k] == open {
                        depth += 1;
                    } else if self.b[k] == close {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(k + 1);
                        }
                    }
                    k += 1;
                }
                Err(self.err(at, "unterminated `${` or `$(`"))
            }
            Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => {
                let mut k = j;
                while k < self.b.len() && (self.b[k].is_ascii_alphanumeric() || self.b[k] == b'_') {
                    k += 1;
                }
                Ok(k)
            }
            Some(b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') => Ok(j + 1),
            _ => Ok(j),
        }
    }

    /// `$'…'`: ANSI-C quoting with the common escapes.
    fn ansi_c(&mut self, value: &mut Vec<u8>) -> Result<(), LexError> {
        let start = self.i;
        self.i += 2;
        loop {
            let Some(&d) = self.b.get(self.i) else {
                return Err(self.err(start, "unterminated $'…' quote"));
            };
            match d {
                b'\'' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    let Some(&e) = self.b.get(self.i + 1) else {
                        return Err(self.err(start, "unterminated $'…' quote"));
                    };
                    self.i += 2;
                    match e {
                        b'n' => value.push(b'\n'),
                        b't' => value.push(b'\t'),
                        b'r' => value.push(b'\r'),
                        b'a' => value.push(7),
                        b'b' => value.push(8),
                        b'e' | b'E' => value.push(27),
                        b'f' => value.push(12),
                        b'v' => value.push(11),
                        b'\\' | b'\'' | b'"' | b'?' => value.push(e),
                        b'x' => {
                            let mut n = 0u32;
                            let mut k = 0;
                            while k < 2 && self.b.get(self.i).is_some_and(|h| h.is_ascii_hexdigit())
                            {
                                n = n * 16 + (self.b[self.i] as char).to_digit(16).unwrap_or(0);
                                self.i += 1;
                                k += 1;
                            }
                            value.push(n as u8);
                        }
                        b'0'..=b'7' => {
                            let mut n = u32::from(e - b'0');
                            let mut k = 1;
                            while k < 3
                                && self
                                    .b
                                    .get(self.i)
                                    .is_some_and(|h| (b'0'..=b'7').contains(h))
                            {
                                n = n * 8 + u32::from(self.b[self.i] - b'0');
                                self.i += 1;
                                k += 1;
                            }
                            value.push(n as u8);
                        }
                        other => {
                            value.push(b'\\');
                            value.push(other);
                        }
                    }
                }
                _ => {
                    value.push(d);
                    self.i += 1;
                }
            }
        }
    }
}

/// Tokenize a shell script.
pub fn tokenize(text: &str) -> Result<Vec<Token>, LexError> {
    let lexer = Lexer {
        text,
        b: text.as_bytes(),
        i: 0,
        tokens: Vec::new(),
    };
    let tokens = lexer.run()?;
    Ok(tokens)
}

/// Split a script into simple commands (redirection targets dropped).
pub fn commands(text: &str) -> Result<Vec<SimpleCommand>, LexError> {
    let tokens = tokenize(text)?;
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut skip_next = false;
    let flush = |words: &mut Vec<Word>, out: &mut Vec<SimpleCommand>| {
        if let (Some(first), Some(last)) = (words.first(), words.last()) {
            out.push(SimpleCommand {
                span: first.span.start..last.span.end,
                line: first.line,
                words: std::mem::take(words),
            });
        }
    };
    for t in tokens {
        match t {
            Token::Word(w) => {
                if skip_next {
                    skip_next = false;
                } else {
                    words.push(w);
                }
            }
            Token::Redirect { span } => {
                // `2>&1` carries its target; `> file` takes the next word.
                let op = &text[span.clone()];
                let has_target = op.ends_with('&') && !op.starts_with('&');
                skip_next = !has_target || op.ends_with(">&") || op.ends_with("<&");
            }
            Token::Separator { .. } => {
                skip_next = false;
                flush(&mut words, &mut out);
            }
        }
    }
    flush(&mut words, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<Vec<String>> {
        commands(text)
            .expect("lexes")
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.value).collect())
            .collect()
    }

    #[test]
    fn quotes_and_spans() {
        let text = r#"A="x y" vllm serve 'm o' --cc '{"a": 1}' it\'s"#;
        let cmds = commands(text).expect("lexes");
        let w = &cmds[0].words;
        assert_eq!(w[0].value, "A=x y");
        assert_eq!(&text[w[0].span.clone()], r#"A="x y""#);
        assert_eq!(w[3].value, "m o");
        assert_eq!(w[5].value, r#"{"a": 1}"#);
        assert_eq!(w[6].value, "it's");
    }

    #[test]
    fn separators_redirections_and_comments() {
        assert_eq!(
            values("cd /srv && vllm serve m > log.txt 2>&1 & # bg\necho done; true"),
            vec![
                vec!["cd", "/srv"],
                vec!["vllm", "serve", "m"],
                vec!["echo", "done"],
                vec!["true"]
            ]
        );
    }

    #[test]
    fn continuation_joins_lines() {
        assert_eq!(
            values("vllm serve m \\\n  --tp 2 \\\n  --x"),
            vec![vec!["vllm", "serve", "m", "--tp", "2", "--x"]]
        );
    }

    #[test]
    fn broken_continuations_are_errors() {
        let e = commands("vllm serve m \\\n# c\n --tp 2").expect_err("comment");
        assert_eq!(e.line, 2);
        let e = commands("vllm serve m \\ \n --tp 2").expect_err("trailing space");
        assert_eq!(e.line, 1);
        let e = commands("vllm serve m --tp 2\\\n--x").expect_err("glued");
        assert_eq!(e.line, 1);
        let e = commands("vllm serve m \\\r\n  --x\r\n").expect_err("crlf");
        assert!(e.message.contains("CRLF"), "{}", e.message);
        let e = commands("vllm serve m \\\n\n--x").expect_err("blank");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn dynamic_and_ansi_c() {
        let cmds = commands("vllm serve $MODEL --x \"${A:-b c}\" $'a\\nb'").expect("lexes");
        let w = &cmds[0].words;
        assert!(w[2].dynamic);
        assert_eq!(w[4].value, "${A:-b c}");
        assert!(w[4].dynamic);
        assert_eq!(w[5].value, "a\nb");
        assert!(!w[5].dynamic);
    }

    #[test]
    fn unterminated_quote_names_line() {
        let e = commands("echo\nvllm serve 'm").expect_err("unterminated");
        assert_eq!(e.line, 2);
    }
}
