//! A byte-span-preserving tokenizer for the bash subset that launch commands use.
//!
//! Every [`Word`] keeps the byte range it occupies in the original text (quotes included) and
//! its value after quote removal, so a rewrite can replace exactly one word and leave every other
//! byte as the user wrote it. Handled: `'…'`, `"…"` (with `\` escapes of `$ \` " \ newline`),
//! `$'…'`, backslash escapes, `\`-newline continuations, comments, `; & && || | |&`, redirections
//! (`> f`, `2>&1`, `&> f`), here-documents (their bodies are skipped), `$VAR` / `${…}` / `$(…)` /
//! backquotes (kept literally, marked dynamic; nested quotes and substitutions inside them are
//! followed, and one that never closes is an error with its line and column, as bash rejects it).
//!
//! Continuations are read as bash reads them, never guessed. Where that is probably not what the
//! author meant, a [`Break`] records it (a comment or an empty line right after a continuation
//! ends the command there; a blank after the final backslash is an escaped blank, so the command
//! ends there too; a backslash with no blank before it glues the next line's first word on).
//! The launch model turns a break that loses something into a finding with its line.
//!
//! Linear time: line numbers come from a [`LineIndex`] built once, and every scanner moves
//! forward only.

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

/// Text bash cannot run at all (an unterminated quote or substitution).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}, column {col}: {message}")]
pub struct LexError {
    pub line: usize,
    /// 1-based, in characters.
    pub col: usize,
    pub message: String,
}

/// How a continuation is broken (what bash does instead of joining the lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakKind {
    /// `\` at the end of a line, then a comment line: the comment ends the command.
    CommentAfterContinuation,
    /// `\` at the end of a line, then an empty line: the empty line ends the command.
    EmptyLineAfterContinuation,
    /// `\` then blanks at the end of a line: an escaped blank (an argument of its own, or the end
    /// of the word before), and the newline ends the command.
    BlankAfterBackslash,
    /// As [`BreakKind::BlankAfterBackslash`], the blank being the carriage return of a Windows
    /// (CRLF) line ending.
    CrlfAfterBackslash,
    /// No blank before the final `\` and none at the start of the next line: bash joins the two
    /// words into one.
    Glued,
}

/// A continuation bash does not read as the author probably meant.
#[derive(Debug, Clone, PartialEq)]
pub struct Break {
    pub kind: BreakKind,
    /// Where it is: the backslash, the comment or the empty line.
    pub offset: usize,
    pub line: usize,
    /// For [`BreakKind::Glued`]: the joined word.
    pub joined: Option<String>,
}

impl Break {
    /// What bash does here, in a sentence.
    pub(crate) fn explain(&self) -> String {
        match self.kind {
            BreakKind::CommentAfterContinuation => {
                "a comment line follows a backslash continuation, so the command ends at the \
                 comment and the lines after it run as a separate command"
                    .into()
            }
            BreakKind::EmptyLineAfterContinuation => {
                "an empty line follows a backslash continuation, so the command ends there and \
                 the lines after it run as a separate command"
                    .into()
            }
            BreakKind::BlankAfterBackslash => {
                "a space follows the backslash at the end of this line, so it escapes the space \
                 instead of continuing the line: the command ends here and the next line runs as \
                 a separate command (delete the trailing space)"
                    .into()
            }
            BreakKind::CrlfAfterBackslash => {
                "this file has Windows (CRLF) line endings: bash reads the backslash as escaping \
                 a carriage return, so the command ends here and the next line runs as a separate \
                 command; convert the file (e.g. `dos2unix FILE`)"
                    .into()
            }
            BreakKind::Glued => format!(
                "no space before the backslash at the end of this line and none at the start of \
                 the next: bash joins them into the one word `{}`; add a space before the \
                 backslash",
                self.joined.as_deref().unwrap_or("")
            ),
        }
    }
}

/// One simple command: its words (redirection targets removed) and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
    /// Byte range from the first word's start to the last word's end.
    pub span: Range<usize>,
    pub line: usize,
    /// The operator that ended it (`"\n"`, `";"`, `"&&"`, `"|"`, `"&"`, ...; empty at the end).
    pub ended_by: String,
    /// How many compound commands (`if`, a loop, a `case` arm, `{ }`, a subshell, a function
    /// body) are open around it: 0 at the top level of the script.
    pub depth: usize,
}

/// Byte offsets of line starts, built once: line and column of any offset in O(log n).
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|p| p + 1));
        LineIndex { starts }
    }

    /// 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }

    /// Byte offset where the line holding `offset` starts.
    pub(crate) fn line_start(&self, offset: usize) -> usize {
        self.starts[self.line(offset) - 1]
    }

    /// 1-based column of a byte offset, in characters.
    pub fn col(&self, text: &str, offset: usize) -> usize {
        let offset = offset.min(text.len());
        let start = self.line_start(offset).min(offset);
        text.get(start..offset).map_or(1, |s| s.chars().count() + 1)
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

fn is_meta(b: u8) -> bool {
    matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'\n') || is_blank(b)
}

/// How deep `$( "$( … )" )` may nest before the text is refused (bash has no such limit, but no
/// launch needs more, and the scanners recurse).
const MAX_NESTING: usize = 64;

struct Lexer<'a> {
    text: &'a str,
    b: &'a [u8],
    lines: LineIndex,
    i: usize,
    tokens: Vec<Token>,
    breaks: Vec<Break>,
    /// A `<<` / `<<-` was just read: the next word is a here-document delimiter.
    heredoc_next: Option<bool>,
    /// Here-documents whose bodies start after the next newline: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
}

impl<'a> Lexer<'a> {
    fn err(&self, at: usize, message: impl Into<String>) -> LexError {
        LexError {
            line: self.lines.line(at),
            col: self.lines.col(self.text, at),
            message: message.into(),
        }
    }

    fn brk(&mut self, kind: BreakKind, at: usize, joined: Option<String>) {
        self.breaks.push(Break {
            kind,
            offset: at,
            line: self.lines.line(at),
            joined,
        });
    }

    /// At `\` followed by blanks and a newline: a trailing escaped blank. Returns whether it is.
    fn trailing_escaped_blank(&mut self, at: usize) -> bool {
        let mut j = at + 1;
        while j < self.b.len() && is_blank(self.b[j]) {
            j += 1;
        }
        if j == at + 1 || (j < self.b.len() && self.b[j] != b'\n') {
            return false;
        }
        let kind = if self.b[at + 1] == b'\r' && j == at + 2 {
            BreakKind::CrlfAfterBackslash
        } else {
            BreakKind::BlankAfterBackslash
        };
        self.brk(kind, at, None);
        true
    }

    /// After a continuation at `cont` (the backslash): is the next line a comment or empty?
    fn note_after_continuation(&mut self, cont: usize) {
        let mut j = cont + 2;
        while j < self.b.len() && is_blank(self.b[j]) {
            j += 1;
        }
        match self.b.get(j) {
            Some(b'#') => self.brk(BreakKind::CommentAfterContinuation, j, None),
            Some(b'\n') => self.brk(BreakKind::EmptyLineAfterContinuation, j, None),
            _ => {}
        }
    }

    fn run(mut self) -> Result<Lexed, LexError> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if is_blank(c) {
                self.i += 1;
                continue;
            }
            if c == b'\\' && self.b.get(self.i + 1) == Some(&b'\n') {
                self.note_after_continuation(self.i);
                self.i += 2;
                continue;
            }
            if c == b'#' {
                // A comment runs to the end of the line (the newline itself is a separator).
                self.i =
                    memchr::memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |p| self.i + p);
                continue;
            }
            if c == b'\n' {
                self.tokens.push(Token::Separator {
                    op: "\n".into(),
                    span: self.i..self.i + 1,
                });
                self.i += 1;
                self.heredoc_next = None;
                self.skip_heredoc_bodies();
                continue;
            }
            if matches!(c, b'<' | b'>') && self.b.get(self.i + 1) == Some(&b'(') {
                // `<(cmd)` / `>(cmd)`: a process substitution is one word (a file name), not a
                // redirection followed by a subshell.
                let end = self.group_end(self.i, b'(', b')', 0)?;
                self.tokens.push(Token::Word(Word {
                    span: self.i..end,
                    value: self.text[self.i..end].to_string(),
                    dynamic: true,
                    line: self.lines.line(self.i),
                }));
                self.i = end;
                continue;
            }
            if let Some(len) = self.redirect_len(self.i) {
                let op = &self.text[self.i..self.i + len];
                let digits = op.trim_start_matches(|c: char| c.is_ascii_digit());
                if digits == "<<" || digits == "<<-" {
                    self.heredoc_next = Some(digits == "<<-");
                }
                self.tokens.push(Token::Redirect {
                    span: self.i..self.i + len,
                });
                self.i += len;
                continue;
            }
            if matches!(c, b';' | b'&' | b'|' | b'(' | b')') {
                self.heredoc_next = None;
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
        Ok(Lexed {
            tokens: self.tokens,
            breaks: self.breaks,
        })
    }

    /// After a newline: skip the bodies of pending here-documents, up to their delimiter lines.
    fn skip_heredoc_bodies(&mut self) {
        for (delim, strip_tabs) in std::mem::take(&mut self.heredocs) {
            while self.i < self.b.len() {
                let end =
                    memchr::memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |p| self.i + p);
                let mut line = &self.text[self.i..end];
                if strip_tabs {
                    line = line.trim_start_matches('\t');
                }
                self.i = (end + 1).min(self.b.len());
                if line == delim {
                    break;
                }
            }
        }
    }

    /// Length of a redirection operator starting at `at` (with an optional fd number), if any.
    fn redirect_len(&self, at: usize) -> Option<usize> {
        let mut j = at;
        while j < self.b.len() && self.b[j].is_ascii_digit() {
            j += 1;
        }
        let rest = &self.b[j..];
        let op_len =
            if rest.starts_with(b"&>>") || rest.starts_with(b"<<<") || rest.starts_with(b"<<-") {
                3
            } else if rest.starts_with(b"&>")
                || rest.starts_with(b">>")
                || rest.starts_with(b">&")
                || rest.starts_with(b"<&")
                || rest.starts_with(b"<<")
                || rest.starts_with(b">|")
                || rest.starts_with(b"<>")
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
                b'\\' => match self.b.get(self.i + 1) {
                    Some(b'\n') => {
                        // A continuation inside a word: the word goes on with the next line's
                        // first byte unless that line starts with a blank (then it ends here).
                        // (A `#` right at the start of the next line is part of the word.)
                        let at = self.i;
                        self.i += 2;
                        match self.b.get(self.i) {
                            Some(&n) if is_blank(n) || n == b'\n' => {
                                self.note_after_continuation(at);
                                break;
                            }
                            None => break,
                            Some(&n) => {
                                if n == b'-' {
                                    let glued_end = self.peek_word_end(self.i);
                                    let mut joined = String::from_utf8_lossy(&value).into_owned();
                                    joined.push_str(&self.text[self.i..glued_end]);
                                    self.brk(BreakKind::Glued, at, Some(joined));
                                }
                            }
                        }
                    }
                    Some(_) => {
                        if self.trailing_escaped_blank(self.i) {
                            // The escaped blank belongs to this word; the newline ends it.
                            value.push(self.b[self.i + 1]);
                            self.i += 2;
                            break;
                        }
                        let ch = self.char_len(self.i + 1);
                        value.extend_from_slice(&self.b[self.i + 1..self.i + 1 + ch]);
                        self.i += 1 + ch;
                    }
                    None => {
                        self.i += 1;
                    }
                },
                b'\'' => {
                    let close = memchr::memchr(b'\'', &self.b[self.i + 1..])
                        .ok_or_else(|| self.err(self.i, "unterminated single quote"))?;
                    value.extend_from_slice(&self.b[self.i + 1..self.i + 1 + close]);
                    self.i += close + 2;
                }
                b'"' => {
                    let open = self.i;
                    self.i += 1;
                    loop {
                        let Some(&d) = self.b.get(self.i) else {
                            return Err(self.err(open, "unterminated double quote"));
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
                                let end = if d == b'`' {
                                    self.backquote_end(self.i)?
                                } else {
                                    self.expansion_end(self.i, 0)?
                                };
                                value.extend_from_slice(&self.b[self.i..end]);
                                self.i = end;
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
                    let end = self.expansion_end(self.i, 0)?;
                    value.extend_from_slice(&self.b[self.i..end]);
                    self.i = end;
                }
                b'`' => {
                    dynamic = true;
                    let end = self.backquote_end(self.i)?;
                    value.extend_from_slice(&self.b[self.i..end]);
                    self.i = end;
                }
                _ => {
                    value.push(c);
                    self.i += 1;
                }
            }
        }
        if self.i > start {
            let value = String::from_utf8_lossy(&value).into_owned();
            if let Some(strip) = self.heredoc_next.take() {
                self.heredocs.push((value.clone(), strip));
            }
            self.tokens.push(Token::Word(Word {
                span: start..self.i,
                value,
                dynamic,
                line: self.lines.line(start),
            }));
        }
        Ok(())
    }

    /// Where the plain run of word bytes starting at `at` ends (for a message only).
    fn peek_word_end(&self, at: usize) -> usize {
        let mut k = at;
        while k < self.b.len() && !is_meta(self.b[k]) && !matches!(self.b[k], b'\\' | b'\'' | b'"')
        {
            k += 1;
        }
        k
    }

    /// Bytes in the UTF-8 character starting at `at`.
    fn char_len(&self, at: usize) -> usize {
        let mut n = 1;
        while at + n < self.b.len() && !self.text.is_char_boundary(at + n) {
            n += 1;
        }
        n
    }

    /// End of a backquoted command substitution starting at `at` (the opening backquote).
    fn backquote_end(&self, at: usize) -> Result<usize, LexError> {
        let mut k = at + 1;
        while k < self.b.len() {
            match self.b[k] {
                b'\\' => k += 2,
                b'`' => return Ok(k + 1),
                _ => k += 1,
            }
        }
        Err(self.err(at, "unterminated backquote (bash: unexpected EOF while looking for the matching backquote)"))
    }

    /// End of `$NAME`, `${…}`, `$(…)`, `$((…))` starting at `at` (the `$`).
    fn expansion_end(&self, at: usize, depth: usize) -> Result<usize, LexError> {
        let j = at + 1;
        match self.b.get(j) {
            Some(b'{') => self.group_end(at, b'{', b'}', depth),
            Some(b'(') => self.group_end(at, b'(', b')', depth),
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

    /// End of a `${…}` or `$(…)` group at `at` (the `$`): quotes, escapes, backquotes and nested
    /// substitutions inside it are followed, so a `)` inside quotes does not close it.
    fn group_end(&self, at: usize, open: u8, close: u8, depth: usize) -> Result<usize, LexError> {
        if depth >= MAX_NESTING {
            return Err(self.err(
                at,
                format!("substitutions nested more than {MAX_NESTING} deep"),
            ));
        }
        let unclosed = || {
            let what = self.text.get(at..at + 2).unwrap_or("$(");
            let closer = close as char;
            self.err(
                at,
                format!(
                    "`{what}` is never closed (bash: unexpected EOF while looking for matching \
                     `{closer}`)"
                ),
            )
        };
        let mut level = 0usize;
        let mut k = at + 1;
        while k < self.b.len() {
            let c = self.b[k];
            match c {
                b'\\' => {
                    k += 2;
                    continue;
                }
                b'\'' => {
                    // Single quotes inside `$(…)` (and in `${…}` bash reads them too).
                    let close_q = memchr::memchr(b'\'', &self.b[k + 1..]).ok_or_else(unclosed)?;
                    k += close_q + 2;
                    continue;
                }
                b'"' | b'`' | b'$' => {
                    let nested = match c {
                        b'"' => Some(self.dquote_end(k, depth + 1)),
                        b'`' => Some(self.backquote_end(k)),
                        _ if matches!(self.b.get(k + 1), Some(b'(' | b'{')) => {
                            Some(self.expansion_end(k, depth + 1))
                        }
                        _ => None,
                    };
                    match nested {
                        Some(Ok(end)) => {
                            k = end;
                            continue;
                        }
                        // Whatever runs to the end of the text inside leaves this one open.
                        Some(Err(e)) if e.message.contains("nested") => return Err(e),
                        Some(Err(_)) => return Err(unclosed()),
                        None => {}
                    }
                }
                _ => {}
            }
            if c == open {
                level += 1;
            } else if c == close {
                level -= 1;
                if level == 0 {
                    return Ok(k + 1);
                }
            }
            k += 1;
        }
        Err(unclosed())
    }

    /// End of a double-quoted string at `at` (the opening quote) inside a substitution.
    fn dquote_end(&self, at: usize, depth: usize) -> Result<usize, LexError> {
        let mut k = at + 1;
        while k < self.b.len() {
            match self.b[k] {
                b'\\' => k += 2,
                b'"' => return Ok(k + 1),
                b'`' => k = self.backquote_end(k)?,
                b'$' if matches!(self.b.get(k + 1), Some(b'(' | b'{')) => {
                    k = self.expansion_end(k, depth)?;
                }
                _ => k += 1,
            }
        }
        Err(self.err(at, "unterminated double quote"))
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

/// Tokens and the continuations bash reads differently from how they look.
#[derive(Debug, Clone, PartialEq)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub breaks: Vec<Break>,
}

/// Tokenize a shell script.
pub fn tokenize(text: &str) -> Result<Lexed, LexError> {
    Lexer {
        text,
        b: text.as_bytes(),
        lines: LineIndex::new(text),
        i: 0,
        tokens: Vec::new(),
        breaks: Vec::new(),
        heredoc_next: None,
        heredocs: Vec::new(),
    }
    .run()
}

/// A script as simple commands, with its broken continuations.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub commands: Vec<SimpleCommand>,
    pub breaks: Vec<Break>,
    /// The outermost compound command still open at the end (`if` with no `fi`, `{` with no
    /// `}`, ...) as (byte offset, word): bash refuses the whole script ("unexpected end of
    /// file"), so nothing in it runs.
    pub unclosed: Option<(usize, String)>,
    /// The first reserved word that closes or continues a compound command none opened (`fi`,
    /// `done`, `esac`, `}`, `then`, `else`, `elif`, `do` at the top level), as (byte offset,
    /// word): bash stops there with "syntax error near unexpected token".
    pub stray: Option<(usize, String)>,
}

/// A compound command open around the current one (its words are bash's reserved words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `if … fi`, `while`/`until`/`for`/`select … done`, `{ … }`, `( … )`.
    Block,
    /// `case WORD` before its `in`.
    CaseHead,
    /// Inside `case … in`, reading a pattern (up to its `)`).
    CasePattern,
    /// Inside a `case` arm, up to `;;` or `esac`.
    CaseArm,
}

/// Words that open a compound command at the start of a command.
const OPENERS: &[&str] = &["if", "while", "until", "for", "select", "{"];
/// Words that close one.
const CLOSERS: &[&str] = &["fi", "done", "}"];
/// Words that may stand before a command on its line without starting one of its own.
const LEADING: &[&str] = &["then", "else", "elif", "do", "!", "time"];

/// Split a script into simple commands (redirection targets dropped), each with how deep it
/// sits in compound commands (`if`, loops, `case` arms, `{ }`, subshells, function bodies).
pub fn script(text: &str) -> Result<Script, LexError> {
    let lexed = tokenize(text)?;
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut skip_next = false;
    let mut stack: Vec<Open> = Vec::new();
    // Where each open compound command starts (offset, word), beside `stack`.
    let mut opened: Vec<(usize, String)> = Vec::new();
    // `f()` just read: the `(` `)` of a function definition, not a subshell.
    let mut fn_parens = false;
    let mut stray: Option<(usize, String)> = None;
    let flush = |words: &mut Vec<Word>, out: &mut Vec<SimpleCommand>, op: &str, depth: usize| {
        if let (Some(first), Some(last)) = (words.first(), words.last()) {
            out.push(SimpleCommand {
                span: first.span.start..last.span.end,
                line: first.line,
                words: std::mem::take(words),
                ended_by: op.to_string(),
                depth,
            });
        }
    };
    let at_start = |words: &[Word]| {
        words
            .iter()
            .all(|w| LEADING.contains(&w.value.as_str()) || OPENERS.contains(&w.value.as_str()))
    };
    for t in lexed.tokens {
        match t {
            Token::Word(w) => {
                if skip_next {
                    skip_next = false;
                    continue;
                }
                match stack.last() {
                    Some(Open::CasePattern) => {
                        if w.value == "esac" {
                            stack.pop();
                            opened.pop();
                        }
                        // A pattern is not a command.
                        continue;
                    }
                    Some(Open::CaseHead) if w.value == "in" => {
                        words.push(w);
                        flush(&mut words, &mut out, "", stack.len());
                        if let Some(top) = stack.last_mut() {
                            *top = Open::CasePattern;
                        }
                        continue;
                    }
                    _ => {}
                }
                let v = w.value.as_str();
                if words.len() == 2 && words[0].value == "function" && v == "{" {
                    // `function NAME {`: the name is not a command.
                    words.clear();
                }
                // Reserved only when unquoted (`"fi"` is a command named fi).
                let reserved = &text[w.span.clone()] == v;
                if reserved
                    && stack.is_empty()
                    && stray.is_none()
                    && (CLOSERS.contains(&v) || v == "esac" || LEADING[..4].contains(&v))
                    && at_start(&words)
                {
                    stray = Some((w.span.start, v.to_string()));
                }
                if at_start(&words) {
                    if OPENERS.contains(&v) {
                        stack.push(Open::Block);
                        opened.push((w.span.start, v.to_string()));
                    } else if v == "case" {
                        stack.push(Open::CaseHead);
                        opened.push((w.span.start, v.to_string()));
                    } else if CLOSERS.contains(&v) || v == "esac" {
                        stack.pop();
                        opened.pop();
                    }
                }
                words.push(w);
            }
            Token::Redirect { span } => {
                if stack.last() == Some(&Open::CasePattern) {
                    continue;
                }
                // `2>&1` carries its target; `> file` takes the next word.
                let op = &text[span.clone()];
                let has_target = op.ends_with('&') && !op.starts_with('&');
                skip_next = !has_target || op.ends_with(">&") || op.ends_with("<&");
            }
            Token::Separator { op, span } => {
                skip_next = false;
                if stack.last() == Some(&Open::CasePattern) {
                    if op == ")"
                        && let Some(top) = stack.last_mut()
                    {
                        *top = Open::CaseArm;
                    }
                    continue;
                }
                match op.as_str() {
                    "(" if !words.is_empty() && !at_start(&words) => {
                        // `NAME()`: a function definition; its body follows.
                        words.clear();
                        fn_parens = true;
                        continue;
                    }
                    ")" if fn_parens => {
                        fn_parens = false;
                        continue;
                    }
                    _ => {}
                }
                flush(&mut words, &mut out, &op, stack.len());
                match op.as_str() {
                    "(" => {
                        stack.push(Open::Block);
                        opened.push((span.start, op.clone()));
                    }
                    ")" => {
                        stack.pop();
                        opened.pop();
                    }
                    ";;" if stack.last() == Some(&Open::CaseArm) => {
                        if let Some(top) = stack.last_mut() {
                            *top = Open::CasePattern;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    flush(&mut words, &mut out, "", stack.len());
    Ok(Script {
        commands: out,
        breaks: lexed.breaks,
        unclosed: opened.into_iter().next(),
        stray,
    })
}

/// Where bash's brace expansion starts in a word's source text (`m{,}`, `a{1..3}`,
/// `{"a":1,"b":2}` unquoted): the byte offset of the `{`. Quoted text, `${…}`, `$(…)` and
/// backquotes are not expanded this way, nor is a `{…}` with no unquoted `,` or `..` in it.
pub(crate) fn brace_expansion(raw: &str) -> Option<usize> {
    let b = raw.as_bytes();
    // The index past a quoted or substituted part starting at `i`, or `i + 1`.
    let skip = |i: usize| -> usize {
        match b[i] {
            b'\\' => i + 2,
            b'\'' => memchr::memchr(b'\'', &b[i + 1..]).map_or(b.len(), |k| i + k + 2),
            b'"' | b'`' => {
                let q = b[i];
                let mut k = i + 1;
                while k < b.len() && b[k] != q {
                    k += if b[k] == b'\\' { 2 } else { 1 };
                }
                k + 1
            }
            b'$' if matches!(b.get(i + 1), Some(b'{') | Some(b'(')) => {
                let (open, close) = if b[i + 1] == b'{' {
                    (b'{', b'}')
                } else {
                    (b'(', b')')
                };
                let mut depth = 0usize;
                let mut k = i + 1;
                while k < b.len() {
                    if b[k] == open {
                        depth += 1;
                    } else if b[k] == close {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    k += 1;
                }
                k + 1
            }
            _ => i + 1,
        }
    };
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' {
            i = skip(i);
            continue;
        }
        // An unquoted `{`: find its `}` at the same depth, noting a `,` or `..` at depth 1.
        let (mut depth, mut k, mut list) = (0usize, i, false);
        while k < b.len() {
            match b[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => list = true,
                b'.' if depth == 1 && b.get(k + 1) == Some(&b'.') => list = true,
                _ => {}
            }
            k = if matches!(b[k], b'{' | b'}' | b',' | b'.') {
                k + 1
            } else {
                skip(k)
            };
        }
        if k < b.len() && list {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Split a script into simple commands (redirection targets dropped), ignoring breaks.
pub fn commands(text: &str) -> Result<Vec<SimpleCommand>, LexError> {
    Ok(script(text)?.commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1-based line number of a byte offset, by one scan: the reference for [`LineIndex`].
    fn line_of(text: &str, offset: usize) -> usize {
        memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
    }

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
    fn broken_continuations_are_read_as_bash_reads_them() {
        let s = script("vllm serve m \\\n# c\n --tp 2").expect("comment");
        assert_eq!(s.breaks[0].kind, BreakKind::CommentAfterContinuation);
        assert_eq!(s.breaks[0].line, 2);
        assert_eq!(s.commands.len(), 2);
        assert_eq!(s.commands[1].words[0].value, "--tp");

        let s = script("vllm serve m \\ \n --tp 2").expect("trailing space");
        assert_eq!(s.breaks[0].kind, BreakKind::BlankAfterBackslash);
        assert_eq!(s.breaks[0].line, 1);
        assert_eq!(
            s.commands[0].words[3].value, " ",
            "bash passes the escaped space"
        );
        assert_eq!(s.commands[1].words[0].value, "--tp");

        let s = script("vllm serve m --tp 2\\\n--x").expect("glued");
        assert_eq!(s.breaks[0].kind, BreakKind::Glued);
        assert_eq!(s.breaks[0].joined.as_deref(), Some("2--x"));
        assert_eq!(s.commands[0].words[4].value, "2--x");

        let s = script("vllm serve m \\\r\n  --x\r\n").expect("crlf");
        assert_eq!(s.breaks[0].kind, BreakKind::CrlfAfterBackslash);
        assert!(s.breaks[0].explain().contains("CRLF"));

        let s = script("vllm serve m \\\n\n--x").expect("blank");
        assert_eq!(s.breaks[0].kind, BreakKind::EmptyLineAfterContinuation);
        assert_eq!(s.breaks[0].line, 2);

        // Gluing a path is legitimate: no break.
        let s = script("vllm serve /models/\\\nqwen").expect("path");
        assert!(s.breaks.is_empty());
        assert_eq!(s.commands[0].words[2].value, "/models/qwen");
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
    fn substitutions_nest_with_quotes() {
        let cmds = commands(r#"vllm serve "$(echo ")")" --x "${A:-"}"}" y"#).expect("lexes");
        let w = &cmds[0].words;
        assert_eq!(w[2].value, r#"$(echo ")")"#);
        assert_eq!(w[4].value, r#"${A:-"}"}"#);
        assert_eq!(w[5].value, "y");
    }

    #[test]
    fn brace_expansion_is_found_only_where_bash_expands() {
        for (raw, at) in [
            ("m{,}", Some(1)),
            ("a{1..3}", Some(1)),
            (r#"{"a":1,"b":2}"#, Some(0)),
            ("x{a,{b,c}}y", Some(1)),
            ("'{a,b}'{c,d}", Some(7)),
        ] {
            assert_eq!(brace_expansion(raw), at, "{raw}");
        }
        for raw in [
            "{}",
            "{a}",
            "'{a,b}'",
            r#""{a,b}""#,
            "${A:-a,b}",
            "$(echo {a,b})",
            r"\{a,b}",
            "{a,b",
            "`echo {a,b}`",
        ] {
            assert_eq!(brace_expansion(raw), None, "{raw}");
        }
    }

    #[test]
    fn a_closer_that_closes_nothing_is_found() {
        let st = |t: &str| script(t).expect("lexes").stray;
        assert_eq!(st("vllm serve m\nfi\n"), Some((13, "fi".into())));
        assert_eq!(st("vllm serve m; done"), Some((14, "done".into())));
        assert_eq!(st("then vllm serve m"), Some((0, "then".into())));
        assert_eq!(st("esac"), Some((0, "esac".into())));
        for fine in [
            "if a; then vllm serve m; elif b; then c; else d; fi",
            "while a; do b; done",
            "case x in a) b;; esac",
            "f() { vllm serve m; }\nf",
            "{ a; }",
            "echo fi done\n\"fi\"",
            "for i in a b; do echo $i; done",
        ] {
            assert_eq!(st(fine), None, "{fine}");
        }
    }

    #[test]
    fn unclosed_substitutions_are_errors_with_line_and_column() {
        let e = commands("echo ok\nvllm serve \"$(\"").expect_err("bash rejects it");
        assert_eq!((e.line, e.col), (2, 13), "{e}");
        assert!(e.message.contains("`$(` is never closed"), "{e}");
        let e = commands("vllm serve ${A").expect_err("unclosed brace");
        assert_eq!((e.line, e.col), (1, 12));
        let e = commands("vllm serve \"`x\"").expect_err("unclosed backquote");
        assert!(e.message.contains("backquote"), "{e}");
        let deep = format!("vllm serve {}", "\"$(".repeat(200));
        let e = commands(&deep).expect_err("too deep");
        assert!(e.message.contains("nested"), "{e}");
    }

    #[test]
    fn here_document_bodies_are_skipped() {
        let text = "cat > cfg <<'EOF'\nit's not a command\nvllm serve nope\nEOF\nvllm serve m\ncat <<-X\n\tdon't\n\tX\n";
        assert_eq!(
            values(text),
            vec![vec!["cat"], vec!["vllm", "serve", "m"], vec!["cat"]]
        );
    }

    #[test]
    fn unterminated_quote_names_line_and_column() {
        let e = commands("echo\nvllm serve 'm").expect_err("unterminated");
        assert_eq!((e.line, e.col), (2, 12));
    }

    #[test]
    fn compound_commands_give_each_command_its_depth() {
        let depth = |text: &str| -> Vec<(String, usize)> {
            commands(text)
                .expect("lexes")
                .into_iter()
                .map(|c| (c.words[0].value.clone(), c.depth))
                .collect()
        };
        let s = |v: &str, d: usize| (v.to_string(), d);
        assert_eq!(
            depth(
                "if a; then
  export X=1
fi
vllm serve m
"
            ),
            vec![
                s("if", 1),
                s("then", 1),
                s("export", 1),
                s("fi", 0),
                s("vllm", 0)
            ]
        );
        // Patterns are not commands; an arm ends at `;;`.
        assert_eq!(
            depth(
                "case $1 in
  a|b) export X=1;;
  *) y;;
esac
z
"
            ),
            vec![s("case", 1), s("export", 1), s("y", 1), s("z", 0)]
        );
        assert_eq!(
            depth(
                "f() {
  export X=1
}
function g { h; }
( i )
j
"
            ),
            vec![
                s("{", 1),
                s("export", 1),
                s("}", 0),
                s("{", 1),
                s("}", 0),
                s("i", 1),
                s("j", 0)
            ]
        );
        assert_eq!(
            depth("for i in 1 2; do export X=$i; done; k"),
            vec![s("for", 1), s("do", 1), s("done", 0), s("k", 0)]
        );
    }

    #[test]
    fn process_substitution_is_one_word() {
        assert_eq!(
            values("vllm serve m --config <(echo 'a)') -tp 2 > log"),
            vec![vec![
                "vllm",
                "serve",
                "m",
                "--config",
                "<(echo 'a)')",
                "-tp",
                "2"
            ]]
        );
        let e = commands("cat <(echo x").expect_err("unclosed");
        assert!(e.message.contains("`<(` is never closed"), "{e}");
    }

    #[test]
    fn line_index() {
        let t = "ab\nc\n\nd";
        let li = LineIndex::new(t);
        assert_eq!(li.line(0), 1);
        assert_eq!(li.line(3), 2);
        assert_eq!(li.line(5), 3);
        assert_eq!(li.line(6), 4);
        assert_eq!(li.col(t, 6), 1);
        assert_eq!(LineIndex::new("é x").col("é x", 3), 3);
        for off in 0..=t.len() {
            assert_eq!(li.line(off), line_of(t, off));
        }
    }
}
