//! `probe.*`: what the allocator/IPC probe measured on this host.

use super::{Fact, FactDef, Input, str_or_null};
use crate::snapshot::{IpcProbe, IpcProbeRun, Probed};
use crate::value::Value;

const SOURCE: &str = "allocator/IPC probe on this host";

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "probe.ran",
        about: "the allocator/IPC probe ran on this host (torch or native path)",
        derive: |i| {
            let ran = match &i.snap.probe {
                Probed::Value(p) => runs(p).any(|r| r.ipc_handle_ok.value().is_some()),
                _ => false,
            };
            if ran {
                Fact::new(Value::Bool(true), SOURCE)
            } else {
                Fact::assumed(Value::Bool(false), "the allocator/IPC probe did not run")
            }
        },
    },
    FactDef {
        name: "probe.engine_alloc_conf",
        about: "allocator config the probe used as the engine's (null: unset)",
        derive: |i| match probe(i) {
            Ok(p) => Fact::new(
                str_or_null(&p.engine_alloc_conf),
                p.engine_alloc_source.clone(),
            ),
            Err(f) => f,
        },
    },
    FactDef {
        name: "probe.ipc_engine_config_ok",
        about: "torch memory under the engine's allocator config was exported through legacy CUDA IPC",
        derive: |i| {
            all_ok(
                i,
                |r| r.path == "torch" && r.role == "engine",
                "torch allocation under the engine's config",
            )
        },
    },
    FactDef {
        name: "probe.ipc_default_ok",
        about: "memory without expandable segments (torch default/remedy, native cuMemAlloc) was exported through legacy IPC",
        derive: |i| {
            all_ok(
                i,
                |r| !r.expandable,
                "allocation without expandable segments",
            )
        },
    },
    FactDef {
        name: "probe.ipc_expandable_ok",
        about: "memory from expandable segments (torch expandable_segments:True, native VMM) was exported through legacy IPC",
        derive: |i| all_ok(i, |r| r.expandable, "allocation from expandable segments"),
    },
    FactDef {
        name: "probe.remedy_ok",
        about: "torch memory with expandable segments switched off (the remedy) was exported through legacy IPC",
        derive: |i| {
            all_ok(
                i,
                |r| r.path == "torch" && r.role == "remedy",
                "torch allocation with the remedy applied",
            )
        },
    },
];

/// The probe result, or the fact to give when it did not run.
fn probe<'a>(i: &Input<'a>) -> Result<&'a IpcProbe, Fact> {
    match &i.snap.probe {
        Probed::Value(p) => Ok(p),
        Probed::Skipped(r) => Err(Fact::unknown(format!("probe skipped: {r}"))),
        Probed::Failed(e) => Err(Fact::unknown(format!("probe failed: {e}"))),
    }
}

fn runs(p: &IpcProbe) -> impl Iterator<Item = &IpcProbeRun> {
    p.native
        .value()
        .into_iter()
        .flatten()
        .chain(p.torch.value().into_iter().flatten())
}

/// All runs matching `pick` exported: true/false; none measured: unknown.
fn all_ok(i: &Input<'_>, pick: fn(&IpcProbeRun) -> bool, what: &str) -> Fact {
    let p = match probe(i) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let measured: Vec<bool> = runs(p)
        .filter(|r| pick(r))
        .filter_map(|r| r.ipc_handle_ok.value().copied())
        .collect();
    let value = if measured.is_empty() {
        Value::unknown(format!("the probe measured no {what}"))
    } else {
        Value::Bool(measured.iter().all(|ok| *ok))
    };
    Fact::new(value, SOURCE)
}
