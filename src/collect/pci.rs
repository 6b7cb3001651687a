//! The PCI fabric between the GPUs: IOMMU state, the kernel command line, each GPU's PCIe path
//! up to its root port, and the ACS (Access Control Services) state of the bridges on the way.
//!
//! Everything is read under a root directory (`/` on a live host, a fixture tree in tests):
//! `proc/cmdline`, `sys/class/iommu`, `sys/kernel/iommu_groups/N/type`,
//! `sys/bus/pci/devices/BDF` (a link into `sys/devices/...`, whose path is the PCIe path), the
//! device's `vendor`, `device`, `class` and `iommu_group` link, and each bridge's `config`.
//! A bridge's ACS Control register sits in the extended configuration space (offset ≥ 0x100),
//! which the kernel shows only to root; otherwise `lspci -vvv -s BDF` is asked when present,
//! else the bridge's ACS is skipped with the reason. Nothing here judges.

use super::fs::{io_failure, io_reason};
use super::run::{Ending, last_line, run_with_timeout};
use crate::snapshot::{AcsBits, AcsReading, PciBridge, PciFabric, PciGpu, PciGpuPair, Probed};
use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// PCI Express extended capability ID of ACS.
pub const ACS_CAP_ID: u16 = 0x000D;
/// Config space bytes a non-root reader sees through sysfs.
const UNPRIVILEGED_CONFIG: usize = 64;
/// Start of the extended configuration space.
const EXT_START: usize = 0x100;

/// Another way to read a bridge's ACS when its config space is not readable: `lspci -vvv`.
pub trait Lspci: Send + Sync {
    /// `lspci -vvv -s BDF` output, or why it could not be had.
    fn vvv(&self, bdf: &str) -> Result<String, String>;
}

/// No lspci: the fallback is skipped.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLspci;

impl Lspci for NoLspci {
    fn vvv(&self, _bdf: &str) -> Result<String, String> {
        Err("lspci is not installed".into())
    }
}

/// The real `lspci` program, under a time limit.
#[derive(Debug, Clone)]
pub struct RealLspci {
    pub program: PathBuf,
    pub timeout: Duration,
}

impl RealLspci {
    /// `lspci` from PATH or the usual system folders; `None` when absent.
    pub fn find() -> Option<RealLspci> {
        let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        for d in ["/usr/bin", "/usr/sbin", "/sbin", "/bin"] {
            dirs.push(PathBuf::from(d));
        }
        dirs.into_iter()
            .map(|d| d.join("lspci"))
            .find(|p| p.is_file())
            .map(|program| RealLspci {
                program,
                timeout: Duration::from_secs(3),
            })
    }
}

impl Lspci for RealLspci {
    fn vvv(&self, bdf: &str) -> Result<String, String> {
        let mut cmd = Command::new(&self.program);
        cmd.args(["-vvv", "-s", bdf]);
        let out = run_with_timeout(cmd, self.timeout);
        match out.ending {
            Ending::Exited(Some(0)) => Ok(out.stdout),
            Ending::SpawnFailed(e) => Err(format!("cannot run lspci: {e}")),
            other => Err(format!(
                "lspci -vvv -s {bdf} {}: {}",
                other.describe(),
                last_line(&out.stderr)
            )),
        }
    }
}

/// Files under a root directory. Links are resolved by hand, relative to that root, so a
/// fixture tree behaves like the real /sys.
#[derive(Debug, Clone)]
pub struct Root(PathBuf);

impl Root {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Root(root.into())
    }
    fn abs(&self, rel: &Path) -> PathBuf {
        self.0.join(rel)
    }
    fn read(&self, rel: &str) -> io::Result<Vec<u8>> {
        std::fs::read(self.abs(Path::new(rel)))
    }
    fn read_text(&self, rel: &str) -> io::Result<String> {
        self.read(rel)
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
    }
    fn list(&self, rel: &str) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(self.abs(Path::new(rel)))? {
            out.push(e?.file_name().to_string_lossy().into_owned());
        }
        out.sort();
        Ok(out)
    }
    /// Where the link at `rel` points, as a path relative to the root (`..` folded).
    fn resolve_link(&self, rel: &str) -> io::Result<PathBuf> {
        let rel = Path::new(rel);
        let target = std::fs::read_link(self.abs(rel))?;
        let joined = if target.is_absolute() {
            target
        } else {
            rel.parent().unwrap_or(Path::new("")).join(target)
        };
        Ok(fold(&joined))
    }
}

/// `a/b/../c` → `a/c`, leading `/` dropped, `..` above the top ignored.
fn fold(p: &Path) -> PathBuf {
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out.iter().collect()
}

fn rel_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Is `s` a PCI address like `0000:03:00.0` (domain of 4 or more hex digits)?
pub(crate) fn is_bdf(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    let hex = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit());
    match parts.as_slice() {
        [dom, bus, devfn] => {
            let Some((dev, func)) = devfn.split_once('.') else {
                return false;
            };
            dom.len() >= 4
                && hex(dom)
                && bus.len() == 2
                && hex(bus)
                && dev.len() == 2
                && hex(dev)
                && func.len() == 1
                && hex(func)
        }
        _ => false,
    }
}

/// The IOMMU-related parameters of a kernel command line, as written.
pub fn iommu_params(cmdline: &str) -> Vec<String> {
    const EXACT: &[&str] = &[
        "iommu",
        "amd_iommu",
        "intel_iommu",
        "pcie_acs_override",
        "iommu.passthrough",
        "iommu.strict",
    ];
    cmdline
        .split_whitespace()
        .take_while(|t| *t != "--")
        .filter(|t| {
            let name = t.split_once('=').map_or(*t, |(n, _)| n);
            EXACT.contains(&name)
        })
        .map(str::to_string)
        .collect()
}

fn bits(v: u16) -> AcsBits {
    AcsBits {
        source_validation: v & 0x01 != 0,
        translation_blocking: v & 0x02 != 0,
        p2p_request_redirect: v & 0x04 != 0,
        p2p_completion_redirect: v & 0x08 != 0,
        upstream_forwarding: v & 0x10 != 0,
        p2p_egress_control: v & 0x20 != 0,
        direct_translated_p2p: v & 0x40 != 0,
    }
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

/// What a config-space dump says about ACS.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigAcs {
    /// The extended space was walked.
    Read(AcsReading),
    /// Too short to hold the extended space (`len` bytes): not root, or not PCI Express.
    Short(usize),
    /// The extended capability list is malformed.
    Bad(String),
}

/// Walk the extended capability list of a config-space dump for ACS (ID 0x000D) and decode its
/// Capability (offset +4) and Control (offset +6) registers.
pub(crate) fn acs_from_config(cfg: &[u8]) -> ConfigAcs {
    if cfg.len() <= EXT_START {
        return ConfigAcs::Short(cfg.len());
    }
    let mut at = EXT_START;
    // 4096 bytes hold at most 960 capability headers; more means a loop.
    for _ in 0..1024 {
        let Some(header) = le32(cfg, at) else {
            return ConfigAcs::Bad(format!("capability at {at:#x} runs past the end"));
        };
        if header == 0 || header == 0xffff_ffff {
            break;
        }
        let id = (header & 0xffff) as u16;
        let next = (header >> 20) as usize & !3;
        if id == ACS_CAP_ID {
            let (Some(cap), Some(ctl)) = (le16(cfg, at + 4), le16(cfg, at + 6)) else {
                return ConfigAcs::Bad(format!("ACS capability at {at:#x} is cut off"));
            };
            return ConfigAcs::Read(AcsReading {
                source: "config space".into(),
                present: true,
                capability: Some(bits(cap)),
                control: Some(bits(ctl)),
            });
        }
        if next == 0 {
            break;
        }
        if next < EXT_START || next <= at {
            return ConfigAcs::Bad(format!("capability at {at:#x} points back to {next:#x}"));
        }
        at = next;
    }
    ConfigAcs::Read(AcsReading {
        source: "config space".into(),
        present: false,
        capability: None,
        control: None,
    })
}

/// `SrcValid+ TransBlk- ReqRedir+ ...` → bits.
fn lspci_bits(flags: &str) -> AcsBits {
    let on = |name: &str| {
        flags
            .split_whitespace()
            .any(|t| t.strip_suffix('+') == Some(name))
    };
    AcsBits {
        source_validation: on("SrcValid"),
        translation_blocking: on("TransBlk"),
        p2p_request_redirect: on("ReqRedir"),
        p2p_completion_redirect: on("CmpltRedir"),
        upstream_forwarding: on("UpstreamFwd"),
        p2p_egress_control: on("EgressCtrl"),
        direct_translated_p2p: on("DirectTrans"),
    }
}

/// ACS from `lspci -vvv` text: the `ACSCap:` and `ACSCtl:` lines under the "Access Control
/// Services" capability. Skipped when lspci could not read the capabilities.
pub(crate) fn acs_from_lspci(text: &str) -> Probed<AcsReading> {
    if text.trim().is_empty() {
        return Probed::failed("lspci printed nothing for this device");
    }
    if text.contains("<access denied>") {
        return Probed::skipped(
            "lspci could not read the extended configuration space either (<access denied>: run as root)",
        );
    }
    let field = |name: &str| {
        text.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(name).map(str::trim).map(str::to_string))
    };
    let cap = field("ACSCap:");
    let ctl = field("ACSCtl:");
    let present = text.contains("Access Control Services") || cap.is_some() || ctl.is_some();
    Probed::Value(AcsReading {
        source: "lspci -vvv".into(),
        present,
        capability: cap.as_deref().map(lspci_bits),
        control: ctl.as_deref().map(lspci_bits),
    })
}

/// A bridge's ACS: its config space when the extended space is readable, else lspci.
fn bridge_acs(root: &Root, dir: &str, bdf: &str, lspci: &dyn Lspci) -> Probed<AcsReading> {
    let path = format!("{dir}/config");
    let why_short = match root.read(&path) {
        Ok(cfg) => match acs_from_config(&cfg) {
            ConfigAcs::Read(r) => return Probed::Value(r),
            ConfigAcs::Bad(e) => return Probed::failed(format!("/{path}: {e}")),
            ConfigAcs::Short(n) if n <= UNPRIVILEGED_CONFIG => format!(
                "/{path} shows only {n} bytes (the kernel shows the extended configuration space to root only)"
            ),
            ConfigAcs::Short(n) => {
                format!("/{path} shows {n} bytes: no extended configuration space")
            }
        },
        Err(e) => io_reason(&format!("/{path}"), &e),
    };
    match lspci.vvv(bdf) {
        Ok(text) => match acs_from_lspci(&text) {
            Probed::Skipped(r) => Probed::skipped(format!("{why_short}; {r}")),
            other => other,
        },
        Err(e) => Probed::skipped(format!("{why_short}; {e}")),
    }
}

/// One GPU found in /sys/bus/pci/devices, with the sysfs folder it resolves to.
struct Found {
    gpu: PciGpu,
    /// sysfs folders of the bridges on the path, root port first.
    bridge_dirs: Vec<(String, String)>,
}

fn read_gpu(root: &Root, bdf: &str) -> Found {
    let link = format!("sys/bus/pci/devices/{bdf}");
    let vendor = root.read_text(&format!("{link}/vendor"));
    let device = root.read_text(&format!("{link}/device"));
    let device_id = match (vendor, device) {
        (Ok(v), Ok(d)) => Probed::Value(format!(
            "{}:{}",
            v.trim_start_matches("0x"),
            d.trim_start_matches("0x")
        )),
        (Err(e), _) => Probed::failed(io_failure(&format!("/{link}/vendor"), &e)),
        (_, Err(e)) => Probed::failed(io_failure(&format!("/{link}/device"), &e)),
    };
    let resolved = root.resolve_link(&link);
    // The iommu_group link is relative to the device's real folder, not to the bus/ link.
    let group_link = match &resolved {
        Ok(dev) => format!("{}/iommu_group", rel_str(dev)),
        Err(_) => format!("{link}/iommu_group"),
    };
    let (host_bridge, path, bridge_dirs) = match resolved {
        Ok(dev) => {
            let comps: Vec<String> = dev
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let host = comps
                .iter()
                .find(|c| c.starts_with("pci") && c.contains(':'))
                .cloned();
            let mut dirs = Vec::new();
            let mut acc = PathBuf::new();
            for c in &comps {
                acc.push(c);
                if is_bdf(c) && c != bdf {
                    dirs.push((c.clone(), rel_str(&acc)));
                }
            }
            let host = match host {
                Some(h) => Probed::Value(h),
                None => Probed::failed(format!(
                    "/{link} → /{}: no host bridge (pciDDDD:BB) in the path",
                    rel_str(&dev)
                )),
            };
            let names = dirs.iter().map(|(b, _)| b.clone()).collect();
            (host, Probed::Value(names), dirs)
        }
        Err(e) => {
            let r = io_reason(&format!("/{link}"), &e);
            (Probed::failed(r.clone()), Probed::failed(r), Vec::new())
        }
    };
    let (iommu_group, iommu_domain_type) = match root.resolve_link(&group_link) {
        Ok(g) => {
            let name = g
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let group = match name.parse::<u32>() {
                Ok(n) => Probed::Value(n),
                Err(_) => Probed::failed(format!(
                    "/{link}/iommu_group → /{}: not a group number",
                    rel_str(&g)
                )),
            };
            let tpath = format!("{}/type", rel_str(&g));
            let kind = match root.read_text(&tpath) {
                Ok(t) if !t.is_empty() => Probed::Value(t),
                Ok(_) => Probed::failed(format!("/{tpath} is empty")),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    Probed::skipped(format!("/{tpath} not present (kernel older than 5.11?)"))
                }
                Err(e) => Probed::failed(io_failure(&format!("/{tpath}"), &e)),
            };
            (group, kind)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let why = format!("/{link}/iommu_group not present: the GPU is in no IOMMU group");
            (Probed::skipped(why.clone()), Probed::skipped(why))
        }
        Err(e) => {
            let r = io_reason(&format!("/{link}/iommu_group"), &e);
            (Probed::failed(r.clone()), Probed::failed(r))
        }
    };
    Found {
        gpu: PciGpu {
            bdf: bdf.to_string(),
            device_id,
            host_bridge,
            path,
            iommu_group,
            iommu_domain_type,
        },
        bridge_dirs,
    }
}

/// Is the device in `dir` an NVIDIA display or 3D controller?
fn is_nvidia_gpu(root: &Root, dir: &str) -> bool {
    let vendor = root.read_text(&format!("{dir}/vendor")).unwrap_or_default();
    let class = root.read_text(&format!("{dir}/class")).unwrap_or_default();
    let class = u32::from_str_radix(class.trim_start_matches("0x"), 16).unwrap_or(0);
    vendor.eq_ignore_ascii_case("0x10de") && class >> 16 == 0x03
}

/// The fabric between two GPUs from their paths and the bridges' ACS.
pub fn pair(a: &PciGpu, b: &PciGpu, acs: &BTreeMap<String, Probed<AcsReading>>) -> PciGpuPair {
    let same_host_bridge = match (a.host_bridge.value(), b.host_bridge.value()) {
        (Some(x), Some(y)) => Probed::Value(x == y),
        _ => Probed::skipped("the host bridge of a GPU is unknown"),
    };
    let (pa, pb) = match (a.path.value(), b.path.value()) {
        (Some(x), Some(y)) => (x, y),
        _ => {
            let why = "the PCIe path of a GPU is unknown";
            return PciGpuPair {
                a: a.bdf.clone(),
                b: b.bdf.clone(),
                same_host_bridge,
                same_root_port: Probed::skipped(why),
                bridges_between: Probed::skipped(why),
                acs_redirect_between: Probed::skipped(why),
            };
        }
    };
    let same_root_port = match (pa.first(), pb.first()) {
        (Some(x), Some(y)) => Probed::Value(x == y),
        _ => Probed::skipped(format!(
            "{} sits on the root bus with no root port above it",
            if pa.is_empty() { &a.bdf } else { &b.bdf }
        )),
    };
    let common = pa.iter().zip(pb).take_while(|(x, y)| x == y).count();
    let between: Vec<String> = pa[common..].iter().chain(&pb[common..]).cloned().collect();
    let mut redirect = Vec::new();
    let mut unknown = Vec::new();
    for br in &between {
        match acs.get(br) {
            Some(Probed::Value(r)) => {
                if r.control
                    .is_some_and(|c| c.p2p_request_redirect || c.p2p_completion_redirect)
                {
                    redirect.push(br.clone());
                }
            }
            Some(p) => unknown.push(format!("{br} ({})", p.why_or("unknown"))),
            None => unknown.push(format!("{br} (not read)")),
        }
    }
    let acs_redirect_between = if unknown.is_empty() {
        Probed::Value(redirect)
    } else {
        Probed::skipped(format!("ACS not readable on {}", unknown.join("; ")))
    };
    PciGpuPair {
        a: a.bdf.clone(),
        b: b.bdf.clone(),
        same_host_bridge,
        same_root_port,
        bridges_between: Probed::Value(between),
        acs_redirect_between,
    }
}

/// Collect the fabric under `root` (`/` on a live host).
pub fn collect(root: &Path, lspci: &dyn Lspci) -> Probed<PciFabric> {
    let root = Root::new(root);
    let cmdline = match root.read_text("proc/cmdline") {
        Ok(t) => Probed::Value(t),
        Err(e) => Probed::failed(io_failure("/proc/cmdline", &e)),
    };
    let iommu_params = cmdline.as_ref().map(|c| iommu_params(c));
    let iommu_units = match root.list("sys/class/iommu") {
        Ok(l) => Probed::Value(l),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Probed::Value(Vec::new()),
        Err(e) => Probed::failed(io_failure("/sys/class/iommu", &e)),
    };
    let iommu_groups = match root.list("sys/kernel/iommu_groups") {
        Ok(l) => Probed::Value(l.len() as u32),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Probed::Value(0),
        Err(e) => Probed::failed(io_failure("/sys/kernel/iommu_groups", &e)),
    };
    let devices = match root.list("sys/bus/pci/devices") {
        Ok(l) => l,
        Err(e) => {
            return Probed::Value(PciFabric {
                cmdline,
                iommu_params,
                iommu_units,
                iommu_groups,
                gpus: Probed::failed(io_failure("/sys/bus/pci/devices", &e)),
                bridges: Vec::new(),
                pairs: Vec::new(),
            });
        }
    };
    let found: Vec<Found> = devices
        .iter()
        .filter(|d| is_bdf(d) && is_nvidia_gpu(&root, &format!("sys/bus/pci/devices/{d}")))
        .map(|d| read_gpu(&root, d))
        .collect();
    let mut acs: BTreeMap<String, Probed<AcsReading>> = BTreeMap::new();
    for f in &found {
        for (bdf, dir) in &f.bridge_dirs {
            if !acs.contains_key(bdf) {
                acs.insert(bdf.clone(), bridge_acs(&root, dir, bdf, lspci));
            }
        }
    }
    let gpus: Vec<PciGpu> = found.into_iter().map(|f| f.gpu).collect();
    let mut pairs = Vec::new();
    for (i, a) in gpus.iter().enumerate() {
        for b in &gpus[i + 1..] {
            pairs.push(pair(a, b, &acs));
        }
    }
    let bridges = acs
        .into_iter()
        .map(|(bdf, acs)| PciBridge { bdf, acs })
        .collect();
    Probed::Value(PciFabric {
        cmdline,
        iommu_params,
        iommu_units,
        iommu_groups,
        gpus: Probed::Value(gpus),
        bridges,
        pairs,
    })
}

/// Collect this host: root `/`, lspci when installed.
pub fn collect_live() -> Probed<PciFabric> {
    match RealLspci::find() {
        Some(l) => collect(Path::new("/"), &l),
        None => collect(Path::new("/"), &NoLspci),
    }
}

/// A 4096-byte config space with one extended capability (not ACS) at 0x100 and, when `acs`
/// is given, the ACS capability at 0x148 with (capability, control) registers. For tests and
/// fixture generation.
pub fn config_space(acs: Option<(u16, u16)>) -> Vec<u8> {
    let mut c = vec![0u8; 4096];
    // Vendor 0x10b5 (a PCIe switch vendor), header type 1 (bridge).
    c[0..2].copy_from_slice(&0x10b5u16.to_le_bytes());
    c[0x0e] = 0x01;
    // 0x100: Advanced Error Reporting (ID 0x0001), version 1, next at 0x148 (or end).
    let next: u32 = if acs.is_some() { 0x148 } else { 0 };
    let aer = 0x0001u32 | (1 << 16) | (next << 20);
    c[0x100..0x104].copy_from_slice(&aer.to_le_bytes());
    if let Some((cap, ctl)) = acs {
        let h = u32::from(ACS_CAP_ID) | (1 << 16);
        c[0x148..0x14c].copy_from_slice(&h.to_le_bytes());
        c[0x14c..0x14e].copy_from_slice(&cap.to_le_bytes());
        c[0x14e..0x150].copy_from_slice(&ctl.to_le_bytes());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdf_shapes() {
        assert!(is_bdf("0000:03:00.0"));
        assert!(is_bdf("10000:e0:1d.3"));
        assert!(!is_bdf("pci0000:00"));
        assert!(!is_bdf("0000:03:00"));
        assert!(!is_bdf("power"));
    }

    #[test]
    fn iommu_params_are_picked_from_the_command_line() {
        let c = "BOOT_IMAGE=/vmlinuz root=UUID=x ro quiet iommu=pt amd_iommu=on iommu.strict=1 \
                 intel_iommu=off pcie_acs_override=downstream,multifunction iommufoo=1 -- iommu=x";
        assert_eq!(
            iommu_params(c),
            vec![
                "iommu=pt",
                "amd_iommu=on",
                "iommu.strict=1",
                "intel_iommu=off",
                "pcie_acs_override=downstream,multifunction"
            ]
        );
        assert!(iommu_params("quiet splash").is_empty());
    }

    #[test]
    fn acs_control_is_decoded_from_config_space() {
        // Capability: SV TB RR CR UF (0x1f); control: SV RR CR UF (0x1d).
        let ConfigAcs::Read(r) = acs_from_config(&config_space(Some((0x1f, 0x1d)))) else {
            panic!("not read");
        };
        assert!(r.present);
        let ctl = r.control.unwrap_or_default();
        assert!(ctl.source_validation && ctl.p2p_request_redirect && ctl.p2p_completion_redirect);
        assert!(ctl.upstream_forwarding && !ctl.translation_blocking && !ctl.p2p_egress_control);
        assert!(r.capability.is_some_and(|c| c.translation_blocking));
        let ConfigAcs::Read(r) = acs_from_config(&config_space(None)) else {
            panic!("not read");
        };
        assert!(!r.present && r.control.is_none());
    }

    #[test]
    fn short_and_looping_config_spaces() {
        assert_eq!(acs_from_config(&[0u8; 64]), ConfigAcs::Short(64));
        assert_eq!(acs_from_config(&[0u8; 256]), ConfigAcs::Short(256));
        let mut c = vec![0u8; 4096];
        // A capability at 0x100 whose next pointer is 0x100 again.
        let h = 0x0001u32 | (0x100 << 20);
        c[0x100..0x104].copy_from_slice(&h.to_le_bytes());
        assert!(matches!(acs_from_config(&c), ConfigAcs::Bad(_)));
        // All ones (a device that fell off the bus) reads as "no capabilities".
        let ff = vec![0xffu8; 4096];
        assert!(matches!(acs_from_config(&ff), ConfigAcs::Read(r) if !r.present));
        // Cut off in the middle of the ACS registers.
        let mut cut = config_space(Some((0x1f, 0x1d)));
        cut.truncate(0x14d);
        assert!(matches!(acs_from_config(&cut), ConfigAcs::Bad(_)));
    }

    #[test]
    fn lspci_acs_lines() {
        let t = "02:08.0 PCI bridge: PLX Technology, Inc. PEX 8747\n\
                 \tCapabilities: [148 v1] Access Control Services\n\
                 \t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n\
                 \t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n";
        let r = acs_from_lspci(t);
        let r = r.value().expect("read");
        assert_eq!(r.source, "lspci -vvv");
        let ctl = r.control.expect("control");
        assert!(
            ctl.p2p_request_redirect && ctl.p2p_completion_redirect && !ctl.translation_blocking
        );
        assert!(r.capability.is_some_and(|c| c.translation_blocking));
        let denied = "02:08.0 PCI bridge: x\n\tCapabilities: <access denied>\n";
        assert!(
            matches!(acs_from_lspci(denied), Probed::Skipped(r) if r.to_string().contains("root"))
        );
        let none = "02:08.0 PCI bridge: x\n\tCapabilities: [100 v1] Advanced Error Reporting\n";
        assert!(acs_from_lspci(none).value().is_some_and(|r| !r.present));
        assert!(matches!(acs_from_lspci(""), Probed::Failed(_)));
    }

    fn gpu(bdf: &str, path: &[&str]) -> PciGpu {
        PciGpu {
            bdf: bdf.into(),
            device_id: Probed::Value("10de:2bb1".into()),
            host_bridge: Probed::Value("pci0000:00".into()),
            path: Probed::Value(path.iter().map(|s| s.to_string()).collect()),
            iommu_group: Probed::skipped("x"),
            iommu_domain_type: Probed::skipped("x"),
        }
    }

    fn reading(ctl: u16) -> Probed<AcsReading> {
        Probed::Value(AcsReading {
            source: "config space".into(),
            present: true,
            capability: Some(bits(0x1f)),
            control: Some(bits(ctl)),
        })
    }

    #[test]
    fn pair_paths_below_a_shared_switch() {
        let a = gpu(
            "0000:03:00.0",
            &["0000:00:01.0", "0000:01:00.0", "0000:02:08.0"],
        );
        let b = gpu(
            "0000:04:00.0",
            &["0000:00:01.0", "0000:01:00.0", "0000:02:10.0"],
        );
        let mut acs = BTreeMap::new();
        acs.insert("0000:02:08.0".to_string(), reading(0x1d));
        acs.insert("0000:02:10.0".to_string(), reading(0));
        let p = pair(&a, &b, &acs);
        assert_eq!(p.same_root_port, Probed::Value(true));
        assert_eq!(
            p.bridges_between,
            Probed::Value(vec!["0000:02:08.0".into(), "0000:02:10.0".into()])
        );
        assert_eq!(
            p.acs_redirect_between,
            Probed::Value(vec!["0000:02:08.0".into()])
        );
        acs.insert("0000:02:10.0".to_string(), Probed::skipped("only 64 bytes"));
        let p = pair(&a, &b, &acs);
        assert!(
            matches!(&p.acs_redirect_between, Probed::Skipped(r) if r.to_string().contains("0000:02:10.0 (only 64 bytes)")),
            "{:?}",
            p.acs_redirect_between
        );
    }

    #[test]
    fn pair_on_separate_root_ports_and_on_the_root_bus() {
        let a = gpu("0000:01:00.0", &["0000:00:01.0"]);
        let b = gpu("0000:41:00.0", &["0000:00:03.1"]);
        let p = pair(&a, &b, &BTreeMap::new());
        assert_eq!(p.same_root_port, Probed::Value(false));
        assert_eq!(
            p.bridges_between,
            Probed::Value(vec!["0000:00:01.0".into(), "0000:00:03.1".into()])
        );
        assert!(matches!(p.acs_redirect_between, Probed::Skipped(_)));
        let vm_a = gpu("0000:00:05.0", &[]);
        let vm_b = gpu("0000:00:06.0", &[]);
        let p = pair(&vm_a, &vm_b, &BTreeMap::new());
        assert!(
            matches!(&p.same_root_port, Probed::Skipped(r) if r.to_string().contains("root bus"))
        );
        assert_eq!(p.bridges_between, Probed::Value(vec![]));
        assert_eq!(p.acs_redirect_between, Probed::Value(vec![]));
        assert_eq!(p.same_host_bridge, Probed::Value(true));
    }

    #[test]
    fn folding_paths() {
        assert_eq!(
            fold(Path::new(
                "sys/bus/pci/devices/../../../devices/pci0000:00/x"
            )),
            PathBuf::from("sys/devices/pci0000:00/x")
        );
        assert_eq!(fold(Path::new("/a/../../b")), PathBuf::from("b"));
    }
}
