//! The probes in the TUI: the allocator/IPC probe (what to probe with, from the snapshot, and how
//! a result reads, one line per run) and the functional P2P probe (one line per GPU pair and
//! direction). Running them is an effect on a background thread (`effects.rs`).

use crate::snapshot::{HostSnapshot, Input, IpcProbe, IpcProbeRun, P2pProbe, Probed};
use crate::tui::state::words;

/// The allocator config the engine would get on this host, and where it came from: the launch's
/// own assignments over the engine's environment (as `probe ipc` computes it).
pub(crate) fn engine_conf(snapshot: &HostSnapshot) -> (Option<String>, String) {
    let (vars, source) = match snapshot.env.value() {
        Some(e) => (e.vars.clone(), e.source.clone()),
        None => (Default::default(), "no environment".to_string()),
    };
    let launch_env = snapshot.launch.value().map(|l| &l.env);
    crate::probe::engine_alloc_conf(&vars, &source, launch_env)
}

fn word(p: &Probed<bool>, yes: &str, no: &str) -> String {
    match p {
        Probed::Value(true) => yes.into(),
        Probed::Value(false) => no.into(),
        Probed::Skipped(s) => format!("skipped ({s})"),
        Probed::Failed(e) => format!("failed ({e})"),
    }
}

/// One run: path, role, allocator (and config), IPC handle ok/refused, legacy IPC capable.
pub(crate) fn run_line(r: &IpcProbeRun) -> String {
    let conf = match (&r.alloc_conf, r.path.as_str()) {
        (Some(c), _) => format!(" [{c}]"),
        (None, "torch") => " [unset]".into(),
        (None, _) => String::new(),
    };
    let err = match (&r.ipc_handle_ok, &r.ipc_error) {
        (Probed::Value(false), Some(e)) => format!(" ({e})"),
        _ => String::new(),
    };
    format!(
        "{} {}: {}{conf} · IPC handle {}{err} · legacy IPC capable {}",
        r.path,
        r.role,
        r.allocator,
        word(&r.ipc_handle_ok, "ok", "refused"),
        word(&r.legacy_ipc_capable, "yes", "no"),
    )
}

/// The probe section, as plain lines in the TUI's words (`live`: the probe runs here).
pub fn lines(probe: &Probed<IpcProbe>, live: bool) -> Vec<String> {
    let p = match probe {
        Probed::Value(p) => p,
        Probed::Skipped(s) => return vec![format!("not run: {}", words::reason(live, s))],
        Probed::Failed(e) => return vec![format!("failed: {}", words::reason(live, e))],
    };
    let mut out = vec![format!(
        "engine allocator config: {} ({})",
        p.engine_alloc_conf.as_deref().unwrap_or("unset"),
        p.engine_alloc_source
    )];
    for (name, section) in [("native", &p.native), ("torch", &p.torch)] {
        match section {
            Probed::Value(runs) if runs.is_empty() => out.push(format!("{name}: no runs")),
            Probed::Value(runs) => {
                out.extend(runs.iter().map(run_line));
                if let Some(d) = runs.iter().find_map(|r| r.device.as_deref()) {
                    out.push(format!("{name} device: {d}"));
                }
            }
            Probed::Skipped(s) => out.push(format!("{name}: skipped: {s}")),
            Probed::Failed(e) => out.push(format!("{name}: failed: {e}")),
        }
    }
    out
}

/// A one-line summary for the status bar.
pub fn summary(p: &IpcProbe) -> String {
    let runs: Vec<&IpcProbeRun> = crate::probe::all_runs(p).collect();
    if runs.is_empty() {
        let why = p
            .native
            .missing_reason()
            .or(p.torch.missing_reason())
            .map_or_else(|| "no runs".to_string(), ToString::to_string);
        return format!("allocator/IPC probe: nothing measured ({why})");
    }
    let refused = runs
        .iter()
        .filter(|r| r.ipc_handle_ok == Probed::Value(false))
        .count();
    format!(
        "allocator/IPC probe done: {} run(s), IPC handle refused in {refused}; the walk was re-run",
        runs.len()
    )
}

/// What the P2P section says while the probe runs.
pub(crate) fn p2p_running_line(tp: Option<u32>) -> String {
    let which = match tp.filter(|n| *n >= 2) {
        Some(n) => format!("GPUs 0-{} (--tp {n})", n - 1),
        None => "every GPU pair".into(),
    };
    format!(
        "running: write, read back and compare {which}, both ways (about a second; at most 10 s)…"
    )
}

/// The P2P probe section, as plain lines: each pair's outcome and the driver's report, each
/// direction with its bandwidth.
pub fn p2p_lines(probe: &Probed<P2pProbe>, live: bool) -> Vec<String> {
    let p = match probe {
        Probed::Value(p) => p,
        // Not run yet: the section says how to run it.
        p if p.is_missing(Input::P2pProbe) => return Vec::new(),
        Probed::Skipped(s) => return vec![format!("not run: {}", words::reason(live, s))],
        Probed::Failed(e) => return vec![format!("failed: {}", words::reason(live, e))],
    };
    let pairs = match &p.pairs {
        Probed::Value(v) => v,
        Probed::Skipped(s) => return vec![format!("skipped: {s}")],
        Probed::Failed(e) => return vec![format!("failed: {e}")],
    };
    let mut out = Vec::new();
    for x in pairs {
        out.push(format!(
            "GPU{}↔GPU{}: {} · driver: peer access {}/{}, NVML read {} write {}",
            x.a,
            x.b,
            x.functional.describe(),
            word(&x.cuda_can_access_peer_ab, "yes", "no"),
            word(&x.cuda_can_access_peer_ba, "yes", "no"),
            word(&x.nvml_p2p_read, "OK", "not OK"),
            word(&x.nvml_p2p_write, "OK", "not OK"),
        ));
        for d in &x.directions {
            let bw = d
                .gb_per_s
                .map(|g| format!(" {g:.1} GB/s"))
                .unwrap_or_default();
            out.push(format!(
                "  {} {}→{}: {}{bw}",
                d.method,
                d.from,
                d.to,
                d.outcome.describe()
            ));
        }
    }
    out.push(format!(
        "child {}, whole probe {:.0} ms",
        p.child_ending, p.wall_ms
    ));
    out
}

/// A one-line summary for the status bar.
pub(crate) fn p2p_summary(p: &P2pProbe) -> String {
    match &p.pairs {
        Probed::Value(pairs) => {
            let bad = pairs
                .iter()
                .filter(|x| x.functional != crate::snapshot::P2pOutcome::Ok)
                .count();
            format!(
                "P2P probe done: {} pair(s), {bad} not ok, {:.0} ms; the walk was re-run",
                pairs.len(),
                p.wall_ms
            )
        }
        Probed::Skipped(s) => format!("P2P probe skipped: {s}"),
        Probed::Failed(e) => format!("P2P probe failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(path: &str, role: &str, ok: bool, err: Option<&str>) -> IpcProbeRun {
        IpcProbeRun {
            path: path.into(),
            role: role.into(),
            allocator: "torch caching allocator".into(),
            alloc_conf: Some("expandable_segments:True".into()),
            expandable: true,
            ipc_handle_ok: Probed::Value(ok),
            ipc_error: err.map(str::to_string),
            legacy_ipc_capable: Probed::Value(ok),
            device: Some("NVIDIA H200 (9.0)".into()),
            wall_ms: 12.0,
        }
    }

    #[test]
    fn a_refused_run_names_the_error_and_capability() {
        let l = run_line(&run("torch", "engine", false, Some("invalid argument")));
        assert_eq!(
            l,
            "torch engine: torch caching allocator [expandable_segments:True] · IPC handle refused (invalid argument) · legacy IPC capable no"
        );
    }

    #[test]
    fn skipped_sections_keep_their_reasons() {
        let p = IpcProbe {
            engine_alloc_conf: None,
            engine_alloc_source: "allocator variables unset in this shell".into(),
            native: Probed::skipped("libcuda.so.1 not found"),
            torch: Probed::Value(vec![run("torch", "remedy", true, None)]),
        };
        let l = lines(&Probed::Value(p.clone()), false);
        assert_eq!(
            l[0],
            "engine allocator config: unset (allocator variables unset in this shell)"
        );
        assert_eq!(l[1], "native: skipped: libcuda.so.1 not found");
        assert!(l[2].contains("IPC handle ok"), "{l:?}");
        assert_eq!(l[3], "torch device: NVIDIA H200 (9.0)");
        assert!(summary(&p).contains("refused in 0"), "{}", summary(&p));
        let none = IpcProbe {
            torch: Probed::skipped("no torch"),
            ..p
        };
        assert!(summary(&none).contains("libcuda.so.1 not found"));
    }
}
