//! `alloc.*`: PyTorch's allocator config as the engine gets it, read through
//! `vllm::alloc_conf` (the one owner of the allocator rule).

use super::{Fact, FactDef, Input};
use crate::value::{Input as Given, Reason, Value};
use crate::vllm::alloc_conf::{
    self, EXPANDABLE_SEGMENTS, GENERIC_VAR, Precedence, Switch, TorchRule,
};

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "alloc.var",
        about: "which allocator variable is in effect: PYTORCH_CUDA_ALLOC_CONF or PYTORCH_ALLOC_CONF",
        derive: |i| in_effect(i, |var, _| Value::Str(var.into())),
    },
    FactDef {
        name: "alloc.conf",
        about: "the allocator config string in effect",
        derive: |i| in_effect(i, |_, conf| Value::Str(conf.into())),
    },
    FactDef {
        name: "alloc.expandable_segments",
        about: "expandable_segments:True is in the allocator config in effect (only the word True turns it on)",
        derive: |i| expandable(i, |s| Value::Bool(s.is_on())),
    },
    FactDef {
        name: "alloc.expandable_segments_value",
        about: "expandable_segments' value as PyTorch reads it from the config in effect (null: not set)",
        derive: |i| {
            expandable(i, |s| {
                s.value()
                    .map(|v| Value::Str(v.to_string()))
                    .unwrap_or(Value::Null)
            })
        },
    },
    FactDef {
        name: "alloc.expandable_segments_invalid",
        about: "expandable_segments has a value other than True or False, which PyTorch rejects at start-up",
        derive: |i| expandable(i, |s| Value::Bool(s.is_invalid())),
    },
    FactDef {
        name: "alloc.precedence",
        about: "which allocator-variable rule the verdict used, and the torch version it assumed",
        derive: |i| Fact::new(Value::Str(rule(i).assumed), torch_source(i)),
    },
    FactDef {
        name: "alloc.masked_alloc_conf",
        about: "PYTORCH_ALLOC_CONF is set with expandable_segments:True but masked by a set PYTORCH_CUDA_ALLOC_CONF",
        derive: masked,
    },
];

/// The precedence rule for the installed torch (`vllm::alloc_conf::Precedence::for_torch`).
fn rule(i: &Input<'_>) -> TorchRule {
    let torch = i
        .snap
        .python
        .value()
        .and_then(|p| p.torch.value())
        .map(String::as_str);
    Precedence::for_torch(torch)
}

fn torch_source(i: &Input<'_>) -> String {
    format!("{}: Python stack (torch version)", i.origin())
}

/// The engine's environment was not seen: it is only assumed from another process's (the
/// doctor's shell, a collect-env's) and no launch was given, so the allocator config in effect
/// is not known. It decides the crash, so the walk asks, and the reason names the launch.
fn engine_env_not_seen(i: &Input<'_>) -> Option<Reason> {
    if i.snap.launch.value().is_some() {
        return None;
    }
    let f = i.env.var(alloc_conf::CUDA_VAR);
    f.assumed.then(|| {
        Reason::missing(Given::Launch).within(format!(
            "the engine's environment was not seen ({} is not the engine's)",
            f.source
        ))
    })
}

/// Does the config in effect rest on an environment only assumed to be the engine's? The
/// variable in effect when one is set (the launch's own assignment is measured), else any.
fn assumed(i: &Input<'_>) -> bool {
    match resolve(i) {
        Ok(Some((var, _, _))) => i.env.var(var).assumed,
        _ => alloc_conf::VARS.iter().any(|v| i.env.var(v).assumed),
    }
}

/// `fact`, marked assumed when the environment it read is only assumed to be the engine's.
fn mark(i: &Input<'_>, fact: Fact) -> Fact {
    if !matches!(fact.value, Value::Unknown(_)) && assumed(i) {
        Fact::assumed(fact.value, fact.source)
    } else {
        fact
    }
}

/// The variable in effect with its value and source; `Ok(None)` when neither is set.
fn resolve(i: &Input<'_>) -> Result<Option<(&'static str, String, String)>, Reason> {
    if let Some(why) = engine_env_not_seen(i) {
        return Err(why);
    }
    rule(i)
        .precedence
        .resolve(|var| {
            let f = i.env.var(var);
            match f.value {
                Value::Str(v) => Ok(Some((v, f.source))),
                Value::Unknown(why) => Err(why),
                _ => Ok(None),
            }
        })
        .map(|found| found.map(|(var, (conf, source))| (var, conf, source)))
}

/// Where the answer came from when no variable is set: the environment that was read.
fn unset_source(i: &Input<'_>) -> String {
    i.env.var(alloc_conf::CUDA_VAR).source
}

fn in_effect(i: &Input<'_>, pick: fn(&str, &str) -> Value) -> Fact {
    let fact = match resolve(i) {
        Ok(Some((var, conf, source))) => Fact::new(pick(var, &conf), source),
        Ok(None) => Fact::new(Value::Null, unset_source(i)),
        Err(why) => Fact::unknown(why),
    };
    mark(i, fact)
}

fn expandable(i: &Input<'_>, pick: fn(&Switch) -> Value) -> Fact {
    let fact = match resolve(i) {
        Ok(Some((_, conf, source))) => Fact::new(
            pick(&alloc_conf::switch(&conf, EXPANDABLE_SEGMENTS)),
            source,
        ),
        Ok(None) => Fact::new(pick(&Switch::Absent), unset_source(i)),
        Err(why) => Fact::unknown(why),
    };
    mark(i, fact)
}

fn masked(i: &Input<'_>) -> Fact {
    let fact = masked_unmarked(i);
    mark(i, fact)
}

fn masked_unmarked(i: &Input<'_>) -> Fact {
    match resolve(i) {
        Ok(Some((var, _, source))) => {
            let ignored = rule(i).precedence.ignored_while(var);
            let mut on = false;
            for v in ignored {
                match i.env.var(v).value {
                    Value::Str(c) => on |= alloc_conf::switch(&c, EXPANDABLE_SEGMENTS).is_on(),
                    Value::Unknown(why) => return Fact::unknown(why),
                    _ => {}
                }
            }
            Fact::new(Value::Bool(on), source)
        }
        Ok(None) => {
            // Neither set: nothing is masked, once the later variable is known to be unset.
            match i.env.var(GENERIC_VAR).value {
                Value::Unknown(why) => Fact::unknown(why),
                _ => Fact::new(Value::Bool(false), unset_source(i)),
            }
        }
        Err(why) => Fact::unknown(why),
    }
}

#[cfg(test)]
mod tests {
    use crate::facts::derive;
    use crate::snapshot::{EnvOwner, Environment, HostSnapshot, Input, Launch, Probed};
    use crate::value::Value;
    use crate::vllm::hardware::Hardware;

    fn host(whose: EnvOwner) -> HostSnapshot {
        let mut s = HostSnapshot::empty("test", "test");
        s.env = Probed::Value(Environment {
            source: "somewhere".into(),
            whose: Some(whose),
            vars: [(
                "PYTORCH_CUDA_ALLOC_CONF".to_string(),
                "expandable_segments:True".to_string(),
            )]
            .into(),
            covers: None,
        });
        s
    }

    #[test]
    fn only_the_engines_own_environment_is_measured() {
        let f = derive(&host(EnvOwner::Engine), false, &Hardware::default());
        let e = f.get("alloc.expandable_segments");
        assert_eq!((e.value, e.assumed), (Value::Bool(true), false));
        // The doctor's own shell or a collect-env's, and no launch: not known, and the reason
        // names the launch as the input that would tell.
        for whose in [EnvOwner::DoctorShell, EnvOwner::CollectEnv] {
            let f = derive(&host(whose), false, &Hardware::default());
            let e = f.get("alloc.expandable_segments");
            assert!(
                matches!(&e.value, Value::Unknown(r) if r.missing_input() == Some(Input::Launch)),
                "{whose:?}: {:?}",
                e.value
            );
        }
        // With a launch that sets nothing, the shell's value stands, as an assumption.
        let mut s = host(EnvOwner::DoctorShell);
        s.launch = Probed::Value(Launch::default());
        let e = derive(&s, false, &Hardware::default()).get("alloc.expandable_segments");
        assert_eq!((e.value, e.assumed), (Value::Bool(true), true));
    }
}
