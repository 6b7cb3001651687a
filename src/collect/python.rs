//! The Python stack: one short script (assets/collect/python_stack.py) run under a timeout in
//! the user's interpreter. Package metadata first; `import torch` last and only in full mode.

use super::run::{Ending, RunOutput, last_line, run_with_timeout, short};
use crate::snapshot::{DeepGemmBuild, Probed, PythonStack, Reason, ReasonCode};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub const SCRIPT: &str = include_str!("../../assets/collect/python_stack.py");

/// Default time limit for the script.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PythonMode {
    /// Package metadata only (about the cost of starting Python).
    Fast,
    /// Metadata, then `import torch` for its arch list (seconds).
    Full,
}

/// Which interpreter to use and why: `--python`, else the active venv, else conda, else python3.
pub(crate) fn find_interpreter(
    explicit: Option<&Path>,
    var: &dyn Fn(&str) -> Option<String>,
    exists: &dyn Fn(&Path) -> bool,
) -> (PathBuf, String) {
    if let Some(p) = explicit {
        return (p.to_path_buf(), "--python".into());
    }
    for (name, why) in [
        ("VIRTUAL_ENV", "active virtualenv"),
        ("CONDA_PREFIX", "active conda env"),
    ] {
        if let Some(dir) = var(name).filter(|d| !d.is_empty()) {
            for exe in ["bin/python", "bin/python3"] {
                let p = Path::new(&dir).join(exe);
                if exists(&p) {
                    return (p, format!("{why} (${name})"));
                }
            }
        }
    }
    (PathBuf::from("python3"), "python3 on PATH".into())
}

#[derive(Debug, Default, Deserialize)]
struct Meta {
    python: Option<String>,
    executable: Option<String>,
    #[serde(default)]
    packages: BTreeMap<String, Option<String>>,
    nvcc: Option<String>,
    fp8_config_dir: Option<String>,
    fp8_config_files: Option<Vec<String>>,
    fp8_config_error: Option<String>,
    torch_cuda_file: Option<String>,
    #[serde(default)]
    deep_gemm_build: Option<DeepGemmMeta>,
}

/// The script's report on the DeepGEMM vLLM would import.
#[derive(Debug, Default, Deserialize)]
struct DeepGemmMeta {
    dir: String,
    origin: String,
    version: Option<String>,
    sm120_kernels: Option<u32>,
    error: Option<String>,
}

/// The DeepGEMM build as the snapshot holds it: a value, or why it is not known.
fn deep_gemm_build(meta: Option<&DeepGemmMeta>, vllm: &Probed<String>) -> Probed<DeepGemmBuild> {
    let Some(m) = meta else {
        return Probed::skipped(match vllm {
            Probed::Value(_) => "no DeepGEMM found (neither deep_gemm in site-packages nor vLLM's \
                 vllm/third_party/deep_gemm)"
                .to_string(),
            other => format!(
                "no deep_gemm in site-packages and no vLLM to vendor one ({})",
                other.why_or("vLLM not found")
            ),
        });
    };
    match (m.sm120_kernels, &m.error) {
        (Some(n), _) => Probed::Value(DeepGemmBuild {
            dir: m.dir.clone(),
            origin: m.origin.clone(),
            version: m.version.clone(),
            sm120_kernels: n,
        }),
        (None, Some(e)) => Probed::failed(format!("{} DeepGEMM at {}: {e}", m.origin, m.dir)),
        (None, None) => Probed::failed(format!(
            "{} DeepGEMM at {}: kernel headers not reported",
            m.origin, m.dir
        )),
    }
}

#[derive(Debug, Default, Deserialize)]
struct TorchLine {
    torch: Option<String>,
    torch_cuda: Option<String>,
    arch_list: Option<Vec<String>>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Staged {
    stage: String,
}

/// Turn the script's output into the snapshot's Python section.
pub fn parse(
    interp: &str,
    out: &RunOutput,
    mode: PythonMode,
    timeout: Duration,
) -> Probed<PythonStack> {
    if let Ending::SpawnFailed(e) = &out.ending {
        return if e.contains("No such file") || e.contains("not found") {
            Probed::skipped(Reason::new(
                ReasonCode::NotFound,
                format!("no Python interpreter: {interp} not found (give --python PATH)"),
            ))
        } else {
            Probed::failed(Reason::new(
                ReasonCode::NotFound,
                format!("cannot start {interp}: {e}"),
            ))
        };
    }
    let mut meta: Option<Meta> = None;
    let mut torch: Option<TorchLine> = None;
    let mut garbage: Option<String> = None;
    for line in out.stdout.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Staged>(line) {
            Ok(s) if s.stage == "meta" => meta = serde_json::from_str(line).ok(),
            Ok(s) if s.stage == "torch" => torch = serde_json::from_str(line).ok(),
            _ => {
                garbage.get_or_insert_with(|| short(line.trim(), 80));
            }
        }
    }
    let secs = timeout.as_secs_f64();
    let Some(meta) = meta else {
        if out.ending == Ending::TimedOut {
            return Probed::failed(Reason::new(
                ReasonCode::Timeout,
                format!("{interp} did not answer within {secs:.0} s (raise --python-timeout)"),
            ));
        }
        return Probed::failed(match (&out.ending, garbage) {
            (Ending::OutputLimit, _) => format!(
                "{interp} {} before printing the expected JSON",
                out.ending.describe()
            ),
            (_, Some(g)) => {
                format!("{interp} printed something that is not the expected JSON: {g:?}")
            }
            (Ending::SpawnFailed(e), None) => e.clone(),
            (ending, None) => format!(
                "{interp} {} and printed no output: {}",
                ending.describe(),
                last_line(&out.stderr)
            ),
        });
    };
    let interp_name = meta
        .executable
        .clone()
        .unwrap_or_else(|| interp.to_string());
    let pkg = |name: &str| -> Probed<String> {
        match meta.packages.get(name) {
            Some(Some(v)) => Probed::Value(v.clone()),
            Some(None) => Probed::skipped(Reason::new(
                ReasonCode::NotInstalled,
                format!("not installed in {interp_name}"),
            )),
            None => Probed::skipped(Reason::new(
                ReasonCode::NotInInput,
                "not reported by the script",
            )),
        }
    };
    let torch_pkg = pkg("torch");
    let mut stack = PythonStack {
        interpreter: Some(interp_name.clone()),
        python: meta
            .python
            .clone()
            .map(Probed::Value)
            .unwrap_or_else(|| Probed::failed("no version reported")),
        vllm: pkg("vllm"),
        torch: torch_pkg.clone(),
        torch_cuda: Probed::default(),
        torch_arch_list: Probed::default(),
        triton: pkg("triton"),
        flashinfer: pkg("flashinfer"),
        deep_gemm: pkg("deep_gemm"),
        deep_gemm_build: Probed::default(),
        fp8_config_dir: Probed::default(),
        fp8_config_files: Probed::default(),
        cuda_toolkit: meta.nvcc.clone().map(Probed::Value).unwrap_or_else(|| {
            Probed::skipped(Reason::new(
                ReasonCode::NotFound,
                "nvcc not found on PATH or in $CUDA_HOME",
            ))
        }),
    };
    stack.deep_gemm_build = deep_gemm_build(meta.deep_gemm_build.as_ref(), &stack.vllm);
    match (&stack.vllm, &meta.fp8_config_dir) {
        (Probed::Value(_), Some(d)) => {
            stack.fp8_config_dir = Probed::Value(d.clone());
            stack.fp8_config_files = match (&meta.fp8_config_files, &meta.fp8_config_error) {
                (Some(f), _) => Probed::Value(f.clone()),
                (None, Some(e)) => Probed::failed(e.clone()),
                (None, None) => Probed::failed("folder not listed"),
            };
        }
        (vllm, _) => {
            let why = vllm.missing_reason().cloned().unwrap_or_else(|| {
                Reason::new(ReasonCode::NotFound, "vLLM package folder not found")
            });
            stack.fp8_config_dir = Probed::skipped(why.clone());
            stack.fp8_config_files = Probed::skipped(why);
        }
    }
    if let Probed::Skipped(r) = &torch_pkg {
        stack.torch_cuda = Probed::skipped(r.clone());
        stack.torch_arch_list = Probed::skipped(r.clone());
        return Probed::Value(stack);
    }
    stack.torch_cuda = meta
        .torch_cuda_file
        .clone()
        .map(Probed::Value)
        .unwrap_or_else(|| Probed::skipped("torch/version.py names no CUDA version (CPU build?)"));
    stack.torch_arch_list = match (mode, torch, &out.ending) {
        (PythonMode::Fast, _, _) => Probed::skipped(Reason::new(
            ReasonCode::NotRequested,
            "not collected: it needs `import torch` (seconds); `sm120-doctor snapshot` collects it",
        )),
        (PythonMode::Full, Some(t), _) => {
            if let Some(v) = t.torch {
                stack.torch = Probed::Value(v);
            }
            if let Some(c) = t.torch_cuda {
                stack.torch_cuda = Probed::Value(c);
            }
            match (t.arch_list, t.error) {
                (Some(a), _) => Probed::Value(a),
                (None, Some(e)) => Probed::failed(format!("import torch failed: {e}")),
                (None, None) => Probed::failed("no arch list reported"),
            }
        }
        (PythonMode::Full, None, Ending::TimedOut) => Probed::failed(Reason::new(
            ReasonCode::Timeout,
            format!("import torch did not finish within {secs:.0} s (raise --python-timeout)"),
        )),
        (PythonMode::Full, None, _) => Probed::failed(format!(
            "import torch ended the interpreter: {}",
            last_line(&out.stderr)
        )),
    };
    Probed::Value(stack)
}

/// Run the script in `interp` and parse what it printed.
pub fn collect(interp: &Path, mode: PythonMode, timeout: Duration) -> Probed<PythonStack> {
    let mut cmd = Command::new(interp);
    cmd.arg("-c")
        .arg(SCRIPT)
        .arg(match mode {
            PythonMode::Fast => "fast",
            PythonMode::Full => "full",
        })
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1");
    let out = run_with_timeout(cmd, timeout);
    let stack = parse(&interp.display().to_string(), &out, mode, timeout);
    // No interpreter here (the DaemonSet's image has none on purpose): the engine's own Python
    // stack, read through a running vLLM process's /proc/PID/root, is the one that matters.
    if matches!(&out.ending, Ending::SpawnFailed(_))
        && !interp.exists()
        && let Some(theirs) = super::processes::vllm_python_stack(&super::fs::RealFs)
    {
        return Probed::Value(theirs);
    }
    stack
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(stdout: &str, ending: Ending) -> RunOutput {
        RunOutput {
            ending,
            stdout: stdout.into(),
            stderr: "Traceback...\nImportError: libcudart.so.13: cannot open".into(),
            elapsed: Duration::from_millis(10),
        }
    }

    const META: &str = r#"{"stage":"meta","python":"3.12.3","executable":"/v/bin/python3","packages":{"vllm":null,"torch":"2.11.0","triton":"3.6.0","flashinfer":null,"deep_gemm":null},"nvcc":"13.0.88","torch_cuda_file":"13.0"}"#;

    #[test]
    fn missing_packages_are_values_not_errors() {
        let p = parse(
            "python3",
            &out(META, Ending::Exited(Some(0))),
            PythonMode::Fast,
            DEFAULT_TIMEOUT,
        );
        let s = p.value().expect("stack");
        assert_eq!(s.torch, Probed::Value("2.11.0".into()));
        assert!(s.vllm.has_code(ReasonCode::NotInstalled));
        assert!(s.fp8_config_dir.has_code(ReasonCode::NotInstalled));
        assert_eq!(s.torch_cuda, Probed::Value("13.0".into()));
        assert!(
            matches!(&s.torch_arch_list, Probed::Skipped(r) if r.to_string().contains("import torch"))
        );
        assert_eq!(s.cuda_toolkit, Probed::Value("13.0.88".into()));
    }

    #[test]
    fn the_deep_gemm_build_is_read_from_its_kernel_headers() {
        let with = |dg: &str| {
            let line = META.replace(
                r#""nvcc":"13.0.88""#,
                &format!(r#""nvcc":"13.0.88","deep_gemm_build":{dg}"#),
            );
            let p = parse(
                "python3",
                &out(&line, Ending::Exited(Some(0))),
                PythonMode::Fast,
                DEFAULT_TIMEOUT,
            );
            p.value().expect("stack").deep_gemm_build.clone()
        };
        let b = with(
            r#"{"dir":"/v/vllm/third_party/deep_gemm","origin":"vendored","version":"2.5.0","sm120_kernels":9}"#,
        );
        assert_eq!(
            b,
            Probed::Value(DeepGemmBuild {
                dir: "/v/vllm/third_party/deep_gemm".into(),
                origin: "vendored".into(),
                version: Some("2.5.0".into()),
                sm120_kernels: 9,
            })
        );
        let b = with(
            r#"{"dir":"/s/deep_gemm","origin":"site-packages","version":"2.6.1","sm120_kernels":0}"#,
        );
        assert!(
            matches!(b, Probed::Value(ref d) if d.sm120_kernels == 0 && d.origin == "site-packages")
        );
        let b = with(
            r#"{"dir":"/s/deep_gemm","origin":"site-packages","version":null,"error":"cannot list x"}"#,
        );
        assert!(
            matches!(b, Probed::Failed(ref r) if r.to_string().contains("cannot list x")),
            "{b:?}"
        );
        let b = with("null");
        assert!(
            matches!(b, Probed::Skipped(ref r) if r.to_string().contains("no vLLM")),
            "{b:?}"
        );
    }

    #[test]
    fn full_mode_reads_the_torch_line() {
        let text = format!(
            "{META}\n{}\n",
            r#"{"stage":"torch","torch":"2.11.0+cu130","torch_cuda":"13.0","arch_list":["sm_90","sm_100","sm_120"]}"#
        );
        let p = parse(
            "python3",
            &out(&text, Ending::Exited(Some(0))),
            PythonMode::Full,
            DEFAULT_TIMEOUT,
        );
        let s = p.value().expect("stack");
        assert_eq!(s.torch, Probed::Value("2.11.0+cu130".into()));
        assert_eq!(
            s.torch_arch_list,
            Probed::Value(vec!["sm_90".into(), "sm_100".into(), "sm_120".into()])
        );
    }

    #[test]
    fn torch_hang_keeps_the_metadata() {
        let p = parse(
            "python3",
            &out(META, Ending::TimedOut),
            PythonMode::Full,
            Duration::from_secs(3),
        );
        let s = p.value().expect("stack");
        assert_eq!(s.triton, Probed::Value("3.6.0".into()));
        assert!(
            matches!(&s.torch_arch_list, Probed::Failed(r) if r.to_string().contains("within 3 s"))
        );
    }

    #[test]
    fn torch_crash_gives_last_stderr_line() {
        let p = parse(
            "python3",
            &out(META, Ending::Exited(Some(1))),
            PythonMode::Full,
            DEFAULT_TIMEOUT,
        );
        let s = p.value().expect("stack");
        assert!(
            matches!(&s.torch_arch_list, Probed::Failed(r) if r.to_string().contains("libcudart"))
        );
    }

    #[test]
    fn garbage_and_silence_are_failures() {
        let p = parse(
            "py",
            &out("hello world", Ending::Exited(Some(0))),
            PythonMode::Fast,
            DEFAULT_TIMEOUT,
        );
        assert!(
            matches!(p, Probed::Failed(ref r) if r.to_string().contains("not the expected JSON"))
        );
        let p = parse(
            "py",
            &out("", Ending::Exited(Some(1))),
            PythonMode::Fast,
            DEFAULT_TIMEOUT,
        );
        assert!(matches!(p, Probed::Failed(ref r) if r.to_string().contains("code 1")));
        let p = parse(
            "py",
            &out("", Ending::TimedOut),
            PythonMode::Fast,
            DEFAULT_TIMEOUT,
        );
        assert!(matches!(p, Probed::Failed(ref r) if r.to_string().contains("did not answer")));
    }

    #[test]
    fn interpreter_choice() {
        let exists = |p: &Path| p.starts_with("/venv");
        let var = |n: &str| match n {
            "VIRTUAL_ENV" => Some("/venv".to_string()),
            "CONDA_PREFIX" => Some("/conda".to_string()),
            _ => None,
        };
        let (p, why) = find_interpreter(None, &var, &exists);
        assert_eq!(p, PathBuf::from("/venv/bin/python"));
        assert!(why.contains("virtualenv"));
        let (p, _) = find_interpreter(Some(Path::new("/x/py")), &var, &exists);
        assert_eq!(p, PathBuf::from("/x/py"));
        let (p, _) = find_interpreter(None, &|_| None, &exists);
        assert_eq!(p, PathBuf::from("python3"));
    }
}
