//! Facts: the named, flat view of a [`HostSnapshot`] that knowledge-base checks read.
//!
//! This module derives values (counts, the allocator config in effect, ...) but judges nothing.
//! Each fact carries where it came from so the user can see why the tool answered as it did.
//!
//! Every fact is declared once, in the file of its family, as a [`FactDef`]: its name, what it
//! means and how it is derived. [`catalogue`] (`kb facts`) and [`is_known_fact`] (the KB
//! validator's predicate) are read from those declarations. `env.NAME` and `launch.flag.NAME`
//! are open families ([`OpenFamily`]). Facts import the snapshot, `value` and `vllm` only.

mod access;
mod alloc;
mod driver;
mod env;
mod fp8;
mod gpu;
mod launch;
mod logs;
mod model;
mod os;
mod p2p;
mod probe;
mod processes;
mod python;
mod run;
mod topology;

pub use env::EnvView;

use crate::snapshot::{HostSnapshot, Origin, Probed, ReasonCode};
use crate::value::Value;
use crate::vllm::hardware::Hardware;
use std::collections::BTreeMap;

/// A fact's value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub value: Value,
    pub source: String,
    /// The value stands for an input that was not given (no log, the probe not run, no
    /// launch): known, but no measurement of the host. The engine lets a typed answer beat it
    /// and marks what it decides as assumed.
    pub assumed: bool,
    /// The assumption stands in for a measurement of the host (the probe not run, no launch),
    /// so a finding resting on it is `assumed`. A log not given only means nothing was seen:
    /// the walk goes on to what the host and launch predict, and the match does not weaken.
    pub about_host: bool,
}

impl Fact {
    pub fn new(value: Value, source: impl Into<String>) -> Fact {
        Fact {
            value,
            source: source.into(),
            assumed: false,
            about_host: false,
        }
    }

    /// A value that stands for a measurement of the host not made (see [`Fact::assumed`] and
    /// [`Fact::about_host`]).
    pub fn assumed(value: Value, source: impl Into<String>) -> Fact {
        Fact {
            assumed: true,
            about_host: true,
            ..Fact::new(value, source)
        }
    }

    /// A value that stands for an observation not given (no log): a typed answer beats it, but
    /// it does not weaken a finding's match.
    pub(crate) fn nothing_seen(value: Value, source: impl Into<String>) -> Fact {
        Fact {
            assumed: true,
            ..Fact::new(value, source)
        }
    }

    /// Not known, with the reason (and no source).
    pub fn unknown(why: impl Into<crate::value::Reason>) -> Fact {
        Fact::new(Value::Unknown(why.into()), "")
    }
}

/// What a derivation reads.
pub struct Input<'a> {
    pub snap: &'a HostSnapshot,
    /// How each given log is named in sources (`log file crash.log`, `log pasted in the TUI`).
    pub logs: &'a [String],
    /// SKUs that share a chip and model families (knowledge/hardware.yaml).
    pub hardware: &'a Hardware,
    /// The environment the engine gets (launch assignments over the collected environment).
    pub env: &'a EnvView,
}

impl Input<'_> {
    /// Where the snapshot came from, for sources: `live NVML` (the live host's GPUs, topology,
    /// driver and processes are read through NVML), `collect-env FILE`, `snapshot FILE`, `demo`.
    pub fn origin(&self) -> String {
        origin_label(&self.snap.origin)
    }

    /// Like [`Input::origin`] for what the live host reads without NVML (the Python stack, the
    /// OS): `this host (live)`.
    pub(crate) fn host_origin(&self) -> String {
        if self.snap.origin.is_live() {
            "this host (live)".into()
        } else {
            origin_label(&self.snap.origin)
        }
    }
}

/// A snapshot origin as sources name it.
pub(crate) fn origin_label(origin: &Origin) -> String {
    match origin {
        Origin::Live => "live NVML".into(),
        Origin::CollectEnv(f) => format!("collect-env {f}"),
        Origin::Snapshot { file, inner: None } => format!("snapshot {file}"),
        Origin::Snapshot {
            file,
            inner: Some(inner),
        } => format!("snapshot {file} ({inner})"),
        o => o.to_string(),
    }
}

/// One fact with a fixed name: declared once, with its meaning and its derivation.
pub struct FactDef {
    pub name: &'static str,
    /// What it means, for `kb facts`.
    pub about: &'static str,
    pub derive: fn(&Input<'_>) -> Fact,
}

/// A family of facts named `PREFIX` + any suffix (`env.NAME`, `launch.flag.NAME`).
pub struct OpenFamily {
    pub prefix: &'static str,
    /// How `kb facts` shows it (`env.NAME`).
    pub shown: &'static str,
    pub about: &'static str,
    pub lookup: fn(&Facts, &str) -> Fact,
}

/// Every declared fact family, in `kb facts` order.
const FAMILIES: &[&[FactDef]] = &[
    gpu::FACTS,
    access::FACTS,
    topology::FACTS,
    driver::FACTS,
    env::FACTS,
    alloc::FACTS,
    python::FACTS,
    os::FACTS,
    launch::FACTS,
    launch::TEXT_FACTS,
    model::FACTS,
    fp8::FACTS,
    processes::FACTS,
    logs::FACTS,
    run::FACTS,
    probe::FACTS,
    p2p::FACTS,
];

/// The open families.
const OPEN: &[OpenFamily] = &[env::OPEN, launch::OPEN];

/// Every fact with a fixed name.
pub(crate) fn definitions() -> impl Iterator<Item = &'static FactDef> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// (name, meaning) of every fact a check may use, fixed names first, then the open families
/// (`env.NAME`, `launch.flag.NAME`).
pub fn catalogue() -> Vec<(&'static str, &'static str)> {
    definitions()
        .map(|d| (d.name, d.about))
        .chain(OPEN.iter().map(|o| (o.shown, o.about)))
        .collect()
}

/// Is `name` a fact a check may use?
pub fn is_known_fact(name: &str) -> bool {
    definitions().any(|d| d.name == name)
        || OPEN
            .iter()
            .any(|o| name.strip_prefix(o.prefix).is_some_and(|v| !v.is_empty()))
}

/// All facts of one snapshot (plus whether logs were given).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    map: BTreeMap<String, Fact>,
    /// The effective environment, for open `env.*` lookups.
    env: EnvView,
    /// The launch's flags as given (`None`: no launch), for open `launch.flag.*` lookups.
    flags: Option<BTreeMap<String, String>>,
    /// How the launch is named in sources.
    launch_source: String,
    /// Why the launch's flags are not known (an expansion in its arguments).
    args_unknown: Option<String>,
}

impl Facts {
    pub fn get(&self, name: &str) -> Fact {
        if let Some(f) = self.map.get(name) {
            return f.clone();
        }
        for o in OPEN {
            if let Some(rest) = name.strip_prefix(o.prefix) {
                return (o.lookup)(self, rest);
            }
        }
        Fact::unknown(format!("no fact named {name}"))
    }

    /// Replace a fact the engine derives after the logs were read (`log.run.*`).
    pub fn set(&mut self, name: &str, fact: Fact) {
        self.map.insert(name.to_string(), fact);
    }

    /// Every fact with a fixed name, for display (`kb facts`, reports, the TUI).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Fact)> {
        self.map.iter()
    }
}

/// Derive every fact from a snapshot; `hardware` holds the name tables of the knowledge base.
/// `logs_given` without names: the logs are named "the given logs" in sources.
pub fn derive(snap: &HostSnapshot, logs_given: bool, hardware: &Hardware) -> Facts {
    let names = if logs_given {
        vec!["the given logs".to_string()]
    } else {
        Vec::new()
    };
    derive_with_logs(snap, &names, hardware)
}

/// Derive every fact; `logs` names each given log as sources show it.
pub(crate) fn derive_with_logs(snap: &HostSnapshot, logs: &[String], hardware: &Hardware) -> Facts {
    let env = EnvView::new(snap);
    let input = Input {
        snap,
        logs,
        hardware,
        env: &env,
    };
    let map = definitions()
        .map(|d| (d.name.to_string(), (d.derive)(&input)))
        .collect();
    Facts {
        map,
        flags: snap
            .launch
            .value()
            .filter(|l| !l.env_only)
            .map(|l| l.flags.clone()),
        launch_source: launch::source(snap),
        args_unknown: snap.launch.value().and_then(|l| l.args_unknown.clone()),
        env,
    }
}

/// A fact from a probed value: the value's derivation, or unknown with why it is missing.
fn probed<T>(p: &Probed<T>, source: impl Into<String>, f: impl FnOnce(&T) -> Value) -> Fact {
    let value = match (p, p.unknown_reason()) {
        (Probed::Value(v), _) => f(v),
        (_, Some(why)) => Value::Unknown(why),
        (_, None) => Value::Null,
    };
    Fact::new(value, source)
}

fn str_or_null(s: &Option<String>) -> Value {
    s.as_ref()
        .map(|v| Value::Str(v.clone()))
        .unwrap_or(Value::Null)
}

/// A probed string: the value, null when not installed, else unknown.
fn probed_str(p: &Probed<String>) -> Value {
    match p {
        Probed::Value(v) => Value::Str(v.clone()),
        Probed::Skipped(r) if r.code == ReasonCode::NotInstalled => Value::Null,
        other => other.unknown_reason().map_or(Value::Null, Value::Unknown),
    }
}

fn strs(v: impl IntoIterator<Item = String>) -> Value {
    Value::List(v.into_iter().map(Value::Str).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_names_are_known_and_open_families_work() {
        assert!(is_known_fact("launch.tp"));
        assert!(is_known_fact("env.VLLM_USE_DEEP_GEMM"));
        assert!(is_known_fact("launch.flag.max-num-seqs"));
        assert!(!is_known_fact("env."));
        assert!(!is_known_fact("gpu.bogus"));
    }

    #[test]
    fn every_fact_is_declared_once_and_derived() {
        let mut names: Vec<&str> = definitions().map(|d| d.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a fact is declared twice");
        let snap = HostSnapshot::empty("test", "test");
        let f = derive(&snap, false, &Hardware::default());
        assert_eq!(f.iter().count(), n, "every declaration yields one fact");
        for d in definitions() {
            assert!(!d.about.is_empty(), "{} has no description", d.name);
        }
        let cat = catalogue();
        assert_eq!(cat.len(), n + OPEN.len());
        assert!(cat.contains(&("env.NAME", env::OPEN.about)));
    }

    #[test]
    fn unknown_names_say_so() {
        let f = derive(&HostSnapshot::empty("t", "t"), false, &Hardware::default());
        assert!(
            matches!(f.get("gpu.bogus").value, Value::Unknown(w) if w.to_string().contains("gpu.bogus"))
        );
        assert!(matches!(
            f.get("launch.flag.x").value,
            Value::Unknown(w) if w.missing_input() == Some(crate::value::Input::Launch)
        ));
    }
}
