//! `env.*`: the environment the engine gets. The launch's own assignments win over the
//! collected environment; a variable the collector did not cover is not known.

use super::{Fact, FactDef, Facts, OpenFamily};
use crate::snapshot::{EngineEnv, EnvExpr, EnvOwner, Environment, HostSnapshot, Launch, Probed};
use crate::value::{Reason, Value};

/// The environment the engine gets, for `env.*` and the allocator facts.
#[derive(Debug, Clone)]
pub struct EnvView {
    /// The collected environment, when known.
    env: Option<Environment>,
    /// Why it is not known.
    reason: Reason,
    /// Whose environment it is.
    source: String,
    /// It is the engine's own (a vLLM process's): measured. Otherwise (the doctor's shell, a
    /// collect-env's) it stands for the engine's only as an assumption.
    engine_own: bool,
    /// The launch, when one was given: its assignments, what it leaves open, whether the
    /// engine runs in a container.
    launch: Option<Launch>,
    /// How the launch is named in sources.
    launch_source: String,
}

/// What a containerised launch assumes about its image's own `ENV` lines. Checked for the
/// official image: vLLM's docker/Dockerfile (vllm-project/vllm at
/// dead20baf70df70580ecb093f82b0b7b8676e4f5, the `vllm-openai` target and the stages under it)
/// sets no `PYTORCH_CUDA_ALLOC_CONF` or `PYTORCH_ALLOC_CONF`.
pub const IMAGE_ASSUMPTION: &str = "a container does not inherit the host's environment, and the \
    image is assumed to set no allocator variable (the official vllm/vllm-openai image sets none: \
    docker/Dockerfile at vllm-project/vllm@dead20baf70df)";

/// What a systemd unit's launch assumes about the variables it does not set: a service starts
/// from the service manager's environment (systemd.exec(5), "Environment variables in spawned
/// processes"), not a login shell's.
pub const UNIT_ASSUMPTION: &str = "a service starts from the service manager's environment plus \
    Environment=/EnvironmentFile=, not a login shell's; the manager is assumed to set no such \
    variable (DefaultEnvironment= in system.conf and `systemctl set-environment` are not read)";

impl Default for EnvView {
    fn default() -> Self {
        EnvView {
            env: None,
            reason: Reason::from("environment not collected"),
            source: String::new(),
            engine_own: false,
            launch: None,
            launch_source: String::new(),
        }
    }
}

impl EnvView {
    pub fn new(snap: &HostSnapshot) -> EnvView {
        let mut view = EnvView {
            launch: snap.launch.value().cloned(),
            launch_source: super::launch::source(snap),
            ..EnvView::default()
        };
        match &snap.env {
            Probed::Value(env) => {
                view.source = env.source.clone();
                // Only the engine's own environment (a vLLM process's) is measured: the
                // doctor's shell and the shell that ran collect-env are other processes.
                view.engine_own = env.owner() == EnvOwner::Engine;
                view.env = Some(env.clone());
            }
            other => {
                if let Some(r) = other.missing_reason() {
                    view.reason = r.clone().within("environment not collected");
                }
            }
        }
        view
    }

    /// One variable of the collected (host) environment: set, unset or not known.
    fn host(&self, var: &str) -> Fact {
        match &self.env {
            Some(env) if env.covers(var) => {
                let value = env
                    .vars
                    .get(var)
                    .map(|v| Value::Str(v.clone()))
                    .unwrap_or(Value::Null);
                if self.engine_own {
                    Fact::new(value, self.source.clone())
                } else {
                    Fact::assumed(value, self.source.clone())
                }
            }
            Some(env) => Fact::unknown(format!("{} does not list {var}", env.source)),
            None => Fact::unknown(self.reason.clone()),
        }
    }

    /// One variable as the engine gets it: set (`Str`), unset (`Null`) or not known. The
    /// launch's own assignments win; a file it reads that was not given leaves every variable
    /// it does not set afterwards unknown; a container gets nothing from the host but the
    /// variables it names.
    pub fn var(&self, var: &str) -> Fact {
        let Some(l) = &self.launch else {
            return self.host(var);
        };
        if let Some(u) = l
            .env_unread
            .iter()
            .find(|u| !u.except.iter().any(|n| n == var))
        {
            return Fact::unknown(format!("{var} is not known: {}", u.reason));
        }
        if let Some(v) = l.env.get(var) {
            return Fact::new(Value::Str(v.clone()), self.launch_source.clone());
        }
        match l.env_expr.get(var) {
            Some(EnvExpr::Unknown { reason }) => return Fact::unknown(reason.clone()),
            Some(EnvExpr::HostOr {
                var: from,
                default,
                empty_counts,
            }) => {
                let host = self.host(from);
                let assumed = host.assumed;
                let fact = match host.value {
                    Value::Str(v) if !(*empty_counts && v.is_empty()) => Fact::new(
                        Value::Str(v),
                        format!(
                            "{} ({from}, which the launch's ${{{from}:-…}} for {var} takes)",
                            host.source
                        ),
                    ),
                    Value::Unknown(why) => Fact::unknown(why),
                    _ => Fact::new(
                        Value::Str(default.clone()),
                        format!(
                            "{} (the default of ${{{from}:-…}}: {from} is {} in {})",
                            self.launch_source,
                            if *empty_counts {
                                "unset or empty"
                            } else {
                                "unset"
                            },
                            host.source
                        ),
                    ),
                };
                return if assumed {
                    Fact::assumed(fact.value, fact.source)
                } else {
                    fact
                };
            }
            None => {}
        }
        if l.unset.iter().any(|n| n == var) {
            return Fact::new(Value::Null, self.launch_source.clone());
        }
        match l.engine_env {
            EngineEnv::Container if !l.from_host.iter().any(|n| n == var) => Fact::new(
                Value::Null,
                format!(
                    "the container's environment ({}): {IMAGE_ASSUMPTION}",
                    self.launch_source
                ),
            ),
            EngineEnv::Unit => Fact::assumed(
                Value::Null,
                format!(
                    "the unit's environment ({}): {UNIT_ASSUMPTION}",
                    self.launch_source
                ),
            ),
            _ => self.host(var),
        }
    }

    /// Whose environment the `env.*` facts describe.
    pub fn source(&self) -> String {
        let given = self
            .launch
            .as_ref()
            .is_some_and(|l| !l.env.is_empty() || !l.env_expr.is_empty());
        let engine_env = self.launch.as_ref().map(|l| l.engine_env);
        if engine_env == Some(EngineEnv::Container) {
            format!("the container's environment ({})", self.launch_source)
        } else if engine_env == Some(EngineEnv::Unit) {
            format!("the unit's environment ({})", self.launch_source)
        } else if !given {
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
