//! The small expression language of `check:` fields.
//!
//! ```text
//! expr    := or
//! or      := and ( "||" and )*
//! and     := unary ( "&&" unary )*
//! unary   := "!" unary | compare
//! compare := primary ( ("=="|"!="|"<"|"<="|">"|">=") primary | "in" primary )?
//! primary := number | 'string' | "string" | true | false | null | path | call | list | "(" expr ")"
//! call    := log("signature_id") | answer("node_id") | defined(expr) | contains(a, b)
//!            | starts_with(a, b) | lower(a) | len(a) | any_of(list_expr, value)
//! ```
//! Evaluation is three-valued: a fact that is not known yields `Unknown(reason)`, which spreads
//! through comparisons, while `false && x` and `true || x` decide without it. When a node's check
//! is unknown the engine asks the node's question instead of guessing.

pub use crate::value::{Context, Value};
use crate::vllm::version::{self, Decision, Package, Placement, Range};
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expr {
    Lit(Value),
    Path(String),
    List(Vec<Expr>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Func {
    Log,
    Answer,
    Defined,
    Contains,
    StartsWith,
    Lower,
    Len,
    AnyOf,
    AtLeast,
}

impl Func {
    fn from_name(name: &str) -> Option<(Func, usize)> {
        Some(match name {
            "log" => (Func::Log, 1),
            "answer" => (Func::Answer, 1),
            "defined" => (Func::Defined, 1),
            "contains" => (Func::Contains, 2),
            "starts_with" => (Func::StartsWith, 2),
            "lower" => (Func::Lower, 1),
            "len" => (Func::Len, 1),
            "any_of" => (Func::AnyOf, 2),
            "at_least" => (Func::AtLeast, 2),
            _ => return None,
        })
    }
}

/// A parse error at a byte offset inside the expression text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    pub offset: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
}

fn tokenize(src: &str) -> Result<Vec<(usize, Tok)>, ExprError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two = src.get(i..i + 2).unwrap_or("");
        let op2 = ["==", "!=", "<=", ">=", "&&", "||"]
            .into_iter()
            .find(|o| *o == two);
        if let Some(op) = op2 {
            out.push((start, Tok::Op(op)));
            i += 2;
            continue;
        }
        match c {
            '(' => out.push((start, Tok::LParen)),
            ')' => out.push((start, Tok::RParen)),
            '[' => out.push((start, Tok::LBracket)),
            ']' => out.push((start, Tok::RBracket)),
            ',' => out.push((start, Tok::Comma)),
            '<' => out.push((start, Tok::Op("<"))),
            '>' => out.push((start, Tok::Op(">"))),
            '!' => out.push((start, Tok::Op("!"))),
            '\'' | '"' => {
                let quote = c;
                let rest = &src[i + 1..];
                let end = rest.find(quote).ok_or_else(|| ExprError {
                    offset: start,
                    message: "unterminated string".into(),
                })?;
                out.push((start, Tok::Str(rest[..end].to_string())));
                i += end + 2;
                continue;
            }
            c if c.is_ascii_digit() => {
                let len = src[i..]
                    .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
                    .unwrap_or(src.len() - i);
                let text = &src[i..i + len];
                let n = text.parse().map_err(|_| ExprError {
                    offset: start,
                    message: format!("bad number {text:?}"),
                })?;
                out.push((start, Tok::Num(n)));
                i += len;
                continue;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let len = src[i..]
                    .find(|ch: char| {
                        !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' || ch == '-')
                    })
                    .unwrap_or(src.len() - i);
                out.push((start, Tok::Ident(src[i..i + len].to_string())));
                i += len;
                continue;
            }
            other => {
                let hint = match other {
                    '=' => " (use == to compare)",
                    '&' => " (use &&)",
                    '|' => " (use ||)",
                    _ => "",
                };
                return Err(ExprError {
                    offset: start,
                    message: format!("unexpected character {other:?}{hint}"),
                });
            }
        }
        i += c.len_utf8();
    }
    Ok(out)
}

/// Deepest nesting a check may have: `!`, parentheses, lists and calls inside each other, and
/// the operands of one `&&` / `||` chain, which nest too. The parser, the evaluator and the
/// validator recurse once per level, so this bounds their stack use (30,000 nested `(` used to
/// overflow the stack and abort).
pub const MAX_DEPTH: usize = 64;

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.pos).map(|(o, _)| *o).unwrap_or(self.end)
    }
    fn err<T>(&self, message: impl Into<String>) -> Result<T, ExprError> {
        Err(ExprError {
            offset: self.offset(),
            message: message.into(),
        })
    }
    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, tok: &Tok, what: &str) -> Result<(), ExprError> {
        if self.eat(tok) {
            Ok(())
        } else {
            self.err(format!("expected {what}"))
        }
    }

    /// Go one level deeper, or fail at the current token when that is too deep.
    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!(
                "nested more than {MAX_DEPTH} levels deep (!, parentheses, lists, calls and \
                 chains of && or ||); split the check"
            ));
        }
        Ok(())
    }
    fn leave(&mut self, levels: usize) {
        self.depth -= levels;
    }

    fn or(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.and()?;
        let mut levels = 0;
        while self.eat(&Tok::Op("||")) {
            // A chain is a left-deep tree: each operand is one level more to walk.
            self.pos -= 1;
            self.enter()?;
            self.pos += 1;
            levels += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        self.leave(levels);
        Ok(left)
    }
    fn and(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.unary()?;
        let mut levels = 0;
        while self.eat(&Tok::Op("&&")) {
            self.pos -= 1;
            self.enter()?;
            self.pos += 1;
            levels += 1;
            left = Expr::And(Box::new(left), Box::new(self.unary()?));
        }
        self.leave(levels);
        Ok(left)
    }
    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.peek() == Some(&Tok::Op("!")) {
            self.enter()?;
            self.pos += 1;
            let inner = self.unary()?;
            self.leave(1);
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.compare()
    }
    fn compare(&mut self) -> Result<Expr, ExprError> {
        let left = self.primary()?;
        let op = match self.peek() {
            Some(Tok::Op("==")) => CmpOp::Eq,
            Some(Tok::Op("!=")) => CmpOp::Ne,
            Some(Tok::Op("<")) => CmpOp::Lt,
            Some(Tok::Op("<=")) => CmpOp::Le,
            Some(Tok::Op(">")) => CmpOp::Gt,
            Some(Tok::Op(">=")) => CmpOp::Ge,
            Some(Tok::Ident(w)) if w == "in" => {
                self.pos += 1;
                let right = self.primary()?;
                return Ok(Expr::In(Box::new(left), Box::new(right)));
            }
            _ => return Ok(left),
        };
        self.pos += 1;
        let right = self.primary()?;
        Ok(Expr::Cmp(op, Box::new(left), Box::new(right)))
    }
    fn primary(&mut self) -> Result<Expr, ExprError> {
        let Some(tok) = self.peek().cloned() else {
            return self.err("expected a value, found the end of the expression");
        };
        if matches!(tok, Tok::LParen | Tok::LBracket) {
            self.enter()?;
            self.pos += 1;
            let e = self.nested(tok);
            self.leave(1);
            return e;
        }
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok(Expr::Lit(Value::Num(n))),
            Tok::Str(s) => Ok(Expr::Lit(Value::Str(s))),
            Tok::Ident(name) => match name.as_str() {
                "true" => Ok(Expr::Lit(Value::Bool(true))),
                "false" => Ok(Expr::Lit(Value::Bool(false))),
                "null" => Ok(Expr::Lit(Value::Null)),
                _ if self.peek() == Some(&Tok::LParen) => {
                    let at = self.toks[self.pos - 1].0;
                    let Some((func, arity)) = Func::from_name(&name) else {
                        return Err(ExprError {
                            offset: at,
                            message: format!("unknown function {name:?}"),
                        });
                    };
                    self.enter()?;
                    self.pos += 1;
                    let args = self.call_args();
                    self.leave(1);
                    let args = args?;
                    if args.len() != arity {
                        return Err(ExprError {
                            offset: at,
                            message: format!(
                                "{name}() takes {arity} argument(s), got {}",
                                args.len()
                            ),
                        });
                    }
                    if matches!(func, Func::Log | Func::Answer)
                        && !matches!(args[0], Expr::Lit(Value::Str(_)))
                    {
                        return Err(ExprError {
                            offset: at,
                            message: format!("{name}() takes a quoted id"),
                        });
                    }
                    if func == Func::AtLeast {
                        at_least_args(&args).map_err(|message| ExprError {
                            offset: at,
                            message,
                        })?;
                    }
                    Ok(Expr::Call(func, args))
                }
                _ => Ok(Expr::Path(name)),
            },
            Tok::Op(op) => {
                self.pos -= 1;
                self.err(format!("unexpected '{op}'"))
            }
            Tok::RParen | Tok::RBracket | Tok::Comma => {
                self.pos -= 1;
                self.err("expected a value")
            }
            Tok::LParen | Tok::LBracket => unreachable!("handled by nested()"),
        }
    }
    /// After `(` or `[`: a parenthesised expression or a list.
    fn nested(&mut self, open: Tok) -> Result<Expr, ExprError> {
        if open == Tok::LParen {
            let e = self.or()?;
            self.expect(&Tok::RParen, "')'")?;
            return Ok(e);
        }
        let mut items = Vec::new();
        if !self.eat(&Tok::RBracket) {
            loop {
                items.push(self.or()?);
                if self.eat(&Tok::RBracket) {
                    break;
                }
                self.expect(&Tok::Comma, "',' or ']'")?;
            }
        }
        Ok(Expr::List(items))
    }
    /// After `name(`: the arguments up to `)`.
    fn call_args(&mut self) -> Result<Vec<Expr>, ExprError> {
        let mut args = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                args.push(self.or()?);
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(&Tok::Comma, "',' or ')'")?;
            }
        }
        Ok(args)
    }
}

/// Parse an expression; errors carry the byte offset inside `src`.
pub fn parse(src: &str) -> Result<Expr, ExprError> {
    let toks = tokenize(src)?;
    if toks.is_empty() {
        return Err(ExprError {
            offset: 0,
            message: "empty expression".into(),
        });
    }
    let mut p = Parser {
        toks,
        pos: 0,
        end: src.len(),
        depth: 0,
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return p.err("unexpected text after the expression");
    }
    Ok(e)
}

/// Everything an expression refers to, for validation and for showing evidence.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct References {
    pub facts: Vec<String>,
    pub signatures: Vec<String>,
    pub answers: Vec<String>,
}

pub fn references(expr: &Expr) -> References {
    fn walk(e: &Expr, r: &mut References) {
        match e {
            Expr::Lit(_) => {}
            Expr::Path(p) => {
                if !r.facts.contains(p) {
                    r.facts.push(p.clone())
                }
            }
            Expr::List(items) => items.iter().for_each(|i| walk(i, r)),
            Expr::Not(a) => walk(a, r),
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Cmp(_, a, b) | Expr::In(a, b) => {
                walk(a, r);
                walk(b, r);
            }
            Expr::Call(Func::Log, args) => {
                if let Some(Expr::Lit(Value::Str(s))) = args.first() {
                    r.signatures.push(s.clone())
                }
            }
            Expr::Call(Func::Answer, args) => {
                if let Some(Expr::Lit(Value::Str(s))) = args.first() {
                    r.answers.push(s.clone())
                }
            }
            Expr::Call(_, args) => args.iter().for_each(|i| walk(i, r)),
        }
    }
    let mut r = References::default();
    walk(expr, &mut r);
    r
}

/// Compare two version-like strings numerically part by part ("0.24.0" < "0.100").
fn version_cmp(a: &str, b: &str) -> Ordering {
    let parts = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap_or(u64::MAX))
            .collect()
    };
    parts(a).cmp(&parts(b))
}

fn compare(op: CmpOp, a: &Value, b: &Value) -> Value {
    use Value::*;
    if let Unknown(why) = a {
        return Unknown(why.clone());
    }
    if let Unknown(why) = b {
        return Unknown(why.clone());
    }
    let eq = match (a, b) {
        (Num(x), Num(y)) => Some(x.partial_cmp(y)),
        // Equality is exact; ordering is numeric part by part when both sides hold digits
        // (versions), otherwise plain text order. Without this, two digit-free strings such as
        // "PIECEWISE" and "FULL_AND_PIECEWISE" would compare equal.
        (Str(x), Str(y)) => Some(Some(if x == y {
            Ordering::Equal
        } else if matches!(op, CmpOp::Eq | CmpOp::Ne) {
            x.cmp(y)
        } else if x.chars().any(|c| c.is_ascii_digit()) && y.chars().any(|c| c.is_ascii_digit()) {
            version_cmp(x, y).then_with(|| x.cmp(y))
        } else {
            x.cmp(y)
        })),
        (Str(x), Num(y)) | (Num(y), Str(x)) if matches!(op, CmpOp::Eq | CmpOp::Ne) => {
            Some(Some(if x.parse::<f64>().ok() == Some(*y) {
                Ordering::Equal
            } else {
                Ordering::Less
            }))
        }
        _ => None,
    };
    let result = match (op, eq) {
        (CmpOp::Eq, Some(Some(o))) => o == Ordering::Equal,
        (CmpOp::Ne, Some(Some(o))) => o != Ordering::Equal,
        (CmpOp::Eq, _) => a == b,
        (CmpOp::Ne, _) => a != b,
        (_, Some(Some(o))) => match op {
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
            CmpOp::Eq | CmpOp::Ne => unreachable!("handled above"),
        },
        // Ordering against null (an unset value) is simply false.
        _ => false,
    };
    Bool(result)
}

fn truth(v: Value) -> Value {
    match v {
        Value::Bool(_) | Value::Unknown(_) => v,
        Value::Null => Value::Bool(false),
        Value::Num(n) => Value::Bool(n != 0.0),
        Value::Str(s) => Value::Bool(!s.is_empty()),
        Value::List(l) => Value::Bool(!l.is_empty()),
    }
}

pub fn eval(expr: &Expr, ctx: &dyn Context) -> Value {
    use Value::*;
    match expr {
        Expr::Lit(v) => v.clone(),
        Expr::Path(p) => ctx.fact(p),
        Expr::List(items) => {
            let vals: Vec<Value> = items.iter().map(|i| eval(i, ctx)).collect();
            match vals.iter().find(|v| matches!(v, Unknown(_))) {
                Some(u) => u.clone(),
                None => List(vals),
            }
        }
        Expr::Not(a) => match truth(eval(a, ctx)) {
            Bool(b) => Bool(!b),
            other => other,
        },
        Expr::And(a, b) => match truth(eval(a, ctx)) {
            Bool(false) => Bool(false),
            Bool(true) => truth(eval(b, ctx)),
            unknown => match truth(eval(b, ctx)) {
                Bool(false) => Bool(false),
                _ => unknown,
            },
        },
        Expr::Or(a, b) => match truth(eval(a, ctx)) {
            Bool(true) => Bool(true),
            Bool(false) => truth(eval(b, ctx)),
            unknown => match truth(eval(b, ctx)) {
                Bool(true) => Bool(true),
                _ => unknown,
            },
        },
        Expr::Cmp(op, a, b) => compare(*op, &eval(a, ctx), &eval(b, ctx)),
        Expr::In(a, b) => {
            let needle = eval(a, ctx);
            match (needle, eval(b, ctx)) {
                (Unknown(w), _) | (_, Unknown(w)) => Unknown(w),
                (n, List(items)) => Bool(
                    items
                        .iter()
                        .any(|i| compare(CmpOp::Eq, &n, i) == Bool(true)),
                ),
                (Str(n), Str(h)) => Bool(h.contains(&n)),
                (_, Null) => Bool(false),
                _ => Bool(false),
            }
        }
        Expr::Call(func, args) => call(*func, args, ctx),
    }
}

fn call(func: Func, args: &[Expr], ctx: &dyn Context) -> Value {
    use Value::*;
    let id = |i: usize| match args.get(i) {
        Some(Expr::Lit(Str(s))) => s.clone(),
        _ => String::new(),
    };
    match func {
        Func::Log => ctx.log(&id(0)),
        Func::Answer => ctx.answer(&id(0)),
        Func::Defined => match eval(&args[0], ctx) {
            Unknown(w) => Unknown(w),
            Null => Bool(false),
            _ => Bool(true),
        },
        Func::Contains | Func::StartsWith => match (eval(&args[0], ctx), eval(&args[1], ctx)) {
            (Unknown(w), _) | (_, Unknown(w)) => Unknown(w),
            (Str(h), Str(n)) => Bool(if func == Func::Contains {
                h.contains(&n)
            } else {
                h.starts_with(&n)
            }),
            (List(items), n) if func == Func::Contains => Bool(
                items
                    .iter()
                    .any(|i| compare(CmpOp::Eq, i, &n) == Bool(true)),
            ),
            _ => Bool(false),
        },
        Func::Lower => match eval(&args[0], ctx) {
            Str(s) => Str(s.to_lowercase()),
            other => other,
        },
        Func::Len => match eval(&args[0], ctx) {
            Str(s) => Num(s.chars().count() as f64),
            List(l) => Num(l.len() as f64),
            Null => Num(0.0),
            Unknown(w) => Unknown(w),
            _ => Num(1.0),
        },
        // any_of(list_of_strings, text): does `text` contain any of them?
        Func::AnyOf => match (eval(&args[0], ctx), eval(&args[1], ctx)) {
            (Unknown(w), _) | (_, Unknown(w)) => Unknown(w),
            (List(needles), Str(h)) => Bool(
                needles
                    .iter()
                    .any(|n| matches!(n, Str(s) if h.contains(s.as_str()))),
            ),
            _ => Bool(false),
        },
        Func::AtLeast => match at_least_args(args) {
            Ok((package, range)) => at_least(package, &range, ctx),
            Err(e) => Value::unknown(e),
        },
    }
}

/// The package and edge of `at_least('vllm', '0.30.0')`: both quoted, the package one that
/// `holds:` knows, the edge a version.
fn at_least_args(args: &[Expr]) -> Result<(Package, Range), String> {
    let (Some(Expr::Lit(Value::Str(p))), Some(Expr::Lit(Value::Str(e)))) =
        (args.first(), args.get(1))
    else {
        return Err("at_least() takes a quoted package and a quoted version".into());
    };
    let package =
        Package::from_key(p).ok_or_else(|| format!("at_least(): unknown package {p:?}"))?;
    let range = Range::parse(&format!(">={e}")).map_err(|why| format!("at_least(): {why}"))?;
    Ok((package, range))
}

/// Has the installed `package` reached `edge`? Decided as `holds:` decides a range: a
/// pre-release of the edge or a development build below it is not known (the answer to
/// `vllm_at_least_<edge>` decides it), a `+local` build is its release.
fn at_least(package: Package, range: &Range, ctx: &dyn Context) -> Value {
    let installed = match ctx.fact(package.fact()) {
        Value::Str(v) => v,
        Value::Unknown(w) => return Value::Unknown(w),
        _ => {
            return Value::unknown(format!(
                "{} is not installed in the Python that was read",
                package.display()
            ));
        }
    };
    let placement = match Placement::of(package, &installed) {
        Ok(p) => p,
        Err(e) => return Value::unknown(e),
    };
    let decision = version::decide(range, &placement, |e| {
        match ctx.answer(&version::VersionQuestion::new(package, e).id()) {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    });
    match decision {
        Decision::Inside => Value::Bool(true),
        Decision::Outside { .. } => Value::Bool(false),
        Decision::Ask { edge } => Value::unknown(format!(
            "{} {installed}: whether it has what {edge} changed is not known from its number",
            package.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Ctx(HashMap<&'static str, Value>);
    impl Context for Ctx {
        fn fact(&self, path: &str) -> Value {
            self.0
                .get(path)
                .cloned()
                .unwrap_or(Value::unknown(format!("{path} not collected")))
        }
        fn log(&self, signature: &str) -> Value {
            Value::Bool(signature == "hit")
        }
        fn answer(&self, _node: &str) -> Value {
            Value::Unknown("not answered".into())
        }
    }

    fn ctx() -> Ctx {
        Ctx(HashMap::from([
            ("launch.tp", Value::Num(2.0)),
            ("alloc.expandable_segments", Value::Bool(true)),
            ("python.vllm", Value::Str("0.24.0".into())),
            ("env.UNSET", Value::Null),
        ]))
    }

    fn run(src: &str) -> Value {
        eval(&parse(src).expect("parses"), &ctx())
    }

    #[test]
    fn arithmetic_comparisons_and_logic() {
        assert_eq!(
            run("launch.tp > 1 && alloc.expandable_segments"),
            Value::Bool(true)
        );
        assert_eq!(run("launch.tp in [2, 4, 6, 8]"), Value::Bool(true));
        assert_eq!(run("!(launch.tp == 2)"), Value::Bool(false));
        assert_eq!(run("log('hit') || log('miss')"), Value::Bool(true));
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(run("python.vllm >= '0.24.0'"), Value::Bool(true));
        assert_eq!(run("python.vllm < '0.100.0'"), Value::Bool(true));
        assert_eq!(run("python.vllm < '0.23'"), Value::Bool(false));
    }

    #[test]
    fn at_least_decides_like_a_range() {
        let with = |v: &str| Ctx(HashMap::from([("python.vllm", Value::Str(v.into()))]));
        let run = |c: &Ctx, src: &str| eval(&parse(src).expect("parses"), c);
        let q = "at_least('vllm', '0.30.0')";
        assert_eq!(run(&with("0.30.0"), q), Value::Bool(true));
        assert_eq!(run(&with("0.30.0+cu130"), q), Value::Bool(true));
        assert_eq!(run(&with("0.29.0"), q), Value::Bool(false));
        // A pre-release of the edge and a dev build below it cannot be told from the number.
        assert!(matches!(run(&with("0.30.0rc1"), q), Value::Unknown(_)));
        assert!(matches!(
            run(&with("0.29.1.dev5+gabc"), q),
            Value::Unknown(_)
        ));
        // A dev build is at least its number.
        assert_eq!(run(&with("0.30.1.dev3"), q), Value::Bool(true));
        assert!(matches!(run(&Ctx(HashMap::new()), q), Value::Unknown(_)));
        assert!(parse("at_least('vllm', python.vllm)").is_err());
        assert!(parse("at_least('numpy', '1.0.0')").is_err());
        assert!(parse("at_least('vllm', '0.30.0rc1')").is_err());
    }

    #[test]
    fn digit_free_strings_are_not_equal() {
        let c = Ctx(HashMap::from([(
            "launch.cudagraph_mode",
            Value::Str("FULL_AND_PIECEWISE".into()),
        )]));
        let run = |src: &str| eval(&parse(src).expect("parses"), &c);
        assert_eq!(
            run("launch.cudagraph_mode == 'PIECEWISE'"),
            Value::Bool(false)
        );
        assert_eq!(
            run("launch.cudagraph_mode != 'PIECEWISE'"),
            Value::Bool(true)
        );
        assert_eq!(
            run("launch.cudagraph_mode == 'FULL_AND_PIECEWISE'"),
            Value::Bool(true)
        );
        assert_eq!(run("'0.24.0' < '0.24.0+cu130'"), Value::Bool(true));
        assert_eq!(run("'12.8' >= '12.8'"), Value::Bool(true));
    }

    #[test]
    fn unknown_spreads_but_short_circuits() {
        assert!(matches!(run("gpu.count > 1"), Value::Unknown(_)));
        assert_eq!(run("launch.tp == 1 && gpu.count > 1"), Value::Bool(false));
        assert_eq!(run("launch.tp == 2 || gpu.count > 1"), Value::Bool(true));
        assert!(matches!(
            run("launch.tp == 2 && gpu.count > 1"),
            Value::Unknown(_)
        ));
    }

    #[test]
    fn null_is_known_absence() {
        assert_eq!(run("defined(env.UNSET)"), Value::Bool(false));
        assert_eq!(run("env.UNSET == 'x'"), Value::Bool(false));
    }

    #[test]
    fn parse_errors_point_at_the_offset() {
        let e = parse("launch.tp = 2").expect_err("single = is an error");
        assert_eq!(e.offset, 10);
        assert!(e.message.contains("=="));
        let e = parse("log(sig)").expect_err("unquoted id");
        assert_eq!(e.offset, 0);
        let e = parse("frob(1)").expect_err("unknown function");
        assert!(e.message.contains("frob"));
        assert!(parse("(a && b").is_err());
        assert!(parse("").is_err());
        assert!(parse("'open").is_err());
    }

    #[test]
    fn nesting_is_bounded_and_the_error_points_at_the_level_too_deep() {
        // 30,000 levels used to overflow the stack (abort, rc 134).
        for (open, close) in [("!", ""), ("(", ")"), ("[", "]"), ("len(", ")")] {
            let src = format!("{}1{}", open.repeat(30_000), close.repeat(30_000));
            let e = parse(&src).expect_err("too deep");
            assert!(e.message.contains("nested more than 64"), "{open}: {e:?}");
            // At the 65th opener (a call's level starts at its parenthesis).
            let inner = open.len() - 1;
            assert_eq!(e.offset, open.len() * MAX_DEPTH + inner, "{open}");
        }
        let chain = vec!["launch.tp == 2"; 30_000].join(" && ");
        let e = parse(&chain).expect_err("long chain");
        assert!(e.message.contains("nested more than 64"), "{e:?}");
        let chain = vec!["true"; 30_000].join(" || ");
        assert!(parse(&chain).is_err());
        // The limit itself is fine, and sibling depth does not add up.
        let ok = format!("{}true{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(
            eval(&parse(&ok).expect("at the limit"), &ctx()),
            Value::Bool(true)
        );
        let wide = vec!["(((launch.tp == 2)))"; 40].join(" || ");
        assert_eq!(
            eval(&parse(&wide).expect("wide"), &ctx()),
            Value::Bool(true)
        );
        let ok = format!("{}true", "!".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
        assert!(parse(&format!("{}true", "!".repeat(MAX_DEPTH + 1))).is_err());
    }

    #[test]
    fn references_lists_facts_signatures_answers() {
        let r = references(
            &parse("launch.tp > 1 && log('car') && answer('n1') && launch.tp < 9").expect("ok"),
        );
        assert_eq!(r.facts, vec!["launch.tp"]);
        assert_eq!(r.signatures, vec!["car"]);
        assert_eq!(r.answers, vec!["n1"]);
    }
}
