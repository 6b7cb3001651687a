//! GPUs, GPU pairs and the driver through NVML (libnvidia-ml loaded at run time).
//!
//! The collector talks to an [`NvmlSource`]; [`RealNvml`] is nvml-wrapper, [`FakeNvml`] answers
//! from recorded values (a snapshot) with faults injected where a test asks for them.

use crate::snapshot::{
    ComputeCapability, Driver, Gpu, GpuPair, HostSnapshot, PcieLink, Probed, Reason, ReasonCode,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Why one NVML call gave no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldError {
    NotSupported,
    NoPermission,
    Other(String),
}

impl FieldError {
    fn into_probed<T>(self) -> Probed<T> {
        match self {
            FieldError::NotSupported => Probed::skipped(Reason::new(
                ReasonCode::NotSupported,
                "not supported by this GPU or driver",
            )),
            FieldError::NoPermission => Probed::failed(Reason::new(
                ReasonCode::NoPermission,
                "no permission to query this field",
            )),
            FieldError::Other(e) => Probed::failed(e),
        }
    }
}

pub type NvResult<T> = Result<T, FieldError>;

fn probed<T>(r: NvResult<T>) -> Probed<T> {
    match r {
        Ok(v) => Probed::Value(v),
        Err(e) => e.into_probed(),
    }
}

/// Which P2P capability to ask about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum P2pKind {
    Read,
    NvLink,
}

/// One running compute process as NVML reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawProcess {
    pub gpu_index: u32,
    pub pid: u32,
    pub used_memory_mib: Option<u64>,
}

/// The NVML calls the collector makes. Indices are NVML device indices.
pub trait NvmlSource: Send + Sync {
    fn driver_version(&self) -> NvResult<String>;
    /// CUDA version the driver supports as (major, minor).
    fn cuda_driver_version(&self) -> NvResult<(i32, i32)>;
    fn device_count(&self) -> NvResult<u32>;
    fn name(&self, i: u32) -> NvResult<String>;
    fn uuid(&self, i: u32) -> NvResult<String>;
    fn compute_capability(&self, i: u32) -> NvResult<ComputeCapability>;
    /// (total, used) in bytes.
    fn memory(&self, i: u32) -> NvResult<(u64, u64)>;
    fn utilization(&self, i: u32) -> NvResult<u32>;
    fn temperature(&self, i: u32) -> NvResult<u32>;
    fn power_mw(&self, i: u32) -> NvResult<u32>;
    fn power_limit_mw(&self, i: u32) -> NvResult<u32>;
    fn pcie(&self, i: u32) -> NvResult<PcieLink>;
    fn persistence(&self, i: u32) -> NvResult<bool>;
    fn compute_mode(&self, i: u32) -> NvResult<String>;
    /// (pid, used memory in bytes when reported).
    fn processes(&self, i: u32) -> NvResult<Vec<(u32, Option<u64>)>>;
    /// Topology level in nvidia-smi's legend (PIX, PXB, PHB, NODE, SYS) or NVML's name.
    fn topology(&self, a: u32, b: u32) -> NvResult<String>;
    /// Is this P2P capability status OK?
    fn p2p(&self, a: u32, b: u32, kind: P2pKind) -> NvResult<bool>;
}

/// What NVML gave: the GPU list and pairs, the driver (without the kernel-module kind, which
/// comes from /proc), and the raw compute processes.
#[derive(Debug, Clone, PartialEq)]
pub struct NvmlData {
    pub gpus: Probed<Vec<Gpu>>,
    pub gpu_pairs: Probed<Vec<GpuPair>>,
    pub driver: Probed<Driver>,
    pub processes: Probed<Vec<RawProcess>>,
}

impl NvmlData {
    /// Everything skipped or failed with the same reason (NVML could not be opened).
    pub fn unavailable(reason: &Probed<()>) -> Self {
        NvmlData {
            gpus: same_reason(reason),
            gpu_pairs: same_reason(reason),
            driver: same_reason(reason),
            processes: same_reason(reason),
        }
    }
}

/// The reason carried by `r`, for another type.
pub(crate) fn same_reason<T>(r: &Probed<()>) -> Probed<T> {
    match r {
        Probed::Failed(e) => Probed::failed(e.clone()),
        Probed::Skipped(s) => Probed::skipped(s.clone()),
        Probed::Value(()) => Probed::skipped("not collected"),
    }
}

const MIB: u64 = 1024 * 1024;

/// The fields that change while a host runs (memory, utilisation, temperature, power, PCIe).
pub(crate) fn poll_dynamic(src: &dyn NvmlSource, gpu: &mut Gpu) {
    let i = gpu.index;
    match src.memory(i) {
        Ok((total, used)) => {
            gpu.memory_total_mib = Probed::Value(total / MIB);
            gpu.memory_used_mib = Probed::Value(used / MIB);
        }
        Err(e) => {
            gpu.memory_total_mib = e.clone().into_probed();
            gpu.memory_used_mib = e.into_probed();
        }
    }
    gpu.utilization_pct = probed(src.utilization(i));
    gpu.temperature_c = probed(src.temperature(i));
    gpu.power_w = probed(src.power_mw(i).map(|mw| mw as f64 / 1000.0));
    gpu.power_limit_w = probed(src.power_limit_mw(i).map(|mw| mw as f64 / 1000.0));
    gpu.pcie = probed(src.pcie(i));
}

/// One GPU, every field.
pub(crate) fn collect_gpu(src: &dyn NvmlSource, i: u32) -> Gpu {
    let mut g = Gpu {
        index: i,
        name: probed(src.name(i)),
        uuid: probed(src.uuid(i)),
        compute_capability: probed(src.compute_capability(i)),
        memory_total_mib: Probed::default(),
        memory_used_mib: Probed::default(),
        utilization_pct: Probed::default(),
        temperature_c: Probed::default(),
        power_w: Probed::default(),
        power_limit_w: Probed::default(),
        pcie: Probed::default(),
        persistence_mode: probed(src.persistence(i)),
        compute_mode: probed(src.compute_mode(i)),
    };
    poll_dynamic(src, &mut g);
    g
}

/// Every GPU's dynamic fields, for the background refresher.
pub(crate) fn poll_gpus(src: &dyn NvmlSource) -> Probed<Vec<Gpu>> {
    match src.device_count() {
        Ok(n) => Probed::Value((0..n).map(|i| collect_gpu(src, i)).collect()),
        Err(e) => e.into_probed(),
    }
}

/// Collect everything NVML knows.
pub fn collect(src: &dyn NvmlSource) -> NvmlData {
    let driver = Probed::Value(Driver {
        version: probed(src.driver_version()),
        cuda_driver_version: probed(
            src.cuda_driver_version()
                .map(|(ma, mi)| format!("{ma}.{mi}")),
        ),
        kernel_module: Probed::skipped(Reason::new(
            ReasonCode::NotRequested,
            "read from /proc/driver/nvidia/version",
        )),
    });
    let n = match src.device_count() {
        Ok(n) => n,
        Err(e) => {
            let reason = e
                .clone()
                .into_probed::<()>()
                .missing_reason()
                .cloned()
                .unwrap_or_else(|| Reason::from("no reason"))
                .within("NVML device count");
            return NvmlData {
                gpus: Probed::failed(reason.clone()),
                gpu_pairs: Probed::failed(reason.clone()),
                driver,
                processes: Probed::failed(reason),
            };
        }
    };
    let gpus: Vec<Gpu> = (0..n).map(|i| collect_gpu(src, i)).collect();
    let mut pairs = Vec::new();
    let pair_gpus = if n > crate::snapshot::MAX_PAIR_GPUS {
        0
    } else {
        n
    };
    for a in 0..pair_gpus {
        for b in (a + 1)..pair_gpus {
            pairs.push(GpuPair {
                a,
                b,
                topology: probed(src.topology(a, b)),
                p2p: probed(src.p2p(a, b, P2pKind::Read)),
                nvlink: probed(src.p2p(a, b, P2pKind::NvLink)),
            });
        }
    }
    let mut procs = Vec::new();
    let mut proc_errors = Vec::new();
    for i in 0..n {
        match src.processes(i) {
            Ok(list) => procs.extend(list.into_iter().map(|(pid, mem)| RawProcess {
                gpu_index: i,
                pid,
                used_memory_mib: mem.map(|m| m / MIB),
            })),
            Err(e) => proc_errors.push(format!("GPU {i}: {}", e.into_probed::<()>().why_or(""))),
        }
    }
    // Processes of the other GPUs are still useful when one GPU will not list them; only a
    // total failure is a failure.
    let processes = if n > 0 && proc_errors.len() == n as usize {
        Probed::failed(format!("compute processes: {}", proc_errors.join("; ")))
    } else {
        Probed::Value(procs)
    };
    NvmlData {
        gpus: Probed::Value(gpus),
        gpu_pairs: if n > crate::snapshot::MAX_PAIR_GPUS {
            Probed::skipped(crate::snapshot::too_many_gpus_for_pairs(n as usize))
        } else {
            Probed::Value(pairs)
        },
        driver,
        processes,
    }
}

// ---------------------------------------------------------------------------------------------
// The real source.

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{
    ComputeMode, P2pCapabilitiesIndex, P2pStatus, TemperatureSensor, TopologyLevel,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;

/// A person-readable reason for an `Nvml::init()` error, and whether it means "no NVIDIA GPU
/// here" (skipped) rather than a broken setup (failed).
pub(crate) fn init_error_reason(e: &NvmlError) -> Probed<()> {
    match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound => Probed::skipped(Reason::new(
            ReasonCode::NoDriver,
            "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed on this host, or it is not on the library path",
        )),
        NvmlError::DriverNotLoaded => Probed::skipped(Reason::new(
            ReasonCode::NoDriver,
            "the NVIDIA kernel driver is not loaded (no GPU visible here; `lsmod | grep nvidia`, or start the container with GPU access)",
        )),
        NvmlError::LibRmVersionMismatch => Probed::failed(
            "NVML library and NVIDIA kernel module versions differ: the driver was upgraded without a reboot (reboot, or reload the nvidia kernel modules)",
        ),
        NvmlError::NoPermission => Probed::failed(Reason::new(
            ReasonCode::NoPermission,
            "no permission to open the NVIDIA devices (/dev/nvidia*): run as a user in the video group or give the container GPU access",
        )),
        NvmlError::FunctionNotFound | NvmlError::FailedToLoadSymbol(_) => {
            Probed::failed(Reason::new(
                ReasonCode::NotSupported,
                "the installed NVML library lacks a function this tool needs (driver too old?)",
            ))
        }
        other => Probed::failed(format!("NVML could not start: {other}")),
    }
}

fn field(e: NvmlError) -> FieldError {
    match e {
        NvmlError::NotSupported => FieldError::NotSupported,
        NvmlError::NoPermission => FieldError::NoPermission,
        NvmlError::GpuLost => FieldError::Other("the GPU has fallen off the bus (GPU lost)".into()),
        other => FieldError::Other(other.to_string()),
    }
}

static NVML: OnceLock<Result<Nvml, Probed<()>>> = OnceLock::new();

/// NVML opened once per process.
#[derive(Debug, Clone, Copy)]
pub struct RealNvml(&'static Nvml);

impl RealNvml {
    /// Open NVML (first call) or reuse it; the error is the reason to show.
    pub fn open() -> Result<RealNvml, Probed<()>> {
        match NVML.get_or_init(|| Nvml::init().map_err(|e| init_error_reason(&e))) {
            Ok(n) => Ok(RealNvml(n)),
            Err(r) => Err(r.clone()),
        }
    }
    fn dev(&self, i: u32) -> NvResult<nvml_wrapper::Device<'static>> {
        self.0.device_by_index(i).map_err(field)
    }

    /// NVML's P2P read and write status between the GPUs at two PCI bus ids (`0000:19:00.0`):
    /// for the P2P probe, whose GPUs are CUDA-numbered.
    pub(crate) fn p2p_by_bus_id(&self, a: &str, b: &str) -> (Probed<bool>, Probed<bool>) {
        let (da, db) = match (
            self.0.device_by_pci_bus_id(a),
            self.0.device_by_pci_bus_id(b),
        ) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) | (_, Err(e)) => {
                let why = format!("NVML does not know the GPU by PCI bus id: {e}");
                return (Probed::failed(why.clone()), Probed::failed(why));
            }
        };
        let status = |idx| match da.p2p_status(&db, idx) {
            Ok(s) => Probed::Value(s == P2pStatus::Ok),
            Err(e) => field(e).into_probed(),
        };
        (
            status(P2pCapabilitiesIndex::Read),
            status(P2pCapabilitiesIndex::Write),
        )
    }
}

fn topology_name(t: TopologyLevel) -> String {
    match t {
        TopologyLevel::Internal => "internal",
        TopologyLevel::Single => "PIX",
        TopologyLevel::Multiple => "PXB",
        TopologyLevel::HostBridge => "PHB",
        TopologyLevel::Node => "NODE",
        TopologyLevel::System => "SYS",
    }
    .to_string()
}

impl NvmlSource for RealNvml {
    fn driver_version(&self) -> NvResult<String> {
        self.0.sys_driver_version().map_err(field)
    }
    fn cuda_driver_version(&self) -> NvResult<(i32, i32)> {
        self.0.sys_cuda_driver_version().map_err(field).map(|v| {
            (
                nvml_wrapper::cuda_driver_version_major(v),
                nvml_wrapper::cuda_driver_version_minor(v),
            )
        })
    }
    fn device_count(&self) -> NvResult<u32> {
        self.0.device_count().map_err(field)
    }
    fn name(&self, i: u32) -> NvResult<String> {
        self.dev(i)?.name().map_err(field)
    }
    fn uuid(&self, i: u32) -> NvResult<String> {
        self.dev(i)?.uuid().map_err(field)
    }
    fn compute_capability(&self, i: u32) -> NvResult<ComputeCapability> {
        let c = self.dev(i)?.cuda_compute_capability().map_err(field)?;
        Ok(ComputeCapability {
            major: u32::try_from(c.major).unwrap_or(0),
            minor: u32::try_from(c.minor).unwrap_or(0),
        })
    }
    fn memory(&self, i: u32) -> NvResult<(u64, u64)> {
        let m = self.dev(i)?.memory_info().map_err(field)?;
        Ok((m.total, m.used))
    }
    fn utilization(&self, i: u32) -> NvResult<u32> {
        Ok(self.dev(i)?.utilization_rates().map_err(field)?.gpu)
    }
    fn temperature(&self, i: u32) -> NvResult<u32> {
        self.dev(i)?
            .temperature(TemperatureSensor::Gpu)
            .map_err(field)
    }
    fn power_mw(&self, i: u32) -> NvResult<u32> {
        self.dev(i)?.power_usage().map_err(field)
    }
    fn power_limit_mw(&self, i: u32) -> NvResult<u32> {
        self.dev(i)?.enforced_power_limit().map_err(field)
    }
    fn pcie(&self, i: u32) -> NvResult<PcieLink> {
        let d = self.dev(i)?;
        Ok(PcieLink {
            gen_current: d.current_pcie_link_gen().map_err(field)?,
            width_current: d.current_pcie_link_width().map_err(field)?,
            gen_max: d.max_pcie_link_gen().ok(),
            width_max: d.max_pcie_link_width().ok(),
        })
    }
    fn persistence(&self, i: u32) -> NvResult<bool> {
        self.dev(i)?.is_in_persistent_mode().map_err(field)
    }
    fn compute_mode(&self, i: u32) -> NvResult<String> {
        Ok(match self.dev(i)?.compute_mode().map_err(field)? {
            ComputeMode::Default => "Default",
            ComputeMode::ExclusiveThread => "Exclusive_Thread",
            ComputeMode::Prohibited => "Prohibited",
            ComputeMode::ExclusiveProcess => "Exclusive_Process",
        }
        .to_string())
    }
    fn processes(&self, i: u32) -> NvResult<Vec<(u32, Option<u64>)>> {
        Ok(self
            .dev(i)?
            .running_compute_processes()
            .map_err(field)?
            .into_iter()
            .map(|p| {
                let mem = match p.used_gpu_memory {
                    UsedGpuMemory::Used(b) => Some(b),
                    UsedGpuMemory::Unavailable => None,
                };
                (p.pid, mem)
            })
            .collect())
    }
    fn topology(&self, a: u32, b: u32) -> NvResult<String> {
        let (da, db) = (self.dev(a)?, self.dev(b)?);
        da.topology_common_ancestor(db)
            .map(topology_name)
            .map_err(field)
    }
    fn p2p(&self, a: u32, b: u32, kind: P2pKind) -> NvResult<bool> {
        let (da, db) = (self.dev(a)?, self.dev(b)?);
        let idx = match kind {
            P2pKind::Read => P2pCapabilitiesIndex::Read,
            P2pKind::NvLink => P2pCapabilitiesIndex::NvLink,
        };
        da.p2p_status(&db, idx)
            .map(|s| s == P2pStatus::Ok)
            .map_err(field)
    }
}

// ---------------------------------------------------------------------------------------------
// The fake source.

/// Answers from recorded GPUs (for example a captured snapshot); any (GPU, field) can be made
/// to fail. Field names: `name`, `uuid`, `cc`, `memory`, `utilization`, `temperature`, `power`,
/// `power_limit`, `pcie`, `persistence`, `compute_mode`, `processes`; GPU `u32::MAX` means the
/// system calls (`driver`, `cuda`, `count`).
#[derive(Debug, Clone, Default)]
pub struct FakeNvml {
    pub driver: String,
    pub cuda: (i32, i32),
    pub gpus: Vec<Gpu>,
    pub pairs: Vec<GpuPair>,
    pub processes: Vec<RawProcess>,
    pub faults: BTreeMap<(u32, String), FieldError>,
}

/// The "GPU" index used for system-level faults in [`FakeNvml::faults`].
pub const SYSTEM: u32 = u32::MAX;

impl FakeNvml {
    /// A fake that answers what `snap` recorded.
    pub fn from_snapshot(snap: &HostSnapshot) -> Self {
        let driver = snap.driver.value();
        let cuda = driver
            .and_then(|d| d.cuda_driver_version.value())
            .and_then(|v| {
                let (a, b) = v.split_once('.')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .unwrap_or((0, 0));
        FakeNvml {
            driver: driver
                .and_then(|d| d.version.value().cloned())
                .unwrap_or_default(),
            cuda,
            gpus: snap.gpus.value().cloned().unwrap_or_default(),
            pairs: snap.gpu_pairs.value().cloned().unwrap_or_default(),
            processes: snap
                .processes
                .value()
                .map(|p| {
                    p.iter()
                        .map(|p| RawProcess {
                            gpu_index: p.gpu_index.unwrap_or(0),
                            pid: p.pid,
                            used_memory_mib: p.used_memory_mib,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            faults: BTreeMap::new(),
        }
    }
    pub fn fail(mut self, gpu: u32, field: &str, e: FieldError) -> Self {
        self.faults.insert((gpu, field.to_string()), e);
        self
    }
    fn check(&self, gpu: u32, f: &str) -> NvResult<()> {
        match self.faults.get(&(gpu, f.to_string())) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
    fn gpu(&self, i: u32) -> NvResult<&Gpu> {
        self.gpus
            .get(i as usize)
            .ok_or_else(|| FieldError::Other(format!("no GPU {i}")))
    }
    fn val<T: Clone>(&self, i: u32, f: &str, pick: impl Fn(&Gpu) -> &Probed<T>) -> NvResult<T> {
        self.check(i, f)?;
        pick(self.gpu(i)?)
            .value()
            .cloned()
            .ok_or(FieldError::NotSupported)
    }
}

impl NvmlSource for FakeNvml {
    fn driver_version(&self) -> NvResult<String> {
        self.check(SYSTEM, "driver")?;
        Ok(self.driver.clone())
    }
    fn cuda_driver_version(&self) -> NvResult<(i32, i32)> {
        self.check(SYSTEM, "cuda")?;
        Ok(self.cuda)
    }
    fn device_count(&self) -> NvResult<u32> {
        self.check(SYSTEM, "count")?;
        Ok(self.gpus.len() as u32)
    }
    fn name(&self, i: u32) -> NvResult<String> {
        self.val(i, "name", |g| &g.name)
    }
    fn uuid(&self, i: u32) -> NvResult<String> {
        self.val(i, "uuid", |g| &g.uuid)
    }
    fn compute_capability(&self, i: u32) -> NvResult<ComputeCapability> {
        self.val(i, "cc", |g| &g.compute_capability)
    }
    fn memory(&self, i: u32) -> NvResult<(u64, u64)> {
        let t = self.val(i, "memory", |g| &g.memory_total_mib)?;
        let u = self.val(i, "memory", |g| &g.memory_used_mib)?;
        Ok((t * MIB, u * MIB))
    }
    fn utilization(&self, i: u32) -> NvResult<u32> {
        self.val(i, "utilization", |g| &g.utilization_pct)
    }
    fn temperature(&self, i: u32) -> NvResult<u32> {
        self.val(i, "temperature", |g| &g.temperature_c)
    }
    fn power_mw(&self, i: u32) -> NvResult<u32> {
        self.val(i, "power", |g| &g.power_w)
            .map(|w| (w * 1000.0).round() as u32)
    }
    fn power_limit_mw(&self, i: u32) -> NvResult<u32> {
        self.val(i, "power_limit", |g| &g.power_limit_w)
            .map(|w| (w * 1000.0).round() as u32)
    }
    fn pcie(&self, i: u32) -> NvResult<PcieLink> {
        self.val(i, "pcie", |g| &g.pcie)
    }
    fn persistence(&self, i: u32) -> NvResult<bool> {
        self.val(i, "persistence", |g| &g.persistence_mode)
    }
    fn compute_mode(&self, i: u32) -> NvResult<String> {
        self.val(i, "compute_mode", |g| &g.compute_mode)
    }
    fn processes(&self, i: u32) -> NvResult<Vec<(u32, Option<u64>)>> {
        self.check(i, "processes")?;
        Ok(self
            .processes
            .iter()
            .filter(|p| p.gpu_index == i)
            .map(|p| (p.pid, p.used_memory_mib.map(|m| m * MIB)))
            .collect())
    }
    fn topology(&self, a: u32, b: u32) -> NvResult<String> {
        self.check(a, "topology")?;
        self.pairs
            .iter()
            .find(|p| p.a == a && p.b == b)
            .and_then(|p| p.topology.value().cloned())
            .ok_or(FieldError::NotSupported)
    }
    fn p2p(&self, a: u32, b: u32, kind: P2pKind) -> NvResult<bool> {
        self.check(a, "p2p")?;
        self.pairs
            .iter()
            .find(|p| p.a == a && p.b == b)
            .and_then(|p| match kind {
                P2pKind::Read => p.p2p.value().copied(),
                P2pKind::NvLink => p.nvlink.value().copied(),
            })
            .ok_or(FieldError::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_gpus() -> FakeNvml {
        let mut g0 = Gpu::named(0, "NVIDIA H200", "x");
        g0.uuid = Probed::Value("GPU-0".into());
        g0.compute_capability = Probed::Value(ComputeCapability { major: 9, minor: 0 });
        g0.memory_total_mib = Probed::Value(143771);
        g0.memory_used_mib = Probed::Value(0);
        let mut g1 = g0.clone();
        g1.index = 1;
        g1.uuid = Probed::Value("GPU-1".into());
        FakeNvml {
            driver: "580.159.04".into(),
            cuda: (13, 0),
            gpus: vec![g0, g1],
            pairs: vec![GpuPair {
                a: 0,
                b: 1,
                topology: Probed::Value("PHB".into()),
                p2p: Probed::Value(true),
                nvlink: Probed::Value(true),
            }],
            processes: vec![],
            faults: BTreeMap::new(),
        }
    }

    #[test]
    fn collects_gpus_pairs_and_driver() {
        let d = collect(&two_gpus());
        let gpus = d.gpus.value().expect("gpus");
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[1].uuid.value().map(String::as_str), Some("GPU-1"));
        assert_eq!(gpus[0].memory_total_mib.value(), Some(&143771));
        let drv = d.driver.value().expect("driver");
        assert_eq!(
            drv.cuda_driver_version.value().map(String::as_str),
            Some("13.0")
        );
        let pairs = d.gpu_pairs.value().expect("pairs");
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].nvlink.value(), Some(&true));
        // Skipped fields in the source stay skipped with a reason.
        assert!(gpus[0].temperature_c.missing_reason().is_some());
    }

    #[test]
    fn one_field_of_one_gpu_fails_alone() {
        let src = two_gpus().fail(1, "uuid", FieldError::Other("Unknown error".into()));
        let d = collect(&src);
        let gpus = d.gpus.value().expect("gpus");
        assert_eq!(gpus[1].uuid, Probed::failed("Unknown error"));
        assert_eq!(gpus[0].uuid.value().map(String::as_str), Some("GPU-0"));
        assert_eq!(
            gpus[1].name.value().map(String::as_str),
            Some("NVIDIA H200")
        );
    }

    #[test]
    fn count_failure_keeps_driver() {
        let src = two_gpus().fail(SYSTEM, "count", FieldError::NoPermission);
        let d = collect(&src);
        assert!(matches!(d.gpus, Probed::Failed(ref e) if e.to_string().contains("no permission")));
        assert!(d.driver.value().is_some());
    }

    #[test]
    fn init_errors_read_like_reasons() {
        let r = init_error_reason(&NvmlError::DriverNotLoaded);
        assert!(matches!(r, Probed::Skipped(ref s) if s.to_string().contains("not loaded")));
        let r = init_error_reason(&NvmlError::LibRmVersionMismatch);
        assert!(matches!(r, Probed::Failed(ref s) if s.to_string().contains("without a reboot")));
        let r = init_error_reason(&NvmlError::NoPermission);
        assert!(matches!(r, Probed::Failed(ref s) if s.to_string().contains("permission")));
        let r = init_error_reason(&NvmlError::LibraryNotFound);
        assert!(matches!(r, Probed::Skipped(ref s) if s.to_string().contains("libnvidia-ml")));
    }
}
