//! The values facts and expressions carry, and what an expression may ask while it is
//! evaluated. The ground floor that both `facts` (which produces values) and `kb` (whose
//! expressions read them) stand on, so neither imports the other.

use std::fmt;

pub use crate::reason::{
    INPUT_PLACEHOLDER, Input, Reason, ReasonCode, fill_inputs, unknown_inputs,
};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// Known to be absent (an unset variable, a flag not given).
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<Value>),
    /// Not known, with the reason (skipped probe, no log given, ...).
    Unknown(Reason),
}

/// Knowledge-base prose as written, `{input:NAME}` placeholders and all: each front end fills
/// them ([`Prose::filled`]); shown plainly (and serialised) it reads the command line's way.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prose(pub String);

impl Prose {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The text with each input said by `how`.
    pub fn filled(&self, how: impl Fn(Input) -> String) -> String {
        fill_inputs(&self.0, how)
    }
}

impl From<String> for Prose {
    fn from(s: String) -> Self {
        Prose(s)
    }
}

impl fmt::Display for Prose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.filled(|i| i.cli_how().to_string()))
    }
}

impl serde::Serialize for Prose {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Serialise a value or reason as its words (the command line's), for JSON that has always
/// held text.
pub fn serialize_words<T: fmt::Display, S: serde::Serializer>(
    v: &T,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

impl Value {
    /// Not known, for `why` (free words are `ReasonCode::Other`).
    pub fn unknown(why: impl Into<Reason>) -> Value {
        Value::Unknown(why.into())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "(not set)"),
            Value::Bool(b) => write!(f, "{}", if *b { "yes" } else { "no" }),
            Value::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => write!(f, "{}", *n as i64),
            Value::Num(n) => write!(f, "{n}"),
            Value::Str(s) => write!(f, "{s}"),
            Value::List(items) => {
                let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", parts.join(", "))
            }
            Value::Unknown(why) => write!(f, "unknown ({why})"),
        }
    }
}

/// What an expression can ask about while it is evaluated.
pub trait Context {
    fn fact(&self, path: &str) -> Value;
    /// Did the signature match in the given logs? Unknown when no log was given.
    fn log(&self, signature: &str) -> Value;
    /// The user's answer to a node (`Bool`), or Unknown.
    fn answer(&self, node: &str) -> Value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_display_for_people() {
        assert_eq!(Value::Null.to_string(), "(not set)");
        assert_eq!(Value::Bool(true).to_string(), "yes");
        assert_eq!(Value::Num(2.0).to_string(), "2");
        assert_eq!(Value::Num(12.5).to_string(), "12.5");
        assert_eq!(
            Value::List(vec![Value::Str("a".into()), Value::Num(1.0)]).to_string(),
            "[a, 1]"
        );
        assert_eq!(
            Value::Unknown("no log".into()).to_string(),
            "unknown (no log)"
        );
    }
}
