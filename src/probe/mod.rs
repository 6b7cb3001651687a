//! Live probes that measure instead of guessing. `ipc`: can memory from the allocator config
//! the engine would get be exported through legacy CUDA IPC, and does the remedy fix it?

pub mod native;
pub mod p2p;
pub mod p2p_child;
pub mod torch;

use crate::snapshot::{IpcProbe, IpcProbeRun, Probed};
use crate::vllm::alloc_conf::{self, Precedence};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::thread;
use std::time::Duration;

/// What to probe.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The Python to use for the torch path (`None`: torch path not run).
    pub python: Option<PathBuf>,
    pub native: bool,
    pub torch_timeout: Duration,
    pub native_timeout: Duration,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            python: Some(PathBuf::from("python3")),
            native: true,
            torch_timeout: Duration::from_secs(60),
            native_timeout: Duration::from_secs(10),
        }
    }
}

/// The allocator config the engine would get: the launch's own assignments over `env`, read
/// by the default precedence rule. Returns (config, where it came from).
pub fn engine_alloc_conf(
    env: &BTreeMap<String, String>,
    env_source: &str,
    launch_env: Option<&BTreeMap<String, String>>,
) -> (Option<String>, String) {
    engine_alloc_conf_by(env, env_source, launch_env, Precedence::default())
}

/// [`engine_alloc_conf`] under a given precedence rule.
pub(crate) fn engine_alloc_conf_by(
    env: &BTreeMap<String, String>,
    env_source: &str,
    launch_env: Option<&BTreeMap<String, String>>,
    precedence: Precedence,
) -> (Option<String>, String) {
    let mut merged = env.clone();
    let mut from_launch = false;
    if let Some(l) = launch_env {
        for k in alloc_conf::VARS {
            if let Some(v) = l.get(k) {
                merged.insert(k.to_string(), v.clone());
                from_launch = true;
            }
        }
    }
    match precedence.in_effect(|v| merged.get(v).map(String::as_str)) {
        Some((var, conf)) => {
            let src = if from_launch {
                "launch command"
            } else {
                env_source
            };
            (Some(conf.to_string()), format!("{var} from {src}"))
        }
        None => (None, format!("allocator variables unset in {env_source}")),
    }
}

/// Run the probe: the native and torch paths in parallel.
pub(crate) fn run_ipc(
    opts: &ProbeOptions,
    engine_conf: Option<String>,
    engine_source: String,
) -> IpcProbe {
    let native = if opts.native {
        let t = opts.native_timeout;
        Some(thread::spawn(move || native::probe(t)))
    } else {
        None
    };
    let torch = match &opts.python {
        Some(py) => torch::probe(py, engine_conf.as_deref(), opts.torch_timeout),
        None => Probed::skipped("torch path not run (--native-only)"),
    };
    let native = match native {
        Some(h) => h
            .join()
            .unwrap_or_else(|_| Probed::failed("the native probe thread panicked")),
        None => Probed::skipped("native path not run"),
    };
    IpcProbe {
        engine_alloc_conf: engine_conf,
        engine_alloc_source: engine_source,
        native,
        torch,
    }
}

/// Every run of both paths.
pub(crate) fn all_runs(p: &IpcProbe) -> impl Iterator<Item = &IpcProbeRun> {
    p.native
        .value()
        .into_iter()
        .flatten()
        .chain(p.torch.value().into_iter().flatten())
}

/// Did this run export? `None` when the run could not say.
pub fn exported(r: &IpcProbeRun) -> Option<bool> {
    r.ipc_handle_ok.value().copied()
}

fn yes_no(p: &Probed<bool>) -> String {
    match p {
        Probed::Value(true) => "yes".into(),
        Probed::Value(false) => "no".into(),
        Probed::Skipped(s) => format!("skipped: {s}"),
        Probed::Failed(e) => format!("failed: {e}"),
    }
}

/// Plain-text table of the result (no judgement beyond restating what was measured).
pub fn render_text(p: &IpcProbe) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "allocator/IPC probe — engine config: {} ({})\n",
        p.engine_alloc_conf
            .as_deref()
            .unwrap_or("unset (default allocator)"),
        p.engine_alloc_source
    ));
    for (name, section) in [("native (CUDA driver API)", &p.native), ("torch", &p.torch)] {
        match section {
            Probed::Value(runs) => {
                s.push_str(&format!("{name}:\n"));
                for r in runs {
                    let conf = r
                        .alloc_conf
                        .as_deref()
                        .map(|c| format!(" [{c}]"))
                        .unwrap_or_default();
                    s.push_str(&format!(
                        "  {:<10} {}{}: IPC handle {}{}; legacy IPC capable {}; {:.0} ms\n",
                        r.role,
                        r.allocator,
                        conf,
                        yes_no(&r.ipc_handle_ok),
                        r.ipc_error
                            .as_deref()
                            .map(|e| format!(" ({e})"))
                            .unwrap_or_default(),
                        yes_no(&r.legacy_ipc_capable),
                        r.wall_ms
                    ));
                }
                if let Some(d) = runs.iter().find_map(|r| r.device.as_deref()) {
                    s.push_str(&format!("  device: {d}\n"));
                }
            }
            Probed::Skipped(r) => s.push_str(&format!("{name}: skipped: {r}\n")),
            Probed::Failed(e) => s.push_str(&format!("{name}: failed: {e}\n")),
        }
    }
    s
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
    fn launch_assignment_beats_environment() {
        let e = env(&[("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64")]);
        let l = env(&[("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")]);
        let p = Precedence::default();
        let (c, src) = engine_alloc_conf_by(&e, "this shell", Some(&l), p);
        assert_eq!(c.as_deref(), Some("expandable_segments:True"));
        assert!(src.contains("launch command"));
        let (c, src) = engine_alloc_conf(&e, "this shell", None);
        assert_eq!(c.as_deref(), Some("max_split_size_mb:64"));
        assert!(src.contains("this shell"));
        let (c, _) = engine_alloc_conf(
            &env(&[("PYTORCH_ALLOC_CONF", "expandable_segments:True")]),
            "x",
            None,
        );
        assert_eq!(c.as_deref(), Some("expandable_segments:True"));
        assert_eq!(engine_alloc_conf(&env(&[]), "x", None).0, None);
    }

    #[test]
    fn skipped_paths_render_with_reasons() {
        let p = IpcProbe {
            engine_alloc_conf: None,
            engine_alloc_source: "allocator variables unset in this shell".into(),
            native: Probed::skipped("libcuda.so not found"),
            torch: Probed::skipped("torch path not run (--native-only)"),
        };
        let t = render_text(&p);
        assert!(
            t.contains("native (CUDA driver API): skipped: libcuda.so not found"),
            "{t}"
        );
        assert!(t.contains("unset (default allocator)"));
        assert_eq!(all_runs(&p).count(), 0);
    }

    #[test]
    fn native_path_without_a_driver_is_skipped() {
        // This machine (CI) has no NVIDIA driver; on a GPU host the value path runs instead.
        let r = native::probe(Duration::from_secs(10));
        if let Probed::Skipped(reason) = &r {
            assert!(
                reason.to_string().contains("libcuda") || reason.to_string().contains("no GPU"),
                "{reason}"
            );
        } else {
            assert!(r.value().is_some_and(|v| v.len() == 2), "{r:?}");
        }
    }
}
