//! `logs.*`: what the user gave besides the host.

use super::{Fact, FactDef};
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[FactDef {
    name: "logs.given",
    about: "at least one log was given",
    derive: |i| Fact::new(Value::Bool(i.logs_given), "command line"),
}];
