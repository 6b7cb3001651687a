//! `env.*`: the environment the engine gets. The launch's own assignments win over the
//! collected environment; a variable the collector did not cover is not known.

use super::{Fact, FactDef, Facts, OpenFamily};
use crate::snapshot::{Environment, HostSnapshot, Probed};
use crate::value::Value;
use std::collections::BTreeMap;

/// The environment the engine gets, for `env.*` and the allocator facts.
#[derive(Debug, Clone, Default)]
pub struct EnvView {
    /// The collected environment, when known.
    env: Option<Environment>,
    /// Why it is not known.
    reason: String,
    /// Whose environment it is.
    source: String,
    /// Assignments the launch command makes.
    launch: BTreeMap<String, String>,
    /// How the launch is named in sources.
    launch_source: String,
}

impl EnvView {
    pub fn new(snap: &HostSnapshot) -> EnvView {
        let mut view = EnvView {
            launch: snap
                .launch
                .value()
                .map(|l| l.env.clone())
                .unwrap_or_default(),
            launch_source: super::launch::source(snap),
            ..EnvView::default()
        };
        match &snap.env {
            Probed::Value(env) => {
                view.source = env.source.clone();
                view.env = Some(env.clone());
            }
            other => {
                view.reason = format!(
                    "environment not collected: {}",
                    other.missing_reason().unwrap_or("")
                )
            }
        }
        view
    }

    /// One variable as the engine gets it: set (`Str`), unset (`Null`) or not known.
    pub fn var(&self, var: &str) -> Fact {
        if let Some(v) = self.launch.get(var) {
            return Fact::new(Value::Str(v.clone()), self.launch_source.clone());
        }
        match &self.env {
            Some(env) if env.covers(var) => Fact::new(
                env.vars
                    .get(var)
                    .map(|v| Value::Str(v.clone()))
                    .unwrap_or(Value::Null),
                self.source.clone(),
            ),
            Some(env) => Fact::unknown(format!("{} does not list {var}", env.source)),
            None => Fact::unknown(self.reason.clone()),
        }
    }

    /// Whose environment the `env.*` facts describe.
    pub fn source(&self) -> String {
        if self.launch.is_empty() {
            self.source.clone()
        } else if self.env.is_some() {
            format!("{} + {}", self.source, self.launch_source)
        } else {
            self.launch_source.clone()
        }
    }
}

pub(super) const FACTS: &[FactDef] = &[FactDef {
    name: "env.source",
    about: "whose environment the env.* facts come from",
    derive: |i| {
        let source = i.env.source();
        let value = if source.is_empty() {
            Value::Null
        } else {
            Value::Str(source.clone())
        };
        Fact::new(value, source)
    },
}];

pub(super) const OPEN: OpenFamily = OpenFamily {
    prefix: "env.",
    shown: "env.NAME",
    about: "an environment variable of the engine (null when unset)",
    lookup: |f: &Facts, var: &str| f.env.var(var),
};
