//! Compose interpolation: `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME-default}`,
//! `${NAME:?err}`, `${NAME?err}`, `${NAME:+alt}`, `${NAME+alt}`, nested defaults
//! (`${A:-${B:-0}}`) and `$$` for a literal dollar, with byte spans into the text, so the default
//! in effect can be edited in place.
//!
//! What a variable is depends on the host that runs `docker compose`; this module evaluates with
//! the variables it is given (compose's `.env`) and treats every other one as unset, so a value is
//! "what the engine gets unless the host exports the variable".

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `$NAME`, `${NAME}`.
    Plain,
    /// `${NAME:-default}`: the default when unset or empty.
    DefaultUnsetOrEmpty,
    /// `${NAME-default}`: the default when unset.
    DefaultUnset,
    /// `${NAME:?err}`, `${NAME?err}`: an error when unset.
    Required,
    /// `${NAME:+alt}`, `${NAME+alt}`: `alt` when set.
    Alternative { empty_counts: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Literal text (`$$` already turned into `$`); `span` is the raw text.
    Lit { text: String, span: Range<usize> },
    Var {
        name: String,
        op: Op,
        /// The default / alternative / message.
        arg: Vec<Piece>,
        /// The whole `${…}` / `$NAME`.
        span: Range<usize>,
        /// Where the argument is written (empty right before `}` when there is none).
        arg_span: Range<usize>,
    },
}

const MAX_DEPTH: usize = 32;

/// Parse interpolation in `s`.
pub fn parse(s: &str) -> Result<Vec<Piece>, String> {
    let (pieces, end) = parse_until(s, 0, false, 0)?;
    debug_assert_eq!(end, s.len());
    Ok(pieces)
}

fn push_lit(out: &mut Vec<Piece>, text: &str, span: Range<usize>) {
    if let Some(Piece::Lit { text: t, span: sp }) = out.last_mut()
        && sp.end == span.start
    {
        t.push_str(text);
        sp.end = span.end;
        return;
    }
    out.push(Piece::Lit {
        text: text.to_string(),
        span,
    });
}

/// Pieces from `at` up to the end, or up to the `}` closing a `${…}` when `in_brace`.
fn parse_until(
    s: &str,
    at: usize,
    in_brace: bool,
    depth: usize,
) -> Result<(Vec<Piece>, usize), String> {
    if depth > MAX_DEPTH {
        return Err(format!("interpolation nested more than {MAX_DEPTH} deep"));
    }
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = at;
    while i < b.len() {
        match b[i] {
            b'}' if in_brace => return Ok((out, i)),
            b'$' => match b.get(i + 1) {
                Some(b'$') => {
                    push_lit(&mut out, "$", i..i + 2);
                    i += 2;
                }
                Some(b'{') => {
                    let (piece, end) = braced(s, i, depth)?;
                    out.push(piece);
                    i = end;
                }
                Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                    let mut k = i + 1;
                    while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                        k += 1;
                    }
                    out.push(Piece::Var {
                        name: s[i + 1..k].to_string(),
                        op: Op::Plain,
                        arg: Vec::new(),
                        span: i..k,
                        arg_span: k..k,
                    });
                    i = k;
                }
                _ => {
                    return Err(format!(
                        "invalid interpolation at byte {i}: a `$` must be written `$$`, `$NAME` or \
                         `${{NAME}}`"
                    ));
                }
            },
            _ => {
                let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
                push_lit(&mut out, &s[i..i + ch_len], i..i + ch_len);
                i += ch_len;
            }
        }
    }
    if in_brace {
        return Err("`${` is never closed".into());
    }
    Ok((out, i))
}

/// `${…}` at `at` (the `$`): the piece and the offset after its `}`.
fn braced(s: &str, at: usize, depth: usize) -> Result<(Piece, usize), String> {
    let b = s.as_bytes();
    let mut k = at + 2;
    while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
        k += 1;
    }
    let name = &s[at + 2..k];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "`${{{}` does not start with a variable name",
            &s[at + 2..k.min(s.len())]
        ));
    }
    let rest = &s[k..];
    let (op, op_len) = if rest.starts_with(":-") {
        (Op::DefaultUnsetOrEmpty, 2)
    } else if rest.starts_with('-') {
        (Op::DefaultUnset, 1)
    } else if rest.starts_with(":?") {
        (Op::Required, 2)
    } else if rest.starts_with('?') {
        (Op::Required, 1)
    } else if rest.starts_with(":+") {
        (Op::Alternative { empty_counts: true }, 2)
    } else if rest.starts_with('+') {
        (
            Op::Alternative {
                empty_counts: false,
            },
            1,
        )
    } else if rest.starts_with('}') {
        (Op::Plain, 0)
    } else {
        return Err(format!(
            "`${{{name}` is not closed by `}}` or followed by :- - :? ? :+ +"
        ));
    };
    let arg_start = k + op_len;
    let (arg, end) = if op == Op::Plain {
        (Vec::new(), k)
    } else {
        parse_until(s, arg_start, true, depth + 1)?
    };
    if b.get(end) != Some(&b'}') {
        return Err("`${` is never closed".into());
    }
    Ok((
        Piece::Var {
            name: name.to_string(),
            op,
            arg,
            span: at..end + 1,
            arg_span: arg_start.min(end)..end,
        },
        end + 1,
    ))
}

/// What a text evaluates to.
#[derive(Debug, Clone, PartialEq)]
pub enum Eval {
    Known(String),
    /// Depends on a host variable (named).
    Unknown(String),
}

/// Evaluate with `known` variables (others are taken as unset on the host).
pub fn eval(pieces: &[Piece], known: &dyn Fn(&str) -> Option<String>) -> Eval {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Lit { text, .. } => out.push_str(text),
            Piece::Var { name, op, arg, .. } => {
                let v = known(name);
                let part = match (op, v) {
                    (Op::Plain | Op::Required, Some(v)) => Eval::Known(v),
                    (Op::Plain | Op::Required, None) => Eval::Unknown(name.clone()),
                    (Op::DefaultUnsetOrEmpty, Some(v)) if !v.is_empty() => Eval::Known(v),
                    (Op::DefaultUnset, Some(v)) => Eval::Known(v),
                    (Op::DefaultUnsetOrEmpty | Op::DefaultUnset, _) => eval(arg, known),
                    (Op::Alternative { empty_counts }, Some(v))
                        if !(*empty_counts && v.is_empty()) =>
                    {
                        eval(arg, known)
                    }
                    (Op::Alternative { .. }, _) => Eval::Known(String::new()),
                };
                match part {
                    Eval::Known(v) => out.push_str(&v),
                    u => return u,
                }
            }
        }
    }
    Eval::Known(out)
}

/// Where the value in effect is written, when the text is one variable with defaults.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// The whole text is literal (no interpolation).
    Whole,
    /// A default literal at this raw span (empty for `${A:-}`), behind these variables: a host
    /// value of any of them would win.
    Default {
        span: Range<usize>,
        overridden_by: Vec<String>,
    },
    /// A known variable (from `.env`) gives the value.
    Known(String),
}

/// The place to edit so the value changes, if the text has one.
pub fn target(pieces: &[Piece], known: &dyn Fn(&str) -> Option<String>) -> Option<Target> {
    match pieces {
        [] | [Piece::Lit { .. }] => Some(Target::Whole),
        [Piece::Var { .. }] => var_target(&pieces[0], known, Vec::new()),
        _ => None,
    }
}

fn var_target(
    p: &Piece,
    known: &dyn Fn(&str) -> Option<String>,
    mut over: Vec<String>,
) -> Option<Target> {
    let Piece::Var {
        name,
        op,
        arg,
        arg_span,
        ..
    } = p
    else {
        return None;
    };
    let v = known(name);
    let use_default = match op {
        Op::DefaultUnsetOrEmpty => v.as_deref().is_none_or(str::is_empty),
        Op::DefaultUnset => v.is_none(),
        _ => return v.map(|_| Target::Known(name.clone())),
    };
    if !use_default {
        return Some(Target::Known(name.clone()));
    }
    over.push(name.clone());
    match arg.as_slice() {
        [] => Some(Target::Default {
            span: arg_span.clone(),
            overridden_by: over,
        }),
        [Piece::Lit { span, .. }] => Some(Target::Default {
            span: span.clone(),
            overridden_by: over,
        }),
        [inner @ Piece::Var { .. }] => var_target(inner, known, over),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_nested_and_escaped() {
        let s = "${A:-${B:-0}}";
        let p = parse(s).expect("parses");
        assert_eq!(eval(&p, &none), Eval::Known("0".into()));
        assert_eq!(
            target(&p, &none),
            Some(Target::Default {
                span: 10..11,
                overridden_by: vec!["A".into(), "B".into()]
            })
        );
        let b_set = |n: &str| (n == "B").then(|| "7".to_string());
        assert_eq!(eval(&p, &b_set), Eval::Known("7".into()));
        assert_eq!(target(&p, &b_set), Some(Target::Known("B".into())));

        let p = parse("a$$b ${X-} $Y").expect("parses");
        assert_eq!(eval(&p, &none), Eval::Unknown("Y".into()));
        let p = parse("cost $$5").expect("parses");
        assert_eq!(eval(&p, &none), Eval::Known("cost $5".into()));
        assert_eq!(target(&p, &none), Some(Target::Whole));

        let s = "${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}";
        let p = parse(s).expect("parses");
        let Some(Target::Default { span, .. }) = target(&p, &none) else {
            panic!("default");
        };
        assert_eq!(&s[span], "expandable_segments:True");
        let p = parse("${A:-}").expect("parses");
        assert_eq!(
            target(&p, &none),
            Some(Target::Default {
                span: 5..5,
                overridden_by: vec!["A".into()]
            })
        );
    }

    #[test]
    fn required_alternative_and_errors() {
        assert_eq!(
            eval(&parse("${T:?set T}").expect("p"), &none),
            Eval::Unknown("T".into())
        );
        assert_eq!(
            eval(&parse("${T:+on}").expect("p"), &none),
            Eval::Known(String::new())
        );
        assert!(parse("${A").is_err());
        assert!(parse("a $ b").is_err());
        assert!(parse("${1}").is_err());
        let deep = format!("{}0{}", "${A:-".repeat(100), "}".repeat(100));
        assert!(parse(&deep).is_err());
    }
}
