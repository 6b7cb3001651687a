//! Processes from /proc, and GPU compute processes matched to vLLM (orphaned workers, facts §6f).

use super::fs::{HostFs, io_reason};
use super::nvml::RawProcess;
use crate::snapshot::{GpuProcess, Probed, PythonStack};
use std::collections::BTreeMap;

/// One process as /proc shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: Option<u32>,
    /// Short name from /proc/PID/comm (vLLM renames its processes, e.g. `VLLM::EngineCore`).
    pub comm: String,
    pub cmdline: Vec<String>,
}

impl ProcInfo {
    pub fn command(&self) -> String {
        if self.cmdline.is_empty() {
            self.comm.clone()
        } else {
            self.cmdline.join(" ")
        }
    }

    /// Part of a vLLM server: the API server, the engine core or a worker.
    pub fn is_vllm(&self) -> bool {
        if self.is_doctor() {
            return false;
        }
        let comm = self.comm.to_ascii_lowercase();
        comm.starts_with("vllm")
            || self.cmdline.iter().take(4).any(|a| {
                let a = a.to_ascii_lowercase();
                a == "vllm"
                    || a.ends_with("/vllm")
                    || a.starts_with("vllm.")
                    || a.starts_with("vllm::")
                    || a.contains("vllm.entrypoints")
            })
    }

    /// The process that serves the API (`vllm serve`, `-m vllm.entrypoints...api_server`).
    pub(crate) fn is_vllm_server(&self) -> bool {
        if !self.is_vllm() {
            return false;
        }
        let args: Vec<String> = self
            .cmdline
            .iter()
            .map(|a| a.to_ascii_lowercase())
            .collect();
        args.iter()
            .any(|a| a == "serve" || a.contains("api_server"))
            || self.comm.eq_ignore_ascii_case("vllm")
    }

    fn is_doctor(&self) -> bool {
        self.comm.contains("sm120-doctor")
            || self
                .cmdline
                .first()
                .is_some_and(|a| a.contains("sm120-doctor"))
    }
}

/// Parse the parent pid from /proc/PID/stat (`pid (comm) state ppid ...`; comm may hold spaces
/// and parentheses, so split after the last `)`).
pub(crate) fn parse_stat_ppid(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Read one process; `None` when it is gone or invisible (another PID namespace).
pub(crate) fn read_proc(fs: &dyn HostFs, pid: u32) -> Option<ProcInfo> {
    let cmdline = fs.read(&format!("/proc/{pid}/cmdline")).ok()?;
    let comm = fs
        .read(&format!("/proc/{pid}/comm"))
        .map(|c| c.trim().to_string())
        .unwrap_or_default();
    let ppid = fs
        .read(&format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| parse_stat_ppid(&s));
    Some(ProcInfo {
        pid,
        ppid,
        comm,
        cmdline: cmdline
            .split('\0')
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

/// Every readable process. Errors only when /proc itself cannot be listed.
pub fn scan(fs: &dyn HostFs) -> Result<Vec<ProcInfo>, String> {
    let names = fs.list("/proc").map_err(|e| io_reason("/proc", &e))?;
    let mut pids: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
    pids.sort_unstable();
    Ok(pids.into_iter().filter_map(|p| read_proc(fs, p)).collect())
}

/// Is there a live vLLM server among `pid`'s ancestors (or is `pid` one)?
fn server_alive(fs: &dyn HostFs, info: &ProcInfo) -> bool {
    let mut cur = info.clone();
    for _ in 0..32 {
        if cur.is_vllm_server() {
            return true;
        }
        match cur.ppid {
            Some(pp) if pp > 1 => match read_proc(fs, pp) {
                Some(p) => cur = p,
                None => return false,
            },
            // Reparented to init (or a subreaper with pid 1 that is not vLLM).
            Some(1) => return read_proc(fs, 1).is_some_and(|p| p.is_vllm_server()),
            _ => return false,
        }
    }
    false
}

/// Turn NVML's compute processes into snapshot processes: name, vLLM or not, and whether the
/// vLLM server that owns a worker is still alive. Processes invisible in /proc keep
/// `name: None` and `parent_alive: None`.
pub fn classify(fs: &dyn HostFs, raw: &Probed<Vec<RawProcess>>) -> Probed<Vec<GpuProcess>> {
    let raw = match raw {
        Probed::Value(r) => r,
        Probed::Skipped(s) => return Probed::skipped(s.clone()),
        Probed::Failed(e) => return Probed::failed(e.clone()),
    };
    let mut cache: BTreeMap<u32, Option<ProcInfo>> = BTreeMap::new();
    let out = raw
        .iter()
        .map(|p| {
            let info = cache
                .entry(p.pid)
                .or_insert_with(|| read_proc(fs, p.pid))
                .clone();
            let (name, is_vllm, parent_alive) = match &info {
                Some(i) if i.is_vllm() => (
                    Some(crate::collect::run::short(&i.command(), 160)),
                    true,
                    Some(server_alive(fs, i)),
                ),
                Some(i) => (
                    Some(crate::collect::run::short(&i.command(), 160)),
                    false,
                    None,
                ),
                None => (None, false, None),
            };
            GpuProcess {
                pid: p.pid,
                name,
                gpu_index: Some(p.gpu_index),
                used_memory_mib: p.used_memory_mib,
                parent_alive,
                is_vllm,
            }
        })
        .collect();
    Probed::Value(out)
}

/// The site-packages directory of a running process, as its memory maps name it (torch's and
/// other extension libraries are mapped from there): the path up to and including the first
/// `site-packages` or `dist-packages` component, in the process's own mount namespace.
pub(crate) fn site_packages_from_maps(maps: &str) -> Option<String> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.starts_with('/'))
        .find_map(|p| {
            ["/site-packages/", "/dist-packages/"]
                .iter()
                .find_map(|m| p.find(m).map(|i| p[..i + m.len() - 1].to_string()))
        })
}

/// `pythonX.Y` in a site-packages path (`…/lib/python3.12/site-packages`).
fn python_version_of(site: &str) -> Option<String> {
    site.split('/').find_map(|c| {
        let v = c.strip_prefix("python")?;
        let ok = !v.is_empty()
            && v.split('.')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        ok.then(|| v.to_string())
    })
}

/// The distributions installed in a site-packages listing: normalized name (lower case, `-`
/// and `.` as `_`) to version, from `NAME-VERSION.dist-info` directory names.
pub(crate) fn dist_versions(names: &[String]) -> BTreeMap<String, String> {
    names
        .iter()
        .filter_map(|n| n.strip_suffix(".dist-info"))
        .filter_map(|n| n.split_once('-'))
        .map(|(name, version)| {
            (
                name.to_ascii_lowercase().replace(['-', '.'], "_"),
                version.to_string(),
            )
        })
        .collect()
}

/// `cuda = '12.8'` (or `cuda: Optional[str] = '12.8'`) in torch/version.py.
fn torch_cuda_of(version_py: &str) -> Option<String> {
    version_py.lines().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("cuda")?;
        let (_, value) = rest.split_once('=')?;
        let v = value.trim().trim_matches(|c| c == '\'' || c == '"');
        (!v.is_empty() && v != "None").then(|| v.to_string())
    })
}

/// The Python stack of a running vLLM process on this host, read from its own files through
/// `/proc/PID/root` without running anything: where the tool's own interpreter is not the
/// engine's (the DaemonSet's image has none; the vLLM pods have theirs). The process is the
/// first vLLM server found (else any vLLM process); its site-packages come from its memory
/// maps, the versions from the `*.dist-info` names there, torch's CUDA from torch/version.py.
/// What only an import can tell (the arch list, the DeepGEMM build, the FP8 configs, nvcc) is
/// left as skipped. `None` when no vLLM process or no site-packages can be read.
pub(crate) fn vllm_python_stack(fs: &dyn HostFs) -> Option<PythonStack> {
    let procs = scan(fs).ok()?;
    let vllm: Vec<&ProcInfo> = procs.iter().filter(|p| p.is_vllm()).collect();
    let chosen = vllm
        .iter()
        .find(|p| p.is_vllm_server())
        .or_else(|| vllm.first())?;
    let pid = chosen.pid;
    let site = site_packages_from_maps(&fs.read(&format!("/proc/{pid}/maps")).ok()?)?;
    let root = format!("/proc/{pid}/root");
    let names = fs.list(&format!("{root}{site}")).ok()?;
    let dists = dist_versions(&names);
    let how = format!("read from /proc/{pid}/root{site} (vLLM process {pid}; not run)");
    let version = |names: &[&str]| -> Probed<String> {
        names
            .iter()
            .find_map(|n| dists.get(*n).cloned())
            .map_or_else(
                || Probed::skipped(format!("not installed in {site} of process {pid}")),
                Probed::Value,
            )
    };
    let not_read = || format!("only an import in the process's interpreter tells ({how})");
    Some(PythonStack {
        interpreter: Some(how.clone()),
        python: python_version_of(&site).map_or_else(|| Probed::skipped(not_read()), Probed::Value),
        vllm: version(&["vllm"]),
        torch: version(&["torch"]),
        torch_cuda: fs
            .read(&format!("{root}{site}/torch/version.py"))
            .ok()
            .and_then(|t| torch_cuda_of(&t))
            .map_or_else(|| Probed::skipped(not_read()), Probed::Value),
        torch_arch_list: Probed::skipped(not_read()),
        triton: version(&["triton", "pytorch_triton"]),
        flashinfer: version(&["flashinfer_python", "flashinfer"]),
        deep_gemm: version(&["deep_gemm"]),
        deep_gemm_build: Probed::skipped(not_read()),
        fp8_config_dir: Probed::skipped(not_read()),
        fp8_config_files: Probed::skipped(not_read()),
        cuda_toolkit: Probed::skipped(not_read()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::fs::MapFs;

    fn proc(fs: MapFs, pid: u32, ppid: u32, comm: &str, cmd: &str) -> MapFs {
        fs.file(&format!("/proc/{pid}/cmdline"), &cmd.replace(' ', "\0"))
            .file(&format!("/proc/{pid}/comm"), &format!("{comm}\n"))
            .file(
                &format!("/proc/{pid}/stat"),
                &format!("{pid} ({comm}) S {ppid} 1 1 0"),
            )
    }

    #[test]
    fn stat_with_odd_comm() {
        assert_eq!(parse_stat_ppid("42 (a (b) c) S 7 42 42 0"), Some(7));
        assert_eq!(parse_stat_ppid("garbage"), None);
    }

    #[test]
    fn orphaned_worker_and_live_worker() {
        let fs = proc(MapFs::new(), 1, 0, "init", "/sbin/init");
        let fs = proc(
            fs,
            100,
            1,
            "vllm",
            "/usr/bin/python3 /usr/bin/vllm serve m --tp 2",
        );
        let fs = proc(fs, 101, 100, "VLLM::EngineCore", "VLLM::EngineCore");
        let fs = proc(fs, 102, 101, "VLLM::Worker_TP0", "VLLM::Worker_TP0");
        // An orphan: its server is gone, it was reparented to init.
        let fs = proc(fs, 200, 1, "VLLM::Worker_TP1", "VLLM::Worker_TP1");
        let fs = proc(fs, 300, 1, "python3", "python3 train.py");
        let raw = Probed::Value(vec![
            RawProcess {
                gpu_index: 0,
                pid: 102,
                used_memory_mib: Some(1000),
            },
            RawProcess {
                gpu_index: 1,
                pid: 200,
                used_memory_mib: Some(90000),
            },
            RawProcess {
                gpu_index: 1,
                pid: 300,
                used_memory_mib: Some(5),
            },
            RawProcess {
                gpu_index: 1,
                pid: 999,
                used_memory_mib: None,
            },
        ]);
        let out = classify(&fs, &raw);
        let p = out.value().expect("value");
        assert_eq!((p[0].is_vllm, p[0].parent_alive), (true, Some(true)));
        assert_eq!((p[1].is_vllm, p[1].parent_alive), (true, Some(false)));
        assert_eq!(p[1].used_memory_mib, Some(90000));
        assert_eq!((p[2].is_vllm, p[2].parent_alive), (false, None));
        assert_eq!(p[2].name.as_deref(), Some("python3 train.py"));
        assert_eq!((p[3].name.clone(), p[3].parent_alive), (None, None));
    }

    #[test]
    fn server_as_pid_one_in_a_container() {
        let fs = proc(
            MapFs::new(),
            1,
            0,
            "vllm",
            "python3 -m vllm.entrypoints.openai.api_server",
        );
        let fs = proc(fs, 7, 1, "VLLM::Worker", "VLLM::Worker");
        let raw = Probed::Value(vec![RawProcess {
            gpu_index: 0,
            pid: 7,
            used_memory_mib: Some(1),
        }]);
        let p = classify(&fs, &raw);
        assert_eq!(p.value().expect("v")[0].parent_alive, Some(true));
    }

    #[test]
    fn unreadable_proc_is_a_reason() {
        let fs = MapFs::new().deny("/proc");
        let e = scan(&fs).expect_err("denied");
        assert!(e.contains("permission denied"), "{e}");
    }

    #[test]
    fn a_vllm_processs_python_stack_through_its_root() {
        let site = "/opt/venv/lib/python3.12/site-packages";
        let root = "/proc/42/root";
        let fs = proc(
            MapFs::new(),
            42,
            1,
            "vllm",
            "/opt/venv/bin/python3 /opt/venv/bin/vllm serve m",
        );
        let fs = proc(fs, 43, 42, "VLLM::EngineCore", "VLLM::EngineCore");
        let fs = proc(fs, 7, 1, "python3", "python3 train.py")
            .file(
                "/proc/42/maps",
                &format!(
                    "7f00-7f01 r-xp 00000000 08:01 12 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                     7f02-7f03 r-xp 00000000 08:01 13 {site}/torch/lib/libtorch_cuda.so\n"
                ),
            )
            .file(&format!("{root}{site}/vllm-0.11.0.dist-info/METADATA"), "")
            .file(
                &format!("{root}{site}/torch-2.9.0+cu128.dist-info/METADATA"),
                "",
            )
            .file(&format!("{root}{site}/triton-3.5.0.dist-info/METADATA"), "")
            .file(
                &format!("{root}{site}/flashinfer_python-0.4.1.dist-info/METADATA"),
                "",
            )
            .file(
                &format!("{root}{site}/torch/version.py"),
                "__version__ = '2.9.0+cu128'\ncuda: Optional[str] = '12.8'\n",
            );
        let s = vllm_python_stack(&fs).expect("a stack");
        assert_eq!(s.python, Probed::Value("3.12".into()));
        assert_eq!(s.vllm, Probed::Value("0.11.0".into()));
        assert_eq!(s.torch, Probed::Value("2.9.0+cu128".into()));
        assert_eq!(s.torch_cuda, Probed::Value("12.8".into()));
        assert_eq!(s.triton, Probed::Value("3.5.0".into()));
        assert_eq!(s.flashinfer, Probed::Value("0.4.1".into()));
        assert!(s.deep_gemm.value().is_none());
        assert!(s.torch_arch_list.value().is_none());
        let how = s.interpreter.expect("where it was read");
        assert!(
            how.contains("/proc/42/root/opt/venv/lib/python3.12/site-packages"),
            "{how}"
        );
    }

    #[test]
    fn no_vllm_process_or_no_site_packages_gives_no_stack() {
        let fs = proc(MapFs::new(), 7, 1, "python3", "python3 train.py");
        assert!(vllm_python_stack(&fs).is_none());
        // vLLM runs, but its maps are unreadable (no CAP_SYS_PTRACE).
        let fs = proc(MapFs::new(), 42, 1, "vllm", "vllm serve m").deny("/proc/42/maps");
        assert!(vllm_python_stack(&fs).is_none());
        assert_eq!(
            site_packages_from_maps("0-1 r-xp 0 0:0 0 /usr/lib/python3/dist-packages/x/y.so\n"),
            Some("/usr/lib/python3/dist-packages".into())
        );
        assert_eq!(site_packages_from_maps("0-1 rw-p 0 0:0 0 [heap]\n"), None);
        assert_eq!(
            python_version_of("/usr/lib/python3/dist-packages"),
            Some("3".into())
        );
        assert_eq!(torch_cuda_of("cuda = None\n"), None);
    }
}
