//! The `p2p.*`, `iommu.*`, `acs.*` and `pci.*` facts (the peer-to-peer fabric class reads them) from each sysfs fixture tree
//! (tests/fixtures/sysfs/, read by the real collector), from the 2× H200 capture
//! (tests/fixtures/h200-p2p-2026-11-30/) and from fake probe results: ok, hung, wrong data, an
//! error, not run, skipped, and a host with one GPU.

use sm120_doctor::collect::pci::{self, Lspci, NoLspci};
use sm120_doctor::facts::{self, Facts};
use sm120_doctor::snapshot::{
    HostSnapshot, P2pDirection, P2pOutcome, P2pPair, P2pProbe, PciFabric, Probed,
};
use sm120_doctor::value::Value;
use sm120_doctor::vllm::hardware::Hardware;
use std::path::{Path, PathBuf};

const SYSFS: &str = "tests/fixtures/sysfs";

/// lspci answered from tests/fixtures/sysfs/lspci/BDF.txt.
struct FakeLspci;

impl Lspci for FakeLspci {
    fn vvv(&self, bdf: &str) -> Result<String, String> {
        let p: PathBuf = Path::new(SYSFS).join("lspci").join(format!("{bdf}.txt"));
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    }
}

fn with_fabric(fabric: Probed<PciFabric>, probe: Probed<P2pProbe>) -> Facts {
    let mut snap = HostSnapshot::empty("test", "test");
    snap.pci_fabric = fabric;
    snap.p2p_probe = probe;
    facts::derive(&snap, false, &Hardware::default())
}

fn sysfs(case: &str, lspci: &dyn Lspci) -> Facts {
    let fabric = pci::collect(&Path::new(SYSFS).join(case), lspci);
    assert!(fabric.value().is_some(), "{case}: {fabric:?}");
    with_fabric(
        fabric,
        Probed::skipped("P2P probe not run (sm120-doctor probe p2p)"),
    )
}

fn v(f: &Facts, name: &str) -> Value {
    f.get(name).value
}

fn b(x: bool) -> Value {
    Value::Bool(x)
}

fn strs(v: &[&str]) -> Value {
    Value::List(v.iter().map(|s| Value::Str(s.to_string())).collect())
}

fn unknown_with(f: &Facts, name: &str, needle: &str) {
    match v(f, name) {
        Value::Unknown(why) => assert!(why.to_string().contains(needle), "{name}: {why}"),
        other => panic!("{name}: expected unknown ({needle}), got {other:?}"),
    }
}

/// (fact, value) rows for one fixture.
fn check(case: &str, f: &Facts, rows: &[(&str, Value)]) {
    for (name, want) in rows {
        assert_eq!(&v(f, name), want, "{case}: {name}");
    }
}

#[test]
fn passthrough_fixture() {
    let f = sysfs("passthrough", &NoLspci);
    check(
        "passthrough",
        &f,
        &[
            ("pci.fabric_read", b(true)),
            ("iommu.enabled", b(true)),
            ("iommu.gpu_translated", b(false)),
            ("iommu.gpu_passthrough", b(true)),
            (
                "iommu.gpu_domain_types",
                strs(&["0000:01:00.0: identity", "0000:41:00.0: identity"]),
            ),
            ("iommu.cmdline_params", strs(&["amd_iommu=on", "iommu=pt"])),
            ("iommu.cmdline_pt", b(true)),
            ("iommu.cmdline_off", b(false)),
            ("acs.redirect_between_gpus", b(true)),
            (
                "acs.redirect_bridges",
                strs(&["0000:00:01.1", "0000:00:03.1"]),
            ),
            ("acs.unreadable_reason", Value::Null),
            ("pci.gpus_share_root_port", b(false)),
            ("pci.gpus_on_root_bus", b(false)),
        ],
    );
}

#[test]
fn translated_fixture() {
    let f = sysfs("translated", &NoLspci);
    check(
        "translated",
        &f,
        &[
            ("pci.fabric_read", b(true)),
            ("iommu.enabled", b(true)),
            ("iommu.gpu_translated", b(true)),
            ("iommu.gpu_passthrough", b(false)),
            ("iommu.cmdline_pt", b(false)),
            ("iommu.cmdline_off", b(false)),
            ("acs.redirect_between_gpus", b(true)),
            ("pci.gpus_share_root_port", b(false)),
        ],
    );
}

#[test]
fn iommu_off_fixture() {
    let f = sysfs("iommu-off", &NoLspci);
    check(
        "iommu-off",
        &f,
        &[
            ("pci.fabric_read", b(true)),
            ("iommu.enabled", b(false)),
            // No IOMMU group: nothing translates the GPUs' DMA, and it is not passthrough either.
            ("iommu.gpu_translated", b(false)),
            ("iommu.gpu_passthrough", b(false)),
            (
                "iommu.gpu_domain_types",
                strs(&[
                    "0000:01:00.0: no IOMMU group",
                    "0000:41:00.0: no IOMMU group",
                ]),
            ),
            ("iommu.cmdline_params", strs(&[])),
            ("iommu.cmdline_off", b(false)),
            ("acs.redirect_between_gpus", b(false)),
            ("acs.redirect_bridges", strs(&[])),
            ("acs.unreadable_reason", Value::Null),
        ],
    );
}

#[test]
fn switch_fixtures_with_acs_on_and_off() {
    let on = sysfs("switch-acs-on", &NoLspci);
    check(
        "switch-acs-on",
        &on,
        &[
            ("pci.gpus_share_root_port", b(true)),
            ("iommu.gpu_translated", b(true)),
            ("acs.redirect_between_gpus", b(true)),
            (
                "acs.redirect_bridges",
                strs(&["0000:02:08.0", "0000:02:10.0"]),
            ),
        ],
    );
    let off = sysfs("switch-acs-off", &NoLspci);
    check(
        "switch-acs-off",
        &off,
        &[
            ("pci.gpus_share_root_port", b(true)),
            ("iommu.gpu_translated", b(true)),
            ("acs.redirect_between_gpus", b(false)),
            ("acs.redirect_bridges", strs(&[])),
            ("pci.fabric_read", b(true)),
        ],
    );
}

#[test]
fn unreadable_config_space_leaves_acs_unknown_with_the_reason() {
    let f = sysfs("unreadable-config", &NoLspci);
    unknown_with(&f, "acs.redirect_between_gpus", "64 bytes");
    unknown_with(&f, "acs.redirect_between_gpus", "lspci is not installed");
    unknown_with(&f, "acs.redirect_bridges", "64 bytes");
    match v(&f, "acs.unreadable_reason") {
        Value::Str(why) => assert!(why.contains("0000:02:08.0"), "{why}"),
        other => panic!("{other:?}"),
    }
    check(
        "unreadable-config",
        &f,
        &[
            // The IOMMU does not depend on the config space; the fabric as a whole is not read.
            ("iommu.gpu_passthrough", b(true)),
            ("iommu.cmdline_pt", b(true)),
            ("pci.fabric_read", b(false)),
        ],
    );
    // With lspci to fall back on, the redirect is known.
    let f = sysfs("unreadable-config", &FakeLspci);
    check(
        "unreadable-config + lspci",
        &f,
        &[
            ("acs.redirect_between_gpus", b(true)),
            ("acs.unreadable_reason", Value::Null),
            ("pci.fabric_read", b(true)),
        ],
    );
}

/// The 2× H200 VM: both GPUs on the root bus, no IOMMU, no bridge; the probe measured ok.
#[test]
fn h200_capture() {
    let dir = Path::new("tests/fixtures/h200-p2p-2026-11-30");
    let snap: HostSnapshot = serde_json::from_str(
        &std::fs::read_to_string(dir.join("snapshot.json")).expect("snapshot.json"),
    )
    .expect("snapshot parses");
    let probe: P2pProbe =
        serde_json::from_str(&std::fs::read_to_string(dir.join("probe.json")).expect("probe"))
            .expect("probe.json parses");
    let f = with_fabric(snap.pci_fabric.clone(), Probed::Value(probe));
    check(
        "h200",
        &f,
        &[
            ("p2p.probe_ran", b(true)),
            ("p2p.functional_ok", b(true)),
            ("p2p.hung", b(false)),
            ("p2p.wrong_data", b(false)),
            ("p2p.error", b(false)),
            ("p2p.hung_step", Value::Null),
            ("p2p.results", strs(&["GPU0↔GPU1: ok"])),
            ("p2p.min_gb_per_s", Value::Num(364.9)),
            ("p2p.driver_says_ok", b(true)),
            ("p2p.driver_contradicted", b(false)),
            ("pci.fabric_read", b(true)),
            ("iommu.enabled", b(false)),
            ("iommu.gpu_translated", b(false)),
            ("iommu.cmdline_params", strs(&[])),
            ("acs.redirect_between_gpus", b(false)),
            ("pci.gpus_on_root_bus", b(true)),
        ],
    );
    unknown_with(&f, "pci.gpus_share_root_port", "root bus");
}

// ---- fake probe results ----

fn pair(a: u32, b: u32, functional: P2pOutcome, driver_ok: bool) -> P2pPair {
    P2pPair {
        a,
        b,
        cuda_can_access_peer_ab: Probed::Value(driver_ok),
        cuda_can_access_peer_ba: Probed::Value(driver_ok),
        nvml_p2p_read: Probed::Value(driver_ok),
        nvml_p2p_write: Probed::Value(driver_ok),
        directions: vec![P2pDirection {
            from: a,
            to: b,
            method: "push".into(),
            outcome: functional.clone(),
            gb_per_s: (functional == P2pOutcome::Ok).then_some(51.5),
            latency_us: None,
        }],
        functional,
        wall_ms: 1.0,
    }
}

fn probe(pairs: Probed<Vec<P2pPair>>) -> Facts {
    with_fabric(
        Probed::skipped("PCI fabric not collected"),
        Probed::Value(P2pProbe {
            selection: "all visible GPUs".into(),
            pairs,
            ..Default::default()
        }),
    )
}

fn hung() -> P2pOutcome {
    P2pOutcome::Hung {
        after_ms: 10000.0,
        step: "push 0→1".into(),
    }
}

#[test]
fn a_probe_that_passed() {
    let f = probe(Probed::Value(vec![pair(0, 1, P2pOutcome::Ok, true)]));
    check(
        "ok",
        &f,
        &[
            ("p2p.probe_ran", b(true)),
            ("p2p.functional_ok", b(true)),
            ("p2p.hung", b(false)),
            ("p2p.min_gb_per_s", Value::Num(51.5)),
            ("p2p.driver_says_ok", b(true)),
            ("p2p.driver_contradicted", b(false)),
        ],
    );
    // No fabric read: those facts say why.
    unknown_with(&f, "iommu.gpu_translated", "PCI fabric not read");
    check("ok", &f, &[("pci.fabric_read", b(false))]);
}

#[test]
fn a_hung_pair_contradicts_the_drivers_all_clear() {
    let f = probe(Probed::Value(vec![pair(0, 1, hung(), true)]));
    check(
        "hung",
        &f,
        &[
            ("p2p.functional_ok", b(false)),
            ("p2p.hung", b(true)),
            ("p2p.wrong_data", b(false)),
            (
                "p2p.hung_step",
                Value::Str("GPU0↔GPU1: `push 0→1` after 10000 ms".into()),
            ),
            (
                "p2p.results",
                strs(&["GPU0↔GPU1: hung after 10000 ms in `push 0→1`"]),
            ),
            ("p2p.driver_says_ok", b(true)),
            ("p2p.driver_contradicted", b(true)),
        ],
    );
    unknown_with(&f, "p2p.min_gb_per_s", "no peer copy was timed");
}

#[test]
fn wrong_data_and_errors() {
    let wrong = P2pOutcome::WrongData {
        mismatched_bytes: 4096,
        first_offset: 0,
        expected: 0x5a,
        got: 0,
    };
    let f = probe(Probed::Value(vec![pair(0, 1, wrong, true)]));
    check(
        "wrong data",
        &f,
        &[
            ("p2p.functional_ok", b(false)),
            ("p2p.wrong_data", b(true)),
            ("p2p.hung", b(false)),
            ("p2p.driver_contradicted", b(true)),
        ],
    );
    // The driver refuses peer access: the probe errs, and nothing contradicts the driver.
    let err = P2pOutcome::Error {
        error: "cuCtxEnablePeerAccess: peer access is not supported".into(),
    };
    let f = probe(Probed::Value(vec![pair(0, 1, err, false)]));
    check(
        "driver says no",
        &f,
        &[
            ("p2p.functional_ok", b(false)),
            ("p2p.error", b(true)),
            ("p2p.hung", b(false)),
            ("p2p.driver_says_ok", b(false)),
            ("p2p.driver_contradicted", b(false)),
        ],
    );
}

#[test]
fn a_pair_not_tried_leaves_some_facts_unknown() {
    let not_run = P2pOutcome::NotRun {
        reason: "not tried: an earlier pair hung".into(),
    };
    let f = probe(Probed::Value(vec![
        pair(0, 1, hung(), true),
        pair(0, 2, not_run.clone(), true),
    ]));
    // One hung pair decides "some pair hung" and "all pairs ok"...
    check(
        "hung + not run",
        &f,
        &[("p2p.hung", b(true)), ("p2p.functional_ok", b(false))],
    );
    // ...but not "some pair got wrong data": the untried pair might have.
    unknown_with(&f, "p2p.wrong_data", "0-2 not tried");
    let f = probe(Probed::Value(vec![
        pair(0, 1, P2pOutcome::Ok, true),
        pair(0, 2, not_run, true),
    ]));
    unknown_with(&f, "p2p.functional_ok", "0-2 not tried");
}

#[test]
fn not_run_skipped_and_empty_probes_are_unknown_never_true() {
    let not_run = with_fabric(
        Probed::skipped("PCI fabric not collected"),
        Probed::skipped("P2P probe not run (sm120-doctor probe p2p)"),
    );
    let skipped = probe(Probed::skipped(
        "libcuda.so not found: no NVIDIA driver on this host",
    ));
    let one_gpu = probe(Probed::skipped("only 1 GPU visible: no pair to test"));
    let empty = probe(Probed::Value(Vec::new()));
    for (what, f, why) in [
        ("not run", &not_run, "not run"),
        ("skipped", &skipped, "libcuda.so not found"),
        ("one GPU", &one_gpu, "only 1 GPU"),
        ("no pair", &empty, "no GPU pair"),
    ] {
        assert_eq!(v(f, "p2p.probe_ran"), b(false), "{what}");
        for name in [
            "p2p.functional_ok",
            "p2p.hung",
            "p2p.wrong_data",
            "p2p.error",
            "p2p.driver_says_ok",
            "p2p.driver_contradicted",
            "p2p.results",
        ] {
            unknown_with(f, name, why);
        }
    }
}

/// A host with one GPU on the PCI bus: no pair, so no fabric fact is true or false.
#[test]
fn one_gpu_on_the_bus_has_no_pair() {
    let mut fabric = match pci::collect(&Path::new(SYSFS).join("translated"), &NoLspci) {
        Probed::Value(f) => f,
        other => panic!("{other:?}"),
    };
    if let Probed::Value(g) = &mut fabric.gpus {
        g.truncate(1);
    }
    fabric.pairs.clear();
    let f = with_fabric(
        Probed::Value(fabric),
        Probed::skipped("P2P probe not run (sm120-doctor probe p2p)"),
    );
    for name in [
        "iommu.gpu_translated",
        "iommu.gpu_passthrough",
        "acs.redirect_between_gpus",
        "pci.gpus_share_root_port",
        "pci.gpus_on_root_bus",
    ] {
        unknown_with(&f, name, "no GPU pair");
    }
    assert_eq!(v(&f, "pci.fabric_read"), b(false));
    // Host-wide facts do not need a pair.
    assert_eq!(v(&f, "iommu.enabled"), b(true));
    assert_eq!(v(&f, "iommu.cmdline_params"), strs(&["intel_iommu=on"]));
}
