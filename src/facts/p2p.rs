//! `p2p.*`, `iommu.*`, `acs.*`, `pci.*`: does peer-to-peer traffic really arrive between the
//! GPUs (the functional probe, `probe p2p`), and what lies on its path (the PCI fabric: IOMMU
//! domains, the kernel command line, ACS redirect on the bridges between the GPUs, root ports).
//!
//! Quantifiers over GPUs and pairs never count an empty set as evidence: with no pair (one GPU,
//! the probe not run or skipped, the fabric not read) a fact is unknown with the reason, never
//! true. A pair not tried makes a "some pair" fact unknown unless another pair already decides
//! it.

use super::{Fact, FactDef, Input};
use crate::snapshot::{P2pOutcome, P2pPair, PciFabric, PciGpu, PciGpuPair, Probed};
use crate::value::{Reason, Value};

const PROBE: &str = "functional P2P probe on this host (probe p2p)";

fn fabric_source(i: &Input<'_>) -> String {
    format!("{}: PCI fabric (/sys, /proc/cmdline)", i.origin())
}

pub(super) const FACTS: &[FactDef] = &[
    // The functional probe: what the copies showed.
    FactDef {
        name: "p2p.probe_ran",
        about: "the functional P2P probe tested at least one GPU pair on this host",
        // Not run stands in for a measurement not made, like probe.ran: a finding that rests
        // on it is "assumed", not "measured".
        derive: |i| {
            if pairs(i).is_ok() {
                Fact::new(Value::Bool(true), PROBE)
            } else {
                Fact::assumed(Value::Bool(false), "the P2P probe did not run")
            }
        },
    },
    FactDef {
        name: "p2p.functional_ok",
        about: "every GPU pair the P2P probe tested passed write-and-verify both ways (unknown: not run, no pair, a pair not tried)",
        derive: |i| {
            probe_fact(i, |p| {
                if p.iter().any(|x| is_bad(&x.functional)) {
                    Value::Bool(false)
                } else if let Some(x) = p.iter().find(|x| x.functional != P2pOutcome::Ok) {
                    Value::unknown(format!(
                        "GPU pair {}-{} not tried: {}",
                        x.a,
                        x.b,
                        x.functional.describe()
                    ))
                } else {
                    Value::Bool(true)
                }
            })
        },
    },
    FactDef {
        name: "p2p.hung",
        about: "a GPU pair's peer copies were still running at the probe's time limit",
        derive: |i| {
            probe_fact(i, |p| {
                some_pair(p, |o| matches!(o, P2pOutcome::Hung { .. }))
            })
        },
    },
    FactDef {
        name: "p2p.hung_step",
        about: "where the first hung pair stopped (null: no pair hung)",
        derive: |i| {
            probe_fact(i, |p| {
                match p.iter().find_map(|x| match &x.functional {
                    P2pOutcome::Hung { step, after_ms } => Some(format!(
                        "GPU{}↔GPU{}: `{step}` after {after_ms:.0} ms",
                        x.a, x.b
                    )),
                    _ => None,
                }) {
                    Some(s) => Value::Str(s),
                    None => match some_pair(p, |o| matches!(o, P2pOutcome::Hung { .. })) {
                        Value::Unknown(w) => Value::Unknown(w),
                        _ => Value::Null,
                    },
                }
            })
        },
    },
    FactDef {
        name: "p2p.wrong_data",
        about: "a GPU pair's peer copy finished but the bytes that arrived differ from those written",
        derive: |i| {
            probe_fact(i, |p| {
                some_pair(p, |o| matches!(o, P2pOutcome::WrongData { .. }))
            })
        },
    },
    FactDef {
        name: "p2p.error",
        about: "a driver call of the P2P probe failed for a GPU pair (enabling peer access, a copy), or its child ended",
        derive: |i| {
            probe_fact(i, |p| {
                some_pair(p, |o| matches!(o, P2pOutcome::Error { .. }))
            })
        },
    },
    FactDef {
        name: "p2p.results",
        about: "each tested GPU pair and its outcome, e.g. `GPU0↔GPU1: ok`",
        derive: |i| {
            probe_fact(i, |p| {
                Value::List(
                    p.iter()
                        .map(|x| {
                            Value::Str(format!(
                                "GPU{}↔GPU{}: {}",
                                x.a,
                                x.b,
                                x.functional.describe()
                            ))
                        })
                        .collect(),
                )
            })
        },
    },
    FactDef {
        name: "p2p.min_gb_per_s",
        about: "the slowest measured peer copy of any pair, direction and method, GB/s",
        derive: |i| {
            probe_fact(i, |p| {
                p.iter()
                    .flat_map(|x| x.directions.iter())
                    .filter_map(|d| d.gb_per_s)
                    .reduce(f64::min)
                    .map(Value::Num)
                    .unwrap_or_else(|| Value::Unknown("no peer copy was timed".into()))
            })
        },
    },
    FactDef {
        name: "p2p.driver_says_ok",
        about: "the driver reports P2P for every tested pair: cuDeviceCanAccessPeer both ways, and NVML's P2P read/write status not refused",
        derive: |i| probe_fact(i, driver_says_ok),
    },
    FactDef {
        name: "p2p.driver_contradicted",
        about: "the driver reports P2P for every pair but a pair's copies hung, got wrong data or failed: the driver's all-clear is false",
        derive: |i| {
            probe_fact(i, |p| match driver_says_ok(p) {
                Value::Bool(false) => Value::Bool(false),
                Value::Bool(true) => Value::Bool(p.iter().any(|x| is_bad(&x.functional))),
                other => other,
            })
        },
    },
    // The PCI fabric between the GPUs.
    FactDef {
        name: "pci.fabric_read",
        about: "the PCI fabric between the GPUs was read in full: at least two GPUs, the IOMMU domain of each and the ACS state of every bridge between them",
        derive: |i| {
            let read = gpu_domains(i).is_ok() && redirect_lists(i).is_ok();
            Fact::new(Value::Bool(read), fabric_source(i))
        },
    },
    FactDef {
        name: "pci.gpus_share_root_port",
        about: "every GPU pair sits below the same PCIe root port (a switch between them)",
        derive: |i| {
            fabric_pairs_fact(i, |pairs| {
                all_known(pairs, |p| &p.same_root_port, "root port of GPU pair")
            })
        },
    },
    FactDef {
        name: "pci.gpus_on_root_bus",
        about: "every GPU sits on the root bus with no bridge above it (typical of a virtual machine)",
        derive: |i| {
            fabric_gpus_fact(i, |gpus| {
                let mut all = true;
                for g in gpus {
                    match g.path.value() {
                        Some(p) => all &= p.is_empty(),
                        None => {
                            return Value::unknown(format!(
                                "PCIe path of {} not known: {}",
                                g.bdf,
                                g.path.why_or("")
                            ));
                        }
                    }
                }
                Value::Bool(all)
            })
        },
    },
    FactDef {
        name: "iommu.enabled",
        about: "the kernel runs an IOMMU (IOMMU units registered or IOMMU groups present)",
        derive: |i| {
            let value = match fabric(i) {
                Ok(f) => match (f.iommu_units.value(), f.iommu_groups.value()) {
                    (Some(u), _) if !u.is_empty() => Value::Bool(true),
                    (_, Some(g)) if *g > 0 => Value::Bool(true),
                    (Some(_), Some(_)) => Value::Bool(false),
                    _ => Value::Unknown(
                        f.iommu_units
                            .missing_reason()
                            .or(f.iommu_groups.missing_reason())
                            .cloned()
                            .unwrap_or_else(|| "IOMMU state not read".into()),
                    ),
                },
                Err(why) => Value::unknown(why),
            };
            Fact::new(value, fabric_source(i))
        },
    },
    FactDef {
        name: "iommu.gpu_translated",
        about: "the IOMMU translates some GPU's DMA (its group's domain type is DMA or DMA-FQ)",
        derive: |i| {
            let value = match gpu_domains(i) {
                Ok(d) => Value::Bool(d.iter().any(|(_, t)| is_translated(t))),
                Err(why) => Value::unknown(why),
            };
            Fact::new(value, fabric_source(i))
        },
    },
    FactDef {
        name: "iommu.gpu_passthrough",
        about: "every GPU's IOMMU domain is identity (passthrough: the IOMMU is on but does not translate GPU DMA)",
        derive: |i| {
            let value = match gpu_domains(i) {
                Ok(d) => Value::Bool(d.iter().all(|(_, t)| t.as_deref() == Some("identity"))),
                Err(why) => Value::unknown(why),
            };
            Fact::new(value, fabric_source(i))
        },
    },
    FactDef {
        name: "iommu.gpu_domain_types",
        about: "each GPU's IOMMU domain type, e.g. `0000:01:00.0: DMA-FQ` (`no IOMMU group` when it has none)",
        derive: |i| {
            let value = match gpu_domains(i) {
                Ok(d) => Value::List(
                    d.into_iter()
                        .map(|(bdf, t)| {
                            Value::Str(format!(
                                "{bdf}: {}",
                                t.as_deref().unwrap_or("no IOMMU group")
                            ))
                        })
                        .collect(),
                ),
                Err(why) => Value::unknown(why),
            };
            Fact::new(value, fabric_source(i))
        },
    },
    FactDef {
        name: "iommu.cmdline_params",
        about: "the IOMMU and ACS parameters on the kernel command line, as written",
        derive: |i| {
            cmdline_fact(i, |p| {
                Value::List(p.iter().map(|s| Value::Str(s.clone())).collect())
            })
        },
    },
    FactDef {
        name: "iommu.cmdline_pt",
        about: "the kernel command line puts the IOMMU in passthrough (iommu=pt, iommu.passthrough=1)",
        derive: |i| cmdline_fact(i, |p| Value::Bool(cmdline_pt(p))),
    },
    FactDef {
        name: "iommu.cmdline_off",
        about: "the kernel command line turns the IOMMU off (iommu=off, amd_iommu=off, intel_iommu=off)",
        derive: |i| cmdline_fact(i, |p| Value::Bool(cmdline_off(p))),
    },
    FactDef {
        name: "acs.redirect_between_gpus",
        about: "a PCIe bridge between some GPU pair has ACS P2P request or completion redirect on (unknown, with the reason, when a bridge could not be read)",
        derive: |i| {
            let value = match redirect_lists(i) {
                Ok(lists) => Value::Bool(lists.iter().any(|l| !l.is_empty())),
                Err(Unread::Partly { found: true, .. }) => Value::Bool(true),
                Err(Unread::Partly { why, .. }) | Err(Unread::Nothing(why)) => Value::unknown(why),
            };
            Fact::new(value, fabric_source(i))
        },
    },
    FactDef {
        name: "acs.redirect_bridges",
        about: "the bridges between GPU pairs with ACS redirect on, by PCI address",
        derive: |i| {
            let lists = match redirect_lists(i) {
                Ok(l) => l,
                Err(Unread::Partly {
                    read, found: true, ..
                }) => read,
                Err(Unread::Partly { why, .. }) | Err(Unread::Nothing(why)) => {
                    return Fact::new(Value::unknown(why), fabric_source(i));
                }
            };
            let mut out: Vec<String> = Vec::new();
            for b in lists.into_iter().flatten() {
                if !out.contains(&b) {
                    out.push(b);
                }
            }
            Fact::new(
                Value::List(out.into_iter().map(Value::Str).collect()),
                fabric_source(i),
            )
        },
    },
    FactDef {
        name: "acs.unreadable_reason",
        about: "why the ACS state of a bridge between the GPUs could not be read (null: every bridge was read)",
        derive: |i| {
            let value = match redirect_lists(i) {
                Ok(_) => Value::Null,
                Err(Unread::Partly { why, .. }) => Value::Str(why),
                Err(Unread::Nothing(why)) => Value::unknown(why),
            };
            Fact::new(value, fabric_source(i))
        },
    },
];

// ---- the probe ----

/// The tested pairs, or why there are none.
fn pairs<'a>(i: &Input<'a>) -> Result<&'a [P2pPair], Reason> {
    let p = match &i.snap.p2p_probe {
        Probed::Value(p) => p,
        Probed::Skipped(r) => return Err(r.clone()),
        Probed::Failed(e) => return Err(e.clone().within("P2P probe failed")),
    };
    match &p.pairs {
        Probed::Value(v) if v.is_empty() => Err("the P2P probe found no GPU pair".into()),
        Probed::Value(v) => Ok(v),
        Probed::Skipped(r) => Err(r.clone().within("P2P probe skipped")),
        Probed::Failed(e) => Err(e.clone().within("P2P probe failed")),
    }
}

fn probe_fact(i: &Input<'_>, f: impl FnOnce(&[P2pPair]) -> Value) -> Fact {
    let value = match pairs(i) {
        Ok(p) => f(p),
        Err(why) => Value::unknown(why),
    };
    Fact::new(value, PROBE)
}

/// Hung, wrong data or an error: the copies did not deliver.
fn is_bad(o: &P2pOutcome) -> bool {
    matches!(
        o,
        P2pOutcome::Hung { .. } | P2pOutcome::WrongData { .. } | P2pOutcome::Error { .. }
    )
}

/// Some tested pair came out as `want` says: true as soon as one does; false only when every
/// pair was tried; unknown when a pair was not tried.
fn some_pair(p: &[P2pPair], want: fn(&P2pOutcome) -> bool) -> Value {
    if p.iter().any(|x| want(&x.functional)) {
        return Value::Bool(true);
    }
    match p
        .iter()
        .find(|x| matches!(x.functional, P2pOutcome::NotRun { .. }))
    {
        Some(x) => Value::unknown(format!(
            "GPU pair {}-{} not tried: {}",
            x.a,
            x.b,
            x.functional.describe()
        )),
        None => Value::Bool(false),
    }
}

/// cuDeviceCanAccessPeer both ways for every pair, and NVML not refusing (NVML not asked does
/// not count against it: CUDA's answer is what torch.cuda.can_device_access_peer returns).
fn driver_says_ok(p: &[P2pPair]) -> Value {
    let mut unknown: Option<String> = None;
    for x in p {
        let cuda = [&x.cuda_can_access_peer_ab, &x.cuda_can_access_peer_ba];
        let nvml = [&x.nvml_p2p_read, &x.nvml_p2p_write];
        if cuda
            .iter()
            .chain(nvml.iter())
            .any(|v| **v == Probed::Value(false))
        {
            return Value::Bool(false);
        }
        if unknown.is_none()
            && let Some(c) = cuda.iter().find(|v| v.value().is_none())
        {
            unknown = Some(format!(
                "cuDeviceCanAccessPeer for GPU pair {}-{} not known: {}",
                x.a,
                x.b,
                c.why_or("")
            ));
        }
    }
    match unknown {
        Some(why) => Value::unknown(why),
        None => Value::Bool(true),
    }
}

// ---- the PCI fabric ----

fn fabric<'a>(i: &Input<'a>) -> Result<&'a PciFabric, String> {
    match &i.snap.pci_fabric {
        Probed::Value(f) => Ok(f),
        Probed::Skipped(r) => Err(format!("PCI fabric not read: {r}")),
        Probed::Failed(e) => Err(format!("PCI fabric not read: {e}")),
    }
}

/// The GPUs on the PCI bus, when there are at least two (a pair).
fn fabric_gpus<'a>(i: &Input<'a>) -> Result<&'a [PciGpu], String> {
    let f = fabric(i)?;
    match &f.gpus {
        Probed::Value(g) if g.len() >= 2 => Ok(g),
        Probed::Value(g) => Err(format!(
            "{} NVIDIA GPU(s) on the PCI bus: no GPU pair",
            g.len()
        )),
        Probed::Skipped(r) => Err(format!("GPUs on the PCI bus not read: {r}")),
        Probed::Failed(e) => Err(format!("GPUs on the PCI bus not read: {e}")),
    }
}

fn fabric_gpus_fact(i: &Input<'_>, f: impl FnOnce(&[PciGpu]) -> Value) -> Fact {
    let value = match fabric_gpus(i) {
        Ok(g) => f(g),
        Err(why) => Value::unknown(why),
    };
    Fact::new(value, fabric_source(i))
}

fn fabric_pairs<'a>(i: &Input<'a>) -> Result<&'a [PciGpuPair], String> {
    let f = fabric(i)?;
    fabric_gpus(i)?;
    if f.pairs.is_empty() {
        return Err("no GPU pair in the PCI fabric".into());
    }
    Ok(&f.pairs)
}

fn fabric_pairs_fact(i: &Input<'_>, f: impl FnOnce(&[PciGpuPair]) -> Value) -> Fact {
    let value = match fabric_pairs(i) {
        Ok(p) => f(p),
        Err(why) => Value::unknown(why),
    };
    Fact::new(value, fabric_source(i))
}

/// True when `pick` is true for every pair; false as soon as one is false; else unknown.
fn all_known(pairs: &[PciGpuPair], pick: fn(&PciGpuPair) -> &Probed<bool>, what: &str) -> Value {
    if pairs.iter().any(|p| *pick(p) == Probed::Value(false)) {
        return Value::Bool(false);
    }
    match pairs.iter().find(|p| pick(p).value().is_none()) {
        Some(p) => Value::unknown(format!(
            "{what} {}-{} not known: {}",
            p.a,
            p.b,
            pick(p).why_or("")
        )),
        None => Value::Bool(true),
    }
}

/// Each GPU's IOMMU domain type (`None`: the GPU is in no IOMMU group, so nothing translates
/// its DMA), or why one is not known.
fn gpu_domains(i: &Input<'_>) -> Result<Vec<(String, Option<String>)>, String> {
    let gpus = fabric_gpus(i)?;
    let mut out = Vec::new();
    for g in gpus {
        let t = match (&g.iommu_domain_type, &g.iommu_group) {
            (Probed::Value(t), _) => Some(t.clone()),
            (_, Probed::Skipped(_)) => None,
            (t, _) => {
                return Err(format!(
                    "IOMMU domain of {} not known: {}",
                    g.bdf,
                    t.why_or("")
                ));
            }
        };
        out.push((g.bdf.clone(), t));
    }
    Ok(out)
}

fn is_translated(t: &Option<String>) -> bool {
    matches!(t.as_deref(), Some("DMA") | Some("DMA-FQ"))
}

/// Why the bridges between the GPUs are not all read.
enum Unread {
    /// No pair, or the fabric was not read at all.
    Nothing(String),
    /// Some pairs' bridges could not be read: the lists that were, whether one of them shows
    /// redirect on, and the first reason.
    Partly {
        read: Vec<Vec<String>>,
        found: bool,
        why: String,
    },
}

/// For every GPU pair, the bridges between them with ACS redirect on.
fn redirect_lists(i: &Input<'_>) -> Result<Vec<Vec<String>>, Unread> {
    let pairs = fabric_pairs(i).map_err(Unread::Nothing)?;
    let mut read = Vec::new();
    let mut why: Option<String> = None;
    for p in pairs {
        match &p.acs_redirect_between {
            Probed::Value(l) => read.push(l.clone()),
            other => {
                if why.is_none() {
                    why = Some(format!(
                        "ACS between {} and {} not read: {}",
                        p.a,
                        p.b,
                        other.why_or("")
                    ));
                }
            }
        }
    }
    match why {
        None => Ok(read),
        Some(why) => {
            let found = read.iter().any(|l| !l.is_empty());
            Err(Unread::Partly { read, found, why })
        }
    }
}

fn cmdline_fact(i: &Input<'_>, f: impl FnOnce(&[String]) -> Value) -> Fact {
    let value = match fabric(i) {
        Ok(fab) => match &fab.iommu_params {
            Probed::Value(p) => f(p),
            other => Value::unknown(format!(
                "kernel command line not read: {}",
                other.why_or("")
            )),
        },
        Err(why) => Value::unknown(why),
    };
    Fact::new(value, format!("{}: /proc/cmdline", i.origin()))
}

fn is_on(v: &str) -> Option<bool> {
    match v {
        "1" | "y" | "Y" | "on" | "yes" | "true" => Some(true),
        "0" | "n" | "N" | "off" | "no" | "false" => Some(false),
        _ => None,
    }
}

/// `iommu=pt` / `iommu.passthrough=1`; the last word on it wins (`iommu=nopt` undoes it).
fn cmdline_pt(params: &[String]) -> bool {
    let mut pt = false;
    for p in params {
        match p.split_once('=') {
            Some(("iommu", v)) => {
                for w in v.split(',') {
                    match w {
                        "pt" => pt = true,
                        "nopt" => pt = false,
                        _ => {}
                    }
                }
            }
            Some(("iommu.passthrough", v)) => {
                if let Some(b) = is_on(v) {
                    pt = b;
                }
            }
            _ => {}
        }
    }
    pt
}

/// `iommu=off`, `amd_iommu=off`, `intel_iommu=off` (the last value of each parameter wins).
fn cmdline_off(params: &[String]) -> bool {
    let mut off = [false; 3];
    for p in params {
        let Some((name, v)) = p.split_once('=') else {
            continue;
        };
        let slot = match name {
            "iommu" => 0,
            "amd_iommu" => 1,
            "intel_iommu" => 2,
            _ => continue,
        };
        let words: Vec<&str> = v.split(',').collect();
        if words.contains(&"off") {
            off[slot] = true;
        } else if words.iter().any(|w| *w == "on" || *w == "force") {
            off[slot] = false;
        }
    }
    off.iter().any(|o| *o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn passthrough_and_off_follow_the_kernel_parameters() {
        assert!(cmdline_pt(&s(&["amd_iommu=on", "iommu=pt"])));
        assert!(cmdline_pt(&s(&["iommu.passthrough=1"])));
        assert!(!cmdline_pt(&s(&["iommu=pt", "iommu.passthrough=0"])));
        assert!(!cmdline_pt(&s(&["iommu=pt", "iommu=nopt"])));
        assert!(!cmdline_pt(&s(&["intel_iommu=on"])));
        assert!(!cmdline_pt(&[]));
        assert!(cmdline_off(&s(&["amd_iommu=off"])));
        assert!(cmdline_off(&s(&["intel_iommu=off,sm_on"])));
        assert!(cmdline_off(&s(&["iommu=off"])));
        assert!(!cmdline_off(&s(&["intel_iommu=off", "intel_iommu=on"])));
        assert!(!cmdline_off(&s(&["iommu=pt", "amd_iommu=on"])));
    }

    #[test]
    fn translated_means_dma_or_dma_fq() {
        assert!(is_translated(&Some("DMA".into())));
        assert!(is_translated(&Some("DMA-FQ".into())));
        assert!(!is_translated(&Some("identity".into())));
        assert!(!is_translated(&None));
    }
}
