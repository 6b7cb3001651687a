//! The values facts and expressions carry, and what an expression may ask while it is
//! evaluated. The ground floor that both `facts` (which produces values) and `kb` (whose
//! expressions read them) stand on, so neither imports the other.

use std::fmt;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// Known to be absent (an unset variable, a flag not given).
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<Value>),
    /// Not known, with the reason (skipped probe, no log given, ...).
    Unknown(String),
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
