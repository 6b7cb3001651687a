//! Import the text output of `vllm collect-env` or `python -m torch.utils.collect_env`.
//!
//! Both print `Name: value` lines; vLLM's adds framed sections, `[pip3] pkg==ver` library
//! lines, a `GPU Topology:` matrix and an `Environment Variables` section (sm120-facts §9).
//! A `nvidia-smi topo -m` matrix pasted anywhere in the file is read as well.

use super::InputError;
use crate::snapshot::{
    ComputeCapability, Driver, Environment, Gpu, GpuPair, HostSnapshot, OsInfo, Probed,
    PythonStack, Reason, ReasonCode, SNAPSHOT_SCHEMA_VERSION,
};
use std::collections::BTreeMap;

const NOT_IN_COLLECT_ENV: &str = "not in collect-env output";

fn not_in_collect_env() -> Reason {
    Reason::new(ReasonCode::NotInInput, NOT_IN_COLLECT_ENV)
}

/// Compute capability by GPU name, for sources that print only the name. Returns `None` for
/// names the table does not know, which leaves the field skipped.
pub fn compute_capability_from_name(name: &str) -> Option<ComputeCapability> {
    let n = name.to_ascii_uppercase();
    let cc = |major, minor| Some(ComputeCapability { major, minor });
    // Order matters: GB10 before B10x, RTX PRO Blackwell before generic RTX.
    if n.contains("GB10") && !n.contains("GB100") {
        return cc(12, 1);
    }
    if (n.contains("RTX PRO") && n.contains("BLACKWELL"))
        || n.contains("RTX 5090")
        || n.contains("RTX 5080")
        || n.contains("RTX 5070")
        || n.contains("RTX 5060")
    {
        return cc(12, 0);
    }
    if n.contains("B200") || n.contains("B100") || n.contains("GB200") {
        return cc(10, 0);
    }
    if n.contains("B300") || n.contains("GB300") {
        return cc(10, 3);
    }
    if n.contains("H100")
        || n.contains("H200")
        || n.contains("H800")
        || n.contains("H20")
        || n.contains("GH200")
    {
        return cc(9, 0);
    }
    if n.contains("L40") || n.contains("RTX 4090") || n.contains("L4") || n.contains("RTX 6000 ADA")
    {
        return cc(8, 9);
    }
    if n.contains("A100") || n.contains("A800") {
        return cc(8, 0);
    }
    if n.contains("RTX 3090") || n.contains("A6000") || n.contains("A40") || n.contains("A10") {
        return cc(8, 6);
    }
    None
}

/// Fields a collect-env file must contain at least one of.
const KNOWN_FIELDS: &[&str] = &[
    "PyTorch version",
    "OS",
    "Python version",
    "Nvidia driver version",
    "GPU models and configuration",
    "vLLM Version",
    "CUDA used to build PyTorch",
];

/// A host snapshot from collect-env output: its fields, GPU list and topology, library list
/// and environment variables. Anything the file does not say is skipped, with the reason.
pub fn parse(name: &str, text: &str) -> Result<HostSnapshot, InputError> {
    let scan = Scan::read(name, text)?;
    if !KNOWN_FIELDS.iter().any(|k| scan.fields.contains_key(*k)) {
        return Err(InputError::new(
            name,
            1,
            1,
            "not collect-env output: none of 'PyTorch version:', 'OS:', 'Python version:', 'Nvidia driver version:' found",
        ));
    }
    let gpus = parse_gpus(name, &scan.gpu_lines)?;
    let gpu_pairs = gpu_pairs(scan.topo.as_ref(), gpus.len());
    let is_vllm = scan.fields.contains_key("vLLM Version") || text.contains("vLLM Info");
    let python = scan.python_stack();
    let os = OsInfo {
        name: scan.field("OS").into(),
        kernel: scan
            .field("Python platform")
            .and_then(|p| kernel_from_platform(&p))
            .into(),
        hostname: Probed::skipped(not_in_collect_env()),
    };
    let driver = Driver {
        version: scan.field("Nvidia driver version").into(),
        cuda_driver_version: Probed::skipped(not_in_collect_env()),
        kernel_module: Probed::skipped(not_in_collect_env()),
    };
    let mut snap = HostSnapshot::empty(
        crate::snapshot::Origin::CollectEnv(name.to_string()),
        not_in_collect_env(),
    );
    snap.schema_version = SNAPSHOT_SCHEMA_VERSION;
    snap.gpus = if gpus.is_empty() {
        Probed::skipped(Reason::new(
            ReasonCode::NotInInput,
            "no GPUs listed in collect-env output",
        ))
    } else {
        Probed::Value(gpus)
    };
    snap.gpu_pairs = gpu_pairs;
    snap.driver = Probed::Value(driver);
    snap.env = scan.environment(is_vllm);
    snap.python = Probed::Value(python);
    snap.os = Probed::Value(os);
    Ok(snap)
}

/// What one pass over the file collects.
#[derive(Default)]
struct Scan {
    /// `Name: value` lines, the first of each name, with its line number.
    fields: BTreeMap<String, (usize, String)>,
    gpu_lines: Vec<(usize, String)>,
    /// `[pip3]` / `[conda]` packages: normalised name → version.
    pip: BTreeMap<String, String>,
    env_vars: BTreeMap<String, String>,
    topo: Option<Topology>,
    in_env_section: bool,
    in_gpu_list: bool,
}

impl Scan {
    /// Read every line; a topology matrix is read whole where its header is.
    fn read(name: &str, text: &str) -> Result<Scan, InputError> {
        let mut scan = Scan::default();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line_no = i + 1;
            let trimmed = lines[i].trim_end_matches('\r').trim();
            i += 1;
            if trimmed.starts_with("=====") {
                continue;
            }
            if trimmed == "Environment Variables" {
                scan.in_env_section = true;
                continue;
            }
            if is_topology_header(trimmed) {
                let (t, used) = parse_topology(name, &lines, i - 1)?;
                scan.topo = Some(t);
                i = i - 1 + used;
                continue;
            }
            scan.line(line_no, trimmed);
        }
        Ok(scan)
    }

    /// One line (trimmed) past the frames, section title and topology matrix.
    fn line(&mut self, line_no: usize, trimmed: &str) {
        if let Some(rest) = trimmed
            .strip_prefix("[pip3] ")
            .or_else(|| trimmed.strip_prefix("[conda] "))
        {
            if let Some((pkg, ver)) = rest.split_once("==") {
                self.pip.insert(
                    pkg.trim().to_ascii_lowercase().replace('_', "-"),
                    ver.trim().to_string(),
                );
            }
            return;
        }
        if self.in_gpu_list {
            if trimmed
                .strip_prefix("GPU ")
                .is_some_and(|g| g.contains(':'))
            {
                self.gpu_lines.push((line_no, trimmed.to_string()));
                return;
            }
            self.in_gpu_list = false;
        }
        if self.in_env_section {
            if trimmed.is_empty() {
                return;
            }
            if let Some((k, v)) = trimmed
                .split_once('=')
                .filter(|(k, _)| !k.contains(' ') && !k.is_empty())
            {
                self.env_vars.insert(k.to_string(), v.to_string());
                return;
            }
            self.in_env_section = false;
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            self.field_line(line_no, key.trim(), value.trim());
        }
    }

    /// A `Name: value` line.
    fn field_line(&mut self, line_no: usize, key: &str, value: &str) {
        if key == "GPU models and configuration" {
            self.in_gpu_list = true;
            if value.starts_with("GPU ") {
                self.gpu_lines.push((line_no, value.to_string()));
            } else if !value.is_empty() {
                // Single-GPU hosts: torch prints just the name.
                self.gpu_lines.push((line_no, format!("GPU 0: {value}")));
            }
        } else if key == "Caching allocator config" {
            parse_allocator_config(value, &mut self.env_vars);
        }
        if !key.is_empty() && key.len() < 60 {
            self.fields
                .entry(key.to_string())
                .or_insert((line_no, value.to_string()));
        }
    }

    /// A field's value, unless empty, `N/A` or `Could not collect`.
    fn field(&self, k: &str) -> Option<String> {
        self.fields
            .get(k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty() && v != "N/A" && v != "Could not collect")
    }

    /// The version of the first of `names` in the library list.
    fn pkg(&self, names: &[&str]) -> Probed<String> {
        for n in names {
            if let Some(v) = self.pip.get(*n) {
                return Probed::Value(v.clone());
            }
        }
        Probed::skipped(Reason::new(
            ReasonCode::NotInstalled,
            "not installed (not in the library list)",
        ))
    }

    /// The Python stack: versions from the fields, else from the library list.
    fn python_stack(&self) -> PythonStack {
        let vllm = match self.field("vLLM Version") {
            Some(v) => Probed::Value(v.split_whitespace().next().unwrap_or(&v).to_string()),
            None => self.pkg(&["vllm"]),
        };
        let torch = match self.field("PyTorch version") {
            Some(v) => Probed::Value(v),
            None => self.pkg(&["torch"]),
        };
        PythonStack {
            interpreter: None,
            python: self
                .field("Python version")
                .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
                .into(),
            vllm,
            torch,
            torch_cuda: self.field("CUDA used to build PyTorch").into(),
            torch_arch_list: Probed::skipped(not_in_collect_env()),
            triton: self.pkg(&["triton", "pytorch-triton"]),
            flashinfer: self.pkg(&["flashinfer-python", "flashinfer"]),
            deep_gemm: self.pkg(&["deep-gemm", "deep_gemm", "deepgemm"]),
            deep_gemm_build: Probed::skipped(not_in_collect_env()),
            fp8_config_dir: Probed::skipped(not_in_collect_env()),
            fp8_config_files: Probed::skipped(not_in_collect_env()),
            cuda_toolkit: self.field("CUDA runtime version").into(),
        }
    }

    /// The variables listed, and which names the list covers: vLLM's prefixes, or torch's
    /// allocator variables.
    fn environment(&self, is_vllm: bool) -> Probed<Environment> {
        // torch prints "Caching allocator config: N/A" when neither variable is set; older
        // torch prints nothing, and then we cannot tell.
        if !is_vllm && !self.fields.contains_key("Caching allocator config") {
            return Probed::skipped(Reason::new(
                ReasonCode::NotInInput,
                "this collect-env output lists no environment variables",
            ));
        }
        Probed::Value(Environment {
            source: if is_vllm {
                "vllm collect-env".into()
            } else {
                "torch collect_env".into()
            },
            whose: Some(crate::snapshot::EnvOwner::CollectEnv),
            vars: self.env_vars.clone(),
            covers: Some(if is_vllm {
                // What vLLM's collect-env lists in its Environment Variables section.
                crate::snapshot::ENV_PREFIXES
                    .iter()
                    .map(|p| format!("{p}*"))
                    .collect()
            } else {
                crate::vllm::alloc_conf::VARS
                    .iter()
                    .map(|v| v.to_string())
                    .collect()
            }),
        })
    }
}

/// GPU pairs from the topology matrix; without one, none are needed for fewer than two GPUs.
fn gpu_pairs(topo: Option<&Topology>, gpus: usize) -> Probed<Vec<GpuPair>> {
    match topo {
        Some(t) if t.names.len() > crate::snapshot::MAX_PAIR_GPUS as usize => {
            Probed::skipped(crate::snapshot::too_many_gpus_for_pairs(t.names.len()))
        }
        Some(t) => Probed::Value(t.pairs()),
        None if gpus < 2 => Probed::Value(Vec::new()),
        None => Probed::skipped(Reason::new(
            ReasonCode::NotInInput,
            "no GPU topology matrix in the file (torch's collect_env does not print one; vLLM's does)",
        )),
    }
}

/// `{'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True,max_split_size_mb:512'}` or `N/A`.
fn parse_allocator_config(value: &str, env: &mut BTreeMap<String, String>) {
    let v = value.trim().trim_start_matches('{').trim_end_matches('}');
    for part in v.split("', '") {
        let part = part.trim().trim_matches(|c| c == '\'' || c == '"');
        let Some((k, val)) = part.split_once(':') else {
            continue;
        };
        let k = k.trim().trim_matches(|c| c == '\'' || c == '"');
        let val = val
            .trim()
            .trim_matches(|c| c == '\'' || c == '"' || c == ' ');
        if crate::vllm::alloc_conf::VARS.contains(&k) {
            env.insert(
                k.to_string(),
                val.trim_start_matches(['\'', ' ']).to_string(),
            );
        }
    }
}

fn parse_gpus(name: &str, lines: &[(usize, String)]) -> Result<Vec<Gpu>, InputError> {
    let mut gpus = Vec::new();
    for (line_no, l) in lines {
        let rest = l.strip_prefix("GPU ").unwrap_or(l);
        let Some((idx, gpu_name)) = rest.split_once(':') else {
            return Err(InputError::new(
                name,
                *line_no,
                1,
                format!("GPU line without ':' : {l:?}"),
            ));
        };
        let index: u32 = idx.trim().parse().map_err(|_| {
            InputError::new(
                name,
                *line_no,
                5,
                format!("GPU index {:?} is not a number", idx.trim()),
            )
        })?;
        let gpu_name = gpu_name.split(" (UUID").next().unwrap_or(gpu_name).trim();
        if gpu_name.is_empty() {
            return Err(InputError::new(
                name,
                *line_no,
                l.len(),
                "GPU line has no name",
            ));
        }
        let mut g = Gpu::named(index, gpu_name, not_in_collect_env());
        g.compute_capability = match compute_capability_from_name(gpu_name) {
            Some(cc) => Probed::Value(cc),
            None => Probed::skipped(Reason::new(
                ReasonCode::NotInInput,
                format!(
                    "collect-env gives no compute capability and {gpu_name:?} is not in the name table"
                ),
            )),
        };
        gpus.push(g);
    }
    Ok(gpus)
}

/// `nvidia-smi topo -m` as printed on its own or under vLLM's `GPU Topology:`.
struct Topology {
    names: Vec<String>,
    cells: Vec<Vec<String>>,
}

impl Topology {
    fn pairs(&self) -> Vec<GpuPair> {
        let mut out = Vec::new();
        for a in 0..self.names.len() {
            for b in a + 1..self.names.len() {
                let level = self.cells[a][b].clone();
                let nvlink = level.starts_with("NV");
                out.push(GpuPair {
                    a: a as u32,
                    b: b as u32,
                    topology: Probed::Value(level),
                    // NVLink implies P2P; over PCIe the matrix does not say.
                    p2p: if nvlink {
                        Probed::Value(true)
                    } else {
                        Probed::skipped(Reason::new(
                            ReasonCode::NotInInput,
                            "topology matrix does not show PCIe P2P (see `nvidia-smi topo -p2p r`)",
                        ))
                    },
                    nvlink: Probed::Value(nvlink),
                });
            }
        }
        out
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for n in chars.by_ref() {
                if n.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_topology_header(line: &str) -> bool {
    let clean = strip_ansi(line);
    let mut words = clean.split_whitespace();
    words.next() == Some("GPU0")
        && words
            .next()
            .is_some_and(|w| w.starts_with("GPU") || w == "CPU" || w.starts_with("NIC"))
}

/// Parse the matrix starting at `start`; returns it and how many lines it used.
fn parse_topology(
    name: &str,
    lines: &[&str],
    start: usize,
) -> Result<(Topology, usize), InputError> {
    let header = strip_ansi(lines[start]);
    let names: Vec<String> = header
        .split_whitespace()
        .take_while(|w| w.starts_with("GPU"))
        .map(str::to_string)
        .collect();
    let n = names.len();
    let mut cells = Vec::new();
    // Too many GPUs to record pairs for: the rows are still checked, but no cell is kept.
    let keep = n <= crate::snapshot::MAX_PAIR_GPUS as usize;
    for (k, row_name) in names.iter().enumerate() {
        let line_no = start + k + 2;
        let Some(row) = lines.get(start + 1 + k) else {
            return Err(InputError::new(
                name,
                line_no,
                1,
                format!("topology matrix ends early: expected a row for {row_name}"),
            ));
        };
        let row = strip_ansi(row);
        let words: Vec<&str> = row.split_whitespace().collect();
        if words.first() != Some(&row_name.as_str()) {
            return Err(InputError::new(
                name,
                line_no,
                1,
                format!(
                    "topology matrix: expected row {row_name}, found {:?}",
                    words.first().unwrap_or(&"")
                ),
            ));
        }
        if words.len() < n + 1 {
            return Err(InputError::new(
                name,
                line_no,
                row.len() + 1,
                format!(
                    "topology matrix row {row_name} has {} cells, expected {n}",
                    words.len() - 1
                ),
            ));
        }
        if keep {
            cells.push(words[1..=n].iter().map(|w| w.to_string()).collect());
        }
    }
    Ok((Topology { names, cells }, n + 1))
}

/// The kernel release from Python's `platform.platform()`:
/// `Linux-<release>-<machine>-with-<libc>` on any architecture (x86_64, aarch64, …).
fn kernel_from_platform(p: &str) -> Option<String> {
    let rest = p.strip_prefix("Linux-")?;
    let before_libc = rest.split_once("-with-").map_or(rest, |(a, _)| a);
    // The machine is the last dash-separated part; the release itself may contain dashes.
    let kernel = before_libc
        .rsplit_once('-')
        .filter(|(_, machine)| !machine.is_empty() && !machine.contains('.'))
        .map_or(before_libc, |(k, _)| k);
    Some(kernel.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_release_on_x86_64_and_aarch64() {
        assert_eq!(
            kernel_from_platform("Linux-6.18.44-fc-v657-gpu-x86_64-with-glibc2.39").as_deref(),
            Some("6.18.44-fc-v657-gpu")
        );
        // DGX Spark (GB10) runs an aarch64 kernel.
        assert_eq!(
            kernel_from_platform("Linux-6.11.0-1016-nvidia-aarch64-with-glibc2.39").as_deref(),
            Some("6.11.0-1016-nvidia")
        );
        assert_eq!(kernel_from_platform("Darwin-23.0.0-arm64-i386-64bit"), None);
    }

    #[test]
    fn compute_capability_table() {
        assert_eq!(
            compute_capability_from_name("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")
                .map(|c| c.major),
            Some(12)
        );
        assert_eq!(
            compute_capability_from_name("NVIDIA GeForce RTX 5090").map(|c| c.major),
            Some(12)
        );
        assert_eq!(
            compute_capability_from_name("NVIDIA H200").map(|c| c.major),
            Some(9)
        );
        assert_eq!(
            compute_capability_from_name("NVIDIA B200").map(|c| c.major),
            Some(10)
        );
        assert_eq!(
            compute_capability_from_name("NVIDIA GB10").map(|c| (c.major, c.minor)),
            Some((12, 1))
        );
        assert_eq!(compute_capability_from_name("Some Future GPU"), None);
    }

    #[test]
    fn allocator_config_line() {
        let mut env = BTreeMap::new();
        parse_allocator_config(
            "{'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True,max_split_size_mb:512'}",
            &mut env,
        );
        assert_eq!(
            env.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
            Some("expandable_segments:True,max_split_size_mb:512")
        );
        let mut env = BTreeMap::new();
        parse_allocator_config("N/A", &mut env);
        assert!(env.is_empty());
    }

    #[test]
    fn minimal_vllm_collect_env_with_topology() {
        let text = "==============================\n        System Info\n==============================\nOS                           : Ubuntu 24.04.4 LTS (x86_64)\nPyTorch version              : 2.11.0+cu130\nGPU models and configuration : \nGPU 0: NVIDIA RTX PRO 6000 Blackwell Workstation Edition\nGPU 1: NVIDIA RTX PRO 6000 Blackwell Workstation Edition\n\nNvidia driver version        : 595.71.05\n[pip3] triton==3.6.0\nvLLM Version                 : 0.24.0\nGPU Topology:\n  \tGPU0\tGPU1\tCPU Affinity\n GPU0\t X \tPHB\t0-31\nGPU1\tPHB\t X \t0-31\n==============================\nEnvironment Variables\n==============================\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nCUDA_HOME=/usr/local/cuda-13.0\n";
        let s = parse("t.txt", text).expect("parses");
        let gpus = s.gpus.value().expect("gpus");
        assert_eq!(gpus.len(), 2);
        assert_eq!(
            gpus[1].compute_capability.value().map(|c| c.major),
            Some(12)
        );
        let pairs = s.gpu_pairs.value().expect("pairs");
        assert_eq!(pairs[0].topology.value().map(String::as_str), Some("PHB"));
        assert_eq!(pairs[0].nvlink.value(), Some(&false));
        let env = s.env.value().expect("env");
        assert_eq!(
            env.vars.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
            Some("expandable_segments:True")
        );
        assert!(env.covers("VLLM_USE_DEEP_GEMM"));
        assert!(!env.covers("HF_TOKEN"));
        assert_eq!(
            s.python
                .value()
                .and_then(|p| p.vllm.value().cloned())
                .as_deref(),
            Some("0.24.0")
        );
        assert_eq!(
            s.python
                .value()
                .and_then(|p| p.triton.value().cloned())
                .as_deref(),
            Some("3.6.0")
        );
    }

    #[test]
    fn not_collect_env_is_rejected_at_line_one() {
        let e = parse("x.txt", "hello\nworld\n").expect_err("rejects");
        assert_eq!((e.line, e.column), (1, 1));
    }

    #[test]
    fn bad_gpu_index_names_the_line() {
        let e = parse(
            "x.txt",
            "PyTorch version: 2.11\nGPU models and configuration:\nGPU x: NVIDIA H200\n",
        )
        .expect_err("rejects");
        assert_eq!(e.line, 3, "{e}");
    }
}
