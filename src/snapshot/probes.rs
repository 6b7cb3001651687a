//! What the probes measured: the allocator/IPC probe, the functional P2P probe and the PCIe
//! fabric reading (ACS, bridges, IOMMU groups), as the snapshot records them.

use super::Probed;
use serde::{Deserialize, Serialize};

/// Can memory from an allocator be exported through legacy CUDA IPC (`cudaIpcGetMemHandle`)?
/// Measured on this host by `sm120-doctor probe ipc`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IpcProbe {
    /// The allocator config the engine would get (`PYTORCH_CUDA_ALLOC_CONF` / `PYTORCH_ALLOC_CONF`
    /// from the launch and environment); `None` when unset.
    #[serde(default)]
    pub engine_alloc_conf: Option<String>,
    /// Where that config came from.
    #[serde(default)]
    pub engine_alloc_source: String,
    /// Through the CUDA driver API, no Python: a VMM allocation and a plain cuMemAlloc.
    pub native: Probed<Vec<IpcProbeRun>>,
    /// Through the user's torch, in child processes.
    pub torch: Probed<Vec<IpcProbeRun>>,
}

/// One allocation and what legacy IPC said about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IpcProbeRun {
    /// `native` or `torch`.
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["native", "torch"])))]
    pub path: String,
    /// `engine` (the config the engine would get), `remedy` (expandable segments off),
    /// `comparison` (expandable segments on), `vmm` or `plain` (native allocations).
    pub role: String,
    /// What allocated the memory, e.g. `cuMemAlloc`, `cuMemCreate+cuMemMap`, `torch caching allocator`.
    pub allocator: String,
    /// The allocator config the torch child ran with (`None`: unset).
    #[serde(default)]
    pub alloc_conf: Option<String>,
    /// The allocation comes from expandable segments / virtual memory management.
    pub expandable: bool,
    /// `cuIpcGetMemHandle`/`cudaIpcGetMemHandle` succeeded (false: refused, see `ipc_error`).
    pub ipc_handle_ok: Probed<bool>,
    #[serde(default)]
    pub ipc_error: Option<String>,
    /// `CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE`.
    #[serde(default)]
    pub legacy_ipc_capable: Probed<bool>,
    /// The GPU probed, e.g. `NVIDIA H200 (9.0)`.
    #[serde(default)]
    pub device: Option<String>,
    /// Wall time of this run (a torch run includes starting Python and importing torch).
    #[serde(default)]
    pub wall_ms: f64,
}

/// The functional peer-to-peer probe: for each GPU pair, did data written from one GPU arrive
/// intact on the other, how fast, and what the driver claims. Measured on this host by
/// `sm120-doctor probe p2p` in a child process under a hard time limit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct P2pProbe {
    /// Which GPUs were asked for: `all visible GPUs`, `--gpus 0,1`, `--tp 2`.
    pub selection: String,
    /// How the copies were made (the methods of [`P2pDirection::method`]).
    pub method: String,
    /// Bytes per copy.
    pub bytes: u64,
    /// Timed copies per direction and method (after one verified copy).
    pub iterations: u32,
    /// The hard time limit of the child, milliseconds.
    pub timeout_ms: f64,
    /// The GPUs as the CUDA driver in the child saw them (CUDA indices).
    #[serde(default)]
    pub devices: Vec<P2pDevice>,
    /// One entry per GPU pair; skipped (no driver, fewer than two GPUs) or failed (the child
    /// could not start, the driver did not initialise) with the reason.
    pub pairs: Probed<Vec<P2pPair>>,
    /// How the child ended: `exited 0`, `killed at the time limit`, `killed by signal 11`,
    /// `finished (its exit left to the background)`, ...
    #[serde(default)]
    pub child_ending: String,
    /// Milliseconds from starting the child to its exit, its kill at the time limit, or the
    /// moment the probe stopped waiting for the exit after `done`.
    #[serde(default)]
    pub child_ms: f64,
    /// When the child reported it was done, milliseconds after its start (the rest of
    /// `child_ms` is the process exit: the driver releasing contexts and memory).
    #[serde(default)]
    pub child_done_ms: Option<f64>,
    /// Wall time of the whole probe (child and NVML), milliseconds.
    #[serde(default)]
    pub wall_ms: f64,
}

/// A GPU as the probe's child saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct P2pDevice {
    /// CUDA device index (after `CUDA_VISIBLE_DEVICES`).
    pub index: u32,
    pub name: String,
    /// `cuDeviceGetPCIBusId`, e.g. `0000:19:00.0`.
    #[serde(default)]
    pub pci_bus_id: Option<String>,
}

/// One GPU pair: what the driver reports and what the copies showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct P2pPair {
    pub a: u32,
    pub b: u32,
    /// `cuDeviceCanAccessPeer(a, b)`.
    #[serde(default)]
    pub cuda_can_access_peer_ab: Probed<bool>,
    /// `cuDeviceCanAccessPeer(b, a)`.
    #[serde(default)]
    pub cuda_can_access_peer_ba: Probed<bool>,
    /// NVML's P2P read status between the two GPUs is OK (matched by PCI bus id).
    #[serde(default)]
    pub nvml_p2p_read: Probed<bool>,
    /// NVML's P2P write status between the two GPUs is OK.
    #[serde(default)]
    pub nvml_p2p_write: Probed<bool>,
    /// The first outcome other than `ok` among the directions, in the order tested, else `ok`.
    pub functional: P2pOutcome,
    /// Each direction and method, in the order tested.
    #[serde(default)]
    pub directions: Vec<P2pDirection>,
    /// Wall time of this pair in the child, milliseconds (to the hang, for a hung pair).
    #[serde(default)]
    pub wall_ms: f64,
}

/// What a copy (or the pair's set-up) came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum P2pOutcome {
    /// Every byte arrived as written.
    Ok,
    /// The copy finished but the destination differs from what was written.
    WrongData {
        /// Bytes that differ.
        mismatched_bytes: u64,
        /// Offset of the first that differs.
        first_offset: u64,
        expected: u8,
        got: u8,
    },
    /// The child was still inside `step` when the time limit ran out, `after_ms` into the pair.
    Hung { after_ms: f64, step: String },
    /// A driver call failed, or the child ended: the text says which.
    Error { error: String },
    /// Not tried (an earlier pair hung, the child ended early): the reason.
    NotRun { reason: String },
}

impl P2pOutcome {
    /// `ok`, `wrong_data`, `hung`, `error`, `not_run`.
    pub fn label(&self) -> &'static str {
        match self {
            P2pOutcome::Ok => "ok",
            P2pOutcome::WrongData { .. } => "wrong_data",
            P2pOutcome::Hung { .. } => "hung",
            P2pOutcome::Error { .. } => "error",
            P2pOutcome::NotRun { .. } => "not_run",
        }
    }

    /// The outcome in words: `ok`, `hung after 500 ms in `push 0→1``, `wrong data: …`.
    pub fn describe(&self) -> String {
        match self {
            P2pOutcome::Ok => "ok".into(),
            P2pOutcome::WrongData {
                mismatched_bytes,
                first_offset,
                expected,
                got,
            } => format!(
                "wrong data: {mismatched_bytes} byte(s) differ, first at offset {first_offset} (expected {expected:#04x}, got {got:#04x})"
            ),
            P2pOutcome::Hung { after_ms, step } => {
                format!("hung after {after_ms:.0} ms in `{step}`")
            }
            P2pOutcome::Error { error } => format!("error: {error}"),
            P2pOutcome::NotRun { reason } => reason.clone(),
        }
    }
}

/// One direction of one pair with one copy method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct P2pDirection {
    /// CUDA index of the GPU the data comes from.
    pub from: u32,
    /// CUDA index of the GPU the data goes to.
    pub to: u32,
    /// `push`: `cuMemcpyPeerAsync` on the source GPU's stream; `pull`: `cuMemcpyDtoDAsync` of
    /// the peer-mapped source pointer on the destination GPU's stream.
    pub method: String,
    pub outcome: P2pOutcome,
    /// Bandwidth of the timed copies, GB/s (10^9 bytes per second); `None` when not measured.
    #[serde(default)]
    pub gb_per_s: Option<f64>,
    /// Median time of an 8-byte copy with the same method, microseconds (CUDA events).
    #[serde(default)]
    pub latency_us: Option<f64>,
}

/// The PCI fabric between the GPUs as the kernel shows it: IOMMU, kernel command line, the
/// PCIe path of each GPU and the ACS state of the bridges on it. Read from /proc and /sys
/// (and `lspci -vvv` when the config space is not readable).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PciFabric {
    /// /proc/cmdline, whole.
    pub cmdline: Probed<String>,
    /// The IOMMU-related parameters on it, as written: `iommu=`, `iommu.passthrough=`,
    /// `iommu.strict=`, `amd_iommu=`, `intel_iommu=`, `pcie_acs_override=`.
    #[serde(default)]
    pub iommu_params: Probed<Vec<String>>,
    /// IOMMU hardware units the kernel registered (/sys/class/iommu), e.g. `dmar0`, `ivhd0`.
    #[serde(default)]
    pub iommu_units: Probed<Vec<String>>,
    /// Number of IOMMU groups (/sys/kernel/iommu_groups); 0 when the directory is empty or absent.
    #[serde(default)]
    pub iommu_groups: Probed<u32>,
    /// NVIDIA display/3D controllers (vendor 0x10de, class 0x03xxxx), by PCI address.
    #[serde(default)]
    pub gpus: Probed<Vec<PciGpu>>,
    /// Every bridge on a GPU's path, with its ACS state.
    #[serde(default)]
    pub bridges: Vec<PciBridge>,
    /// Every GPU pair.
    #[serde(default)]
    pub pairs: Vec<PciGpuPair>,
}

/// One GPU's place in the PCI fabric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PciGpu {
    /// PCI address, e.g. `0000:03:00.0`.
    pub bdf: String,
    /// `vendor:device`, e.g. `10de:2335`.
    #[serde(default)]
    pub device_id: Probed<String>,
    /// The host bridge the GPU sits under, e.g. `pci0000:00`.
    #[serde(default)]
    pub host_bridge: Probed<String>,
    /// The bridges from the root port down to the GPU's parent, by PCI address; empty when the
    /// GPU sits on the root bus itself (a VM, or a root-complex-integrated device).
    #[serde(default)]
    pub path: Probed<Vec<String>>,
    /// IOMMU group number; skipped when the GPU has no group (IOMMU off).
    #[serde(default)]
    pub iommu_group: Probed<u32>,
    /// The group's default domain type as the kernel writes it: `identity` (passthrough),
    /// `DMA` or `DMA-FQ` (translated), `blocked`, `unmanaged`.
    #[serde(default)]
    pub iommu_domain_type: Probed<String>,
}

/// A bridge on a GPU's path and its ACS (Access Control Services) state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PciBridge {
    pub bdf: String,
    pub acs: Probed<AcsReading>,
}

/// The ACS extended capability of one bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcsReading {
    /// `config space` (/sys/bus/pci/devices/BDF/config) or `lspci -vvv`.
    pub source: String,
    /// The bridge has the ACS capability (extended capability ID 0x000D).
    pub present: bool,
    /// ACS Capability register: what the bridge can do.
    #[serde(default)]
    pub capability: Option<AcsBits>,
    /// ACS Control register: what is enabled.
    #[serde(default)]
    pub control: Option<AcsBits>,
}

/// The bits shared by the ACS Capability and Control registers (PCIe base spec, ACS extended
/// capability, bits 0-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AcsBits {
    pub source_validation: bool,
    pub translation_blocking: bool,
    pub p2p_request_redirect: bool,
    pub p2p_completion_redirect: bool,
    pub upstream_forwarding: bool,
    pub p2p_egress_control: bool,
    pub direct_translated_p2p: bool,
}

/// Two GPUs and the fabric between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PciGpuPair {
    /// PCI addresses of the two GPUs.
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub same_host_bridge: Probed<bool>,
    /// Both GPUs sit below the same root port; skipped when a GPU has no root port.
    #[serde(default)]
    pub same_root_port: Probed<bool>,
    /// The bridges a peer-to-peer packet crosses between the two: each GPU's path below the
    /// deepest bridge the two share (the whole paths, root ports included, when they share none).
    #[serde(default)]
    pub bridges_between: Probed<Vec<String>>,
    /// Those of `bridges_between` whose ACS Control has P2P Request Redirect or P2P Completion
    /// Redirect enabled; skipped or failed when a bridge between could not be read.
    #[serde(default)]
    pub acs_redirect_between: Probed<Vec<String>>,
}
