//! Collection cost. `collect_fake/*`: each source on a fixture-backed fake (the captured H200
//! snapshot when present, else the demo host). `collect_live/*`: this host, for real — on a GPU
//! host that is the whole-snapshot time (goal ≤ 300 ms without the Python probe).

use criterion::{Criterion, criterion_group, criterion_main};
use sm120_doctor::collect::fs::MapFs;
use sm120_doctor::collect::nvml::{self, FakeNvml};
use sm120_doctor::collect::python::{self, PythonMode};
use sm120_doctor::collect::run::{Ending, RunOutput};
use sm120_doctor::collect::{self, CollectOptions, Sources, env, os, processes};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const FIXTURE: &str = "tests/fixtures/h200-live-2026-11-30/snapshot.yaml";

fn fixture() -> sm120_doctor::snapshot::HostSnapshot {
    match sm120_doctor::import::load_snapshot(std::path::Path::new(FIXTURE)) {
        Ok(s) => s,
        Err(_) => sm120_doctor::import::demo_snapshot(),
    }
}

/// A /proc with `n` processes, one of them a vLLM server with its environment.
fn fake_fs(n: u32) -> MapFs {
    let mut fs = MapFs::new()
        .file("/etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\n")
        .file("/proc/sys/kernel/osrelease", "6.8.0-49-generic\n")
        .file("/proc/sys/kernel/hostname", "gpu-host\n")
        .file(
            "/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n",
        );
    for pid in 1..=n {
        let (comm, cmd) = if pid == 42 {
            ("vllm", "/usr/bin/python3\0/usr/bin/vllm\0serve\0model")
        } else {
            ("bash", "bash")
        };
        fs = fs
            .file(&format!("/proc/{pid}/cmdline"), cmd)
            .file(&format!("/proc/{pid}/comm"), comm)
            .file(
                &format!("/proc/{pid}/stat"),
                &format!("{pid} ({comm}) S 1 1 1"),
            );
    }
    fs.file(
        "/proc/42/environ",
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\0HF_TOKEN=x\0PATH=/usr/bin\0",
    )
}

fn bench_fake(c: &mut Criterion) {
    let snap = fixture();
    let fake = FakeNvml::from_snapshot(&snap);
    let fs = fake_fs(300);
    let mut g = c.benchmark_group("collect_fake");
    g.sample_size(30)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    g.bench_function("nvml", |b| b.iter(|| black_box(nvml::collect(&fake))));
    g.bench_function("proc_scan_300", |b| {
        b.iter(|| black_box(processes::scan(&fs)))
    });
    let procs = processes::scan(&fs);
    g.bench_function("env", |b| {
        b.iter(|| black_box(env::collect(&fs, &procs, vec![("A".into(), "1".into())], 1)))
    });
    g.bench_function("os_and_driver_module", |b| {
        b.iter(|| black_box((os::collect(&fs), os::driver_module(&fs))))
    });
    let raw = nvml::collect(&fake).processes;
    g.bench_function("processes", |b| {
        b.iter(|| black_box(processes::classify(&fs, &raw)))
    });
    let out = RunOutput {
        ending: Ending::Exited(Some(0)),
        stdout: concat!(
            r#"{"stage":"meta","python":"3.12.3","executable":"/v/bin/python3","packages":{"vllm":"0.11.0","torch":"2.11.0","triton":"3.6.0","flashinfer":null,"deep_gemm":null},"nvcc":"13.0.88","torch_cuda_file":"13.0","fp8_config_dir":"/v/configs","fp8_config_files":["a.json","b.json"]}"#,
            "\n",
            r#"{"stage":"torch","torch":"2.11.0+cu130","torch_cuda":"13.0","arch_list":["sm_90","sm_100","sm_120"]}"#
        )
        .into(),
        stderr: String::new(),
        elapsed: Duration::from_millis(1),
    };
    g.bench_function("python_parse", |b| {
        b.iter(|| {
            black_box(python::parse(
                "python3",
                &out,
                PythonMode::Full,
                python::DEFAULT_TIMEOUT,
            ))
        })
    });
    let opts = CollectOptions {
        python_mode: None,
        ..Default::default()
    };
    g.bench_function("whole_snapshot_no_python", |b| {
        b.iter(|| {
            let src = Sources::with_nvml(fake.clone(), Arc::new(fs.clone()));
            black_box(collect::collect_with(src, &opts))
        })
    });
    g.finish();
}

fn bench_live(c: &mut Criterion) {
    let mut g = c.benchmark_group("collect_live");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    let opts = CollectOptions {
        python_mode: None,
        ..Default::default()
    };
    // The first call opens NVML (held for the process); report it once, then time steady state.
    let (_, first) = collect::collect_live(&opts);
    eprintln!("collect_live first call (NVML init included): {first:?}");
    g.bench_function("whole_snapshot_no_python", |b| {
        b.iter(|| black_box(collect::collect_live(&opts)))
    });
    g.finish();
}

criterion_group!(benches, bench_fake, bench_live);
criterion_main!(benches);
