//! The environment the engine sees: a running vLLM server's (from /proc/PID/environ, when
//! permitted), else this process's. Secrets are redacted here, before anything else sees them.

use super::fs::{HostFs, io_reason};
use super::processes::ProcInfo;
use crate::snapshot::{EnvOwner, Environment, Probed};
use std::collections::BTreeMap;

/// What a redacted value is replaced with.
pub const REDACTED: &str = "<redacted>";

use crate::secret_name::is_secret_name;

/// Remove `user:password@` from every URL in `value`.
pub(crate) fn redact_url_credentials(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == ',' || c == ';')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str(REDACTED);
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The value as it may leave the collector.
pub fn redact(name: &str, value: &str) -> String {
    // By name (`HF_TOKEN`), or by shape under any name (`NOTES=ghp_…`), as the report does.
    if (is_secret_name(name) || crate::secret_name::is_secret_value(value)) && !value.is_empty() {
        REDACTED.to_string()
    } else {
        redact_url_credentials(value)
    }
}

/// Build an [`Environment`] from raw pairs, redacted.
pub fn environment(
    source: String,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Environment {
    Environment {
        source,
        whose: None,
        vars: vars
            .into_iter()
            .map(|(k, v)| {
                let v = redact(&k, &v);
                (k, v)
            })
            .collect(),
        covers: None,
    }
}

/// Parse /proc/PID/environ (NUL-separated `NAME=value`).
pub(crate) fn parse_environ(text: &str) -> BTreeMap<String, String> {
    text.split('\0')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The vLLM process whose environment matters most: a server first, else any vLLM process.
pub(crate) fn pick_vllm(procs: &[ProcInfo], own_pid: u32) -> Option<&ProcInfo> {
    let candidates = || procs.iter().filter(|p| p.pid != own_pid && p.is_vllm());
    candidates()
        .find(|p| p.is_vllm_server())
        .or_else(|| candidates().next())
}

/// Collect the environment. `procs` is the /proc scan (or why it failed); `own` is this
/// process's environment.
pub fn collect(
    fs: &dyn HostFs,
    procs: &Result<Vec<ProcInfo>, String>,
    own: Vec<(String, String)>,
    own_pid: u32,
) -> Probed<Environment> {
    let fallback = |why: String| {
        let mut env = environment(format!("this shell ({why})"), own.clone());
        env.whose = Some(EnvOwner::DoctorShell);
        Probed::Value(env)
    };
    let procs = match procs {
        Ok(p) => p,
        Err(e) => return fallback(format!("cannot look for a running vLLM: {e}")),
    };
    let Some(v) = pick_vllm(procs, own_pid) else {
        return fallback("no vLLM process running".into());
    };
    let what = crate::collect::run::short(&v.command(), 80);
    let path = format!("/proc/{}/environ", v.pid);
    match fs.read(&path) {
        Ok(text) => {
            let mut env = environment(
                format!("vLLM process {} ({what})", v.pid),
                parse_environ(&text),
            );
            env.whose = Some(EnvOwner::Engine);
            Probed::Value(env)
        }
        Err(e) => fallback(format!(
            "vLLM process {} is running but its environment is not readable: {}",
            v.pid,
            io_reason(&path, &e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::fs::MapFs;
    use crate::collect::processes::scan;

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(redact("HF_TOKEN", "hf_abc"), REDACTED);
        assert_eq!(redact("WANDB_API_KEY", "k"), REDACTED);
        assert_eq!(redact("DB_PASSWORD", "p"), REDACTED);
        // A token under an innocent name (the report redacted it; the snapshot kept it).
        assert_eq!(
            redact("NOTES", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            REDACTED
        );
        assert_eq!(redact("NOTES", "hello"), "hello");
        assert_eq!(redact("TIKTOKEN_CACHE_DIR", "/c"), "/c");
        assert_eq!(
            redact("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),
            "expandable_segments:True"
        );
        assert_eq!(
            redact("HTTPS_PROXY", "http://bob:hunter2@proxy:3128"),
            "http://<redacted>@proxy:3128"
        );
        assert_eq!(
            redact(
                "PIP_INDEX_URL",
                "https://u:p@a.example/simple https://b.example/x"
            ),
            "https://<redacted>@a.example/simple https://b.example/x"
        );
        assert_eq!(redact("X", "no url here"), "no url here");
    }

    fn own() -> Vec<(String, String)> {
        vec![
            ("PYTORCH_CUDA_ALLOC_CONF".into(), "".into()),
            ("HF_TOKEN".into(), "secret".into()),
        ]
    }

    #[test]
    fn vllm_server_environment_is_used_when_readable() {
        let fs = MapFs::new()
            .file("/proc/50/cmdline", "vllm\0serve\0Qwen/Qwen3")
            .file("/proc/50/comm", "vllm\n")
            .file(
                "/proc/50/environ",
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\0HF_TOKEN=abc\0",
            )
            .file("/proc/60/cmdline", "bash");
        let procs = scan(&fs);
        let env = collect(&fs, &procs, own(), 1);
        let env = env.value().expect("env");
        assert!(env.source.starts_with("vLLM process 50"), "{}", env.source);
        assert_eq!(
            env.vars["PYTORCH_CUDA_ALLOC_CONF"],
            "expandable_segments:True"
        );
        assert_eq!(env.vars["HF_TOKEN"], REDACTED);
    }

    #[test]
    fn unreadable_environ_falls_back_and_says_why() {
        let fs = MapFs::new()
            .file("/proc/50/cmdline", "vllm\0serve\0m")
            .file("/proc/50/environ", "A=1")
            .deny("/proc/50/environ");
        let procs = scan(&fs);
        let env = collect(&fs, &procs, own(), 1);
        let env = env.value().expect("env");
        assert!(env.source.contains("permission denied"), "{}", env.source);
        assert!(env.source.starts_with("this shell"));
        assert_eq!(env.vars["HF_TOKEN"], REDACTED);
    }

    #[test]
    fn unreadable_proc_still_gives_own_environment() {
        let fs = MapFs::new().deny("/proc");
        let procs = scan(&fs);
        let env = collect(&fs, &procs, own(), 1);
        let env = env.value().expect("env");
        assert!(
            env.source.contains("/proc: permission denied"),
            "{}",
            env.source
        );
        assert_eq!(env.vars.len(), 2);
    }
}
