//! Facts: the named, flat view of a [`HostSnapshot`] that knowledge-base checks read.
//!
//! This module derives values (counts, the allocator config in effect, ...) but judges nothing.
//! Each fact carries where it came from so the user can see why the tool answered as it did.

use crate::snapshot::{HostSnapshot, Launch, Probed};
use crate::value::Value;
use std::collections::BTreeMap;

/// Every fact name a check may use, with what it means. `env.NAME` and `launch.flag.NAME` are open.
pub const CATALOGUE: &[(&str, &str)] = &[
    ("gpu.count", "number of GPUs seen"),
    ("gpu.names", "GPU names, in index order"),
    ("gpu.first_name", "name of GPU 0"),
    (
        "gpu.device_name",
        "GPU 0's name as vLLM spells it in config file names (spaces → _)",
    ),
    (
        "gpu.device_names",
        "GPU names as vLLM spells them in config file names (spaces → _)",
    ),
    (
        "gpu.any_sm12x",
        "some GPU has compute capability 12.x (SM120/SM121)",
    ),
    ("gpu.all_sm12x", "every GPU has compute capability 12.x"),
    ("gpu.cc_list", "compute capabilities, e.g. [12.0, 12.0]"),
    (
        "gpu.cc_max",
        "highest compute capability as a number, e.g. 12",
    ),
    ("gpu.memory_total_mib_min", "smallest GPU memory in MiB"),
    ("gpu.persistence_all", "persistence mode on for every GPU"),
    ("topology.pairs", "number of GPU pairs"),
    (
        "topology.all_nvlink",
        "every GPU pair is connected by NVLink",
    ),
    ("topology.all_p2p", "every GPU pair can do P2P"),
    (
        "topology.levels",
        "topology level of each pair (NV#, PIX, PXB, PHB, NODE, SYS)",
    ),
    ("driver.version", "NVIDIA driver version"),
    ("driver.major", "driver branch as a number, e.g. 595"),
    ("driver.cuda", "CUDA version the driver supports, e.g. 13.0"),
    ("driver.open_module", "the open GPU kernel module is loaded"),
    ("env.source", "whose environment the env.* facts come from"),
    (
        "alloc.var",
        "which allocator variable is in effect: PYTORCH_CUDA_ALLOC_CONF or PYTORCH_ALLOC_CONF",
    ),
    ("alloc.conf", "the allocator config string in effect"),
    (
        "alloc.expandable_segments",
        "expandable_segments:True is in the allocator config in effect",
    ),
    (
        "alloc.masked_alloc_conf",
        "PYTORCH_ALLOC_CONF is set but masked by a set PYTORCH_CUDA_ALLOC_CONF",
    ),
    ("python.version", "Python version"),
    ("python.vllm", "vLLM version (null when not installed)"),
    ("python.torch", "PyTorch version"),
    ("python.torch_cuda", "CUDA version PyTorch was built with"),
    ("python.torch_arch_list", "torch.cuda.get_arch_list()"),
    (
        "python.torch_arch_list_known",
        "torch's arch list was collected",
    ),
    (
        "python.torch_has_sm120",
        "torch's arch list contains sm_120",
    ),
    ("python.triton", "Triton version"),
    ("python.flashinfer", "FlashInfer version"),
    ("python.deep_gemm", "DeepGEMM version"),
    ("python.cuda_toolkit", "CUDA toolkit (nvcc) version"),
    (
        "python.fp8_config_dir",
        "vLLM's tuned W8A8 block-FP8 config folder",
    ),
    ("python.fp8_config_files", "file names in that folder"),
    ("os.name", "operating system"),
    ("os.kernel", "kernel version"),
    ("launch.given", "a launch command was given"),
    ("launch.entrypoint", "vllm serve or python -m ..."),
    ("launch.model", "model name or path"),
    ("launch.model_lower", "model name in lower case"),
    ("launch.tp", "tensor-parallel size (1 when not given)"),
    ("launch.pp", "pipeline-parallel size (1 when not given)"),
    ("launch.dp", "data-parallel size (1 when not given)"),
    ("launch.enforce_eager", "--enforce-eager given"),
    (
        "launch.disable_custom_all_reduce",
        "--disable-custom-all-reduce given",
    ),
    (
        "launch.cudagraph_mode",
        "cudagraph_mode given in the compilation config (null: vLLM's default)",
    ),
    (
        "launch.cuda_graphs",
        "CUDA graphs will be captured (no --enforce-eager, mode not NONE)",
    ),
    ("launch.quantization", "--quantization"),
    ("launch.gpu_memory_utilization", "--gpu-memory-utilization"),
    ("launch.max_model_len", "--max-model-len"),
    (
        "model.type_hint",
        "model family guessed from the model name (deepseek_v4, deepseek_v32, deepseek_v3, qwen3_5, ...; null: no guess)",
    ),
    (
        "model.fp8",
        "the model name says FP8, --quantization fp8 is given, or the name is a DeepSeek V3/V3.2/V4 checkpoint (shipped as block FP8)",
    ),
    (
        "model.sparse_attention",
        "the model name is a DeepSeek sparse-attention (DSA) model: V3.2 or V4",
    ),
    (
        "fp8.dense_config_name",
        "dense W8A8 block-FP8 config file name vLLM looks up for GPU 0 (<N>,<K> from the layer shape)",
    ),
    (
        "fp8.moe_config_name",
        "fused-MoE FP8 config file name vLLM looks up for GPU 0 (<E>,<N> from the model)",
    ),
    (
        "fp8.configs_listed",
        "the installed vLLM's FP8 config folder was listed",
    ),
    (
        "fp8.own_configs",
        "files in that folder for GPU 0's device name",
    ),
    (
        "fp8.sibling_device_names",
        "other SKUs of the same chip (RTX PRO 6000 Workstation / Max-Q / Server are one GB202)",
    ),
    (
        "fp8.sibling_configs",
        "files in that folder for a sibling SKU of GPU 0",
    ),
    (
        "fp8.alias_commands",
        "ln -s commands (run in the config folder) that alias each sibling config to GPU 0's name",
    ),
    (
        "fp8.alias_script",
        "one shell line: cd to the config folder and run every alias command (null: nothing to alias)",
    ),
    ("processes.count", "GPU compute processes running"),
    (
        "processes.orphans",
        "GPU processes of vLLM whose server is gone",
    ),
    ("processes.orphan_pids", "their PIDs"),
    ("processes.orphan_memory_mib", "GPU memory they hold, MiB"),
    ("logs.given", "at least one log was given"),
    (
        "probe.ran",
        "the allocator/IPC probe ran on this host (torch or native path)",
    ),
    (
        "probe.engine_alloc_conf",
        "allocator config the probe used as the engine's (null: unset)",
    ),
    (
        "probe.ipc_engine_config_ok",
        "torch memory under the engine's allocator config was exported through legacy CUDA IPC",
    ),
    (
        "probe.ipc_default_ok",
        "memory without expandable segments (torch default/remedy, native cuMemAlloc) was exported through legacy IPC",
    ),
    (
        "probe.ipc_expandable_ok",
        "memory from expandable segments (torch expandable_segments:True, native VMM) was exported through legacy IPC",
    ),
    (
        "probe.remedy_ok",
        "torch memory with expandable segments switched off (the remedy) was exported through legacy IPC",
    ),
];

/// Is `name` a fact a check may use?
pub fn is_known_fact(name: &str) -> bool {
    CATALOGUE.iter().any(|(n, _)| *n == name)
        || name.strip_prefix("env.").is_some_and(|v| !v.is_empty())
        || name
            .strip_prefix("launch.flag.")
            .is_some_and(|v| !v.is_empty())
}

/// A fact's value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub value: Value,
    pub source: String,
}

/// All facts of one snapshot (plus whether logs were given).
#[derive(Debug, Clone, Default)]
pub struct Facts {
    map: BTreeMap<String, Fact>,
    /// The effective environment when known, for open `env.*` lookups.
    env: Option<crate::snapshot::Environment>,
    env_reason: String,
    env_source: String,
    launch_env: BTreeMap<String, String>,
    flags: Option<BTreeMap<String, String>>,
}

impl Facts {
    pub fn get(&self, name: &str) -> Fact {
        if let Some(f) = self.map.get(name) {
            return f.clone();
        }
        if let Some(var) = name.strip_prefix("env.") {
            return self.env_var(var);
        }
        if let Some(flag) = name.strip_prefix("launch.flag.") {
            return match &self.flags {
                Some(flags) => Fact {
                    value: flags
                        .get(flag)
                        .map(|v| Value::Str(v.clone()))
                        .unwrap_or(Value::Null),
                    source: "launch command".into(),
                },
                None => Fact {
                    value: Value::Unknown("no launch command given".into()),
                    source: String::new(),
                },
            };
        }
        Fact {
            value: Value::Unknown(format!("no fact named {name}")),
            source: String::new(),
        }
    }

    fn env_var(&self, var: &str) -> Fact {
        if let Some(v) = self.launch_env.get(var) {
            return Fact {
                value: Value::Str(v.clone()),
                source: "launch command".into(),
            };
        }
        match &self.env {
            Some(env) if env.covers(var) => Fact {
                value: env
                    .vars
                    .get(var)
                    .map(|v| Value::Str(v.clone()))
                    .unwrap_or(Value::Null),
                source: self.env_source.clone(),
            },
            Some(env) => Fact {
                value: Value::Unknown(format!("{} does not list {var}", env.source)),
                source: String::new(),
            },
            None => Fact {
                value: Value::Unknown(self.env_reason.clone()),
                source: String::new(),
            },
        }
    }

    /// Every fact with a fixed name, for display (`kb facts`, reports, the TUI).
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Fact)> {
        self.map.iter()
    }

    fn set(&mut self, name: &str, value: Value, source: &str) {
        self.map.insert(
            name.to_string(),
            Fact {
                value,
                source: source.to_string(),
            },
        );
    }

    fn set_probed<T>(
        &mut self,
        name: &str,
        p: &Probed<T>,
        source: &str,
        f: impl FnOnce(&T) -> Value,
    ) {
        let value = match p {
            Probed::Value(v) => f(v),
            Probed::Skipped(r) => Value::Unknown(format!("skipped: {r}")),
            Probed::Failed(e) => Value::Unknown(format!("failed: {e}")),
        };
        self.set(name, value, source);
    }
}

fn str_or_null(s: &Option<String>) -> Value {
    s.as_ref()
        .map(|v| Value::Str(v.clone()))
        .unwrap_or(Value::Null)
}

fn probed_str(p: &Probed<String>) -> Value {
    match p {
        Probed::Value(v) => Value::Str(v.clone()),
        Probed::Skipped(r) if r.starts_with("not installed") => Value::Null,
        Probed::Skipped(r) => Value::Unknown(format!("skipped: {r}")),
        Probed::Failed(e) => Value::Unknown(format!("failed: {e}")),
    }
}

/// vLLM's device-name normalisation for config file names: spaces become underscores.
pub fn vllm_device_name(gpu_name: &str) -> String {
    gpu_name.replace(' ', "_")
}

/// Model family guessed from a model name or path (judgement-free: the name only).
pub fn model_type_hint(model: &str) -> Option<&'static str> {
    let m = model.to_lowercase().replace('_', "-");
    if m.contains("deepseek-v4") {
        Some("deepseek_v4")
    } else if m.contains("deepseek-v3.2") || m.contains("deepseek-v3-2") {
        Some("deepseek_v32")
    } else if m.contains("deepseek-v3") || m.contains("deepseek-r1") {
        Some("deepseek_v3")
    } else if m.contains("qwen3.5") || m.contains("qwen3.6") || m.contains("qwen3-5") {
        Some("qwen3_5")
    } else if m.contains("minimax-m2") {
        Some("minimax_m2")
    } else {
        None
    }
}

/// Does the name (or `--quantization`) say FP8 weights? DeepSeek V3/V3.2/V4 checkpoints ship as
/// block FP8 unless the name says another format.
pub fn model_is_fp8(model: &str, quantization: Option<&str>) -> bool {
    let m = model.to_lowercase();
    if quantization.is_some_and(|q| q.eq_ignore_ascii_case("fp8")) || m.contains("fp8") {
        return true;
    }
    const OTHER_FORMATS: &[&str] = &[
        "fp4", "awq", "gptq", "int4", "int8", "w4a16", "gguf", "bf16", "mxfp",
    ];
    if OTHER_FORMATS.iter().any(|f| m.contains(f)) || quantization.is_some() {
        return false;
    }
    matches!(
        model_type_hint(model),
        Some("deepseek_v3" | "deepseek_v32" | "deepseek_v4")
    )
}

/// SKUs that share one chip, by vLLM device name (sm120-facts section 3: Workstation, Max-Q and
/// Server Edition of the RTX PRO 6000 Blackwell are the same GB202).
const SAME_CHIP: &[&[&str]] = &[&[
    "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition",
    "NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition",
    "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition",
]];

/// Other SKUs of the same chip as `device`.
pub fn sibling_device_names(device: &str) -> Vec<&'static str> {
    SAME_CHIP
        .iter()
        .find(|group| group.contains(&device))
        .map(|group| group.iter().copied().filter(|d| *d != device).collect())
        .unwrap_or_default()
}

/// The dense W8A8 block-FP8 config name vLLM looks up (fp8_utils.py `get_w8a8_block_fp8_configs`).
pub fn dense_fp8_config_name(device: &str) -> String {
    format!("N=<N>,K=<K>,device_name={device},dtype=fp8_w8a8,block_shape=[128,128].json")
}

/// The fused-MoE FP8 config name vLLM looks up (fused_moe configs).
pub fn moe_fp8_config_name(device: &str) -> String {
    format!("E=<E>,N=<N>,device_name={device},dtype=fp8_w8a8,block_shape=[128,128].json")
}

/// The `device_name=` part of a config file name.
pub fn config_device(file: &str) -> Option<&str> {
    let rest = file.split_once("device_name=")?.1;
    Some(rest.split(',').next().unwrap_or(rest))
}

/// `ln -s` commands that give `device` a copy of each sibling config it lacks.
pub fn alias_commands(device: &str, files: &[String]) -> Vec<String> {
    let siblings = sibling_device_names(device);
    let mut out: Vec<(String, String)> = Vec::new();
    for f in files {
        let Some(dev) = config_device(f) else {
            continue;
        };
        if !siblings.contains(&dev) {
            continue;
        }
        let target = f.replacen(
            &format!("device_name={dev},"),
            &format!("device_name={device},"),
            1,
        );
        // Skip names the folder already has, and a second source for the same target.
        if files.contains(&target) || out.iter().any(|(_, t)| *t == target) {
            continue;
        }
        out.push((f.clone(), target));
    }
    out.into_iter()
        .filter_map(
            |(src, dst)| match (shlex::try_quote(&src), shlex::try_quote(&dst)) {
                (Ok(a), Ok(b)) => Some(format!("ln -s {a} {b}")),
                _ => None,
            },
        )
        .collect()
}

/// One shell line that makes every alias inside `dir`: `cd DIR && ln -s .. && ln -s ..`.
pub fn alias_script(dir: &str, commands: &[String]) -> Option<String> {
    if commands.is_empty() {
        return None;
    }
    let dir = shlex::try_quote(dir).ok()?;
    Some(format!("cd {dir} && {}", commands.join(" && ")))
}

/// Parse `key:value,key:value` allocator options.
pub fn alloc_options(conf: &str) -> Vec<(String, String)> {
    conf.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|opt| match opt.split_once(':') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (opt.trim().to_string(), String::new()),
        })
        .collect()
}

/// The allocator config in effect, by PyTorch's rule: `PYTORCH_CUDA_ALLOC_CONF` wins when set,
/// even empty; otherwise `PYTORCH_ALLOC_CONF`. Returns (variable, value).
pub fn effective_alloc_conf(env: &BTreeMap<String, String>) -> Option<(&'static str, String)> {
    if let Some(v) = env.get("PYTORCH_CUDA_ALLOC_CONF") {
        return Some(("PYTORCH_CUDA_ALLOC_CONF", v.clone()));
    }
    env.get("PYTORCH_ALLOC_CONF")
        .map(|v| ("PYTORCH_ALLOC_CONF", v.clone()))
}

pub fn has_expandable_segments(conf: &str) -> bool {
    alloc_options(conf)
        .iter()
        .any(|(k, v)| k == "expandable_segments" && v.eq_ignore_ascii_case("true"))
}

/// Derive every fact from a snapshot.
pub fn derive(snap: &HostSnapshot, logs_given: bool) -> Facts {
    let mut f = Facts::default();
    let origin = snap.origin.as_str();
    derive_gpus(&mut f, snap, origin);
    derive_driver(&mut f, snap, origin);
    derive_env(&mut f, snap);
    derive_python(&mut f, snap, origin);
    f.set_probed("os.name", &snap.os, origin, |o| probed_str(&o.name));
    f.set_probed("os.kernel", &snap.os, origin, |o| probed_str(&o.kernel));
    derive_launch(&mut f, &snap.launch);
    derive_processes(&mut f, snap, origin);
    derive_model(&mut f, &snap.launch);
    derive_fp8(&mut f, snap, origin);
    f.set("logs.given", Value::Bool(logs_given), "command line");
    derive_probe(&mut f, snap);
    f
}

fn derive_gpus(f: &mut Facts, snap: &HostSnapshot, origin: &str) {
    let src = format!("{origin}: GPUs");
    f.set_probed(
        "gpu.count",
        &snap.gpus,
        &src,
        |g| Value::Num(g.len() as f64),
    );
    f.set_probed("gpu.names", &snap.gpus, &src, |g| {
        Value::List(g.iter().map(|g| probed_str(&g.name)).collect())
    });
    f.set_probed("gpu.first_name", &snap.gpus, &src, |g| {
        g.first()
            .map(|g| probed_str(&g.name))
            .unwrap_or(Value::Null)
    });
    f.set_probed("gpu.device_names", &snap.gpus, &src, |g| {
        let mut names: Vec<Value> = Vec::new();
        for gpu in g {
            let v = match gpu.name.value() {
                Some(n) => Value::Str(vllm_device_name(n)),
                None => return Value::Unknown(format!("GPU {} name not known", gpu.index)),
            };
            if !names.contains(&v) {
                names.push(v);
            }
        }
        Value::List(names)
    });
    let caps =
        |g: &Vec<crate::snapshot::Gpu>| -> Result<Vec<crate::snapshot::ComputeCapability>, String> {
            g.iter()
                .map(|gpu| {
                    gpu.compute_capability.value().copied().ok_or_else(|| {
                        format!(
                            "compute capability of GPU {} {}",
                            gpu.index,
                            gpu.compute_capability.missing_reason().unwrap_or("unknown")
                        )
                    })
                })
                .collect()
        };
    let from_caps = |g: &Vec<crate::snapshot::Gpu>,
                     k: fn(&[crate::snapshot::ComputeCapability]) -> Value| {
        match caps(g) {
            Ok(c) if c.is_empty() => Value::Null,
            Ok(c) => k(&c),
            Err(why) => Value::Unknown(why),
        }
    };
    f.set_probed("gpu.any_sm12x", &snap.gpus, &src, |g| {
        // One known SM12x GPU is enough to say yes even if another is unknown.
        if g.iter()
            .any(|gpu| gpu.compute_capability.value().is_some_and(|c| c.is_sm12x()))
        {
            return Value::Bool(true);
        }
        from_caps(g, |c| Value::Bool(c.iter().any(|c| c.is_sm12x())))
    });
    f.set_probed("gpu.all_sm12x", &snap.gpus, &src, |g| {
        from_caps(g, |c| Value::Bool(c.iter().all(|c| c.is_sm12x())))
    });
    f.set_probed("gpu.cc_list", &snap.gpus, &src, |g| {
        from_caps(g, |c| {
            Value::List(c.iter().map(|c| Value::Str(c.to_string())).collect())
        })
    });
    f.set_probed("gpu.cc_max", &snap.gpus, &src, |g| {
        from_caps(g, |c| {
            let m = c
                .iter()
                .max()
                .copied()
                .unwrap_or(crate::snapshot::ComputeCapability { major: 0, minor: 0 });
            Value::Num(m.major as f64 + m.minor as f64 / 10.0)
        })
    });
    f.set_probed("gpu.memory_total_mib_min", &snap.gpus, &src, |g| {
        let mut min: Option<u64> = None;
        for gpu in g {
            match gpu.memory_total_mib.value() {
                Some(m) => min = Some(min.map_or(*m, |x: u64| x.min(*m))),
                None => return Value::Unknown(format!("memory of GPU {} not known", gpu.index)),
            }
        }
        min.map(|m| Value::Num(m as f64)).unwrap_or(Value::Null)
    });
    f.set_probed("gpu.persistence_all", &snap.gpus, &src, |g| {
        let mut all = true;
        for gpu in g {
            match gpu.persistence_mode.value() {
                Some(p) => all &= *p,
                None => {
                    return Value::Unknown(format!(
                        "persistence mode of GPU {} not known",
                        gpu.index
                    ));
                }
            }
        }
        Value::Bool(all)
    });

    let src = format!("{origin}: topology");
    f.set_probed("topology.pairs", &snap.gpu_pairs, &src, |p| {
        Value::Num(p.len() as f64)
    });
    let all = |pairs: &Vec<crate::snapshot::GpuPair>,
               pick: fn(&crate::snapshot::GpuPair) -> &Probed<bool>,
               what: &str| {
        let mut all = true;
        for p in pairs {
            match pick(p).value() {
                Some(v) => all &= *v,
                None => {
                    return Value::Unknown(format!("{what} of GPU pair {}-{} not known", p.a, p.b));
                }
            }
        }
        Value::Bool(all)
    };
    f.set_probed("topology.all_nvlink", &snap.gpu_pairs, &src, |p| {
        all(p, |p| &p.nvlink, "NVLink status")
    });
    f.set_probed("topology.all_p2p", &snap.gpu_pairs, &src, |p| {
        all(p, |p| &p.p2p, "P2P status")
    });
    f.set_probed("topology.levels", &snap.gpu_pairs, &src, |p| {
        Value::List(p.iter().map(|p| probed_str(&p.topology)).collect())
    });
}

fn derive_driver(f: &mut Facts, snap: &HostSnapshot, origin: &str) {
    let src = format!("{origin}: driver");
    f.set_probed("driver.version", &snap.driver, &src, |d| {
        probed_str(&d.version)
    });
    f.set_probed("driver.major", &snap.driver, &src, |d| {
        match probed_str(&d.version) {
            Value::Str(v) => v
                .split('.')
                .next()
                .and_then(|m| m.parse::<f64>().ok())
                .map(Value::Num)
                .unwrap_or(Value::Unknown(format!(
                    "driver version {v:?} not understood"
                ))),
            other => other,
        }
    });
    f.set_probed("driver.cuda", &snap.driver, &src, |d| {
        probed_str(&d.cuda_driver_version)
    });
    f.set_probed(
        "driver.open_module",
        &snap.driver,
        &src,
        |d| match probed_str(&d.kernel_module) {
            Value::Str(m) => Value::Bool(m == "open"),
            other => other,
        },
    );
}

fn derive_env(f: &mut Facts, snap: &HostSnapshot) {
    if let Some(l) = snap.launch.value() {
        f.launch_env = l.env.clone();
    }
    match &snap.env {
        Probed::Value(env) => {
            f.env = Some(env.clone());
            f.env_source = env.source.clone();
        }
        other => {
            f.env_reason = format!(
                "environment not collected: {}",
                other.missing_reason().unwrap_or("")
            )
        }
    }
    let env_source = if f.launch_env.is_empty() {
        f.env_source.clone()
    } else if f.env.is_some() {
        format!("{} + launch command", f.env_source)
    } else {
        "launch command".into()
    };
    f.set(
        "env.source",
        if env_source.is_empty() {
            Value::Null
        } else {
            Value::Str(env_source.clone())
        },
        &env_source,
    );

    // The allocator config: launch assignments override the collected environment.
    let cuda = f.env_var("PYTORCH_CUDA_ALLOC_CONF");
    let plain = f.env_var("PYTORCH_ALLOC_CONF");
    let (var, conf, source) = match (&cuda.value, &plain.value) {
        (Value::Str(c), _) => (
            Value::Str("PYTORCH_CUDA_ALLOC_CONF".into()),
            Value::Str(c.clone()),
            cuda.source.clone(),
        ),
        (Value::Null, Value::Str(p)) => (
            Value::Str("PYTORCH_ALLOC_CONF".into()),
            Value::Str(p.clone()),
            plain.source.clone(),
        ),
        (Value::Null, Value::Null) => (Value::Null, Value::Null, cuda.source.clone()),
        (Value::Unknown(w), _) | (_, Value::Unknown(w)) => (
            Value::Unknown(w.clone()),
            Value::Unknown(w.clone()),
            String::new(),
        ),
        _ => (Value::Null, Value::Null, cuda.source.clone()),
    };
    let expandable = match &conf {
        Value::Str(c) => Value::Bool(has_expandable_segments(c)),
        Value::Null => Value::Bool(false),
        other => other.clone(),
    };
    let masked = match (&cuda.value, &plain.value) {
        (Value::Str(_), Value::Str(p)) => Value::Bool(has_expandable_segments(p)),
        (Value::Unknown(w), _) | (_, Value::Unknown(w)) => Value::Unknown(w.clone()),
        _ => Value::Bool(false),
    };
    f.set("alloc.var", var, &source);
    f.set("alloc.conf", conf, &source);
    f.set("alloc.expandable_segments", expandable, &source);
    f.set("alloc.masked_alloc_conf", masked, &source);
}

fn derive_python(f: &mut Facts, snap: &HostSnapshot, origin: &str) {
    let src = format!("{origin}: Python stack");
    let p = &snap.python;
    f.set_probed("python.version", p, &src, |p| probed_str(&p.python));
    f.set_probed("python.vllm", p, &src, |p| probed_str(&p.vllm));
    f.set_probed("python.torch", p, &src, |p| probed_str(&p.torch));
    f.set_probed("python.torch_cuda", p, &src, |p| probed_str(&p.torch_cuda));
    f.set_probed("python.torch_arch_list", p, &src, |p| {
        match &p.torch_arch_list {
            Probed::Value(l) => Value::List(l.iter().map(|a| Value::Str(a.clone())).collect()),
            other => Value::Unknown(other.missing_reason().unwrap_or("").to_string()),
        }
    });
    f.set(
        "python.torch_arch_list_known",
        Value::Bool(
            p.value()
                .is_some_and(|p| matches!(p.torch_arch_list, Probed::Value(_))),
        ),
        &src,
    );
    f.set_probed("python.torch_has_sm120", p, &src, |p| {
        match &p.torch_arch_list {
            Probed::Value(l) => Value::Bool(
                l.iter()
                    .any(|a| a == "sm_120" || a == "sm_120a" || a == "compute_120"),
            ),
            other => Value::Unknown(other.missing_reason().unwrap_or("").to_string()),
        }
    });
    f.set_probed("python.triton", p, &src, |p| probed_str(&p.triton));
    f.set_probed("python.flashinfer", p, &src, |p| probed_str(&p.flashinfer));
    f.set_probed("python.deep_gemm", p, &src, |p| probed_str(&p.deep_gemm));
    f.set_probed("python.cuda_toolkit", p, &src, |p| {
        probed_str(&p.cuda_toolkit)
    });
    f.set_probed("python.fp8_config_dir", p, &src, |p| {
        probed_str(&p.fp8_config_dir)
    });
    f.set_probed("python.fp8_config_files", p, &src, |p| {
        match &p.fp8_config_files {
            Probed::Value(l) => Value::List(l.iter().map(|a| Value::Str(a.clone())).collect()),
            other => Value::Unknown(other.missing_reason().unwrap_or("").to_string()),
        }
    });
}

fn derive_launch(f: &mut Facts, launch: &Probed<Launch>) {
    let src = "launch command";
    let given = matches!(launch, Probed::Value(_));
    f.set("launch.given", Value::Bool(given), src);
    f.flags = launch.value().map(|l| l.flags.clone());
    let num = |v: Option<u32>| Value::Num(v.unwrap_or(1) as f64);
    f.set_probed("launch.entrypoint", launch, src, |l| {
        Value::Str(l.entrypoint.clone())
    });
    f.set_probed("launch.model", launch, src, |l| str_or_null(&l.model));
    f.set_probed("launch.model_lower", launch, src, |l| {
        str_or_null(&l.model.as_ref().map(|m| m.to_lowercase()))
    });
    f.set_probed("launch.tp", launch, src, |l| num(l.tensor_parallel_size));
    f.set_probed("launch.pp", launch, src, |l| num(l.pipeline_parallel_size));
    f.set_probed("launch.dp", launch, src, |l| num(l.data_parallel_size));
    f.set_probed("launch.enforce_eager", launch, src, |l| {
        Value::Bool(l.enforce_eager)
    });
    f.set_probed("launch.disable_custom_all_reduce", launch, src, |l| {
        Value::Bool(l.disable_custom_all_reduce)
    });
    f.set_probed("launch.cudagraph_mode", launch, src, |l| {
        str_or_null(&l.cudagraph_mode)
    });
    f.set_probed("launch.cuda_graphs", launch, src, |l| {
        Value::Bool(
            !l.enforce_eager
                && l.cudagraph_mode
                    .as_deref()
                    .is_none_or(|m| !m.eq_ignore_ascii_case("NONE")),
        )
    });
    f.set_probed("launch.quantization", launch, src, |l| {
        str_or_null(&l.quantization)
    });
    f.set_probed("launch.gpu_memory_utilization", launch, src, |l| {
        l.gpu_memory_utilization
            .map(Value::Num)
            .unwrap_or(Value::Null)
    });
    f.set_probed("launch.max_model_len", launch, src, |l| {
        l.max_model_len
            .map(|v| Value::Num(v as f64))
            .unwrap_or(Value::Null)
    });
}

fn derive_model(f: &mut Facts, launch: &Probed<Launch>) {
    let src = "launch command (model name)";
    f.set_probed("model.type_hint", launch, src, |l| match &l.model {
        Some(m) => model_type_hint(m)
            .map(|t| Value::Str(t.into()))
            .unwrap_or(Value::Null),
        None => Value::Unknown("the launch names no model".into()),
    });
    f.set_probed("model.fp8", launch, src, |l| match &l.model {
        Some(m) => Value::Bool(model_is_fp8(m, l.quantization.as_deref())),
        None => Value::Unknown("the launch names no model".into()),
    });
    f.set_probed("model.sparse_attention", launch, src, |l| match &l.model {
        Some(m) => Value::Bool(matches!(
            model_type_hint(m),
            Some("deepseek_v32" | "deepseek_v4")
        )),
        None => Value::Unknown("the launch names no model".into()),
    });
}

fn derive_fp8(f: &mut Facts, snap: &HostSnapshot, origin: &str) {
    let src = format!("{origin}: GPU 0 name");
    let device: Result<String, String> = match &snap.gpus {
        Probed::Value(g) => match g.first().map(|g| &g.name) {
            Some(Probed::Value(n)) => Ok(vllm_device_name(n)),
            Some(other) => Err(format!(
                "GPU 0 name {}",
                other.missing_reason().unwrap_or("unknown")
            )),
            None => Err("no GPU seen".into()),
        },
        other => Err(format!(
            "GPUs {}",
            other.missing_reason().unwrap_or("unknown")
        )),
    };
    let with_device = |k: &dyn Fn(&str) -> Value| match &device {
        Ok(d) => k(d),
        Err(why) => Value::Unknown(why.clone()),
    };
    let strs = |v: Vec<String>| Value::List(v.into_iter().map(Value::Str).collect());
    f.set(
        "gpu.device_name",
        with_device(&|d| Value::Str(d.to_string())),
        &src,
    );
    f.set(
        "fp8.dense_config_name",
        with_device(&|d| Value::Str(dense_fp8_config_name(d))),
        &src,
    );
    f.set(
        "fp8.moe_config_name",
        with_device(&|d| Value::Str(moe_fp8_config_name(d))),
        &src,
    );
    f.set(
        "fp8.sibling_device_names",
        with_device(&|d| {
            strs(
                sibling_device_names(d)
                    .into_iter()
                    .map(String::from)
                    .collect(),
            )
        }),
        &src,
    );
    let files = snap.python.value().map(|p| &p.fp8_config_files);
    let listed = matches!(files, Some(Probed::Value(_)));
    let list_src = format!("{origin}: vLLM FP8 config folder");
    f.set("fp8.configs_listed", Value::Bool(listed), &list_src);
    let listing: Result<&Vec<String>, String> = match files {
        Some(Probed::Value(l)) => Ok(l),
        Some(other) => Err(format!(
            "config folder not listed: {}",
            other.missing_reason().unwrap_or("unknown")
        )),
        None => Err(format!(
            "Python stack {}",
            snap.python.missing_reason().unwrap_or("unknown")
        )),
    };
    let from_listing = |k: &dyn Fn(&str, &Vec<String>) -> Value| match (&device, &listing) {
        (Ok(d), Ok(l)) => k(d, l),
        (Err(why), _) | (_, Err(why)) => Value::Unknown(why.clone()),
    };
    f.set(
        "fp8.own_configs",
        from_listing(&|d, l| {
            strs(
                l.iter()
                    .filter(|x| config_device(x) == Some(d))
                    .cloned()
                    .collect(),
            )
        }),
        &list_src,
    );
    f.set(
        "fp8.sibling_configs",
        from_listing(&|d, l| {
            let sib = sibling_device_names(d);
            strs(
                l.iter()
                    .filter(|x| config_device(x).is_some_and(|c| sib.contains(&c)))
                    .cloned()
                    .collect(),
            )
        }),
        &list_src,
    );
    f.set(
        "fp8.alias_commands",
        from_listing(&|d, l| strs(alias_commands(d, l))),
        &list_src,
    );
    let dir = snap.python.value().map(|p| &p.fp8_config_dir);
    f.set(
        "fp8.alias_script",
        from_listing(&|d, l| match dir {
            Some(Probed::Value(dir)) => alias_script(dir, &alias_commands(d, l))
                .map(Value::Str)
                .unwrap_or(Value::Null),
            _ => Value::Unknown("config folder path not known".into()),
        }),
        &list_src,
    );
}

fn derive_processes(f: &mut Facts, snap: &HostSnapshot, origin: &str) {
    let src = format!("{origin}: GPU processes");
    let p = &snap.processes;
    f.set_probed("processes.count", p, &src, |p| Value::Num(p.len() as f64));
    let orphans = |p: &Vec<crate::snapshot::GpuProcess>| -> Vec<crate::snapshot::GpuProcess> {
        p.iter()
            .filter(|p| p.is_vllm && p.parent_alive == Some(false))
            .cloned()
            .collect()
    };
    f.set_probed("processes.orphans", p, &src, |p| {
        Value::Num(orphans(p).len() as f64)
    });
    f.set_probed("processes.orphan_pids", p, &src, |p| {
        Value::List(
            orphans(p)
                .iter()
                .map(|o| Value::Num(o.pid as f64))
                .collect(),
        )
    });
    f.set_probed("processes.orphan_memory_mib", p, &src, |p| {
        Value::Num(
            orphans(p)
                .iter()
                .filter_map(|o| o.used_memory_mib)
                .sum::<u64>() as f64,
        )
    });
}

fn derive_probe(f: &mut Facts, snap: &HostSnapshot) {
    use crate::snapshot::IpcProbeRun;
    let src = "allocator/IPC probe on this host";
    let p = match &snap.probe {
        Probed::Value(p) => p,
        other => {
            let why = Value::Unknown(format!(
                "probe {}",
                match other {
                    Probed::Skipped(r) => format!("skipped: {r}"),
                    Probed::Failed(e) => format!("failed: {e}"),
                    Probed::Value(_) => String::new(),
                }
            ));
            f.set("probe.ran", Value::Bool(false), src);
            for n in [
                "probe.engine_alloc_conf",
                "probe.ipc_engine_config_ok",
                "probe.ipc_default_ok",
                "probe.ipc_expandable_ok",
                "probe.remedy_ok",
            ] {
                f.set(n, why.clone(), "");
            }
            return;
        }
    };
    let runs: Vec<&IpcProbeRun> = p
        .native
        .value()
        .into_iter()
        .flatten()
        .chain(p.torch.value().into_iter().flatten())
        .collect();
    let ran = runs.iter().any(|r| r.ipc_handle_ok.value().is_some());
    f.set("probe.ran", Value::Bool(ran), src);
    f.set(
        "probe.engine_alloc_conf",
        str_or_null(&p.engine_alloc_conf),
        &p.engine_alloc_source,
    );
    // All runs matching `pick` exported: true/false; none measured: unknown.
    let all_ok = |pick: &dyn Fn(&IpcProbeRun) -> bool, what: &str| -> Value {
        let measured: Vec<bool> = runs
            .iter()
            .filter(|r| pick(r))
            .filter_map(|r| r.ipc_handle_ok.value().copied())
            .collect();
        if measured.is_empty() {
            Value::Unknown(format!("the probe measured no {what}"))
        } else {
            Value::Bool(measured.iter().all(|ok| *ok))
        }
    };
    f.set(
        "probe.ipc_engine_config_ok",
        all_ok(
            &|r| r.path == "torch" && r.role == "engine",
            "torch allocation under the engine's config",
        ),
        src,
    );
    f.set(
        "probe.ipc_default_ok",
        all_ok(&|r| !r.expandable, "allocation without expandable segments"),
        src,
    );
    f.set(
        "probe.ipc_expandable_ok",
        all_ok(&|r| r.expandable, "allocation from expandable segments"),
        src,
    );
    f.set(
        "probe.remedy_ok",
        all_ok(
            &|r| r.path == "torch" && r.role == "remedy",
            "torch allocation with the remedy applied",
        ),
        src,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn cuda_alloc_conf_wins_even_when_empty() {
        let e = env(&[
            ("PYTORCH_CUDA_ALLOC_CONF", ""),
            ("PYTORCH_ALLOC_CONF", "expandable_segments:True"),
        ]);
        assert_eq!(
            effective_alloc_conf(&e),
            Some(("PYTORCH_CUDA_ALLOC_CONF", String::new()))
        );
        let e = env(&[("PYTORCH_ALLOC_CONF", "expandable_segments:True")]);
        assert_eq!(
            effective_alloc_conf(&e).map(|x| x.0),
            Some("PYTORCH_ALLOC_CONF")
        );
        assert_eq!(effective_alloc_conf(&env(&[])), None);
    }

    #[test]
    fn expandable_segments_option_parsing() {
        assert!(has_expandable_segments("expandable_segments:True"));
        assert!(has_expandable_segments(
            "max_split_size_mb:512, expandable_segments:True"
        ));
        assert!(!has_expandable_segments("expandable_segments:False"));
        assert!(!has_expandable_segments("max_split_size_mb:512"));
        assert!(!has_expandable_segments(""));
    }

    #[test]
    fn device_name_normalisation() {
        assert_eq!(
            vllm_device_name("NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
            "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition"
        );
    }

    #[test]
    fn model_hints_from_names() {
        assert_eq!(
            model_type_hint("deepseek-ai/DeepSeek-V4-Flash"),
            Some("deepseek_v4")
        );
        assert_eq!(
            model_type_hint("deepseek-ai/DeepSeek-V3.2-Exp"),
            Some("deepseek_v32")
        );
        assert_eq!(
            model_type_hint("deepseek-ai/DeepSeek-V3-0324"),
            Some("deepseek_v3")
        );
        assert_eq!(model_type_hint("Qwen/Qwen3.6-27B-FP8"), Some("qwen3_5"));
        assert_eq!(model_type_hint("meta-llama/Llama-3.1-8B-Instruct"), None);
        assert!(model_is_fp8("Qwen/Qwen3.6-27B-FP8", None));
        assert!(model_is_fp8("deepseek-ai/DeepSeek-V4-Flash", None));
        assert!(model_is_fp8("/models/llama-70b", Some("fp8")));
        assert!(!model_is_fp8("nvidia/DeepSeek-V3-0324-FP4", None));
        assert!(!model_is_fp8("Qwen/Qwen3-32B", None));
        assert!(!model_is_fp8("deepseek-ai/DeepSeek-V4-Flash", Some("awq")));
    }

    #[test]
    fn fp8_config_names_and_aliases() {
        let ws = "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition";
        assert_eq!(
            dense_fp8_config_name(ws),
            "N=<N>,K=<K>,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition,dtype=fp8_w8a8,block_shape=[128,128].json"
        );
        assert!(
            moe_fp8_config_name("NVIDIA_H200").starts_with("E=<E>,N=<N>,device_name=NVIDIA_H200,")
        );
        assert_eq!(sibling_device_names(ws).len(), 2);
        assert!(sibling_device_names("NVIDIA_H200").is_empty());
        let files: Vec<String> = [
            "N=16384,K=1024,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(config_device(&files[3]), Some("NVIDIA_H200"));
        let cmds = alias_commands(ws, &files);
        assert_eq!(cmds.len(), 1, "{cmds:?}");
        let maxq = "NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition";
        // WS and Server both have N=1024,K=4096 or N=16384,K=1024: one alias per target name.
        let for_maxq = alias_commands(maxq, &files);
        assert_eq!(for_maxq.len(), 2, "{for_maxq:?}");
        let script = alias_script("/x y/configs", &for_maxq).expect("script");
        assert!(
            script.starts_with("cd '/x y/configs' && ln -s "),
            "{script}"
        );
        assert_eq!(script.matches(" && ln -s ").count(), 2);
        assert_eq!(alias_script("/x", &[]), None);
        assert!(cmds[0].starts_with(
            "ln -s 'N=16384,K=1024,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
        ));
        assert!(cmds[0].contains("device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition"));
        assert!(alias_commands("NVIDIA_H200", &files).is_empty());
    }

    #[test]
    fn catalogue_names_are_known_and_open_families_work() {
        assert!(is_known_fact("launch.tp"));
        assert!(is_known_fact("env.VLLM_USE_DEEP_GEMM"));
        assert!(is_known_fact("launch.flag.max-num-seqs"));
        assert!(!is_known_fact("env."));
        assert!(!is_known_fact("gpu.bogus"));
    }
}
