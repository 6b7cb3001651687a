//! `topology.*`: how GPU pairs are connected.

use super::{Fact, FactDef, Input, probed, probed_str};
use crate::snapshot::{GpuPair, Probed};
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "topology.pairs",
        about: "number of GPU pairs",
        derive: |i| pairs(i, |p| Value::Num(p.len() as f64)),
    },
    FactDef {
        name: "topology.all_nvlink",
        about: "every GPU pair is connected by NVLink",
        derive: |i| pairs(i, |p| all(p, |p| &p.nvlink, "NVLink status")),
    },
    FactDef {
        name: "topology.all_p2p",
        about: "every GPU pair can do P2P",
        derive: |i| pairs(i, |p| all(p, |p| &p.p2p, "P2P status")),
    },
    FactDef {
        name: "topology.levels",
        about: "topology level of each pair (NV#, PIX, PXB, PHB, NODE, SYS)",
        derive: |i| {
            pairs(i, |p| {
                Value::List(p.iter().map(|p| probed_str(&p.topology)).collect())
            })
        },
    },
];

fn pairs(i: &Input<'_>, f: impl FnOnce(&Vec<GpuPair>) -> Value) -> Fact {
    probed(&i.snap.gpu_pairs, format!("{}: topology", i.origin()), f)
}

/// True when `pick` holds for every pair; unknown when one pair is not known.
fn all(pairs: &[GpuPair], pick: fn(&GpuPair) -> &Probed<bool>, what: &str) -> Value {
    let mut all = true;
    for p in pairs {
        match pick(p).value() {
            Some(v) => all &= *v,
            None => {
                return Value::Unknown(format!("{what} of GPU pair {}-{} not known", p.a, p.b));
            }
        }
    }
    Value::Bool(all)
}
