//! Fault injection through fake sources: each fault yields skipped/failed with a reason and the
//! rest of the snapshot stays intact.

use crate::support;

use sm120_doctor::collect::fs::MapFs;
use sm120_doctor::collect::nvml::{FakeNvml, FieldError, NvmlData, SYSTEM};
use sm120_doctor::collect::python::PythonMode;
use sm120_doctor::collect::{CollectOptions, Sources, collect_with};
use sm120_doctor::snapshot::{ComputeCapability, Gpu, GpuPair, HostSnapshot, Probed};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn gpu(i: u32) -> Gpu {
    let mut g = Gpu::named(
        i,
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        "n/a",
    );
    g.uuid = Probed::Value(format!("GPU-{i}"));
    g.compute_capability = Probed::Value(ComputeCapability {
        major: 12,
        minor: 0,
    });
    g.memory_total_mib = Probed::Value(97887);
    g.memory_used_mib = Probed::Value(0);
    g.utilization_pct = Probed::Value(0);
    g.temperature_c = Probed::Value(30);
    g.persistence_mode = Probed::Value(true);
    g
}

fn fake() -> FakeNvml {
    FakeNvml {
        driver: "595.45.04".into(),
        cuda: (13, 2),
        gpus: vec![gpu(0), gpu(1)],
        pairs: vec![GpuPair {
            a: 0,
            b: 1,
            topology: Probed::Value("NODE".into()),
            p2p: Probed::Value(false),
            nvlink: Probed::Value(false),
        }],
        ..Default::default()
    }
}

fn host_fs() -> MapFs {
    MapFs::new()
        .file("/etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\n")
        .file("/proc/sys/kernel/osrelease", "6.8.0\n")
        .file("/proc/sys/kernel/hostname", "ws\n")
        .file(
            "/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  595.45.04  Release Build\n",
        )
        .file("/proc/1/cmdline", "/sbin/init")
        .file("/proc/1/comm", "init")
}

fn no_python() -> CollectOptions {
    CollectOptions {
        python_mode: None,
        ..Default::default()
    }
}

fn sources(nvml: FakeNvml, fs: MapFs) -> Sources {
    let mut s = Sources::with_nvml(nvml, Arc::new(fs));
    s.own_env = vec![(
        "PYTORCH_CUDA_ALLOC_CONF".into(),
        "expandable_segments:True".into(),
    )];
    s
}

fn assert_rest_intact(s: &HostSnapshot) {
    let os = s.os.value().expect("os intact");
    assert_eq!(os.kernel, Probed::Value("6.8.0".into()));
    let env = s.env.value().expect("env intact");
    assert_eq!(
        env.vars["PYTORCH_CUDA_ALLOC_CONF"],
        "expandable_segments:True"
    );
}

#[test]
fn healthy_fake_host() {
    let (s, t) = collect_with(sources(fake(), host_fs()), &no_python());
    let gpus = s.gpus.value().expect("gpus");
    assert_eq!(gpus.len(), 2);
    assert_eq!(s.gpu_pairs.value().map(Vec::len), Some(1));
    let drv = s.driver.value().expect("driver");
    assert_eq!(drv.kernel_module, Probed::Value("open".into()));
    assert_eq!(drv.cuda_driver_version, Probed::Value("13.2".into()));
    assert!(matches!(s.python, Probed::Skipped(ref r) if r.to_string().contains("--no-python")));
    assert_eq!(t.python_ms, 0.0, "no Python run, no Python time: {t:?}");
    assert_rest_intact(&s);
}

/// The timings add up: the total spans the sources (the file readers run one after another, NVML
/// on its own thread) and no more than the call itself; a slow NVML shows in both.
#[test]
fn timings_cover_the_sources_and_no_more() {
    const NVML_DELAY: Duration = Duration::from_millis(50);
    let base = sources(fake(), host_fs());
    let nvml = base.nvml;
    let src = Sources {
        nvml: Box::new(move || {
            std::thread::sleep(NVML_DELAY);
            nvml()
        }),
        ..base
    };
    let call = Instant::now();
    let (s, t) = collect_with(src, &no_python());
    let wall_ms = call.elapsed().as_secs_f64() * 1000.0;
    assert!(s.gpus.value().is_some(), "NVML answered: {:?}", s.gpus);
    let delay_ms = NVML_DELAY.as_secs_f64() * 1000.0;
    assert!(t.nvml_ms >= delay_ms, "NVML took the delay: {t:?}");
    let readers = t.proc_scan_ms + t.env_ms + t.os_ms + t.processes_ms;
    assert!(
        t.total_ms >= t.nvml_ms && t.total_ms >= readers,
        "total covers each source: {t:?}"
    );
    assert!(
        t.total_ms <= wall_ms,
        "total {t:?} within the call's {wall_ms} ms"
    );
}

#[test]
fn nvml_absent() {
    let reason = Probed::skipped("NVML library (libnvidia-ml.so.1) not found");
    let mut src = sources(fake(), host_fs());
    src.nvml = Box::new(move || NvmlData::unavailable(&reason));
    let (s, _) = collect_with(src, &no_python());
    assert!(matches!(s.gpus, Probed::Skipped(ref r) if r.to_string().contains("libnvidia-ml")));
    assert!(matches!(s.driver, Probed::Skipped(_)));
    assert!(matches!(s.processes, Probed::Skipped(_)));
    assert_rest_intact(&s);
}

#[test]
fn nvml_hang_is_cut_off() {
    let mut src = sources(fake(), host_fs());
    src.nvml = Box::new(|| {
        std::thread::sleep(Duration::from_secs(30));
        NvmlData::unavailable(&Probed::skipped("late"))
    });
    let opts = CollectOptions {
        nvml_timeout: Duration::from_millis(300),
        ..no_python()
    };
    let start = Instant::now();
    let (s, _) = collect_with(src, &opts);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(matches!(s.gpus, Probed::Failed(ref r) if r.to_string().contains("did not answer")));
    assert_rest_intact(&s);
}

#[test]
fn one_field_of_one_gpu_fails() {
    let nv = fake().fail(1, "cc", FieldError::Other("Unknown Error".into()));
    let (s, _) = collect_with(sources(nv, host_fs()), &no_python());
    let gpus = s.gpus.value().expect("gpus");
    assert_eq!(gpus[1].compute_capability, Probed::failed("Unknown Error"));
    assert_eq!(
        gpus[0].compute_capability,
        Probed::Value(ComputeCapability {
            major: 12,
            minor: 0
        })
    );
    assert_eq!(gpus[1].memory_total_mib, Probed::Value(97887));
    // The engine sees an unknown compute capability for that GPU, not a wrong one.
    let facts = sm120_doctor::facts::derive(
        &s,
        false,
        &sm120_doctor::vllm::hardware::Hardware::default(),
    );
    assert!(matches!(
        facts.get("gpu.all_sm12x").value,
        sm120_doctor::kb::expr::Value::Unknown(_)
    ));
    assert_eq!(
        facts.get("gpu.any_sm12x").value,
        sm120_doctor::kb::expr::Value::Bool(true)
    );
    assert_rest_intact(&s);
}

#[test]
fn unsupported_field_is_skipped_and_system_fault_keeps_gpus() {
    let nv = fake().fail(0, "power", FieldError::NotSupported).fail(
        SYSTEM,
        "driver",
        FieldError::NoPermission,
    );
    let (s, _) = collect_with(sources(nv, host_fs()), &no_python());
    let gpus = s.gpus.value().expect("gpus");
    assert!(
        matches!(gpus[0].power_w, Probed::Skipped(ref r) if r.to_string().contains("not supported"))
    );
    let drv = s.driver.value().expect("driver");
    assert!(matches!(drv.version, Probed::Failed(ref r) if r.to_string().contains("permission")));
    assert_eq!(drv.cuda_driver_version, Probed::Value("13.2".into()));
}

#[test]
fn proc_unreadable() {
    let fs = host_fs().deny("/proc");
    let nv = fake();
    let (s, _) = collect_with(sources(nv, fs), &no_python());
    // Environment falls back to this process's and says why.
    let env = s.env.value().expect("env");
    assert!(
        env.source.contains("/proc: permission denied"),
        "{}",
        env.source
    );
    let os = s.os.value().expect("os section");
    assert!(
        matches!(os.kernel, Probed::Failed(ref r) if r.to_string().contains("permission denied"))
    );
    assert_eq!(os.name, Probed::Value("Ubuntu 24.04.3 LTS".into()));
    let drv = s.driver.value().expect("driver");
    assert!(
        matches!(drv.kernel_module, Probed::Failed(ref r) if r.to_string().contains("permission denied"))
    );
    assert_eq!(s.gpus.value().map(Vec::len), Some(2));
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

fn with_python(path: PathBuf, timeout: Duration) -> CollectOptions {
    CollectOptions {
        python: Some(path),
        python_mode: Some(PythonMode::Full),
        python_timeout: timeout,
        ..Default::default()
    }
}

#[test]
fn python_missing() {
    let opts = with_python("/nonexistent/bin/python3".into(), Duration::from_secs(5));
    let (s, _) = collect_with(sources(fake(), host_fs()), &opts);
    assert!(
        matches!(s.python, Probed::Skipped(ref r) if r.to_string().contains("not found")),
        "{:?}",
        s.python
    );
    assert_eq!(s.gpus.value().map(Vec::len), Some(2));
    assert_rest_intact(&s);
}

#[test]
fn python_hanging_is_killed_within_a_second_of_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let py = script(dir.path(), "python3", "sleep 30");
    let limit = Duration::from_secs(2);
    let start = Instant::now();
    let (s, t) = collect_with(sources(fake(), host_fs()), &with_python(py, limit));
    let took = start.elapsed();
    assert!(took < limit + Duration::from_secs(1), "took {took:?}");
    assert!(took >= limit, "returned before the limit: {took:?}");
    assert!(
        matches!(s.python, Probed::Failed(ref r) if r.to_string().contains("did not answer within 2 s")),
        "{:?}",
        s.python
    );
    assert!(t.python_ms >= 2000.0);
    assert_rest_intact(&s);
}

#[test]
fn python_hanging_in_torch_import_keeps_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let meta = r#"{"stage":"meta","python":"3.12.3","executable":"/v/bin/python3","packages":{"vllm":null,"torch":"2.11.0","triton":"3.6.0","flashinfer":null,"deep_gemm":null},"nvcc":null}"#;
    let py = script(dir.path(), "python3", &format!("echo '{meta}'\nsleep 30"));
    let start = Instant::now();
    let (s, _) = collect_with(
        sources(fake(), host_fs()),
        &with_python(py, Duration::from_secs(1)),
    );
    assert!(start.elapsed() < Duration::from_secs(2));
    let stack = s.python.value().expect("metadata kept");
    assert_eq!(stack.torch, Probed::Value("2.11.0".into()));
    assert!(
        matches!(stack.vllm, Probed::Skipped(ref r) if r.code == sm120_doctor::snapshot::ReasonCode::NotInstalled)
    );
    assert!(
        matches!(stack.torch_arch_list, Probed::Failed(ref r) if r.to_string().contains("import torch"))
    );
}

#[test]
fn python_printing_garbage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let py = script(
        dir.path(),
        "python3",
        "echo 'Welcome to Conda!'; echo '{not json'",
    );
    let (s, _) = collect_with(
        sources(fake(), host_fs()),
        &with_python(py, Duration::from_secs(5)),
    );
    assert!(
        matches!(s.python, Probed::Failed(ref r) if r.to_string().contains("not the expected JSON") && r.to_string().contains("Welcome")),
        "{:?}",
        s.python
    );
    assert_rest_intact(&s);
}

#[test]
fn real_python_script_runs_when_python3_exists() {
    // Exercise the embedded script itself against whatever python3 this machine has.
    if !support::require_tools(&["python3"]) {
        return;
    }
    let out = std::process::Command::new("python3")
        .arg("-V")
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "python3 -V: {out:?}");
    let opts = CollectOptions {
        python: Some("python3".into()),
        python_mode: Some(PythonMode::Fast),
        python_timeout: Duration::from_secs(15),
        ..Default::default()
    };
    let (s, _) = collect_with(sources(fake(), host_fs()), &opts);
    let stack = s.python.value().expect("python stack");
    assert!(stack.python.value().is_some_and(|v| v.starts_with('3')));
    // Each package is either a version or a known-absent "not installed".
    for p in [
        &stack.vllm,
        &stack.torch,
        &stack.triton,
        &stack.flashinfer,
        &stack.deep_gemm,
    ] {
        match p {
            Probed::Value(v) => assert!(!v.is_empty()),
            Probed::Skipped(r) => assert_eq!(
                r.code,
                sm120_doctor::snapshot::ReasonCode::NotInstalled,
                "{r}"
            ),
            Probed::Failed(e) => panic!("package probe failed: {e}"),
        }
    }
}

/// The embedded script finds the DeepGEMM vLLM would import: site-packages `deep_gemm` before
/// vLLM's vendored copy, judged by its `sm120_*.cuh` kernel headers (not by `__version__`).
#[test]
fn real_python_script_reads_the_deep_gemm_build() {
    if !support::require_tools(&["python3"]) {
        return;
    }
    let out = std::process::Command::new("python3")
        .arg("-V")
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "python3 -V: {out:?}");
    let dir = tempfile::tempdir().expect("tempdir");
    let site = dir.path().join("site");
    let vendored = site.join("vllm/third_party/deep_gemm");
    let impls = vendored.join("include/deep_gemm/impls");
    std::fs::create_dir_all(&impls).expect("mkdir");
    std::fs::write(site.join("vllm/__init__.py"), "").expect("write");
    std::fs::write(vendored.join("__init__.py"), "__version__ = '2.5.0'\n").expect("write");
    for f in [
        "sm120_fp8_gemm_1d1d.cuh",
        "sm120_fp8_mqa_logits.cuh",
        "sm90_fp8_gemm_1d1d.cuh",
    ] {
        std::fs::write(impls.join(f), "").expect("write");
    }
    let py = script(
        dir.path(),
        "python3",
        &format!("PYTHONPATH='{}' exec python3 \"$@\"", site.display()),
    );
    let run = |py: &Path| {
        let opts = CollectOptions {
            python: Some(py.to_path_buf()),
            python_mode: Some(PythonMode::Fast),
            python_timeout: Duration::from_secs(15),
            ..Default::default()
        };
        let (s, _) = collect_with(sources(fake(), host_fs()), &opts);
        s.python
            .value()
            .expect("python stack")
            .deep_gemm_build
            .clone()
    };
    match run(&py) {
        Probed::Value(b) => {
            assert_eq!(b.origin, "vendored");
            assert_eq!(b.version.as_deref(), Some("2.5.0"));
            assert_eq!(b.sm120_kernels, 2);
        }
        other => panic!("vendored DeepGEMM not read: {other:?}"),
    }
    // A site-packages deep_gemm without SM120 kernels wins over the vendored one.
    let pip = site.join("deep_gemm/include/deep_gemm/impls");
    std::fs::create_dir_all(&pip).expect("mkdir");
    std::fs::write(
        site.join("deep_gemm/__init__.py"),
        "__version__ = \"2.6.1\"\n",
    )
    .expect("write");
    std::fs::write(pip.join("sm100_fp8_gemm_1d1d.cuh"), "").expect("write");
    match run(&py) {
        Probed::Value(b) => {
            assert_eq!(b.origin, "site-packages");
            assert_eq!(b.version.as_deref(), Some("2.6.1"));
            assert_eq!(b.sm120_kernels, 0);
        }
        other => panic!("site-packages DeepGEMM not read: {other:?}"),
    }
}
