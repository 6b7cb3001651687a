//! The host as `name: value` lines, in the spirit of vLLM's collect-env output, for the
//! "Your current environment" block of a report. Missing values say why they are missing.

use crate::kb::KnowledgeBase;
use crate::snapshot::{Environment, HostSnapshot, Probed};
use std::collections::BTreeSet;

pub use crate::snapshot::{ENV_NAMES, ENV_PREFIXES};

/// The variables the knowledge base reads: every `env.NAME` fact of every node's check and of
/// every conclusion's evidence (`{env.NAME}`), and both allocator variables where an `alloc.*`
/// fact is read (they decide it).
pub fn kb_env_vars(kb: &KnowledgeBase) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut read = |fact: &str| {
        if let Some(name) = fact.strip_prefix("env.") {
            out.insert(name.to_string());
        } else if fact.starts_with("alloc.") {
            out.extend(
                crate::vllm::alloc_conf::VARS
                    .iter()
                    .map(|v| (*v).to_string()),
            );
        }
    };
    for class in &kb.classes {
        for check in class.checks.values() {
            crate::kb::expr::references(check)
                .facts
                .iter()
                .for_each(|f| read(f));
        }
        for k in &class.def.conclusions {
            for ev in &k.evidence {
                crate::kb::placeholders(&ev.value)
                    .iter()
                    .for_each(|f| read(f));
            }
        }
    }
    out
}

/// Whether a redacted report lists this variable: one vLLM's collect-env would list, a search
/// path, or one a knowledge-base check reads (`kb_vars`, from [`kb_env_vars`]).
pub(crate) fn env_listed(name: &str, kb_vars: &BTreeSet<String>) -> bool {
    crate::snapshot::env_var_matters(name) || kb_vars.contains(name)
}

/// Keep only the listed variables; returns how many were left out.
pub(crate) fn keep_listed(env: &mut Environment, kb_vars: &BTreeSet<String>) -> usize {
    let before = env.vars.len();
    env.vars.retain(|k, _| env_listed(k, kb_vars));
    before - env.vars.len()
}

fn probed<T>(p: &Probed<T>, f: impl Fn(&T) -> String) -> String {
    match p {
        Probed::Value(v) => f(v),
        Probed::Skipped(r) => format!("(skipped: {r})"),
        Probed::Failed(e) => format!("(failed: {e})"),
    }
}

fn s(p: &Probed<String>) -> String {
    probed(p, Clone::clone)
}

fn yes_no(b: &bool) -> String {
    if *b { "yes".into() } else { "no".into() }
}

/// One section of the host block: a title and `name: value` rows.
pub struct Section {
    pub title: &'static str,
    pub rows: Vec<(String, String)>,
}

/// The host block's sections.
pub(crate) fn sections(snap: &HostSnapshot) -> Vec<Section> {
    let mut out = Vec::new();
    let mut sys = vec![
        ("Snapshot origin".to_string(), snap.origin.to_string()),
        (
            "Captured at".to_string(),
            snap.captured_at
                .clone()
                .unwrap_or_else(|| "(not recorded)".into()),
        ),
    ];
    match &snap.os {
        Probed::Value(os) => {
            sys.push(("OS".into(), s(&os.name)));
            sys.push(("Kernel".into(), s(&os.kernel)));
            sys.push(("Hostname".into(), s(&os.hostname)));
        }
        other => sys.push(("OS".into(), probed(other, |_| String::new()))),
    }
    out.push(Section {
        title: "System Info",
        rows: sys,
    });

    let mut gpu_rows = Vec::new();
    match &snap.gpus {
        Probed::Value(gpus) if gpus.is_empty() => gpu_rows.push(("GPUs".into(), "none".into())),
        Probed::Value(gpus) => {
            for g in gpus {
                let mut parts = vec![s(&g.name)];
                if let Some(cc) = g.compute_capability.value() {
                    parts.push(format!("CC {cc}"));
                }
                if let Some(m) = g.memory_total_mib.value() {
                    parts.push(format!("{m} MiB"));
                }
                if let Some(u) = g.memory_used_mib.value() {
                    parts.push(format!("{u} MiB used"));
                }
                if let Some(p) = g.pcie.value() {
                    parts.push(format!("PCIe gen{} x{}", p.gen_current, p.width_current));
                }
                if let Some(w) = g.power_limit_w.value() {
                    parts.push(format!("{w} W limit"));
                }
                if let Some(m) = g.compute_mode.value() {
                    parts.push(format!("compute mode {m}"));
                }
                gpu_rows.push((format!("GPU {}", g.index), parts.join(", ")));
                if let Some(u) = g.uuid.value() {
                    gpu_rows.push((format!("GPU {} UUID", g.index), u.clone()));
                }
            }
        }
        other => gpu_rows.push(("GPUs".into(), probed(other, |_| String::new()))),
    }
    match &snap.gpu_pairs {
        Probed::Value(pairs) => {
            for p in pairs {
                gpu_rows.push((
                    format!("GPU {} <-> GPU {}", p.a, p.b),
                    format!(
                        "topology {}, P2P {}, NVLink {}",
                        s(&p.topology),
                        probed(&p.p2p, yes_no),
                        probed(&p.nvlink, yes_no)
                    ),
                ));
            }
        }
        other => gpu_rows.push(("GPU topology".into(), probed(other, |_| String::new()))),
    }
    match &snap.driver {
        Probed::Value(d) => {
            gpu_rows.push(("Nvidia driver version".into(), s(&d.version)));
            gpu_rows.push(("CUDA version (driver)".into(), s(&d.cuda_driver_version)));
            gpu_rows.push(("Kernel module".into(), s(&d.kernel_module)));
        }
        other => gpu_rows.push(("Nvidia driver".into(), probed(other, |_| String::new()))),
    }
    out.push(Section {
        title: "GPU Info",
        rows: gpu_rows,
    });

    let mut py = Vec::new();
    match &snap.python {
        Probed::Value(p) => {
            if let Some(i) = &p.interpreter {
                py.push(("Interpreter".into(), i.clone()));
            }
            py.push(("Python version".into(), s(&p.python)));
            py.push(("vLLM version".into(), s(&p.vllm)));
            py.push(("PyTorch version".into(), s(&p.torch)));
            py.push(("CUDA used to build PyTorch".into(), s(&p.torch_cuda)));
            py.push((
                "PyTorch arch list".into(),
                probed(&p.torch_arch_list, |l| l.join(" ")),
            ));
            py.push(("Triton".into(), s(&p.triton)));
            py.push(("FlashInfer".into(), s(&p.flashinfer)));
            py.push(("DeepGEMM".into(), s(&p.deep_gemm)));
            py.push(("CUDA toolkit (nvcc)".into(), s(&p.cuda_toolkit)));
            py.push(("FP8 tuned config dir".into(), s(&p.fp8_config_dir)));
            py.push((
                "FP8 tuned config files".into(),
                probed(&p.fp8_config_files, |l| format!("{} file(s)", l.len())),
            ));
        }
        other => py.push(("Python stack".into(), probed(other, |_| String::new()))),
    }
    out.push(Section {
        title: "Python / vLLM",
        rows: py,
    });

    let mut env = Vec::new();
    match &snap.env {
        Probed::Value(e) => {
            env.push(("Source".into(), e.source.clone()));
            if let Some(c) = &e.covers {
                env.push(("Covers only".into(), c.join(", ")));
            }
            if e.vars.is_empty() {
                env.push(("Variables".into(), "(none of interest set)".into()));
            }
            for (k, v) in &e.vars {
                env.push((k.clone(), v.clone()));
            }
        }
        other => env.push(("Environment".into(), probed(other, |_| String::new()))),
    }
    out.push(Section {
        title: "Environment Variables",
        rows: env,
    });

    let mut procs = Vec::new();
    match &snap.processes {
        Probed::Value(ps) if ps.is_empty() => procs.push(("Processes".into(), "none".into())),
        Probed::Value(ps) => {
            for p in ps {
                let mut parts = vec![p.name.clone().unwrap_or_else(|| "(unnamed)".into())];
                if let Some(g) = p.gpu_index {
                    parts.push(format!("GPU {g}"));
                }
                if let Some(m) = p.used_memory_mib {
                    parts.push(format!("{m} MiB"));
                }
                if p.is_vllm {
                    parts.push("vLLM".into());
                }
                if let Some(a) = p.parent_alive {
                    parts.push(format!("parent alive: {}", yes_no(&a)));
                }
                procs.push((format!("PID {}", p.pid), parts.join(", ")));
            }
        }
        other => procs.push(("Processes".into(), probed(other, |_| String::new()))),
    }
    out.push(Section {
        title: "GPU Processes",
        rows: procs,
    });
    out
}

/// The sections as plain text, with `=====` banners like collect-env. `env_not_listed`: the
/// variables a redacted report left out, counted under the ones it lists.
pub(crate) fn text_block(snap: &HostSnapshot, env_not_listed: usize) -> String {
    let mut out = String::new();
    for mut sec in sections(snap) {
        if sec.title == "Environment Variables" && env_not_listed > 0 {
            sec.rows.push((
                "Not listed".into(),
                format!(
                    "{env_not_listed} other variable(s) (a redacted report lists only {}*, {} \
                     and the variables the checks read)",
                    ENV_PREFIXES.join("*, "),
                    ENV_NAMES.join(", ")
                ),
            ));
        }
        let bar = "=".repeat(30);
        let title = format!("{:^30}", sec.title);
        out.push_str(&format!("{bar}\n{}\n{bar}\n", title.trim_end()));
        let width = sec.rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (k, v) in &sec.rows {
            out.push_str(&format!("{k:width$} : {v}\n"));
        }
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_variables_are_collect_envs_the_search_paths_and_the_kbs() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let kb_vars = kb_env_vars(&kb);
        for name in [
            "VLLM_USE_DEEP_GEMM",
            "NCCL_P2P_DISABLE",
            "CUDA_VISIBLE_DEVICES",
            "OMP_NUM_THREADS",
            "LD_LIBRARY_PATH",
            "PATH",
            // Read by an evidence line, outside every prefix.
            "FLASHINFER_DISABLE_VERSION_CHECK",
        ] {
            assert!(env_listed(name, &kb_vars), "{name}");
        }
        for name in [
            "HF_HOME",
            "AWS_REGION",
            "REQUESTS_CA_BUNDLE",
            "PATHS",
            "HOME",
            "USER",
        ] {
            assert!(!env_listed(name, &kb_vars), "{name}");
        }
        // Both allocator variables, since checks read `alloc.*`.
        assert!(
            kb_vars.contains("PYTORCH_ALLOC_CONF") && kb_vars.contains("PYTORCH_CUDA_ALLOC_CONF")
        );
        let mut env = Environment {
            source: "t".into(),
            whose: None,
            vars: [
                ("HF_HOME", "/x"),
                ("NCCL_DEBUG", "INFO"),
                ("AWS_REGION", "eu"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            covers: None,
        };
        assert_eq!(keep_listed(&mut env, &kb_vars), 2);
        assert_eq!(env.vars.keys().collect::<Vec<_>>(), ["NCCL_DEBUG"]);
    }
}
