//! `gpu.*`: the GPUs seen, by index.

use super::{Fact, FactDef, Input, probed, probed_str};
use crate::snapshot::{ComputeCapability, Gpu, Origin, Probed};
use crate::value::Value;
use crate::vllm::hardware::device_name;

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "gpu.count",
        about: "number of GPUs seen",
        derive: |i| gpus(i, |g| Value::Num(g.len() as f64)),
    },
    FactDef {
        name: "gpu.names",
        about: "GPU names, in index order",
        derive: |i| {
            gpus(i, |g| {
                Value::List(g.iter().map(|g| probed_str(&g.name)).collect())
            })
        },
    },
    FactDef {
        name: "gpu.listed",
        about: "the GPUs the input lists, by index (`GPU 0`, `GPUs 0, 1`)",
        derive: |i| gpus(i, |g| Value::Str(listed(g))),
    },
    FactDef {
        name: "gpu.whole_host",
        about: "the GPUs seen are every GPU of the host (live NVML enumerates them all; a paste or file may not)",
        derive: |i| {
            let live = i.snap.origin.is_live_read();
            gpus(i, |g| {
                if live {
                    Value::Bool(true)
                } else {
                    Value::unknown(format!(
                        "{} shows only {}: is this the whole host?",
                        input_kind(&i.snap.origin),
                        listed(g)
                    ))
                }
            })
        },
    },
    FactDef {
        name: "gpu.first_name",
        about: "name of GPU 0",
        derive: |i| {
            gpus(i, |g| {
                g.first()
                    .map(|g| probed_str(&g.name))
                    .unwrap_or(Value::Null)
            })
        },
    },
    FactDef {
        name: "gpu.device_name",
        about: "GPU 0's name as vLLM spells it in config file names (spaces → _)",
        derive: |i| {
            let value = match first_device(i) {
                Ok(d) => Value::Str(d),
                Err(why) => Value::unknown(why),
            };
            Fact::new(value, format!("{}: GPU 0 name", i.origin()))
        },
    },
    FactDef {
        name: "gpu.device_names",
        about: "GPU names as vLLM spells them in config file names (spaces → _)",
        derive: |i| {
            gpus(i, |g| {
                let mut names: Vec<Value> = Vec::new();
                for gpu in g {
                    let v = match gpu.name.value() {
                        Some(n) => Value::Str(device_name(n)),
                        None => return Value::unknown(format!("GPU {} name not known", gpu.index)),
                    };
                    if !names.contains(&v) {
                        names.push(v);
                    }
                }
                Value::List(names)
            })
        },
    },
    FactDef {
        name: "gpu.any_sm12x",
        about: "some GPU has compute capability 12.x (SM120/SM121)",
        derive: |i| {
            gpus(i, |g| {
                // One known SM12x GPU is enough to say yes even if another is unknown.
                if g.iter()
                    .any(|gpu| gpu.compute_capability.value().is_some_and(|c| c.is_sm12x()))
                {
                    return Value::Bool(true);
                }
                from_caps(g, |c| Value::Bool(c.iter().any(|c| c.is_sm12x())))
            })
        },
    },
    FactDef {
        name: "gpu.all_sm12x",
        about: "every GPU has compute capability 12.x",
        derive: |i| {
            gpus(i, |g| {
                if g.is_empty() {
                    return no_gpu("compute capability");
                }
                from_caps(g, |c| Value::Bool(c.iter().all(|c| c.is_sm12x())))
            })
        },
    },
    FactDef {
        name: "gpu.cc_list",
        about: "compute capabilities, e.g. [12.0, 12.0]",
        derive: |i| {
            gpus(i, |g| {
                from_caps(g, |c| {
                    Value::List(c.iter().map(|c| Value::Str(c.to_string())).collect())
                })
            })
        },
    },
    FactDef {
        name: "gpu.cc_max",
        about: "highest compute capability as a number, e.g. 12",
        derive: |i| {
            gpus(i, |g| {
                from_caps(g, |c| {
                    let m = c
                        .iter()
                        .max()
                        .copied()
                        .unwrap_or(ComputeCapability { major: 0, minor: 0 });
                    Value::Num(m.major as f64 + m.minor as f64 / 10.0)
                })
            })
        },
    },
    FactDef {
        name: "gpu.memory_total_mib_min",
        about: "smallest GPU memory in MiB",
        derive: |i| {
            gpus(i, |g| {
                let mut min: Option<u64> = None;
                for gpu in g {
                    match gpu.memory_total_mib.value() {
                        Some(m) => min = Some(min.map_or(*m, |x: u64| x.min(*m))),
                        None => {
                            return Value::unknown(format!(
                                "memory of GPU {} not known",
                                gpu.index
                            ));
                        }
                    }
                }
                min.map(|m| Value::Num(m as f64)).unwrap_or(Value::Null)
            })
        },
    },
    FactDef {
        name: "gpu.persistence_all",
        about: "persistence mode on for every GPU",
        derive: |i| {
            gpus(i, |g| {
                if g.is_empty() {
                    return no_gpu("persistence mode");
                }
                let mut all = true;
                for gpu in g {
                    match gpu.persistence_mode.value() {
                        Some(p) => all &= *p,
                        None => {
                            return Value::unknown(format!(
                                "persistence mode of GPU {} not known",
                                gpu.index
                            ));
                        }
                    }
                }
                Value::Bool(all)
            })
        },
    },
];

/// What kind of input the GPUs were read from, without its path (a replayed report keeps the
/// kind of the input it was made from): `the collect-env paste`, `the snapshot`, `the demo`.
fn input_kind(origin: &Origin) -> &'static str {
    // A snapshot of a report made from a collect-env is still the collect-env paste.
    match origin.first() {
        Origin::CollectEnv(_) => "the collect-env paste",
        Origin::Demo(_) => "the demo host",
        _ => "the snapshot",
    }
}

/// `GPU 0`, `GPUs 0, 1`, `no GPU`.
fn listed(g: &[Gpu]) -> String {
    let idx: Vec<String> = g.iter().map(|x| x.index.to_string()).collect();
    match idx.len() {
        0 => "no GPU".into(),
        1 => format!("GPU {}", idx[0]),
        _ => format!("GPUs {}", idx.join(", ")),
    }
}

/// "Every GPU ..." over no GPU at all: unknown, never true.
fn no_gpu(what: &str) -> Value {
    Value::unknown(format!("no GPU seen to check the {what} of"))
}

fn gpus(i: &Input<'_>, f: impl FnOnce(&Vec<Gpu>) -> Value) -> Fact {
    probed(&i.snap.gpus, format!("{}: GPUs", i.origin()), f)
}

/// Every GPU's compute capability, or why one is not known.
fn caps(g: &[Gpu]) -> Result<Vec<ComputeCapability>, String> {
    g.iter()
        .map(|gpu| {
            gpu.compute_capability.value().copied().ok_or_else(|| {
                format!(
                    "compute capability of GPU {} {}",
                    gpu.index,
                    gpu.compute_capability.why_or("unknown")
                )
            })
        })
        .collect()
}

fn from_caps(g: &[Gpu], k: fn(&[ComputeCapability]) -> Value) -> Value {
    match caps(g) {
        Ok(c) if c.is_empty() => Value::Null,
        Ok(c) => k(&c),
        Err(why) => Value::unknown(why),
    }
}

/// GPU 0's vLLM device name, or why it is not known.
pub(super) fn first_device(i: &Input<'_>) -> Result<String, String> {
    match &i.snap.gpus {
        Probed::Value(g) => match g.first().map(|g| &g.name) {
            Some(Probed::Value(n)) => Ok(device_name(n)),
            Some(other) => Err(format!("GPU 0 name {}", other.why_or("unknown"))),
            None => Err("no GPU seen".into()),
        },
        other => Err(format!("GPUs {}", other.why_or("unknown"))),
    }
}
