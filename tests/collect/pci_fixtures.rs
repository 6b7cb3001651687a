//! The PCI fabric collector (IOMMU, kernel command line, GPU paths, ACS) over the fixture trees
//! in tests/fixtures/sysfs/ (written by generate.py there; see its README).

use sm120_doctor::collect::pci::{self, Lspci, NoLspci};
use sm120_doctor::snapshot::{PciFabric, Probed};
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/sysfs";

fn fabric(case: &str, lspci: &dyn Lspci) -> PciFabric {
    match pci::collect(&Path::new(DIR).join(case), lspci) {
        Probed::Value(f) => f,
        other => panic!("{case}: {other:?}"),
    }
}

/// lspci answered from tests/fixtures/sysfs/lspci/BDF.txt, or one file for every device.
struct FakeLspci(Option<PathBuf>);

impl Lspci for FakeLspci {
    fn vvv(&self, bdf: &str) -> Result<String, String> {
        let p = match &self.0 {
            Some(p) => p.clone(),
            None => Path::new(DIR).join("lspci").join(format!("{bdf}.txt")),
        };
        std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))
    }
}

fn v<T: Clone + std::fmt::Debug>(p: &Probed<T>) -> T {
    p.value()
        .cloned()
        .unwrap_or_else(|| panic!("no value: {p:?}"))
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn passthrough_host() {
    let f = fabric("passthrough", &NoLspci);
    assert_eq!(v(&f.iommu_params), s(&["amd_iommu=on", "iommu=pt"]));
    assert_eq!(v(&f.iommu_units), s(&["ivhd0"]));
    assert_eq!(v(&f.iommu_groups), 3);
    let gpus = v(&f.gpus);
    // The audio functions (class 0x0403) and the Intel device are not GPUs.
    assert_eq!(
        gpus.iter().map(|g| g.bdf.as_str()).collect::<Vec<_>>(),
        ["0000:01:00.0", "0000:41:00.0"]
    );
    assert_eq!(v(&gpus[0].device_id), "10de:2bb1");
    assert_eq!(v(&gpus[0].iommu_group), 14);
    assert_eq!(v(&gpus[0].iommu_domain_type), "identity");
    assert_eq!(v(&gpus[1].iommu_group), 40);
    assert_eq!(v(&gpus[0].path), s(&["0000:00:01.1"]));
    assert_eq!(v(&gpus[1].host_bridge), "pci0000:00");
    assert_eq!(f.pairs.len(), 1);
    let p = &f.pairs[0];
    assert_eq!(p.same_root_port, Probed::Value(false));
    assert_eq!(p.same_host_bridge, Probed::Value(true));
    assert_eq!(v(&p.bridges_between), s(&["0000:00:01.1", "0000:00:03.1"]));
    // Root ports with request/completion redirect on (what Linux sets with an IOMMU).
    assert_eq!(
        v(&p.acs_redirect_between),
        s(&["0000:00:01.1", "0000:00:03.1"])
    );
    assert!(f.bridges.iter().all(|b| v(&b.acs).source == "config space"));
}

#[test]
fn translated_host() {
    let f = fabric("translated", &NoLspci);
    assert_eq!(v(&f.iommu_params), s(&["intel_iommu=on"]));
    assert_eq!(v(&f.iommu_units), s(&["dmar0", "dmar1"]));
    for g in v(&f.gpus) {
        assert_eq!(v(&g.iommu_domain_type), "DMA-FQ", "{}", g.bdf);
    }
}

#[test]
fn iommu_off_host() {
    let f = fabric("iommu-off", &NoLspci);
    assert!(v(&f.iommu_params).is_empty());
    assert_eq!(v(&f.iommu_units), Vec::<String>::new());
    assert_eq!(v(&f.iommu_groups), 0);
    let gpus = v(&f.gpus);
    assert_eq!(gpus.len(), 2);
    for g in &gpus {
        assert!(
            matches!(&g.iommu_group, Probed::Skipped(r) if r.to_string().contains("no IOMMU group")),
            "{:?}",
            g.iommu_group
        );
        assert!(matches!(g.iommu_domain_type, Probed::Skipped(_)));
    }
    // ACS capability present on the root ports but nothing enabled.
    assert_eq!(v(&f.pairs[0].acs_redirect_between), Vec::<String>::new());
    let b = v(&f.bridges[0].acs);
    assert!(b.present && b.control.is_some_and(|c| !c.p2p_request_redirect));
}

#[test]
fn shared_switch_with_acs_redirect_on() {
    let f = fabric("switch-acs-on", &NoLspci);
    let gpus = v(&f.gpus);
    assert_eq!(
        v(&gpus[0].path),
        s(&["0000:00:01.0", "0000:01:00.0", "0000:02:08.0"])
    );
    let p = &f.pairs[0];
    assert_eq!(p.same_root_port, Probed::Value(true));
    assert_eq!(v(&p.bridges_between), s(&["0000:02:08.0", "0000:02:10.0"]));
    assert_eq!(
        v(&p.acs_redirect_between),
        s(&["0000:02:08.0", "0000:02:10.0"])
    );
    // Root port, upstream port and two downstream ports, each read once.
    assert_eq!(f.bridges.len(), 4);
}

#[test]
fn shared_switch_with_acs_redirect_off() {
    let f = fabric("switch-acs-off", &NoLspci);
    let p = &f.pairs[0];
    assert_eq!(v(&p.bridges_between), s(&["0000:02:08.0", "0000:02:10.0"]));
    assert_eq!(v(&p.acs_redirect_between), Vec::<String>::new());
    let dsp = f
        .bridges
        .iter()
        .find(|b| b.bdf == "0000:02:08.0")
        .expect("downstream port");
    let r = v(&dsp.acs);
    assert!(r.present);
    assert!(r.capability.is_some_and(|c| c.p2p_request_redirect));
    assert!(r.control.is_some_and(|c| !c.p2p_request_redirect));
    assert_eq!(v(&f.gpus)[0].iommu_domain_type, Probed::Value("DMA".into()));
}

#[test]
fn unreadable_config_without_lspci_is_skipped_with_the_reason() {
    let f = fabric("unreadable-config", &NoLspci);
    for b in &f.bridges {
        let Probed::Skipped(r) = &b.acs else {
            panic!("{}: {:?}", b.bdf, b.acs);
        };
        assert!(r.to_string().contains("only 64 bytes"), "{r}");
        assert!(r.to_string().contains("lspci is not installed"), "{r}");
    }
    let p = &f.pairs[0];
    assert!(
        matches!(&p.acs_redirect_between, Probed::Skipped(r) if r.to_string().contains("0000:02:08.0")),
        "{:?}",
        p.acs_redirect_between
    );
    // The paths and the IOMMU do not depend on the config space.
    assert_eq!(v(&p.bridges_between), s(&["0000:02:08.0", "0000:02:10.0"]));
    assert_eq!(
        v(&f.gpus)[0].iommu_domain_type,
        Probed::Value("identity".into())
    );
}

#[test]
fn unreadable_config_falls_back_to_lspci() {
    let f = fabric("unreadable-config", &FakeLspci(None));
    let p = &f.pairs[0];
    assert_eq!(
        v(&p.acs_redirect_between),
        s(&["0000:02:08.0", "0000:02:10.0"])
    );
    let usp = f
        .bridges
        .iter()
        .find(|b| b.bdf == "0000:01:00.0")
        .expect("usp");
    let r = v(&usp.acs);
    assert_eq!(r.source, "lspci -vvv");
    assert!(
        r.control
            .is_some_and(|c| !c.p2p_request_redirect && c.upstream_forwarding)
    );
}

#[test]
fn unreadable_config_and_lspci_denied() {
    let denied = Path::new(DIR).join("lspci/denied.txt");
    let f = fabric("unreadable-config", &FakeLspci(Some(denied)));
    for b in &f.bridges {
        assert!(
            matches!(&b.acs, Probed::Skipped(r) if r.to_string().contains("access denied") && r.to_string().contains("64 bytes")),
            "{:?}",
            b.acs
        );
    }
}

#[test]
fn missing_root_is_reported_not_panicked() {
    let f = fabric("no-such-case", &NoLspci);
    assert!(matches!(f.cmdline, Probed::Failed(ref r) if r.to_string().contains("/proc/cmdline")));
    assert!(
        matches!(f.gpus, Probed::Failed(ref r) if r.to_string().contains("/sys/bus/pci/devices"))
    );
    assert_eq!(f.iommu_groups, Probed::Value(0));
}

/// (capability, control) of an ACS capability, or none.
type Acs = Option<(u16, u16)>;

/// The committed config-space files are exactly what the Rust helper builds.
#[test]
fn fixture_config_spaces_match_the_helper() {
    let rp = "sys/devices/pci0000:00/0000:00:01.0";
    let dsp = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0";
    let usp = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
    let checks: &[(&str, &str, Acs, usize)] = &[
        ("switch-acs-on", dsp, Some((0x1f, 0x1d)), 4096),
        ("switch-acs-on", usp, Some((0x1f, 0x00)), 4096),
        ("switch-acs-on", rp, Some((0x1f, 0x1d)), 4096),
        ("switch-acs-off", dsp, Some((0x1f, 0x00)), 4096),
        ("unreadable-config", dsp, Some((0x1f, 0x1d)), 64),
        (
            "passthrough",
            "sys/devices/pci0000:00/0000:00:01.1",
            Some((0x1f, 0x1d)),
            4096,
        ),
        (
            "iommu-off",
            "sys/devices/pci0000:00/0000:00:03.1",
            Some((0x1f, 0x00)),
            4096,
        ),
    ];
    for (case, dir, acs, len) in checks {
        let p = Path::new(DIR).join(case).join(dir).join("config");
        let got = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let want = pci::config_space(*acs);
        assert_eq!(got.as_slice(), &want[..*len], "{}", p.display());
    }
}
