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

/// True when `pick` holds for every pair; unknown when one pair is not known, and unknown when
/// there is no pair at all: a quantifier over nothing is no evidence.
fn all(pairs: &[GpuPair], pick: fn(&GpuPair) -> &Probed<bool>, what: &str) -> Value {
    if pairs.is_empty() {
        return Value::unknown(format!(
            "no GPU pair to check the {what} of (fewer than 2 GPUs seen)"
        ));
    }
    let mut all = true;
    for p in pairs {
        match pick(p).value() {
            Some(v) => all &= *v,
            None => {
                return Value::unknown(format!("{what} of GPU pair {}-{} not known", p.a, p.b));
            }
        }
    }
    Value::Bool(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HostSnapshot;
    use crate::vllm::hardware::Hardware;

    fn facts(pairs: Vec<GpuPair>) -> crate::facts::Facts {
        let mut s = HostSnapshot::empty("t", "t");
        s.gpu_pairs = Probed::Value(pairs);
        crate::facts::derive(&s, false, &Hardware::default())
    }

    #[test]
    fn all_over_no_pair_is_unknown_not_true() {
        let f = facts(Vec::new());
        for name in ["topology.all_nvlink", "topology.all_p2p"] {
            assert!(
                matches!(&f.get(name).value, Value::Unknown(w) if w.to_string().contains("fewer than 2 GPUs")),
                "{name}: {:?}",
                f.get(name)
            );
        }
        assert_eq!(f.get("topology.pairs").value, Value::Num(0.0));
        let pair = |nv: bool| GpuPair {
            a: 0,
            b: 1,
            topology: Probed::Value("NV18".into()),
            p2p: Probed::Value(true),
            nvlink: Probed::Value(nv),
        };
        assert_eq!(
            facts(vec![pair(true)]).get("topology.all_nvlink").value,
            Value::Bool(true)
        );
        assert_eq!(
            facts(vec![pair(false)]).get("topology.all_nvlink").value,
            Value::Bool(false)
        );
    }
}
