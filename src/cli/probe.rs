//! `probe ipc`: can memory from the engine's allocator config be exported through legacy IPC?

use super::{Format, ProbeCommand, ProbeIpcArgs, emit, fail, python_for, seconds};
use crate::input::{self, UsageError};
use crate::report::{EXIT_FINDINGS, EXIT_OK};
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
    let ProbeCommand::Ipc(args) = command;
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
    let refused = crate::probe::all_runs(&result).any(|r| {
        r.path == "torch" && r.role == "engine" && r.ipc_handle_ok == Probed::Value(false)
    });
    if refused { EXIT_FINDINGS } else { EXIT_OK }
}
