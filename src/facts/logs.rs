//! `logs.*`: what the user gave besides the host.

use super::{Fact, FactDef};
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[FactDef {
    name: "logs.given",
    about: "at least one log was given",
    derive: |i| {
        if i.logs.is_empty() {
            Fact::nothing_seen(Value::Bool(false), "no log given")
        } else {
            Fact::new(Value::Bool(true), i.logs.join(", "))
        }
    },
}];
