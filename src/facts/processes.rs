//! `processes.*`: GPU compute processes, and vLLM workers whose server is gone.

use super::{Fact, FactDef, Input, probed};
use crate::snapshot::GpuProcess;
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "processes.count",
        about: "GPU compute processes running",
        derive: |i| procs(i, |p| Value::Num(p.len() as f64)),
    },
    FactDef {
        name: "processes.orphans",
        about: "GPU processes of vLLM whose server is gone",
        derive: |i| procs(i, |p| Value::Num(orphans(p).count() as f64)),
    },
    FactDef {
        name: "processes.orphan_pids",
        about: "their PIDs",
        derive: |i| {
            procs(i, |p| {
                Value::List(orphans(p).map(|o| Value::Num(o.pid as f64)).collect())
            })
        },
    },
    FactDef {
        name: "processes.orphan_memory_mib",
        about: "GPU memory they hold, MiB",
        derive: |i| {
            procs(i, |p| {
                Value::Num(orphans(p).filter_map(|o| o.used_memory_mib).sum::<u64>() as f64)
            })
        },
    },
];

fn procs(i: &Input<'_>, f: impl FnOnce(&Vec<GpuProcess>) -> Value) -> Fact {
    probed(
        &i.snap.processes,
        format!("{}: GPU processes", i.origin()),
        f,
    )
}

fn orphans(p: &[GpuProcess]) -> impl Iterator<Item = &GpuProcess> {
    p.iter()
        .filter(|p| p.is_vllm && p.parent_alive == Some(false))
}
