//! The torch IPC probe: the user's Python and torch in child processes, one under the allocator
//! config the engine would get and one under the remedy (or, when the engine's config has no
//! expandable segments, under expandable segments as a comparison). The children run in
//! parallel, each under a time limit, in their own process group.

use crate::collect::run::{Ending, RunOutput, last_line, run_with_timeout, short};
use crate::snapshot::{IpcProbeRun, Probed};
use crate::vllm::alloc_conf::{self, EXPANDABLE_SEGMENTS, Switch};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

pub const SCRIPT: &str = include_str!("../../assets/probe/ipc_probe.py");

/// The config with `expandable_segments` set to `on`, other options kept in order.
pub(crate) fn with_expandable(conf: Option<&str>, on: bool) -> String {
    let value = if on {
        alloc_conf::TRUE
    } else {
        alloc_conf::FALSE
    };
    alloc_conf::set_option(conf.unwrap_or(""), EXPANDABLE_SEGMENTS, value)
}

/// What the engine's config says about expandable segments (the verdict `check` and `fix`
/// use too).
pub fn engine_expandable(engine: Option<&str>) -> Switch {
    engine.map_or(Switch::Absent, |c| {
        alloc_conf::switch(c, EXPANDABLE_SEGMENTS)
    })
}

/// The children to run: (role, config). The engine's own config first. When it turns
/// expandable segments on, or gives them a value PyTorch rejects, the second child runs the
/// remedy (expandable segments off); otherwise it runs expandable segments on, for comparison.
pub fn plan(engine: Option<&str>) -> Vec<(&'static str, Option<String>)> {
    let mut p = vec![("engine", engine.map(str::to_string))];
    match engine_expandable(engine) {
        Switch::On | Switch::Invalid(_) => p.push(("remedy", Some(with_expandable(engine, false)))),
        Switch::Off | Switch::Absent => p.push(("comparison", Some(with_expandable(engine, true)))),
    }
    p
}

#[derive(Debug, Default, Deserialize)]
struct ChildLine {
    torch: Option<String>,
    device: Option<String>,
    ipc_rc: Option<i64>,
    ipc_error: Option<String>,
    attr_rc: Option<i64>,
    legacy_ipc_capable: Option<i64>,
    skipped: Option<String>,
    error: Option<String>,
}

/// What one child said.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildResult {
    /// Boxed: a run is large beside a reason.
    Run(Box<IpcProbeRun>),
    /// The whole torch path cannot run here (no torch, no GPU): the reason.
    Skip(String),
}

/// Parse one child's output into a run (or a reason the torch path is skipped).
pub(crate) fn parse_child(
    role: &str,
    conf: Option<&str>,
    out: &RunOutput,
    timeout: Duration,
) -> ChildResult {
    let run =
        |handle: Probed<bool>, err: Option<String>, cap: Probed<bool>, device: Option<String>| {
            ChildResult::Run(Box::new(IpcProbeRun {
                path: "torch".into(),
                role: role.into(),
                allocator: "torch caching allocator".into(),
                alloc_conf: conf.map(str::to_string),
                expandable: engine_expandable(conf).is_on(),
                ipc_handle_ok: handle,
                ipc_error: err,
                legacy_ipc_capable: cap,
                device,
                wall_ms: out.elapsed.as_secs_f64() * 1000.0,
            }))
        };
    let failed = |why: String| run(Probed::failed(why.clone()), None, Probed::failed(why), None);
    if let Ending::SpawnFailed(e) = &out.ending {
        return ChildResult::Skip(format!("cannot start the Python interpreter: {e}"));
    }
    let line = out
        .stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'));
    let parsed: Option<ChildLine> = line.and_then(|l| serde_json::from_str(l).ok());
    let Some(c) = parsed else {
        return failed(match &out.ending {
            Ending::TimedOut => format!(
                "the torch probe did not finish within {:.0} s",
                timeout.as_secs_f64()
            ),
            _ if !out.stdout.trim().is_empty() => format!(
                "the torch probe printed something that is not the expected JSON: {:?}",
                short(out.stdout.trim(), 80)
            ),
            _ => format!(
                "the torch probe ended without output: {}",
                last_line(&out.stderr)
            ),
        });
    };
    if let Some(s) = c.skipped {
        return ChildResult::Skip(s);
    }
    if let Some(e) = c.error {
        if e.contains("No module named 'torch'") {
            return ChildResult::Skip(
                "not installed: torch is not importable in this Python".into(),
            );
        }
        return failed(e);
    }
    let Some(rc) = c.ipc_rc else {
        return failed("the torch probe reported no IPC result".into());
    };
    let cap = match (c.attr_rc, c.legacy_ipc_capable) {
        (Some(0), Some(v)) => Probed::Value(v == 1),
        (Some(r), _) => Probed::failed(format!("cuPointerGetAttribute returned {r}")),
        _ => Probed::failed("pointer attribute not reported"),
    };
    let _ = c.torch;
    run(Probed::Value(rc == 0), c.ipc_error, cap, c.device)
}

/// Run the torch probe with `python`. `base_env` is removed of allocator variables and each
/// child gets its own.
pub fn probe(python: &Path, engine: Option<&str>, timeout: Duration) -> Probed<Vec<IpcProbeRun>> {
    let handles: Vec<_> = plan(engine)
        .into_iter()
        .map(|(role, conf)| {
            let py: PathBuf = python.to_path_buf();
            thread::spawn(move || {
                let mut cmd = Command::new(&py);
                cmd.arg("-c")
                    .arg(SCRIPT)
                    .env_remove(alloc_conf::GENERIC_VAR)
                    .env("PYTHONUNBUFFERED", "1")
                    .env("PYTHONDONTWRITEBYTECODE", "1");
                match &conf {
                    Some(c) => cmd.env(alloc_conf::CUDA_VAR, c),
                    None => cmd.env_remove(alloc_conf::CUDA_VAR),
                };
                let out = run_with_timeout(cmd, timeout);
                parse_child(role, conf.as_deref(), &out, timeout)
            })
        })
        .collect();
    let mut runs = Vec::new();
    let mut skip = None;
    for h in handles {
        match h.join() {
            Ok(ChildResult::Run(r)) => runs.push(*r),
            Ok(ChildResult::Skip(s)) => skip = Some(s),
            Err(_) => skip = Some("the torch probe thread panicked".into()),
        }
    }
    match (runs.is_empty(), skip) {
        (true, Some(s)) => Probed::skipped(s),
        (true, None) => Probed::failed("no torch probe ran"),
        (false, _) => Probed::Value(runs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(stdout: &str, ending: Ending) -> RunOutput {
        RunOutput {
            ending,
            stdout: stdout.into(),
            stderr: String::new(),
            elapsed: Duration::from_millis(4000),
        }
    }

    #[test]
    fn remedy_and_comparison_configs() {
        assert_eq!(
            with_expandable(
                Some("expandable_segments:True,max_split_size_mb:512"),
                false
            ),
            "max_split_size_mb:512,expandable_segments:False"
        );
        assert_eq!(with_expandable(None, true), "expandable_segments:True");
        let p = plan(Some("expandable_segments:True"));
        assert_eq!(p[1], ("remedy", Some("expandable_segments:False".into())));
        let p = plan(None);
        assert_eq!(p[0], ("engine", None));
        assert_eq!(
            p[1],
            ("comparison", Some("expandable_segments:True".into()))
        );
    }

    #[test]
    fn parses_a_refused_handle() {
        let line = r#"{"conf":"expandable_segments:True","torch":"2.11.0+cu130","device":"NVIDIA H200 (9.0)","ipc_rc":1,"ipc_error":"cudaErrorInvalidValue (invalid argument)","attr_rc":0,"legacy_ipc_capable":0}"#;
        let r = parse_child(
            "engine",
            Some("expandable_segments:True"),
            &out(line, Ending::Exited(Some(0))),
            Duration::from_secs(30),
        );
        let ChildResult::Run(r) = r else {
            panic!("expected a run")
        };
        assert_eq!(r.ipc_handle_ok, Probed::Value(false));
        assert_eq!(r.legacy_ipc_capable, Probed::Value(false));
        assert!(r.expandable);
        assert_eq!(
            r.ipc_error.as_deref(),
            Some("cudaErrorInvalidValue (invalid argument)")
        );
    }

    #[test]
    fn parses_an_exportable_allocation() {
        let line = r#"{"conf":null,"torch":"2.11.0","device":"NVIDIA H200 (9.0)","ipc_rc":0,"attr_rc":0,"legacy_ipc_capable":1}"#;
        let ChildResult::Run(r) = parse_child(
            "engine",
            None,
            &out(line, Ending::Exited(Some(0))),
            Duration::from_secs(30),
        ) else {
            panic!("expected a run")
        };
        assert_eq!(
            (r.ipc_handle_ok, r.legacy_ipc_capable, r.expandable),
            (Probed::Value(true), Probed::Value(true), false)
        );
    }

    #[test]
    fn skip_paths() {
        let r = parse_child(
            "engine",
            None,
            &out(
                r#"{"conf":null,"torch":"2.11.0","skipped":"torch sees no CUDA device"}"#,
                Ending::Exited(Some(0)),
            ),
            Duration::from_secs(1),
        );
        assert_eq!(r, ChildResult::Skip("torch sees no CUDA device".into()));
        let r = parse_child(
            "engine",
            None,
            &out(
                r#"{"conf":null,"error":"import torch failed: ModuleNotFoundError: No module named 'torch'"}"#,
                Ending::Exited(Some(0)),
            ),
            Duration::from_secs(1),
        );
        assert!(matches!(r, ChildResult::Skip(ref s) if s.starts_with("not installed")));
        let r = parse_child(
            "engine",
            None,
            &out("", Ending::SpawnFailed("No such file".into())),
            Duration::from_secs(1),
        );
        assert!(matches!(r, ChildResult::Skip(_)));
    }

    #[test]
    fn timeouts_and_garbage_are_failed_runs() {
        let ChildResult::Run(r) = parse_child(
            "engine",
            None,
            &out("", Ending::TimedOut),
            Duration::from_secs(20),
        ) else {
            panic!("expected a run")
        };
        assert!(
            matches!(r.ipc_handle_ok, Probed::Failed(ref e) if e.to_string().contains("within 20 s"))
        );
        let ChildResult::Run(r) = parse_child(
            "engine",
            None,
            &out("Segmentation fault", Ending::Exited(Some(139))),
            Duration::from_secs(20),
        ) else {
            panic!("expected a run")
        };
        assert!(
            matches!(r.ipc_handle_ok, Probed::Failed(ref e) if e.to_string().contains("not the expected JSON"))
        );
    }
}
