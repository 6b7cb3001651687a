//! Processes from /proc, and GPU compute processes matched to vLLM (orphaned workers, facts §6f).

use super::fs::{HostFs, io_reason};
use super::nvml::RawProcess;
use crate::snapshot::{GpuProcess, Probed};
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
    pub fn is_vllm_server(&self) -> bool {
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
pub fn parse_stat_ppid(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Read one process; `None` when it is gone or invisible (another PID namespace).
pub fn read_proc(fs: &dyn HostFs, pid: u32) -> Option<ProcInfo> {
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
}
