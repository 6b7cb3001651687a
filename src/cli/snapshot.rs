//! `snapshot`: collect this host live and write the snapshot (YAML; JSON for a `.json` FILE).

use super::{SnapshotArgs, emit, fail, python_for, seconds};
use crate::input::UsageError;
use crate::report::EXIT_OK;
use crate::snapshot::Probed;
use crate::write::{self, Kind};

pub fn run(args: &SnapshotArgs) -> i32 {
    let timeout = match seconds(args.python_timeout, "--python-timeout") {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    // Refuse before collecting (seconds with Python) rather than after; the write checks again.
    if let Some(p) = &args.output
        && let Err(e) = write::check(p, args.force)
    {
        return fail(UsageError(e.to_string()));
    }
    let opts = crate::collect::CollectOptions {
        python: args.python.clone(),
        python_mode: (!args.no_python).then_some(crate::collect::python::PythonMode::Full),
        python_timeout: timeout,
        ..Default::default()
    };
    let (mut snap, t) = crate::collect::collect_live(&opts);
    let mut probe_ms = None;
    if args.probe {
        let start = std::time::Instant::now();
        let (conf, source) = match snap.env.value() {
            Some(e) => crate::probe::engine_alloc_conf(&e.vars, &e.source, None),
            None => (None, "no environment".to_string()),
        };
        let popts = crate::probe::ProbeOptions {
            python: (!args.no_python).then(|| python_for(args.python.as_deref())),
            ..Default::default()
        };
        snap.probe = Probed::Value(crate::probe::run_ipc(&popts, conf, source));
        probe_ms = Some(start.elapsed().as_secs_f64() * 1000.0);
    }
    if args.timings {
        esay!(
            "timings (ms): nvml {:.1}, proc scan {:.1}, env {:.1}, os {:.1}, processes {:.1}, python {:.1}, pci {:.1}, total {:.1}{}",
            t.nvml_ms,
            t.proc_scan_ms,
            t.env_ms,
            t.os_ms,
            t.processes_ms,
            t.python_ms,
            t.pci_ms,
            t.total_ms,
            probe_ms
                .map(|m| format!(", probe {m:.1}"))
                .unwrap_or_default()
        );
    }
    let json = args.output.as_ref().is_some_and(|p| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    });
    let text = if json {
        serde_json::to_string_pretty(&snap)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| e.to_string())
    } else {
        serde_saphyr::to_string(&snap).map_err(|e| e.to_string())
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => return fail(UsageError(format!("cannot serialise the snapshot: {e}"))),
    };
    match &args.output {
        Some(p) => match write::write(p, text.as_bytes(), Kind::Data, args.force) {
            Ok(_) => EXIT_OK,
            Err(e) => fail(UsageError(e.to_string())),
        },
        None => emit(&text),
    }
}
