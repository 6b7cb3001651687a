//! `probe p2p` and the PCI fabric as recorded on a real 2× H200 host
//! (tests/fixtures/h200-p2p-2026-11-30/, see its README): both directions ok with bandwidth,
//! the whole command under a second, and the snapshot's `pci_fabric` as the VM shows it.

use sm120_doctor::import::load_snapshot;
use sm120_doctor::snapshot::{P2pOutcome, P2pProbe, Probed};
use std::path::Path;

const DIR: &str = "tests/fixtures/h200-p2p-2026-11-30";

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(DIR).join(name)).expect("fixture")
}

#[test]
fn both_directions_ok_with_bandwidth() {
    let p: P2pProbe = serde_json::from_str(&read("probe.json")).expect("probe JSON");
    assert_eq!(p.selection, "all visible GPUs");
    assert_eq!(p.devices.len(), 2);
    assert!(p.devices.iter().all(|d| d.name == "NVIDIA H200"));
    let pairs = p.pairs.value().expect("pairs");
    assert_eq!(pairs.len(), 1);
    let x = &pairs[0];
    assert_eq!((x.a, x.b), (0, 1));
    assert_eq!(x.functional, P2pOutcome::Ok);
    assert_eq!(x.cuda_can_access_peer_ab, Probed::Value(true));
    assert_eq!(x.cuda_can_access_peer_ba, Probed::Value(true));
    assert_eq!(x.nvml_p2p_read, Probed::Value(true));
    assert_eq!(x.nvml_p2p_write, Probed::Value(true));
    let mut seen = Vec::new();
    for d in &x.directions {
        assert_eq!(d.outcome, P2pOutcome::Ok, "{d:?}");
        // NVLink (NV18): hundreds of GB/s, far above any PCIe link.
        assert!(d.gb_per_s.is_some_and(|g| g > 300.0), "{d:?}");
        assert!(d.latency_us.is_some_and(|l| l > 0.0 && l < 100.0), "{d:?}");
        seen.push((d.method.as_str(), d.from, d.to));
    }
    assert_eq!(
        seen,
        [
            ("push", 0, 1),
            ("push", 1, 0),
            ("pull", 0, 1),
            ("pull", 1, 0)
        ]
    );
    assert!(p.wall_ms < 1000.0, "{}", p.wall_ms);
    assert!(p.child_done_ms.is_some_and(|d| d <= p.child_ms));
}

/// Wall times written by capture.sh: `== NAME: rc=N wall_ms=N`.
fn walls(text: &str) -> Vec<(String, i32, u64)> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("== ")?;
            let (name, tail) = rest.rsplit_once(": rc=")?;
            let (rc, wall) = tail.split_once(" wall_ms=")?;
            Some((name.to_string(), rc.parse().ok()?, wall.parse().ok()?))
        })
        .collect()
}

#[test]
fn the_whole_command_took_under_a_second() {
    let w = walls(&read("probe.txt"));
    let default_runs: Vec<_> = w
        .iter()
        .filter(|(n, _, _)| n.starts_with("probe p2p run") || n == "--format json")
        .collect();
    assert_eq!(default_runs.len(), 4, "{w:?}");
    for (name, rc, ms) in default_runs {
        assert_eq!(*rc, 0, "{name}");
        assert!(*ms < 1000, "{name}: {ms} ms");
    }
    // The real child killed during start-up at 0.3 s: exit 1, and no longer than that by much.
    let (_, rc, ms) = w
        .iter()
        .find(|(n, _, _)| n == "--timeout 0.3")
        .expect("timeout run");
    assert_eq!(*rc, 1);
    assert!(*ms < 1000, "{ms}");
    let text = read("probe.txt");
    assert!(
        text.contains("failed: hung: still in `cuInit` after"),
        "{text}"
    );
    // The GPUs worked again right after the kill.
    let (_, rc, _) = w
        .iter()
        .find(|(n, _, _)| n == "after the kill")
        .expect("run after the kill");
    assert_eq!(*rc, 0);
}

#[test]
fn the_probe_agrees_with_nvidia_smi() {
    let topo = read("topo.txt");
    assert!(topo.contains("GPU0\t X \tNV18"), "{topo}");
    let p: P2pProbe = serde_json::from_str(&read("probe.json")).expect("probe JSON");
    // nvidia-smi writes 00000000:00:06.0; the CUDA driver 0000:00:06.0.
    for d in &p.devices {
        let bus = d.pci_bus_id.as_deref().expect("bus id");
        assert!(
            topo.contains(&format!("0000{bus}")),
            "{bus} not in topo.txt"
        );
    }
}

#[test]
fn the_snapshot_records_the_vms_pci_fabric() {
    let s = load_snapshot(&Path::new(DIR).join("snapshot.json")).expect("snapshot");
    let f = s.pci_fabric.value().expect("pci_fabric collected");
    assert_eq!(f.iommu_groups, Probed::Value(0));
    assert_eq!(f.iommu_units, Probed::Value(vec![]));
    assert_eq!(f.iommu_params, Probed::Value(vec![]));
    assert!(
        f.cmdline
            .value()
            .is_some_and(|c| c.contains("firecracker-init"))
    );
    let gpus = f.gpus.value().expect("gpus");
    let bdfs: Vec<&str> = gpus.iter().map(|g| g.bdf.as_str()).collect();
    assert_eq!(bdfs, ["0000:00:06.0", "0000:00:07.0"]);
    for g in gpus {
        assert_eq!(g.device_id, Probed::Value("10de:2335".into()));
        assert_eq!(g.path, Probed::Value(vec![]));
        assert!(matches!(g.iommu_group, Probed::Skipped(_)));
    }
    assert!(f.bridges.is_empty());
    let pair = &f.pairs[0];
    assert!(
        matches!(&pair.same_root_port, Probed::Skipped(r) if r.to_string().contains("root bus"))
    );
    assert_eq!(pair.same_host_bridge, Probed::Value(true));
    assert_eq!(pair.acs_redirect_between, Probed::Value(vec![]));
    // Not run during `snapshot`: the section is absent from the file and loads as skipped.
    assert!(!read("snapshot.json").contains("p2p_probe"));
    assert!(matches!(s.p2p_probe, Probed::Skipped(_)));
}

#[test]
fn older_snapshots_load_without_the_new_sections() {
    let s = load_snapshot(Path::new(
        "tests/fixtures/h200-live-2026-11-30/snapshot.yaml",
    ))
    .expect("older snapshot");
    assert!(matches!(&s.pci_fabric, Probed::Skipped(r) if r.to_string().contains("not collected")));
    assert!(matches!(&s.p2p_probe, Probed::Skipped(r) if r.to_string().contains("probe p2p")));
}
