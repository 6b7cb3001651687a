//! Env files: `NAME=value` lines with no command, in three dialects that differ in quoting.
//!
//! - [`Dialect::Docker`] (`docker run --env-file`): the value is everything after `=`, quotes
//!   and trailing blanks included; a bare `NAME` passes the caller's value through.
//! - [`Dialect::Compose`] (compose's `.env`, `env_file:`): optional `export `, `'…'` literal,
//!   `"…"` with escapes, an unquoted value ends at ` #` and loses trailing blanks; `${VAR}` in
//!   unquoted and double-quoted values is interpolated.
//! - [`Dialect::Systemd`] (`EnvironmentFile=`): `#` and `;` comments, `'…'` and `"…"` quotes,
//!   unquoted values lose trailing blanks; nothing is interpolated.
//!
//! Every entry keeps the byte span of its value, so an edit replaces the value and nothing else.

use super::{EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Render, SourceFile, interp};
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Docker,
    Compose,
    Systemd,
}

impl Dialect {
    pub fn describe(self) -> &'static str {
        match self {
            Dialect::Docker => "docker --env-file",
            Dialect::Compose => "compose .env",
            Dialect::Systemd => "systemd EnvironmentFile",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    None,
    Single,
    Double,
}

/// One `NAME=value` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    /// `None`: a bare `NAME` (docker: the caller's value).
    pub value: Option<String>,
    /// The value as written (quotes included); empty at the end of `NAME=`.
    pub value_span: Range<usize>,
    pub quote: Quote,
    /// The value holds `${…}` that compose interpolates.
    pub interpolated: bool,
    pub line: usize,
    /// The whole line with its newline (for removal).
    pub line_span: Range<usize>,
}

/// Does every content line look like `NAME=value` (or `export NAME=value`)?
pub(crate) fn looks_like_env_file(text: &str) -> bool {
    let mut any = false;
    for l in text.lines() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let t = t.strip_prefix("export ").map_or(t, str::trim_start);
        let Some((name, _)) = t.split_once('=') else {
            return false;
        };
        if !super::is_name(name.trim_end()) {
            return false;
        }
        // `A=1 vllm serve m` is a command with a prefix, not an env line: a value that bash
        // splits into more words than the assignment is a command.
        // (A line bash cannot read alone, such as a quote that goes on, is no env line either.)
        match super::lex::commands(t) {
            Ok(cmds)
                if cmds.iter().all(|c| {
                    c.words
                        .iter()
                        .all(|w| super::is_assignment(&w.value).is_some())
                }) => {}
            _ => return false,
        }
        any = true;
    }
    any
}

fn err(file: usize, line: usize, col: usize, msg: impl Into<String>) -> LaunchError {
    LaunchError::syntax(file, line, col, msg)
}

/// Parse an env file.
pub fn parse(text: &str, dialect: Dialect, file: usize) -> Result<Vec<Entry>, LaunchError> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut line_no = 0;
    let bytes = text.as_bytes();
    while start < text.len() {
        line_no += 1;
        let nl = memchr::memchr(b'\n', &bytes[start..]).map_or(text.len(), |p| start + p);
        let line_span = start..(nl + 1).min(text.len());
        let mut end = nl;
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        let line = &text[start..end];
        let here = start;
        start = line_span.end;
        let trimmed = line.trim_start();
        let lead = line.len() - trimmed.len();
        if trimmed.is_empty()
            || trimmed.starts_with('#')
            || (dialect == Dialect::Systemd && trimmed.starts_with(';'))
        {
            continue;
        }
        let mut body = trimmed;
        let mut off = here + lead;
        if dialect != Dialect::Docker
            && let Some(rest) = body.strip_prefix("export ")
        {
            let r = rest.trim_start();
            off += body.len() - r.len();
            body = r;
        }
        let Some(eq) = body.find('=') else {
            if dialect == Dialect::Docker && !body.contains(char::is_whitespace) {
                out.push(Entry {
                    name: body.trim_end().to_string(),
                    value: None,
                    value_span: off + body.len()..off + body.len(),
                    quote: Quote::None,
                    interpolated: false,
                    line: line_no,
                    line_span,
                });
                continue;
            }
            return Err(err(
                file,
                line_no,
                lead + 1,
                format!("expected NAME=value in this {} file", dialect.describe()),
            ));
        };
        let raw_name = &body[..eq];
        let name = if dialect == Dialect::Docker {
            raw_name
        } else {
            raw_name.trim_end()
        };
        if !super::is_name(name) {
            return Err(err(
                file,
                line_no,
                lead + 1,
                format!("{name:?} is not a variable name"),
            ));
        }
        let vstart = off + eq + 1;
        let raw = &text[vstart..here + line.len()];
        let (value, value_span, quote, interpolated) =
            value_of(raw, vstart, dialect).map_err(|m| err(file, line_no, vstart - here + 1, m))?;
        out.push(Entry {
            name: name.to_string(),
            value: Some(value),
            value_span,
            quote,
            interpolated,
            line: line_no,
            line_span,
        });
    }
    Ok(out)
}

/// A value as written after `=` (to the end of its line), at byte offset `at`.
fn value_of(
    raw: &str,
    at: usize,
    dialect: Dialect,
) -> Result<(String, Range<usize>, Quote, bool), String> {
    if dialect == Dialect::Docker {
        return Ok((raw.to_string(), at..at + raw.len(), Quote::None, false));
    }
    let lead = raw.len() - raw.trim_start().len();
    let v = &raw[lead..];
    let vat = at + lead;
    match v.as_bytes().first() {
        Some(b'\'') => {
            let close = v[1..]
                .find('\'')
                .ok_or("unterminated single quote (values spanning lines are not read)")?;
            Ok((
                v[1..1 + close].to_string(),
                vat..vat + close + 2,
                Quote::Single,
                false,
            ))
        }
        Some(b'"') => {
            let mut out = String::new();
            let mut chars = v[1..].char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '"' => {
                        let interpolated = dialect == Dialect::Compose && out.contains('$');
                        return Ok((out, vat..vat + i + 2, Quote::Double, interpolated));
                    }
                    '\\' => match chars.next() {
                        Some((_, 'n')) => out.push('\n'),
                        Some((_, 't')) => out.push('\t'),
                        Some((_, 'r')) => out.push('\r'),
                        Some((_, e @ ('"' | '\\' | '$' | '`' | '\''))) => out.push(e),
                        Some((_, e)) => {
                            out.push('\\');
                            out.push(e);
                        }
                        None => out.push('\\'),
                    },
                    c => out.push(c),
                }
            }
            Err("unterminated double quote (values spanning lines are not read)".into())
        }
        _ => {
            // Unquoted: an inline comment starts at a `#` after a blank; trailing blanks go.
            let mut end = v.len();
            if dialect == Dialect::Compose {
                let b = v.as_bytes();
                for i in 1..b.len() {
                    if b[i] == b'#' && (b[i - 1] == b' ' || b[i - 1] == b'\t') {
                        end = i;
                        break;
                    }
                }
            }
            let value = v[..end].trim_end();
            let interpolated = dialect == Dialect::Compose && value.contains('$');
            Ok((
                value.to_string(),
                vat..vat + value.len(),
                Quote::None,
                interpolated,
            ))
        }
    }
}

/// A value written for `dialect`, quoted like `old_raw` when that is still safe.
pub(crate) fn render_value(dialect: Dialect, old_raw: &str, new: &str) -> Result<String, String> {
    if new.contains('\n') || new.contains('\r') || new.contains('\0') {
        return Err(format!(
            "{new:?} holds a line break and cannot go into a {} file",
            dialect.describe()
        ));
    }
    let plain_ok = |v: &str| {
        !v.is_empty()
            && !v.chars().any(|c| {
                c.is_whitespace() || matches!(c, '#' | '\'' | '"' | '\\' | '$' | '`' | ';')
            })
    };
    let double = |v: &str| {
        let mut o = String::from("\"");
        for c in v.chars() {
            if matches!(c, '"' | '\\') || (dialect == Dialect::Compose && c == '$') {
                o.push('\\');
            }
            o.push(c);
        }
        o.push('"');
        o
    };
    Ok(match dialect {
        Dialect::Docker => new.to_string(),
        _ if old_raw.starts_with('\'') && !new.contains('\'') => format!("'{new}'"),
        _ if old_raw.starts_with('"') => double(new),
        _ if plain_ok(new) || new.is_empty() => new.to_string(),
        _ if !new.contains('\'') => format!("'{new}'"),
        _ => double(new),
    })
}

/// What reading a file gives: its sites, and notes.
pub struct Read {
    pub sites: Vec<EnvSite>,
    pub notes: Vec<String>,
}

/// Read `files[file]` as an env file of `dialect`; compose values are interpolated from the
/// entries above them (a host variable of the same name would win).
pub fn read(files: &[SourceFile], file: usize, dialect: Dialect) -> Result<Read, LaunchError> {
    let text = &files[file].text;
    let entries = parse(text, dialect, file)?;
    let mut sites: Vec<EnvSite> = Vec::new();
    let mut notes = Vec::new();
    for e in entries {
        let mut value = e.value.clone();
        let mut dynamic = false;
        if e.interpolated
            && let Some(v) = &e.value
        {
            let known = |n: &str| -> Option<String> {
                sites
                    .iter()
                    .rev()
                    .find(|s| s.name == n)
                    .and_then(|s| s.value.clone())
            };
            match interp::parse(v).ok().map(|p| interp::eval(&p, &known)) {
                Some(interp::Eval::Known(v)) => value = Some(v),
                _ => dynamic = true,
            }
        }
        if dialect == Dialect::Docker && e.value.is_none() {
            notes.push(format!(
                "{}: line {}: {} takes its value from the environment that runs docker",
                files[file].name, e.line, e.name
            ));
        }
        if dialect == Dialect::Docker && e.quote == Quote::None {
            let raw = &text[e.value_span.clone()];
            if raw.len() >= 2
                && ((raw.starts_with('"') && raw.ends_with('"'))
                    || (raw.starts_with('\'') && raw.ends_with('\'')))
            {
                notes.push(format!(
                    "{}: line {}: docker --env-file keeps the quotes: {} is {raw} with the quote \
                     characters in it",
                    files[file].name, e.line, e.name
                ));
            }
        }
        sites.push(EnvSite::new(
            file,
            &e.name,
            value,
            e.value_span.clone(),
            Render::EnvFile { dialect },
            e.line_span.clone(),
            dynamic,
            e.line,
        ));
    }
    Ok(Read { sites, notes })
}

/// Where a new line goes in an env file.
pub(crate) fn append_insert(file: usize, text: &str, dialect: Option<Dialect>) -> Insert {
    Insert {
        file,
        offset: text.len(),
        style: InsertStyle::EnvFileLine { dialect },
    }
}

/// An env file on its own: the environment the engine inherits.
pub fn locate(files: &[SourceFile], file: usize, dialect: Dialect) -> Result<Located, LaunchError> {
    let read = read(files, file, dialect)?;
    let mut notes = read.notes;
    let text = &files[file].text;
    if read.sites.iter().any(|s| {
        let raw = &text[s.span.clone()];
        raw.starts_with('"') || raw.starts_with('\'')
    }) {
        notes.push(format!(
            "{} is read with compose's .env rules (quotes removed); `docker run --env-file` \
             would keep the quote characters in the values",
            files[file].name
        ));
    }
    notes.push(format!(
        "{} holds no vLLM command: read as the environment the engine inherits",
        files[file].name
    ));
    Ok(Located {
        form: Form::EnvFile,
        entrypoint: None,
        env: read.sites,
        args: Vec::new(),
        env_insert: append_insert(file, text, Some(dialect)),
        arg_insert: Insert {
            file,
            offset: 0,
            style: InsertStyle::Nowhere {
                why: format!(
                    "{} is an env file with no vLLM command, so there are no flags to change; \
                     give the script, compose file or unit that runs vLLM",
                    files[file].name
                ),
            },
        },
        notes,
        problems: Vec::new(),
        read_only: None,
        args_read_only: None,
        used_files: vec![file],
        late_insert: None,
        gaps: Default::default(),
        shadowed: Vec::new(),
        frozen: Default::default(),
        arg_vars: Default::default(),
        peers: Vec::new(),
    })
}

/// A new `NAME=value` line at the end of `file_text` (for `dialect`; `None`: an env-only
/// script, `export NAME=value`).
pub(crate) fn new_line(
    dialect: Option<Dialect>,
    file_text: &str,
    name: &str,
    value: &str,
) -> Result<String, String> {
    let line = match dialect {
        Some(d) => format!("{name}={}", render_value(d, "", value)?),
        None => format!("export {name}={}", super::shell::render::quote(value)?),
    };
    Ok(if file_text.is_empty() || file_text.ends_with('\n') {
        format!("{line}\n")
    } else {
        format!("\n{line}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_read_quotes_differently() {
        let text = "# c\nexport A='x y' # c\nB=\"q\\\"z\"\nC=plain # tail\nD=\n";
        let e = parse(text, Dialect::Compose, 0).expect("parses");
        let v: Vec<_> = e
            .iter()
            .map(|e| e.value.clone().unwrap_or_default())
            .collect();
        assert_eq!(v, vec!["x y", "q\"z", "plain", ""]);
        assert_eq!(&text[e[0].value_span.clone()], "'x y'");
        assert_eq!(&text[e[2].value_span.clone()], "plain");
        assert_eq!(e[3].value_span.start, e[3].value_span.end);

        let d = parse("A=\"x\" \nB\n  C=1\n", Dialect::Docker, 0).expect("docker");
        assert_eq!(d[0].value.as_deref(), Some("\"x\" "));
        assert_eq!(d[1].value, None);
        assert_eq!(d[2].name, "C");

        let s = parse("; c\nA=\"x y\"\n", Dialect::Systemd, 0).expect("systemd");
        assert_eq!(s[0].value.as_deref(), Some("x y"));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("A=1\nnot an assignment\n", Dialect::Compose, 0).expect_err("bad");
        assert!(
            matches!(
                e,
                LaunchError::Syntax {
                    line: 2,
                    col: 1,
                    ..
                }
            ),
            "{e:?}"
        );
        let e = parse("A='x\n", Dialect::Compose, 0).expect_err("bad");
        assert!(
            matches!(
                e,
                LaunchError::Syntax {
                    line: 1,
                    col: 3,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn render_keeps_quote_style() {
        assert_eq!(
            render_value(Dialect::Compose, "'a'", "b c"),
            Ok("'b c'".into())
        );
        assert_eq!(
            render_value(Dialect::Compose, "\"a\"", "b$c"),
            Ok("\"b\\$c\"".into())
        );
        assert_eq!(
            render_value(Dialect::Compose, "a", "x:1,y:2"),
            Ok("x:1,y:2".into())
        );
        assert_eq!(
            render_value(Dialect::Compose, "a", "x y"),
            Ok("'x y'".into())
        );
        assert_eq!(render_value(Dialect::Docker, "a", "x y"), Ok("x y".into()));
        assert!(render_value(Dialect::Docker, "a", "x\ny").is_err());
    }

    #[test]
    fn compose_values_interpolate_from_earlier_lines() {
        let files = [SourceFile::new(".env", "A=1\nB=${A}:x\nC=${NOPE}\n")];
        let r = read(&files, 0, Dialect::Compose).expect("reads");
        assert_eq!(r.sites[1].value.as_deref(), Some("1:x"));
        assert!(r.sites[2].dynamic);
    }
}
