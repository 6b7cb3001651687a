//! `probe ipc`: can memory from the engine's allocator config be exported through legacy IPC?
//! `probe p2p`: does peer-to-peer really work between the GPUs (and its hidden child)?

use super::{
    Format, P2pChildArgs, ProbeCommand, ProbeIpcArgs, ProbeP2pArgs, emit, fail, python_for, seconds,
};
use crate::input::{self, UsageError};
use crate::report::{EXIT_FINDINGS, EXIT_OK, EXIT_SKIPPED};
use crate::snapshot::Probed;

/// The environment the engine would get and the launch's own allocator assignments.
fn probe_engine_conf(args: &ProbeIpcArgs) -> Result<(Option<String>, String), UsageError> {
    let fs = crate::collect::fs::RealFs;
    let procs = crate::collect::processes::scan(&fs);
    let own = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let env = crate::collect::env::collect(&fs, &procs, own, std::process::id());
    let (vars, source) = match env.value() {
        Some(e) => (e.vars.clone(), e.source.clone()),
        None => (Default::default(), "no environment".to_string()),
    };
    let launch = match input::launch_source(args.launch.as_deref(), args.launch_file.as_deref())? {
        Some((text, name)) => Some(
            crate::launch::parse_launch(&text).map_err(|e| UsageError(format!("{name}: {e}")))?,
        ),
        None => None,
    };
    Ok(crate::probe::engine_alloc_conf(
        &vars,
        &source,
        launch.as_ref().map(|l| &l.env),
    ))
}

pub fn run(command: &ProbeCommand) -> i32 {
    let args = match command {
        ProbeCommand::Ipc(a) => a,
        ProbeCommand::P2p(a) => return run_p2p(a),
    };
    let timeout = match seconds(args.timeout, "--timeout") {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let (conf, source) = match probe_engine_conf(args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let opts = crate::probe::ProbeOptions {
        python: (!args.native_only).then(|| python_for(args.python.as_deref())),
        native: true,
        torch_timeout: timeout,
        ..Default::default()
    };
    let result = crate::probe::run_ipc(&opts, conf, source);
    let text = match args.format {
        Format::Text => crate::probe::render_text(&result),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        ),
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    ipc_exit(&result)
}

/// `probe ipc`'s exit status: 1 when the engine's config was refused, 3 when no run could say
/// whether it exports (nothing was tested), else 0.
fn ipc_exit(result: &crate::snapshot::IpcProbe) -> i32 {
    let refused = crate::probe::all_runs(result).any(|r| {
        r.path == "torch" && r.role == "engine" && r.ipc_handle_ok == Probed::Value(false)
    });
    if refused {
        EXIT_FINDINGS
    } else if crate::probe::all_runs(result).all(|r| crate::probe::exported(r).is_none()) {
        EXIT_SKIPPED
    } else {
        EXIT_OK
    }
}

// `probe p2p` and its hidden child (issue #19).

/// The probe's options from the arguments.
pub fn p2p_options(args: &ProbeP2pArgs) -> Result<crate::probe::p2p::P2pOptions, UsageError> {
    use crate::probe::p2p::{ChildProgram, GpuSelection, P2pOptions, parse_gpus};
    let (selection, label) = match (&args.gpus, args.tp) {
        (Some(g), _) => (
            parse_gpus(g).map_err(|e| UsageError(format!("--gpus {g:?}: {e}")))?,
            format!("--gpus {g}"),
        ),
        (None, Some(n)) if n >= 2 => (GpuSelection::List((0..n).collect()), format!("--tp {n}")),
        (None, Some(n)) => {
            return Err(UsageError(format!(
                "--tp {n}: a tensor-parallel group of fewer than 2 GPUs has no pairs"
            )));
        }
        (None, None) => (GpuSelection::All, "all visible GPUs".to_string()),
    };
    if !(1..=16_384).contains(&args.size_mib) {
        return Err(UsageError(format!(
            "--size-mib {}: expected 1 to 16384",
            args.size_mib
        )));
    }
    if !(1..=1000).contains(&args.iterations) {
        return Err(UsageError(format!(
            "--iterations {}: expected 1 to 1000",
            args.iterations
        )));
    }
    Ok(P2pOptions {
        selection,
        selection_label: label,
        bytes: args.size_mib << 20,
        iterations: args.iterations,
        timeout: seconds(args.timeout, "--timeout")?,
        child: args.child_program.as_ref().map(|p| ChildProgram {
            program: p.clone(),
            args: Vec::new(),
        }),
        nvml: !args.no_nvml,
        trace: args.trace,
    })
}

/// `probe p2p`: a functional peer-to-peer test per GPU pair (issue #19), in a child process
/// under a hard time limit (see [`crate::probe::p2p`]).
pub fn run_p2p(args: &ProbeP2pArgs) -> i32 {
    let opts = match p2p_options(args) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let result = crate::probe::p2p::run(&opts);
    let text = match args.format {
        Format::Text => crate::probe::p2p::render_text(&result),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        ),
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    match (&result.pairs, crate::probe::p2p::all_ok(&result)) {
        (Probed::Skipped(_), _) => EXIT_SKIPPED,
        (_, Some(true)) => EXIT_OK,
        _ => EXIT_FINDINGS,
    }
}

/// The hidden `__p2p-child` subcommand: the child side of `probe p2p`.
pub fn run_p2p_child(args: &P2pChildArgs) -> i32 {
    let gpus = match crate::probe::p2p::parse_gpus(&args.gpus) {
        Ok(g) => g,
        Err(e) => return fail(UsageError(format!("--gpus {:?}: {e}", args.gpus))),
    };
    crate::probe::p2p_child::main(&crate::probe::p2p_child::ChildArgs {
        gpus,
        bytes: args.bytes,
        iterations: args.iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{IpcProbe, IpcProbeRun};

    fn run(path: &str, role: &str, exported: Probed<bool>) -> IpcProbeRun {
        IpcProbeRun {
            path: path.into(),
            role: role.into(),
            allocator: "torch caching allocator".into(),
            alloc_conf: None,
            expandable: false,
            ipc_handle_ok: exported,
            ipc_error: None,
            legacy_ipc_capable: Probed::skipped("not asked"),
            device: None,
            wall_ms: 0.0,
        }
    }

    #[test]
    fn an_ipc_probe_that_tested_nothing_is_not_an_all_clear() {
        let nothing = IpcProbe {
            native: Probed::skipped("libcuda.so not found"),
            torch: Probed::skipped("torch path not run (--native-only)"),
            ..Default::default()
        };
        assert_eq!(ipc_exit(&nothing), EXIT_SKIPPED);
        let undecided = IpcProbe {
            torch: Probed::Value(vec![run("torch", "engine", Probed::skipped("no GPU"))]),
            ..nothing.clone()
        };
        assert_eq!(ipc_exit(&undecided), EXIT_SKIPPED);
        let exported = IpcProbe {
            torch: Probed::Value(vec![run("torch", "engine", Probed::Value(true))]),
            ..nothing.clone()
        };
        assert_eq!(ipc_exit(&exported), EXIT_OK);
        let refused = IpcProbe {
            torch: Probed::Value(vec![run("torch", "engine", Probed::Value(false))]),
            ..nothing
        };
        assert_eq!(ipc_exit(&refused), EXIT_FINDINGS);
    }
}
