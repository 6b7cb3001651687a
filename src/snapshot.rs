//! The host snapshot: every fact the engine may use, each recording how it was obtained.
//!
//! Collectors and importers write this model; the engine only reads it. It is serialisable to
//! YAML and JSON and carries a `schema_version` so recorded snapshots can be replayed later.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the snapshot file format. Bump on an incompatible change.
pub const SNAPSHOT_SCHEMA_VERSION: u32 = 1;

/// A fact as obtained: a value, skipped with a reason, or failed with an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Probed<T> {
    Value(T),
    Skipped(String),
    Failed(String),
}

impl<T> Default for Probed<T> {
    fn default() -> Self {
        Probed::Skipped("not collected".into())
    }
}

impl<T> Probed<T> {
    pub fn skipped(reason: impl Into<String>) -> Self {
        Probed::Skipped(reason.into())
    }
    pub fn failed(error: impl Into<String>) -> Self {
        Probed::Failed(error.into())
    }
    pub fn value(&self) -> Option<&T> {
        match self {
            Probed::Value(v) => Some(v),
            _ => None,
        }
    }
    pub fn value_mut(&mut self) -> Option<&mut T> {
        match self {
            Probed::Value(v) => Some(v),
            _ => None,
        }
    }
    /// Why there is no value, or `None` when there is one.
    pub fn missing_reason(&self) -> Option<&str> {
        match self {
            Probed::Value(_) => None,
            Probed::Skipped(r) => Some(r),
            Probed::Failed(e) => Some(e),
        }
    }
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Probed<U> {
        match self {
            Probed::Value(v) => Probed::Value(f(v)),
            Probed::Skipped(r) => Probed::Skipped(r),
            Probed::Failed(e) => Probed::Failed(e),
        }
    }
    pub fn as_ref(&self) -> Probed<&T> {
        match self {
            Probed::Value(v) => Probed::Value(v),
            Probed::Skipped(r) => Probed::Skipped(r.clone()),
            Probed::Failed(e) => Probed::Failed(e.clone()),
        }
    }
}

impl<T> From<Option<T>> for Probed<T> {
    fn from(v: Option<T>) -> Self {
        match v {
            Some(v) => Probed::Value(v),
            None => Probed::skipped("not reported by the source"),
        }
    }
}

/// Everything known about one host, plus the vLLM launch under diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSnapshot {
    pub schema_version: u32,
    /// Where the snapshot came from: `demo`, `live`, `collect-env:<file>`, `snapshot:<file>`.
    pub origin: String,
    /// When it was captured (RFC 3339 or a date), when known.
    #[serde(default)]
    pub captured_at: Option<String>,
    #[serde(default)]
    pub gpus: Probed<Vec<Gpu>>,
    #[serde(default)]
    pub gpu_pairs: Probed<Vec<GpuPair>>,
    #[serde(default)]
    pub driver: Probed<Driver>,
    #[serde(default)]
    pub env: Probed<Environment>,
    #[serde(default)]
    pub python: Probed<PythonStack>,
    #[serde(default)]
    pub os: Probed<OsInfo>,
    #[serde(default)]
    pub processes: Probed<Vec<GpuProcess>>,
    #[serde(default)]
    pub launch: Probed<Launch>,
    /// The allocator/IPC probe (`sm120-doctor probe ipc`, `snapshot --probe`). Older snapshots
    /// have none and load as skipped.
    #[serde(default = "probe_not_run")]
    pub probe: Probed<IpcProbe>,
}

fn probe_not_run() -> Probed<IpcProbe> {
    Probed::skipped(PROBE_NOT_RUN)
}

/// Reason recorded when the allocator/IPC probe was not run.
pub const PROBE_NOT_RUN: &str = "allocator/IPC probe not run (sm120-doctor probe ipc)";

impl HostSnapshot {
    /// An empty snapshot: every section skipped with `reason`.
    pub fn empty(origin: impl Into<String>, reason: &str) -> Self {
        HostSnapshot {
            schema_version: SNAPSHOT_SCHEMA_VERSION,
            origin: origin.into(),
            captured_at: None,
            gpus: Probed::skipped(reason),
            gpu_pairs: Probed::skipped(reason),
            driver: Probed::skipped(reason),
            env: Probed::skipped(reason),
            python: Probed::skipped(reason),
            os: Probed::skipped(reason),
            processes: Probed::skipped(reason),
            launch: Probed::skipped("no launch command given (--launch or --launch-file)"),
            probe: probe_not_run(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub index: u32,
    pub name: Probed<String>,
    #[serde(default)]
    pub uuid: Probed<String>,
    /// Compute capability as (major, minor); SM120 is 12.0.
    #[serde(default)]
    pub compute_capability: Probed<ComputeCapability>,
    #[serde(default)]
    pub memory_total_mib: Probed<u64>,
    #[serde(default)]
    pub memory_used_mib: Probed<u64>,
    #[serde(default)]
    pub utilization_pct: Probed<u32>,
    #[serde(default)]
    pub temperature_c: Probed<u32>,
    #[serde(default)]
    pub power_w: Probed<f64>,
    #[serde(default)]
    pub power_limit_w: Probed<f64>,
    #[serde(default)]
    pub pcie: Probed<PcieLink>,
    #[serde(default)]
    pub persistence_mode: Probed<bool>,
    #[serde(default)]
    pub compute_mode: Probed<String>,
}

impl Gpu {
    /// A GPU with only index and name known; the rest skipped with `reason`.
    pub fn named(index: u32, name: &str, reason: &str) -> Self {
        Gpu {
            index,
            name: Probed::Value(name.to_string()),
            uuid: Probed::skipped(reason),
            compute_capability: Probed::skipped(reason),
            memory_total_mib: Probed::skipped(reason),
            memory_used_mib: Probed::skipped(reason),
            utilization_pct: Probed::skipped(reason),
            temperature_c: Probed::skipped(reason),
            power_w: Probed::skipped(reason),
            power_limit_w: Probed::skipped(reason),
            pcie: Probed::skipped(reason),
            persistence_mode: Probed::skipped(reason),
            compute_mode: Probed::skipped(reason),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    /// Blackwell consumer/workstation family (SM120, SM121): major version 12.
    pub fn is_sm12x(&self) -> bool {
        self.major == 12
    }
}

impl std::fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieLink {
    pub gen_current: u32,
    pub width_current: u32,
    #[serde(default)]
    pub gen_max: Option<u32>,
    #[serde(default)]
    pub width_max: Option<u32>,
}

/// How two GPUs are connected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuPair {
    pub a: u32,
    pub b: u32,
    /// nvidia-smi topo legend: `NV#`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`, or NVML's level name.
    pub topology: Probed<String>,
    /// P2P read/write possible between the two GPUs.
    #[serde(default)]
    pub p2p: Probed<bool>,
    /// NVLink P2P status reported OK.
    #[serde(default)]
    pub nvlink: Probed<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    pub version: Probed<String>,
    /// CUDA version the driver supports, e.g. "13.0".
    #[serde(default)]
    pub cuda_driver_version: Probed<String>,
    /// `open` or `proprietary` kernel module.
    #[serde(default)]
    pub kernel_module: Probed<String>,
}

/// Environment variables that matter to this failure family.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Whose environment this is: `this shell`, `vLLM process 1234`, `collect-env`, `launch command`.
    pub source: String,
    pub vars: BTreeMap<String, String>,
    /// Names (or `PREFIX*`) this source can speak for; `None` means the whole environment.
    /// `vllm collect-env` lists only some prefixes, torch's collect_env only the allocator config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers: Option<Vec<String>>,
}

impl Environment {
    /// Can this source say whether `name` is set?
    pub fn covers(&self, name: &str) -> bool {
        match &self.covers {
            None => true,
            Some(list) => list.iter().any(|c| match c.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => c == name,
            }),
        }
    }
}

/// Does this variable belong to the family the tool looks at?
pub fn env_var_matters(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "PYTORCH_",
        "VLLM_",
        "NCCL_",
        "CUDA_",
        "TORCH",
        "FLASHINFER_",
        "CUBLAS",
        "CUDNN",
        "NVIDIA_",
        "HF_",
        "LD_LIBRARY_PATH",
        "OMP_",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PythonStack {
    #[serde(default)]
    pub interpreter: Option<String>,
    pub python: Probed<String>,
    #[serde(default)]
    pub vllm: Probed<String>,
    #[serde(default)]
    pub torch: Probed<String>,
    /// CUDA version torch was built with (`torch.version.cuda`).
    #[serde(default)]
    pub torch_cuda: Probed<String>,
    /// `torch.cuda.get_arch_list()`, e.g. `["sm_90", "sm_100", "sm_120"]`.
    #[serde(default)]
    pub torch_arch_list: Probed<Vec<String>>,
    #[serde(default)]
    pub triton: Probed<String>,
    #[serde(default)]
    pub flashinfer: Probed<String>,
    #[serde(default)]
    pub deep_gemm: Probed<String>,
    /// vLLM's tuned W8A8 block-FP8 config folder and the file names in it.
    #[serde(default)]
    pub fp8_config_dir: Probed<String>,
    #[serde(default)]
    pub fp8_config_files: Probed<Vec<String>>,
    /// CUDA toolkit (nvcc) version, used for JIT.
    #[serde(default)]
    pub cuda_toolkit: Probed<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsInfo {
    pub name: Probed<String>,
    #[serde(default)]
    pub kernel: Probed<String>,
    #[serde(default)]
    pub hostname: Probed<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuProcess {
    pub pid: u32,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub gpu_index: Option<u32>,
    #[serde(default)]
    pub used_memory_mib: Option<u64>,
    /// Is a vLLM API server that owns this worker still alive? `None` when unknown.
    #[serde(default)]
    pub parent_alive: Option<bool>,
    #[serde(default)]
    pub is_vllm: bool,
}

/// The vLLM launch as parsed from the user's command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// The command as the user gave it.
    pub raw: String,
    /// `vllm serve`, `python -m vllm.entrypoints.openai.api_server`, ...
    pub entrypoint: String,
    pub model: Option<String>,
    /// Environment assignments made by the launch itself (prefixes, `export` lines, `-e`).
    pub env: BTreeMap<String, String>,
    pub tensor_parallel_size: Option<u32>,
    pub pipeline_parallel_size: Option<u32>,
    pub data_parallel_size: Option<u32>,
    pub enforce_eager: bool,
    pub disable_custom_all_reduce: bool,
    /// `cudagraph_mode` from `--compilation-config` / `-cc.cudagraph_mode`, when given.
    pub cudagraph_mode: Option<String>,
    pub quantization: Option<String>,
    pub gpu_memory_utilization: Option<f64>,
    pub max_model_len: Option<u64>,
    /// Every `--flag [value]` as given, for rules that need something unusual.
    pub flags: BTreeMap<String, String>,
    /// The text sets only the environment (an env file, a sourced script): no vLLM command, so
    /// its flags are unknown rather than vLLM's defaults.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub env_only: bool,
    /// Variables the launch removes from the environment it inherits (`env -u`, `unset`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset: Vec<String>,
    /// What in the launch text does not do what it seems to (a broken continuation, a variable
    /// that never reaches the engine), with its place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<LaunchProblem>,
}

/// Something in a launch text that does not do what it seems to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchProblem {
    /// The file it is in (empty for a command given on the command line).
    #[serde(default)]
    pub file: String,
    /// 1-based line.
    pub line: usize,
    pub message: String,
}

/// Can memory from an allocator be exported through legacy CUDA IPC (`cudaIpcGetMemHandle`)?
/// Measured on this host by `sm120-doctor probe ipc`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
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
#[serde(deny_unknown_fields)]
pub struct IpcProbeRun {
    /// `native` or `torch`.
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
