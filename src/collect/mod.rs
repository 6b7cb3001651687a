//! Live host collection. Collectors write snapshot fields and never judge.
//!
//! One module per source: [`nvml`] (GPUs, pairs, driver), [`env`] (the engine's environment),
//! [`python`] (the Python stack), [`os`] (kernel module, kernel, distribution),
//! [`processes`] (GPU processes, orphaned vLLM workers) and [`pci`] (IOMMU, ACS, GPU PCIe
//! paths). Each source sits behind a trait, a thread or a child process with a time limit, so
//! a source that is missing, refuses or hangs yields a
//! skipped/failed field with a reason and the rest of the snapshot stays intact.

pub mod env;
pub mod fs;
pub mod nvml;
pub mod os;
pub mod pci;
pub mod processes;
pub mod python;
pub mod refresh;
pub mod run;

use crate::snapshot::{
    Gpu, HostSnapshot, Input, PciFabric, Probed, Reason, ReasonCode, SNAPSHOT_SCHEMA_VERSION,
};
use fs::{HostFs, RealFs};
use nvml::{NvmlData, NvmlSource, RealNvml};
use python::PythonMode;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What to collect and how long to wait.
#[derive(Debug, Clone)]
pub struct CollectOptions {
    /// `--python PATH`; else the active venv / conda env / python3.
    pub python: Option<PathBuf>,
    /// `None`: leave the Python section skipped.
    pub python_mode: Option<PythonMode>,
    pub python_timeout: Duration,
    pub nvml_timeout: Duration,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            python: None,
            python_mode: Some(PythonMode::Full),
            python_timeout: python::DEFAULT_TIMEOUT,
            nvml_timeout: Duration::from_secs(10),
        }
    }
}

/// Milliseconds each source took (wall clock; sources run in parallel).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timings {
    pub nvml_ms: f64,
    pub proc_scan_ms: f64,
    pub env_ms: f64,
    pub os_ms: f64,
    pub processes_ms: f64,
    pub python_ms: f64,
    pub pci_ms: f64,
    pub total_ms: f64,
}

/// How long the PCI fabric may take (sysfs reads, and lspci per bridge when needed).
const PCI_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything the collectors read from. Tests and benchmarks build one from fakes.
pub struct Sources {
    /// Opens NVML and collects; run on its own thread under `nvml_timeout`.
    pub nvml: Box<dyn FnOnce() -> NvmlData + Send>,
    pub fs: Arc<dyn HostFs>,
    /// This process's environment.
    pub own_env: Vec<(String, String)>,
    pub own_pid: u32,
    /// Reads the PCI fabric (IOMMU, ACS, GPU paths); run on its own thread.
    pub pci: Box<dyn FnOnce() -> Probed<PciFabric> + Send>,
}

impl Sources {
    /// The real host.
    pub fn live() -> Self {
        Sources {
            nvml: Box::new(|| match RealNvml::open() {
                Ok(n) => nvml::collect(&n),
                Err(reason) => NvmlData::unavailable(&reason),
            }),
            fs: Arc::new(RealFs),
            own_env: std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
            own_pid: std::process::id(),
            pci: Box::new(pci::collect_live),
        }
    }

    /// An NVML source that is already open (a fake, or a shared real one).
    pub fn with_nvml<S: NvmlSource + 'static>(src: S, fs: Arc<dyn HostFs>) -> Self {
        Sources {
            nvml: Box::new(move || nvml::collect(&src)),
            fs,
            own_env: Vec::new(),
            own_pid: 0,
            pci: Box::new(|| Probed::missing(Input::PciFabric)),
        }
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Collect a snapshot from `src`.
pub fn collect_with(src: Sources, opts: &CollectOptions) -> (HostSnapshot, Timings) {
    let start = Instant::now();
    let mut t = Timings::default();

    // NVML on its own thread: a hung driver must not hang the tool.
    let (ntx, nrx) = mpsc::channel();
    let nvml_task = src.nvml;
    thread::spawn(move || {
        let s = Instant::now();
        let data = nvml_task();
        let _ = ntx.send((data, ms(s)));
    });

    // Python on its own thread, under its own time limit.
    let (ptx, prx) = mpsc::channel();
    if let Some(mode) = opts.python_mode {
        let explicit = opts.python.clone();
        let own: std::collections::BTreeMap<String, String> = src.own_env.iter().cloned().collect();
        let timeout = opts.python_timeout;
        thread::spawn(move || {
            let s = Instant::now();
            let (interp, _why) =
                python::find_interpreter(explicit.as_deref(), &|n| own.get(n).cloned(), &|p| {
                    p.exists()
                });
            let stack = python::collect(&interp, mode, timeout);
            let _ = ptx.send((stack, ms(s)));
        });
    }

    // The PCI fabric on its own thread too (lspci may be asked).
    let (ctx, crx) = mpsc::channel();
    let pci_task = src.pci;
    thread::spawn(move || {
        let s = Instant::now();
        let fabric = pci_task();
        let _ = ctx.send((fabric, ms(s)));
    });

    let fs = src.fs.as_ref();
    let s = Instant::now();
    let procs = processes::scan(fs);
    t.proc_scan_ms = ms(s);
    let s = Instant::now();
    let env = env::collect(fs, &procs, src.own_env, src.own_pid);
    t.env_ms = ms(s);
    let s = Instant::now();
    let os = os::collect(fs);
    let module = os::driver_module(fs);
    t.os_ms = ms(s);

    let nvml = match nrx.recv_timeout(opts.nvml_timeout) {
        Ok((d, took)) => {
            t.nvml_ms = took;
            d
        }
        Err(_) => {
            t.nvml_ms = ms(start);
            NvmlData::unavailable(&Probed::failed(Reason::new(
                ReasonCode::Timeout,
                format!(
                    "NVML did not answer within {:.0} s (driver hung?)",
                    opts.nvml_timeout.as_secs_f64()
                ),
            )))
        }
    };
    let mut driver = nvml.driver;
    if let Some(d) = driver.value_mut() {
        d.kernel_module = module;
    }
    let s = Instant::now();
    let gpu_processes = processes::classify(fs, &nvml.processes);
    t.processes_ms = ms(s);

    let python = if opts.python_mode.is_some() {
        // The child is killed at its own limit; allow a little for start-up and parsing.
        match prx.recv_timeout(opts.python_timeout + Duration::from_secs(2)) {
            Ok((stack, took)) => {
                t.python_ms = took;
                stack
            }
            Err(_) => Probed::failed(Reason::new(
                ReasonCode::NoResult,
                "the Python collector did not return",
            )),
        }
    } else {
        python_not_requested()
    };

    let pci_fabric = match crx.recv_timeout(PCI_TIMEOUT) {
        Ok((f, took)) => {
            t.pci_ms = took;
            f
        }
        Err(_) => Probed::failed(Reason::new(
            ReasonCode::Timeout,
            format!(
                "the PCI fabric was not read within {:.0} s",
                PCI_TIMEOUT.as_secs_f64()
            ),
        )),
    };

    let snap = HostSnapshot {
        schema_version: SNAPSHOT_SCHEMA_VERSION,
        origin: crate::snapshot::Origin::Live,
        captured_at: Some(rfc3339(SystemTime::now())),
        gpus: nvml.gpus,
        gpu_pairs: nvml.gpu_pairs,
        driver,
        env,
        python,
        os,
        processes: gpu_processes,
        launch: Probed::missing(Input::Launch),
        probe: Probed::missing(Input::IpcProbe),
        p2p_probe: Probed::missing(Input::P2pProbe),
        pci_fabric,
    };
    t.total_ms = ms(start);
    (snap, t)
}

/// The Python stack when `--no-python` asked for none: not requested, never "not installed".
pub fn python_not_requested() -> Probed<crate::snapshot::PythonStack> {
    Probed::skipped(Reason::new(
        ReasonCode::NotRequested,
        "Python stack not collected (--no-python)",
    ))
}

/// Collect this host.
pub fn collect_live(opts: &CollectOptions) -> (HostSnapshot, Timings) {
    collect_with(Sources::live(), opts)
}

/// A poll function for [`refresh::spawn_refresher`] on this host's NVML.
pub(crate) fn live_gpu_poll() -> impl FnMut() -> Probed<Vec<Gpu>> + Send + 'static {
    move || match RealNvml::open() {
        Ok(n) => nvml::poll_gpus(&n),
        Err(reason) => nvml::same_reason(&reason),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a time.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_000_000);
        assert_eq!(rfc3339(t), "2026-11-30T00:53:20Z");
    }
}
