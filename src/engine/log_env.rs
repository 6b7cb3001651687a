//! What a given log says about its own run's environment (the PyTorch build, its arch list, the
//! vLLM version, the GPU), and where that differs from the host snapshot.
//!
//! A log is evidence about the run that failed; the snapshot is evidence about this host. A
//! log is often made elsewhere (a colleague's box, a container) or before an upgrade, so when
//! the two disagree the log's value decides that log's diagnosis, and each finding that used
//! it carries a [`HostDifference`] that every front end words its own way.
//!
//! The wordings read here are the ones upstream prints; each extractor names its source.

use super::classify::LogText;
use super::classify::normalise;
use crate::facts::{Fact, Facts};
use crate::value::Value;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// A fact about the log's run that a log can state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunFact {
    /// The PyTorch version.
    Torch,
    /// The CUDA version PyTorch was built with.
    TorchCuda,
    /// The CUDA capabilities the PyTorch build carries code for (`sm_50 … sm_90`).
    TorchArchList,
    /// The highest CUDA capability the PyTorch build supports (`(8.0) - (9.0)`).
    TorchMaxCapability,
    /// The vLLM version.
    Vllm,
    /// A GPU the run used, by name.
    Gpu,
}

impl RunFact {
    /// The host facts this statement decides for the log's diagnosis.
    fn facts(self) -> &'static [&'static str] {
        match self {
            RunFact::Torch => &["python.torch"],
            RunFact::TorchCuda => &["python.torch_cuda"],
            RunFact::TorchArchList => &[
                "python.torch_arch_list",
                "python.torch_arch_list_known",
                "python.torch_has_sm120",
            ],
            RunFact::TorchMaxCapability => &["python.torch_has_sm120"],
            RunFact::Vllm => &["python.vllm"],
            // The host's GPU facts count GPUs, pairs and memory the log does not show: the
            // difference is said, the host's GPU facts stay.
            RunFact::Gpu => &[],
        }
    }

    /// Part of the PyTorch build: one differing makes the host's other torch facts another
    /// install's.
    fn is_torch(self) -> bool {
        matches!(
            self,
            RunFact::Torch
                | RunFact::TorchCuda
                | RunFact::TorchArchList
                | RunFact::TorchMaxCapability
        )
    }
}

/// One statement a log makes about its run.
#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    pub what: RunFact,
    /// As the log prints it (an arch list joined by spaces).
    pub value: String,
    /// The log's name, as its matched lines name it.
    pub file: String,
    /// The log as sources name it ("log file run.log").
    pub label: String,
    pub line: usize,
}

/// Where the log's run and this host differ: the log decides that log's diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostDifference {
    pub what: RunFact,
    /// The log's value.
    pub in_log: String,
    /// This host's value, from the snapshot.
    pub on_host: String,
    /// The log line that states it.
    pub file: String,
    pub line: usize,
}

/// One wording upstream prints: the value is the regex's first group.
struct Extractor {
    what: RunFact,
    /// A literal every matching line holds (tried before the regex).
    needle: &'static str,
    regex: &'static LazyLock<Regex>,
}

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($pat).expect("a fixed pattern compiles"));
    };
}

// torch/utils/collect_env.py and vllm/collect_env.py: "PyTorch version: {}".
re!(COLLECT_TORCH, r"^PyTorch version: (\d[\w.+-]*)");
// pip freeze / pip list --format=freeze: "torch==2.5.1".
re!(PIP_TORCH, r"^torch==(\d[\w.+-]*)\s*$");
// torch 2.15 torch/cuda/__init__.py (_warn_unsupported_code): "Your installed torch==… does not
// include kernels for this GPU".
re!(WARN_TORCH, r"installed torch==(\d[\w.+-]*)");
// torch/utils/collect_env.py: "CUDA used to build PyTorch: 12.4".
re!(
    COLLECT_TORCH_CUDA,
    r"^CUDA used to build PyTorch: (\d+\.\d+)"
);
// torch/cuda/__init__.py (_check_capability): "The current PyTorch install supports CUDA
// capabilities sm_50 sm_60 … sm_90."
re!(
    WARN_ARCHS,
    r"The current PyTorch install supports CUDA capabilities ((?:(?:sm|compute)_\d+a? ?)+)"
);
// torch.cuda.get_arch_list() printed: "['sm_50', 'sm_60', …]".
re!(PRINTED_ARCHS, r"^\[((?:'(?:sm|compute)_\d+a?',? ?)+)\]\s*$");
// torch 2.8+ torch/cuda/__init__.py (_check_capability): "Minimum and Maximum cuda capability
// supported by this version of PyTorch is (8.0) - (12.0)".
re!(
    WARN_MAX_CC,
    r"Maximum cuda capability supported by this version of PyTorch is \([0-9.]+\) - \(([0-9]+\.[0-9])\)"
);
// vllm/v1/engine/core.py: "Initializing a V1 LLM engine (v0.10.1) with config: …".
re!(
    VLLM_ENGINE,
    r"Initializing a V1 LLM engine \(v(\d[\w.+-]*)\)"
);
// vllm/entrypoints/openai/api_server.py: "vLLM API server version 0.10.1".
re!(VLLM_SERVER, r"vLLM API server version (\d[\w.+-]*)");
// vllm/collect_env.py: "vLLM Version: 0.10.1"; pip freeze: "vllm==0.10.1".
re!(COLLECT_VLLM, r"^(?:vLLM Version: |vllm==)(\d[\w.+-]*)");
// torch/cuda/__init__.py (_check_capability): "NVIDIA GeForce RTX 5090 with CUDA capability
// sm_120 is not compatible with the current PyTorch installation."
re!(
    WARN_GPU,
    r"(NVIDIA [\w .-]+?) with CUDA capability sm_\d+ is not compatible"
);
// torch/cuda/__init__.py (_check_capability): "Found GPU0 NVIDIA GB10 which is of cuda capability 12.1."
re!(FOUND_GPU, r"Found GPU\d+ (.+?) which is of cuda capability");
// torch/utils/collect_env.py ("GPU models and configuration: GPU 0: NVIDIA H100 80GB HBM3") and
// nvidia-smi -L ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)").
re!(LISTED_GPU, r"^GPU \d+: (NVIDIA [^(]+?)\s*(?:\(UUID:.*)?$");

static EXTRACTORS: &[Extractor] = &[
    Extractor {
        what: RunFact::Torch,
        needle: "PyTorch version: ",
        regex: &COLLECT_TORCH,
    },
    Extractor {
        what: RunFact::Torch,
        needle: "torch==",
        regex: &PIP_TORCH,
    },
    Extractor {
        what: RunFact::Torch,
        needle: "installed torch==",
        regex: &WARN_TORCH,
    },
    Extractor {
        what: RunFact::TorchCuda,
        needle: "CUDA used to build PyTorch: ",
        regex: &COLLECT_TORCH_CUDA,
    },
    Extractor {
        what: RunFact::TorchArchList,
        needle: "supports CUDA capabilities ",
        regex: &WARN_ARCHS,
    },
    Extractor {
        what: RunFact::TorchArchList,
        needle: "'sm_",
        regex: &PRINTED_ARCHS,
    },
    Extractor {
        what: RunFact::TorchMaxCapability,
        needle: "Maximum cuda capability",
        regex: &WARN_MAX_CC,
    },
    Extractor {
        what: RunFact::Vllm,
        needle: "LLM engine (v",
        regex: &VLLM_ENGINE,
    },
    Extractor {
        what: RunFact::Vllm,
        needle: "vLLM API server version ",
        regex: &VLLM_SERVER,
    },
    Extractor {
        what: RunFact::Vllm,
        needle: "vLLM Version: ",
        regex: &COLLECT_VLLM,
    },
    Extractor {
        what: RunFact::Vllm,
        needle: "vllm==",
        regex: &COLLECT_VLLM,
    },
    Extractor {
        what: RunFact::Gpu,
        needle: "with CUDA capability sm_",
        regex: &WARN_GPU,
    },
    Extractor {
        what: RunFact::Gpu,
        needle: "Found GPU",
        regex: &FOUND_GPU,
    },
    Extractor {
        what: RunFact::Gpu,
        needle: "GPU ",
        regex: &LISTED_GPU,
    },
];

/// What the logs state about their run: the first statement of each kind (and each GPU name
/// once), in log order. `labels` name the logs as sources do.
pub fn read(logs: &[LogText], labels: &[String]) -> Vec<Stated> {
    let mut out: Vec<Stated> = Vec::new();
    for (log, label) in logs.iter().zip(labels) {
        for (i, raw) in log.text.lines().enumerate() {
            if !EXTRACTORS.iter().any(|e| raw.contains(e.needle)) {
                continue;
            }
            let line = normalise::strip_prefixes(raw)
                .0
                .trim_start_matches('`')
                .trim();
            for e in EXTRACTORS.iter().filter(|e| raw.contains(e.needle)) {
                let Some(value) = e.regex.captures(line).and_then(|c| c.get(1)) else {
                    continue;
                };
                let value = tidy(e.what, value.as_str());
                let seen = out.iter().any(|s| {
                    s.what == e.what && (e.what != RunFact::Gpu || same_gpu(&s.value, &value))
                });
                if !seen {
                    out.push(Stated {
                        what: e.what,
                        value,
                        file: log.name.clone(),
                        label: label.clone(),
                        line: i + 1,
                    });
                }
            }
        }
    }
    out
}

/// The value as compared and shown: an arch list as `sm_50 sm_60`, others trimmed.
fn tidy(what: RunFact, v: &str) -> String {
    match what {
        RunFact::TorchArchList => v
            .split(|c: char| c == ',' || c == '\'' || c.is_whitespace())
            .filter(|a| !a.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        _ => v.trim().trim_end_matches('.').to_string(),
    }
}

/// GPU names compared without the vendor prefix, case and spacing.
fn same_gpu(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        s.to_ascii_lowercase()
            .trim_start_matches("nvidia ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    key(a) == key(b)
}

/// A version compared on its release part when only one side names a build (`2.5.1` is
/// `2.5.1+cu124`).
fn same_version(a: &str, b: &str) -> bool {
    let base = |s: &str| s.split('+').next().unwrap_or(s).to_string();
    if a.contains('+') && b.contains('+') {
        a == b
    } else {
        base(a) == base(b)
    }
}

/// The host's value of a statement's kind, as a string, when the snapshot knows it.
fn on_host(what: RunFact, facts: &Facts) -> Option<String> {
    let text = |v: Value| match v {
        Value::Str(s) => Some(s),
        Value::List(l) => Some(
            l.iter()
                .map(|x| match x {
                    Value::Str(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    };
    match what {
        RunFact::Torch => text(facts.get("python.torch").value),
        RunFact::TorchCuda => text(facts.get("python.torch_cuda").value),
        RunFact::TorchArchList => text(facts.get("python.torch_arch_list").value),
        RunFact::TorchMaxCapability => match facts.get("python.torch_has_sm120").value {
            Value::Bool(true) => Some("12.0 or higher (sm_120 in its arch list)".into()),
            Value::Bool(false) => Some("below 12.0 (no sm_120 in its arch list)".into()),
            _ => None,
        },
        RunFact::Vllm => text(facts.get("python.vllm").value),
        RunFact::Gpu => match facts.get("gpu.names").value {
            Value::List(l) if !l.is_empty() => Some(
                l.iter()
                    .map(|x| match x {
                        Value::Str(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            _ => None,
        },
    }
}

/// Does the log's value differ from the host's?
fn differs(what: RunFact, log: &str, host: &str) -> bool {
    match what {
        RunFact::Torch | RunFact::Vllm => !same_version(log, host),
        RunFact::TorchCuda => log != host,
        RunFact::TorchArchList => set_of(log) != set_of(host),
        RunFact::TorchMaxCapability => supports_sm120(log) != host.starts_with("12.0 or higher"),
        RunFact::Gpu => !host.split(", ").any(|h| same_gpu(h, log)),
    }
}

/// The words of a list, sorted, each once.
fn set_of(s: &str) -> Vec<&str> {
    let mut v: Vec<&str> = s.split_whitespace().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A highest capability of 12.0 or above carries sm_120 code.
fn supports_sm120(max_cc: &str) -> bool {
    max_cc.parse::<f64>().is_ok_and(|v| v >= 12.0)
}

/// An arch list carries sm_120 code (sm_120, sm_120a or compute_120 PTX).
fn arch_list_has_sm120(list: &str) -> bool {
    list.split_whitespace()
        .any(|a| a == "sm_120" || a == "sm_120a" || a == "compute_120")
}

/// Put the logs' statements into the facts the walks read (the log decides its own run), and
/// return where they differ from what the snapshot says about this host. When the log's
/// PyTorch differs from the host's in one respect, the host's other PyTorch facts belong to
/// another install: they become unknown rather than mixed with the log's.
pub fn apply(facts: &mut Facts, stated: &[Stated]) -> Vec<HostDifference> {
    let mut differences = Vec::new();
    for s in stated {
        if let Some(host) = on_host(s.what, facts)
            && differs(s.what, &s.value, &host)
        {
            differences.push(HostDifference {
                what: s.what,
                in_log: s.value.clone(),
                on_host: host,
                file: s.file.clone(),
                line: s.line,
            });
        }
    }
    let torch_differs = differences.iter().any(|d| d.what.is_torch());
    if torch_differs {
        for name in [
            "python.torch",
            "python.torch_cuda",
            "python.torch_arch_list",
            "python.torch_arch_list_known",
            "python.torch_has_sm120",
        ] {
            let stated_here = stated
                .iter()
                .any(|s| s.what.is_torch() && s.what.facts().contains(&name));
            if !stated_here {
                facts.set(
                    name,
                    Fact::unknown("not in the log, and its PyTorch is not this host's"),
                );
            }
        }
    }
    for s in stated {
        let at = format!("{}:{} (the log's run)", s.label, s.line);
        for &name in s.what.facts() {
            let value = match (s.what, name) {
                (RunFact::TorchArchList, "python.torch_arch_list") => Value::List(
                    s.value
                        .split_whitespace()
                        .map(|a| Value::Str(a.into()))
                        .collect(),
                ),
                (RunFact::TorchArchList, "python.torch_arch_list_known") => Value::Bool(true),
                (RunFact::TorchArchList, "python.torch_has_sm120") => {
                    Value::Bool(arch_list_has_sm120(&s.value))
                }
                (RunFact::TorchMaxCapability, _) => Value::Bool(supports_sm120(&s.value)),
                (RunFact::TorchCuda, _) => Value::Str(s.value.clone()),
                _ => Value::Str(s.value.clone()),
            };
            // An arch list decides sm_120 support before a capability range does.
            if s.what == RunFact::TorchMaxCapability
                && stated.iter().any(|o| o.what == RunFact::TorchArchList)
            {
                continue;
            }
            facts.set(name, Fact::new(value, at.clone()));
        }
    }
    // A version's local part names its CUDA build (2.5.1+cu124 is CUDA 12.4).
    if let Some(cuda) = stated
        .iter()
        .find(|s| s.what == RunFact::Torch)
        .and_then(|s| cuda_of(&s.value).map(|c| (c, s)))
        .filter(|_| !stated.iter().any(|s| s.what == RunFact::TorchCuda))
    {
        let (c, s) = cuda;
        facts.set(
            "python.torch_cuda",
            Fact::new(
                Value::Str(c),
                format!("{}:{} (the log's run)", s.label, s.line),
            ),
        );
    }
    differences
}

/// `2.5.1+cu124` → `12.4`.
fn cuda_of(version: &str) -> Option<String> {
    let local = version.split('+').nth(1)?;
    let digits = local.strip_prefix("cu")?;
    if digits.len() < 3 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some(format!("{major}.{minor}"))
}

/// The differences a finding rests on: those that decided a fact its walk used, and the GPU
/// the log names when the finding quotes that log.
pub(crate) fn differences_for<'d>(
    all: &'d [HostDifference],
    facts_used: &[String],
    quoted_files: &[&str],
) -> Vec<&'d HostDifference> {
    all.iter()
        .filter(|d| {
            d.what
                .facts()
                .iter()
                .any(|f| facts_used.iter().any(|u| u == f))
                || (d.what == RunFact::Gpu && quoted_files.contains(&d.file.as_str()))
        })
        .collect()
}

/// The fact in words, for a front end ("PyTorch", "the GPU").
pub(crate) fn what_words(w: RunFact) -> &'static str {
    match w {
        RunFact::Torch => "torch",
        RunFact::TorchCuda => "torch's CUDA build",
        RunFact::TorchArchList => "torch's CUDA arch list",
        RunFact::TorchMaxCapability => "torch's highest supported CUDA capability",
        RunFact::Vllm => "vLLM",
        RunFact::Gpu => "GPU",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(text: &str) -> Vec<LogText> {
        vec![LogText {
            name: "run.log".into(),
            text: text.into(),
        }]
    }

    fn facts(torch: &str, archs: &[&str]) -> Facts {
        let mut f = Facts::default();
        f.set("python.torch", Fact::new(Value::Str(torch.into()), "host"));
        f.set(
            "python.torch_cuda",
            Fact::new(Value::Str("12.8".into()), "host"),
        );
        f.set(
            "python.torch_arch_list",
            Fact::new(
                Value::List(archs.iter().map(|a| Value::Str((*a).into())).collect()),
                "host",
            ),
        );
        f.set(
            "python.torch_arch_list_known",
            Fact::new(Value::Bool(true), "host"),
        );
        f.set(
            "python.torch_has_sm120",
            Fact::new(Value::Bool(archs.contains(&"sm_120")), "host"),
        );
        f.set(
            "gpu.names",
            Fact::new(
                Value::List(vec![Value::Str(
                    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition".into(),
                )]),
                "host",
            ),
        );
        f
    }

    const OLD_TORCH_WARNING: &str = "\
NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.
The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.
";

    #[test]
    fn the_logs_old_torch_beats_the_hosts_new_one_and_says_so() {
        let labels = vec!["log file run.log".to_string()];
        let stated = read(&log(OLD_TORCH_WARNING), &labels);
        let kinds: Vec<RunFact> = stated.iter().map(|s| s.what).collect();
        assert_eq!(kinds, [RunFact::Gpu, RunFact::TorchArchList]);
        let mut f = facts("2.9.0+cu128", &["sm_90", "sm_100", "sm_120"]);
        let diff = apply(&mut f, &stated);
        assert_eq!(f.get("python.torch_has_sm120").value, Value::Bool(false));
        assert!(f.get("python.torch_has_sm120").source.contains("run.log:2"));
        // The host's torch version is another install's now: not mixed with the log's list.
        assert!(matches!(f.get("python.torch").value, Value::Unknown(_)));
        let whats: Vec<RunFact> = diff.iter().map(|d| d.what).collect();
        assert_eq!(whats, [RunFact::Gpu, RunFact::TorchArchList]);
        assert_eq!(diff[1].in_log, "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
        assert_eq!(diff[1].on_host, "sm_90 sm_100 sm_120");
        assert_eq!((diff[1].file.as_str(), diff[1].line), ("run.log", 2));
    }

    #[test]
    fn a_log_that_agrees_with_the_host_changes_nothing() {
        let labels = vec!["l".to_string()];
        let text = "PyTorch version: 2.9.0+cu128\nINFO 01-01 00:00:00 [core.py:1] Initializing a V1 LLM engine (v0.24.0) with config: model='m'\n";
        let stated = read(&log(text), &labels);
        assert_eq!(stated.len(), 2);
        let mut f = facts("2.9.0+cu128", &["sm_120"]);
        f.set(
            "python.vllm",
            Fact::new(Value::Str("0.24.0".into()), "host"),
        );
        assert!(apply(&mut f, &stated).is_empty());
        assert_eq!(f.get("python.torch_has_sm120").value, Value::Bool(true));
    }

    #[test]
    fn versions_gpus_and_cuda_builds_are_compared_as_written() {
        assert!(same_version("2.5.1", "2.5.1+cu124"));
        assert!(!same_version("2.5.1+cu121", "2.5.1+cu124"));
        assert!(!same_version("2.5.1", "2.9.0"));
        assert!(same_gpu("NVIDIA GeForce RTX 5090", "geforce  rtx 5090"));
        assert_eq!(cuda_of("2.5.1+cu124").as_deref(), Some("12.4"));
        assert_eq!(cuda_of("2.9.0+cu130").as_deref(), Some("13.0"));
        assert_eq!(cuda_of("2.9.0"), None);
        assert!(supports_sm120("12.0") && !supports_sm120("9.0"));
        // A printed get_arch_list() is an arch list too.
        let stated = read(&log("['sm_50', 'sm_60', 'sm_90']\n"), &["l".to_string()]);
        assert_eq!(stated[0].value, "sm_50 sm_60 sm_90");
    }

    #[test]
    fn a_different_torch_version_fills_in_its_cuda_build() {
        let stated = read(&log("PyTorch version: 2.5.1+cu124\n"), &["l".to_string()]);
        let mut f = facts("2.9.0+cu128", &["sm_120"]);
        let diff = apply(&mut f, &stated);
        assert_eq!(diff.len(), 1);
        assert_eq!(diff[0].what, RunFact::Torch);
        assert_eq!(f.get("python.torch_cuda").value, Value::Str("12.4".into()));
        assert!(matches!(
            f.get("python.torch_has_sm120").value,
            Value::Unknown(_)
        ));
    }
}
