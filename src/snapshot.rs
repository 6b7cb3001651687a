//! The host snapshot: every fact the engine may use, each recording how it was obtained.
//!
//! Collectors and importers write this model; the engine only reads it. It is serialisable to
//! YAML and JSON and carries a `schema_version` so recorded snapshots can be replayed later.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the snapshot file format. Bump on an incompatible change.
pub const SNAPSHOT_SCHEMA_VERSION: u32 = 1;

/// GPU pairs are recorded for at most this many GPUs (64 GPUs: 2,016 pairs). The pairs grow
/// with the square of the GPU count (2,000 GPUs would be 2 million pairs); no single host has
/// more than a few dozen GPUs, so a larger matrix is recorded as skipped, with this reason.
pub const MAX_PAIR_GPUS: u32 = 64;

/// Why a host's GPU pairs were not recorded.
pub(crate) fn too_many_gpus_for_pairs(n: usize) -> Reason {
    Reason::new(
        ReasonCode::NotRequested,
        format!(
            "{n} GPUs: pairs are recorded for at most {MAX_PAIR_GPUS} GPUs (the pairs grow with the square of the count)"
        ),
    )
}

mod probes;
pub use crate::reason::{Input, Reason, ReasonCode};
pub use probes::*;

/// A fact as obtained: a value, skipped with a reason, or failed with an error.
// A reason is recorded as its words when they read back to the same code (every file written
// before reasons had codes reads unchanged), else as `{code, detail}`: see `recorded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "schema", schemars(rename = "Probed_{T}"))]
pub enum Probed<T> {
    Value(T),
    Skipped(
        #[serde(with = "recorded")]
        #[cfg_attr(feature = "schema", schemars(with = "recorded::Recorded"))]
        Reason,
    ),
    Failed(
        #[serde(with = "recorded")]
        #[cfg_attr(feature = "schema", schemars(with = "recorded::Recorded"))]
        Reason,
    ),
}

impl<T> Default for Probed<T> {
    fn default() -> Self {
        Probed::Skipped(Reason::new(ReasonCode::NotRequested, "not collected"))
    }
}

impl<T> Probed<T> {
    pub fn skipped(reason: impl Into<Reason>) -> Self {
        Probed::Skipped(reason.into())
    }
    pub fn failed(error: impl Into<Reason>) -> Self {
        Probed::Failed(error.into())
    }
    /// Skipped because an input was not given (a probe not run, no launch).
    pub fn missing(input: Input) -> Self {
        Probed::Skipped(Reason::missing(input))
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
    pub fn missing_reason(&self) -> Option<&Reason> {
        match self {
            Probed::Value(_) => None,
            Probed::Skipped(r) => Some(r),
            Probed::Failed(e) => Some(e),
        }
    }
    /// Why there is no value in words, or `or` when there is one (for a sentence that
    /// quotes it).
    pub fn why_or(&self, or: &str) -> String {
        self.missing_reason()
            .map_or_else(|| or.to_string(), ToString::to_string)
    }
    /// Skipped because `input` was not given?
    pub(crate) fn is_missing(&self, input: Input) -> bool {
        matches!(self, Probed::Skipped(r) if r.missing_input() == Some(input))
    }
    /// Why there is no value, as a fact's reason ("skipped: …", "failed: …").
    pub(crate) fn unknown_reason(&self) -> Option<Reason> {
        match self {
            Probed::Value(_) => None,
            Probed::Skipped(r) => Some(r.clone().within("skipped")),
            Probed::Failed(e) => Some(e.clone().within("failed")),
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
            None => Probed::skipped(Reason::new(
                ReasonCode::NotInInput,
                "not reported by the source",
            )),
        }
    }
}

/// How a [`Reason`] is kept in a snapshot file (and the report's copy of the snapshot).
///
/// Files have always kept a reason as a sentence, and the code is a later addition, so the
/// reader gives a sentence its code here, at the file's boundary, by the words the collectors
/// have always used: the sentences of a missing input exactly ([`ReasonCode::cli_words`]),
/// the rest by a few key words ([`code_of_words`]). The writer keeps a reason as a sentence
/// only when it reads back to the same code (or has none, `Other`); otherwise as
/// `{code, detail}`. Nothing outside
/// this module reads a reason's words for its code.
pub mod recorded {
    use super::{Input, Reason, ReasonCode};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// A reason on disk: its words, or its code and words.
    #[derive(Serialize, Deserialize)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(untagged)]
    #[cfg_attr(feature = "schema", schemars(rename = "RecordedReason"))]
    pub enum Recorded {
        Words(String),
        Coded {
            code: Coded,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            detail: Option<String>,
        },
    }

    /// What kind of absence a reason is: a missing input (`missing_log`, ...), `timeout`, ...
    #[derive(Serialize, Deserialize, Clone, Copy, PartialEq)]
    #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
    #[serde(rename_all = "snake_case")]
    #[cfg_attr(feature = "schema", schemars(rename = "ReasonCode"))]
    pub enum Coded {
        MissingLog,
        MissingLaunch,
        MissingIpcProbe,
        MissingP2pProbe,
        MissingPciFabric,
        NotInstalled,
        NoDriver,
        Timeout,
        NoPermission,
        NotSupported,
        NotFound,
        NotInInput,
        NotRequested,
        NoResult,
        Other,
    }

    impl From<ReasonCode> for Coded {
        fn from(c: ReasonCode) -> Coded {
            match c {
                ReasonCode::Missing(Input::Log) => Coded::MissingLog,
                ReasonCode::Missing(Input::Launch) => Coded::MissingLaunch,
                ReasonCode::Missing(Input::IpcProbe) => Coded::MissingIpcProbe,
                ReasonCode::Missing(Input::P2pProbe) => Coded::MissingP2pProbe,
                ReasonCode::Missing(Input::PciFabric) => Coded::MissingPciFabric,
                ReasonCode::NotInstalled => Coded::NotInstalled,
                ReasonCode::NoDriver => Coded::NoDriver,
                ReasonCode::Timeout => Coded::Timeout,
                ReasonCode::NoPermission => Coded::NoPermission,
                ReasonCode::NotSupported => Coded::NotSupported,
                ReasonCode::NotFound => Coded::NotFound,
                ReasonCode::NotInInput => Coded::NotInInput,
                ReasonCode::NotRequested => Coded::NotRequested,
                ReasonCode::NoResult => Coded::NoResult,
                ReasonCode::Other => Coded::Other,
            }
        }
    }

    impl From<Coded> for ReasonCode {
        fn from(c: Coded) -> ReasonCode {
            match c {
                Coded::MissingLog => ReasonCode::Missing(Input::Log),
                Coded::MissingLaunch => ReasonCode::Missing(Input::Launch),
                Coded::MissingIpcProbe => ReasonCode::Missing(Input::IpcProbe),
                Coded::MissingP2pProbe => ReasonCode::Missing(Input::P2pProbe),
                Coded::MissingPciFabric => ReasonCode::Missing(Input::PciFabric),
                Coded::NotInstalled => ReasonCode::NotInstalled,
                Coded::NoDriver => ReasonCode::NoDriver,
                Coded::Timeout => ReasonCode::Timeout,
                Coded::NoPermission => ReasonCode::NoPermission,
                Coded::NotSupported => ReasonCode::NotSupported,
                Coded::NotFound => ReasonCode::NotFound,
                Coded::NotInInput => ReasonCode::NotInInput,
                Coded::NotRequested => ReasonCode::NotRequested,
                Coded::NoResult => ReasonCode::NoResult,
                Coded::Other => ReasonCode::Other,
            }
        }
    }

    const MISSING: [Input; 5] = [
        Input::Log,
        Input::Launch,
        Input::IpcProbe,
        Input::P2pProbe,
        Input::PciFabric,
    ];

    /// The code of a recorded sentence, by the words collectors have always used for it.
    pub(crate) fn code_of_words(words: &str) -> ReasonCode {
        if let Some(i) = MISSING
            .into_iter()
            .find(|i| ReasonCode::Missing(*i).cli_words() == words)
        {
            return ReasonCode::Missing(i);
        }
        let r = words.to_ascii_lowercase();
        let has = |s: &str| r.contains(s);
        if has("did not answer within") || has("did not finish within") || has("timed out") {
            ReasonCode::Timeout
        } else if has("no permission") || has("permission denied") {
            ReasonCode::NoPermission
        } else if has("libnvidia-ml") || has("nvml library") || has("no nvidia driver") {
            ReasonCode::NoDriver
        } else if has("not supported") {
            ReasonCode::NotSupported
        } else if has("not installed") {
            ReasonCode::NotInstalled
        } else if has("not found") || has("cannot start") || has("no such file") {
            ReasonCode::NotFound
        } else if has("not in the report")
            || has("not reported")
            || has("lists no")
            || has("not in collect-env")
            || has("collect-env gives no")
            || has("no gpus listed")
            || has("topology matrix")
        {
            ReasonCode::NotInInput
        } else if has("not run")
            || has("not collected")
            || has("no launch command")
            || has("--no-python")
        {
            ReasonCode::NotRequested
        } else if has("did not return") || has("panicked") {
            ReasonCode::NoResult
        } else {
            ReasonCode::Other
        }
    }

    /// A recorded sentence as a reason: a missing input's own words carry no detail.
    pub(crate) fn from_words(words: &str) -> Reason {
        match code_of_words(words) {
            ReasonCode::Missing(i) => Reason::missing(i),
            code => Reason::new(code, words),
        }
    }

    pub fn serialize<S: Serializer>(r: &Reason, s: S) -> Result<S::Ok, S::Error> {
        let words = r.to_string();
        // `Other` says nothing the words do not, so words alone keep it.
        if r.code == ReasonCode::Other || code_of_words(&words) == r.code {
            return s.serialize_str(&words);
        }
        Recorded::Coded {
            code: r.code.into(),
            detail: (r.detail.is_some() || !r.context.is_empty()).then_some(words),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Reason, D::Error> {
        Ok(match Recorded::deserialize(d)? {
            Recorded::Words(w) => from_words(&w),
            Recorded::Coded { code, detail } => Reason {
                code: code.into(),
                detail,
                context: Vec::new(),
            },
        })
    }
}

/// Everything known about one host, plus the vLLM launch under diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HostSnapshot {
    #[cfg_attr(feature = "schema", schemars(extend("const" = SNAPSHOT_SCHEMA_VERSION)))]
    pub schema_version: u32,
    /// Where the snapshot came from: `demo`, `live`, `collect-env:<file>`, `snapshot:<file>`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub origin: Origin,
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
    /// The functional peer-to-peer probe (`sm120-doctor probe p2p`). Older snapshots have none
    /// and load as skipped; a snapshot without it writes none.
    #[serde(default = "p2p_not_run", skip_serializing_if = "p2p_is_not_run")]
    pub p2p_probe: Probed<P2pProbe>,
    /// IOMMU, kernel command line, PCIe paths and ACS of the GPUs, from /proc and /sys. Older
    /// snapshots have none and load as skipped; a snapshot without it writes none.
    #[serde(
        default = "pci_not_collected",
        skip_serializing_if = "pci_is_not_collected"
    )]
    pub pci_fabric: Probed<PciFabric>,
}

fn p2p_not_run() -> Probed<P2pProbe> {
    Probed::missing(Input::P2pProbe)
}

fn p2p_is_not_run(p: &Probed<P2pProbe>) -> bool {
    p.is_missing(Input::P2pProbe)
}

fn pci_not_collected() -> Probed<PciFabric> {
    Probed::missing(Input::PciFabric)
}

fn pci_is_not_collected(p: &Probed<PciFabric>) -> bool {
    p.is_missing(Input::PciFabric)
}

fn probe_not_run() -> Probed<IpcProbe> {
    Probed::missing(Input::IpcProbe)
}

impl HostSnapshot {
    /// An empty snapshot: every section skipped with `reason`.
    pub fn empty(origin: impl Into<Origin>, reason: impl Into<Reason>) -> Self {
        let reason: Reason = reason.into();
        HostSnapshot {
            schema_version: SNAPSHOT_SCHEMA_VERSION,
            origin: origin.into(),
            captured_at: None,
            gpus: Probed::skipped(reason.clone()),
            gpu_pairs: Probed::skipped(reason.clone()),
            driver: Probed::skipped(reason.clone()),
            env: Probed::skipped(reason.clone()),
            python: Probed::skipped(reason.clone()),
            os: Probed::skipped(reason.clone()),
            processes: Probed::skipped(reason.clone()),
            launch: Probed::missing(Input::Launch),
            probe: probe_not_run(),
            p2p_probe: p2p_not_run(),
            pci_fabric: pci_not_collected(),
        }
    }
}

/// Where a snapshot came from. Kept in files as the words it has always had (`live`, `demo`,
/// `demo (NOTE)`, `collect-env:FILE`, `snapshot:FILE (INNER)`); [`Origin::parse`] reads them
/// back, and nothing outside this module reads those words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// This host, read now.
    Live,
    /// The built-in demo host, with what it stands for.
    Demo(Option<String>),
    /// A `collect-env` paste, by its file name.
    CollectEnv(String),
    /// A snapshot file (or a JSON report) and the origin it recorded.
    Snapshot {
        file: String,
        inner: Option<Box<Origin>>,
    },
    /// Free words: a fixture's description of the host it stands for.
    Other(String),
}

impl Origin {
    /// A snapshot file named `file` that recorded `inner`. A snapshot of a snapshot keeps the
    /// first one's origin: it is the same recording.
    pub(crate) fn recorded_in(file: impl Into<String>, inner: Origin) -> Origin {
        match inner {
            Origin::Snapshot { .. } => inner,
            inner => Origin::Snapshot {
                file: file.into(),
                inner: Some(Box::new(inner)),
            },
        }
    }

    /// The host as read by the tool itself, now or in the recording of one.
    pub fn is_live_read(&self) -> bool {
        match self {
            Origin::Live => true,
            Origin::Snapshot { inner, .. } => inner.as_deref().is_some_and(Origin::is_live_read),
            _ => false,
        }
    }

    pub fn is_live(&self) -> bool {
        matches!(self, Origin::Live)
    }

    pub(crate) fn is_demo(&self) -> bool {
        matches!(self, Origin::Demo(_))
    }

    /// What was read first, under any snapshot files that recorded it.
    pub fn first(&self) -> &Origin {
        match self {
            Origin::Snapshot {
                inner: Some(inner), ..
            } => inner.first(),
            o => o,
        }
    }

    /// The origin from its recorded words. Every string reads as some origin (free words are
    /// [`Origin::Other`]), so old files read unchanged.
    pub fn parse(words: &str) -> Origin {
        if words == "live" {
            return Origin::Live;
        }
        if words == "demo" {
            return Origin::Demo(None);
        }
        if let Some(note) = words
            .strip_prefix("demo (")
            .and_then(|r| r.strip_suffix(')'))
        {
            return Origin::Demo(Some(note.to_string()));
        }
        if let Some(file) = words.strip_prefix("collect-env:") {
            return Origin::CollectEnv(file.to_string());
        }
        if let Some(rest) = words.strip_prefix("snapshot:") {
            return match split_last_parenthesised(rest) {
                Some((file, inner)) => Origin::Snapshot {
                    file: file.to_string(),
                    inner: Some(Box::new(Origin::parse(inner))),
                },
                None => Origin::Snapshot {
                    file: rest.to_string(),
                    inner: None,
                },
            };
        }
        Origin::Other(words.to_string())
    }
}

/// `FILE (INNER)` → (`FILE`, `INNER`), where INNER is the last balanced parenthesised group
/// (it may hold parentheses itself: `x.yaml (demo (a host))`).
fn split_last_parenthesised(s: &str) -> Option<(&str, &str)> {
    let body = s.strip_suffix(')')?;
    let mut depth = 0usize;
    for (i, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' if depth > 0 => depth -= 1,
            '(' => {
                let file = body[..i].strip_suffix(' ')?;
                return Some((file, &body[i + 1..]));
            }
            _ => {}
        }
    }
    None
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Live => f.write_str("live"),
            Origin::Demo(None) => f.write_str("demo"),
            Origin::Demo(Some(note)) => write!(f, "demo ({note})"),
            Origin::CollectEnv(file) => write!(f, "collect-env:{file}"),
            Origin::Snapshot { file, inner: None } => write!(f, "snapshot:{file}"),
            Origin::Snapshot {
                file,
                inner: Some(inner),
            } => write!(f, "snapshot:{file} ({inner})"),
            Origin::Other(words) => f.write_str(words),
        }
    }
}

impl From<&str> for Origin {
    fn from(words: &str) -> Origin {
        Origin::parse(words)
    }
}

impl Serialize for Origin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Origin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Origin, D::Error> {
        String::deserialize(d).map(|w| Origin::parse(&w))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    pub fn named(index: u32, name: &str, reason: impl Into<Reason>) -> Self {
        let reason: Reason = reason.into();
        Gpu {
            index,
            name: Probed::Value(name.to_string()),
            uuid: Probed::skipped(reason.clone()),
            compute_capability: Probed::skipped(reason.clone()),
            memory_total_mib: Probed::skipped(reason.clone()),
            memory_used_mib: Probed::skipped(reason.clone()),
            utilization_pct: Probed::skipped(reason.clone()),
            temperature_c: Probed::skipped(reason.clone()),
            power_w: Probed::skipped(reason.clone()),
            power_limit_w: Probed::skipped(reason.clone()),
            pcie: Probed::skipped(reason.clone()),
            persistence_mode: Probed::skipped(reason.clone()),
            compute_mode: Probed::skipped(reason.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    /// Blackwell consumer/workstation family (SM120, SM121): major version 12.
    pub(crate) fn is_sm12x(&self) -> bool {
        self.major == 12
    }
}

impl std::fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Whose environment this is: `this shell`, `vLLM process 1234`, `collect-env`, `launch command`.
    pub source: String,
    /// Whose it is, as a kind: the engine's own (measured) or another process's (assumed to
    /// be the engine's only for want of better). Files written before it read it from
    /// `source` ([`Environment::owner`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whose: Option<EnvOwner>,
    pub vars: BTreeMap<String, String>,
    /// Names (or `PREFIX*`) this source can speak for; `None` means the whole environment.
    /// `vllm collect-env` lists only some prefixes, torch's collect_env only the allocator config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers: Option<Vec<String>>,
}

/// Whose environment a snapshot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EnvOwner {
    /// A running vLLM process's (`/proc/PID/environ`), or one a report shows for the failing
    /// run: what the engine got.
    Engine,
    /// The doctor's own shell: vLLM is started elsewhere (a script, systemd, docker).
    DoctorShell,
    /// The shell that ran `collect-env`.
    CollectEnv,
}

impl Environment {
    /// Whose environment this is. A file without `whose` says it by its source's first words,
    /// as the collectors wrote them (`this shell (...)`, `vllm collect-env`); anything else was
    /// recorded as the engine's.
    pub fn owner(&self) -> EnvOwner {
        self.whose.unwrap_or_else(|| {
            let s = self.source.as_str();
            if s.starts_with("this shell") {
                EnvOwner::DoctorShell
            } else if s == "vllm collect-env" || s.starts_with("torch collect_env") {
                EnvOwner::CollectEnv
            } else {
                EnvOwner::Engine
            }
        })
    }

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

/// The prefixes of the variables vLLM's collect-env lists (`get_env_vars` in
/// vllm/collect_env.py: TORCH, NCCL, PYTORCH, CUDA, CUBLAS, CUDNN, OMP_, MKL_, NVIDIA, and
/// vLLM's own `VLLM_` variables from vllm/envs.py). The one table of "variables that matter":
/// the report's allow-list, the TUI's environment panel and what a pasted collect-env covers.
pub const ENV_PREFIXES: [&str; 10] = [
    "VLLM_", "TORCH", "NCCL", "PYTORCH", "CUDA", "CUBLAS", "CUDNN", "OMP_", "MKL_", "NVIDIA",
];

/// Listed by name as well: which `nvcc`, `python` and `vllm` run (`PATH`) and which libcuda,
/// libnccl and libcudnn load (`LD_LIBRARY_PATH`, `LD_PRELOAD`).
pub const ENV_NAMES: [&str; 3] = ["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD"];

/// Does this variable belong to the family the tool looks at ([`ENV_PREFIXES`],
/// [`ENV_NAMES`])? A report adds the variables the knowledge base reads.
pub(crate) fn env_var_matters(name: &str) -> bool {
    ENV_PREFIXES.iter().any(|p| name.starts_with(p)) || ENV_NAMES.contains(&name)
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The DeepGEMM build vLLM imports (site-packages first, else its vendored copy) and
    /// whether it carries SM120 kernels.
    #[serde(default)]
    pub deep_gemm_build: Probed<DeepGemmBuild>,
    /// vLLM's tuned W8A8 block-FP8 config folder and the file names in it.
    #[serde(default)]
    pub fp8_config_dir: Probed<String>,
    #[serde(default)]
    pub fp8_config_files: Probed<Vec<String>>,
    /// CUDA toolkit (nvcc) version, used for JIT.
    #[serde(default)]
    pub cuda_toolkit: Probed<String>,
}

/// The DeepGEMM package vLLM would import. vLLM imports `deep_gemm` from site-packages first and
/// falls back to `vllm.third_party.deep_gemm` (vllm/utils/deep_gemm.py, 0.24.0–0.33.0). Its
/// `__version__` cannot tell an SM120 build from one without (2.5.0 is both 891d57b and
/// a6b593d), so the collector counts the SM120 JIT headers the build compiles at run time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DeepGemmBuild {
    /// The package folder.
    pub dir: String,
    /// `site-packages` or `vendored` (vLLM's `vllm/third_party/deep_gemm`).
    #[cfg_attr(feature = "schema", schemars(extend("enum" = ["site-packages", "vendored"])))]
    pub origin: String,
    /// `__version__` read from `__init__.py` as text (not imported).
    #[serde(default)]
    pub version: Option<String>,
    /// How many `include/deep_gemm/impls/sm120_*.cuh` files the build has (0: no SM120 kernels).
    pub sm120_kernels: u32,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct OsInfo {
    pub name: Probed<String>,
    #[serde(default)]
    pub kernel: Probed<String>,
    #[serde(default)]
    pub hostname: Probed<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// The command as the user gave it.
    pub raw: String,
    /// Where it came from, as facts name it: `--launch`, `--launch-file FILE`, `typed in the
    /// TUI`, `the demo's launch`. Empty in snapshots written before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
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
    /// vLLM's `--config FILE` names a file that was not given: every setting the command line
    /// does not state itself may be set there, so it is unknown (this says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_unread: Option<String>,
    /// Variables the launch removes from the environment it inherits (`env -u`, `unset`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset: Vec<String>,
    /// What in the launch text does not do what it seems to (a broken continuation, a variable
    /// that never reaches the engine), with its place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<LaunchProblem>,
    /// The engine runs in a container (`docker run`, a compose service, a Kubernetes
    /// container): it does not inherit the host's environment, only the variables the launch
    /// gives it and those named in `from_host`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub container: bool,
    /// Whose environment the engine starts from, by the launch's form (`container` is
    /// `Container` here).
    #[serde(default, skip_serializing_if = "EngineEnv::is_inherited")]
    pub engine_env: EngineEnv,
    /// Variables a container takes from the environment that starts it (`docker run -e NAME`,
    /// compose `environment: [NAME]`), without a value in the launch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_host: Vec<String>,
    /// Variables the launch sets to a value the tool cannot know (a `$(…)` substitution, a
    /// Kubernetes `valueFrom`), with why; or to a shell default (`${NAME:-default}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env_expr: BTreeMap<String, EnvExpr>,
    /// Files the launch reads that were not given (`source ./env.sh`, `--env-file`, `env_file:`,
    /// `EnvironmentFile=`, `envFrom:`): any variable not set after them is not known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_unread: Vec<UnreadEnv>,
    /// Why the vLLM arguments are not known (`vllm serve m $ARGS`): flags like the
    /// tensor-parallel size are then unknown, not vLLM's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_unknown: Option<String>,
}

/// Whose environment the engine starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum EngineEnv {
    /// A command or script: the environment of the shell that runs it, plus what it sets.
    #[default]
    Inherited,
    /// A container (`docker run`, compose, Kubernetes, Helm): the image's and the launch's
    /// variables only.
    Container,
    /// A systemd unit: the service manager's environment plus `Environment=` and
    /// `EnvironmentFile=`, never a login shell's.
    Unit,
}

impl EngineEnv {
    pub(crate) fn is_inherited(&self) -> bool {
        *self == EngineEnv::Inherited
    }
}

/// A variable's value as an expression the launch text leaves open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields, rename_all = "snake_case", tag = "kind")]
pub enum EnvExpr {
    /// Not knowable from the text: `reason` says why.
    Unknown { reason: String },
    /// bash's `${VAR:-default}` (`empty_counts`) or `${VAR-default}`, evaluated by the shell
    /// that runs the launch: the host's `VAR` when set (and non-empty with `:-`), else `default`.
    HostOr {
        var: String,
        default: String,
        empty_counts: bool,
    },
}

/// A file the launch reads that was not given: any variable not in `except` may be set there.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct UnreadEnv {
    /// What was not read and how to give it (`--launch-with FILE`).
    pub reason: String,
    /// Variables the launch sets (or unsets) after that file, so the file cannot change them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
}

/// Something in a launch text that does not do what it seems to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LaunchProblem {
    /// The file it is in (empty for a command given on the command line).
    #[serde(default)]
    pub file: String,
    /// 1-based line.
    pub line: usize,
    pub message: String,
}

/// For the tests (here and beside the collectors): checks on why a value is missing.
#[cfg(test)]
impl<T> Probed<T> {
    /// Skipped or failed with this code?
    pub(crate) fn has_code(&self, code: ReasonCode) -> bool {
        self.missing_reason().is_some_and(|r| r.code == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_read_back_from_the_words_files_keep() {
        let cases = [
            ("live", Origin::Live),
            ("demo", Origin::Demo(None)),
            (
                "demo (the reporter's host)",
                Origin::Demo(Some("the reporter's host".into())),
            ),
            ("collect-env:env.txt", Origin::CollectEnv("env.txt".into())),
            (
                "snapshot:a (1).yaml (live)",
                Origin::recorded_in("a (1).yaml", Origin::Live),
            ),
            (
                "snapshot:r.json (collect-env:x.txt)",
                Origin::recorded_in("r.json", Origin::CollectEnv("x.txt".into())),
            ),
            (
                "snapshot:s.yaml (demo (a host))",
                Origin::recorded_in("s.yaml", Origin::Demo(Some("a host".into()))),
            ),
            (
                "snapshot:bare.yaml",
                Origin::Snapshot {
                    file: "bare.yaml".into(),
                    inner: None,
                },
            ),
            (
                "2x RTX PRO 6000 WS (vendored)",
                Origin::Other("2x RTX PRO 6000 WS (vendored)".into()),
            ),
        ];
        for (words, origin) in cases {
            assert_eq!(Origin::parse(words), origin, "{words}");
            assert_eq!(origin.to_string(), words);
            let json = serde_json::to_string(&origin).expect("json");
            assert_eq!(json, serde_json::to_string(words).expect("json"));
            assert_eq!(serde_json::from_str::<Origin>(&json).expect("back"), origin);
        }
        let nested = Origin::parse("snapshot:r.json (collect-env:x.txt)");
        assert_eq!(nested.first(), &Origin::CollectEnv("x.txt".into()));
        assert!(Origin::parse("snapshot:s.yaml (live)").is_live_read());
        assert!(!Origin::parse("snapshot:s.yaml (live)").is_live());
        // A snapshot of a snapshot is the same recording.
        assert_eq!(Origin::recorded_in("b.yaml", nested.clone()), nested);
    }

    #[test]
    fn recorded_words_read_back_to_the_codes_metrics_label() {
        let cases = [
            (
                "python3 did not answer within 15 s (raise --python-timeout)",
                "timeout",
            ),
            (
                "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed",
                "no_driver",
            ),
            ("no permission to query this field", "no_permission"),
            ("not supported by this GPU or driver", "not_supported"),
            ("not installed in python3", "not_installed"),
            ("cannot start /x/python: No such file", "not_found"),
            ("not in the report", "not_in_input"),
            ("Python stack not collected (--no-python)", "not_requested"),
            (
                "allocator/IPC probe not run (sm120-doctor probe ipc)",
                "not_requested",
            ),
            (
                "no launch command given (--launch or --launch-file)",
                "not_requested",
            ),
            ("the Python collector did not return", "no_result"),
            ("secret=hunter2 something else", "other"),
        ];
        for (reason, code) in cases {
            assert_eq!(recorded::code_of_words(reason).label(), code, "{reason}");
        }
    }

    #[test]
    fn a_reason_keeps_its_code_through_a_file() {
        for r in [
            Reason::missing(Input::Launch),
            Reason::missing(Input::Log),
            Reason::missing(Input::IpcProbe),
            Reason::missing(Input::P2pProbe),
            Reason::missing(Input::PciFabric),
            Reason::new(
                ReasonCode::Timeout,
                "NVML did not answer within 5 s (driver hung?)",
            ),
            // Words that read as another code are written with their code.
            Reason::new(
                ReasonCode::Timeout,
                "the PCI fabric was not read within 5 s",
            ),
            Reason::new(ReasonCode::NotInstalled, "not installed in python3"),
        ] {
            let p: Probed<u32> = Probed::Skipped(r.clone());
            let yaml = serde_saphyr::to_string(&p).expect("yaml");
            let back: Probed<u32> = serde_saphyr::from_str(&yaml).expect("read back");
            assert_eq!(
                back.missing_reason().map(|b| b.code),
                Some(r.code),
                "{yaml}"
            );
            assert_eq!(
                back.missing_reason().map(ToString::to_string),
                Some(r.to_string())
            );
        }
        // A missing input is kept in the words files have always had.
        let p: Probed<u32> = Probed::missing(Input::Launch);
        assert_eq!(
            serde_json::to_string(&p).expect("json"),
            r#"{"skipped":"no launch command given (--launch or --launch-file)"}"#
        );
        let coded: Probed<u32> =
            serde_json::from_str(r#"{"failed":{"code":"timeout","detail":"slow"}}"#)
                .expect("coded");
        assert_eq!(
            coded.missing_reason().map(|r| r.code),
            Some(ReasonCode::Timeout)
        );
    }
}
