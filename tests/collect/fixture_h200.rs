//! The live snapshot captured on a real 2× H200 host agrees with the nvidia-smi output
//! captured in the same command (tests/fixtures/h200-live-2026-11-30/).

use sm120_doctor::import::load_snapshot;
use sm120_doctor::snapshot::{ComputeCapability, HostSnapshot};
use std::path::Path;

const DIR: &str = "tests/fixtures/h200-live-2026-11-30";

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(DIR).join(name)).expect("fixture file")
}

fn snapshot(name: &str) -> HostSnapshot {
    load_snapshot(&Path::new(DIR).join(name)).expect("fixture snapshot loads")
}

/// What `nvidia-smi -q` says, per GPU: (name, uuid, FB memory total MiB); plus driver and CUDA.
struct SmiQ {
    driver: String,
    cuda: String,
    gpus: Vec<(String, String, u64)>,
}

fn value(line: &str) -> Option<String> {
    line.split_once(':').map(|(_, v)| v.trim().to_string())
}

fn parse_smi_q(text: &str) -> SmiQ {
    let mut q = SmiQ {
        driver: String::new(),
        cuda: String::new(),
        gpus: Vec::new(),
    };
    let mut in_fb = false;
    for line in text.lines() {
        let t = line.trim();
        if line.starts_with("Driver Version") {
            q.driver = value(line).unwrap_or_default();
        } else if line.starts_with("CUDA Version") {
            q.cuda = value(line).unwrap_or_default();
        } else if line.starts_with("GPU ") {
            q.gpus.push((String::new(), String::new(), 0));
        } else if let Some(g) = q.gpus.last_mut() {
            if t.starts_with("Product Name") {
                g.0 = value(t).unwrap_or_default();
            } else if t.starts_with("GPU UUID") {
                g.1 = value(t).unwrap_or_default();
            } else if t == "FB Memory Usage" {
                in_fb = true;
            } else if in_fb && t.starts_with("Total") {
                g.2 = value(t)
                    .and_then(|v| v.trim_end_matches("MiB").trim().parse().ok())
                    .unwrap_or(0);
                in_fb = false;
            }
        }
    }
    q
}

/// compute_cap per UUID from the `--query-gpu` CSV captured with it.
fn query_caps(text: &str) -> Vec<(String, ComputeCapability)> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            let (ma, mi) = cols.get(3)?.split_once('.')?;
            Some((
                cols.get(2)?.to_string(),
                ComputeCapability {
                    major: ma.parse().ok()?,
                    minor: mi.parse().ok()?,
                },
            ))
        })
        .collect()
}

#[test]
fn snapshot_agrees_with_nvidia_smi() {
    let q = parse_smi_q(&read("nvidia-smi-q.txt"));
    let caps = query_caps(&read("nvidia-smi-query.csv"));
    let s = snapshot("snapshot.yaml");
    assert!(s.origin.is_live_read(), "{}", s.origin);
    let gpus = s.gpus.value().expect("GPUs collected");
    assert!(!gpus.is_empty());
    assert_eq!(gpus.len(), q.gpus.len(), "GPU count");
    for (g, (name, uuid, total)) in gpus.iter().zip(&q.gpus) {
        assert_eq!(g.name.value(), Some(name), "GPU {} name", g.index);
        assert_eq!(g.uuid.value(), Some(uuid), "GPU {} uuid", g.index);
        assert_eq!(
            g.memory_total_mib.value(),
            Some(total),
            "GPU {} memory",
            g.index
        );
        let cc = caps
            .iter()
            .find(|(u, _)| u == uuid)
            .map(|(_, c)| *c)
            .expect("compute_cap for this uuid");
        assert_eq!(
            g.compute_capability.value(),
            Some(&cc),
            "GPU {} cc",
            g.index
        );
    }
    let drv = s.driver.value().expect("driver collected");
    assert_eq!(drv.version.value(), Some(&q.driver));
    assert_eq!(drv.cuda_driver_version.value(), Some(&q.cuda));
}

#[test]
fn snapshot_without_python_agrees_too() {
    let full = snapshot("snapshot.yaml");
    let nopy = snapshot("snapshot-nopy.yaml");
    let uuids = |s: &HostSnapshot| -> Vec<String> {
        s.gpus
            .value()
            .expect("gpus")
            .iter()
            .filter_map(|g| g.uuid.value().cloned())
            .collect()
    };
    assert_eq!(uuids(&full), uuids(&nopy));
    assert!(
        nopy.python
            .missing_reason()
            .is_some_and(|r| r.to_string().contains("--no-python"))
    );
}

#[test]
fn pairs_cover_every_gpu_pair() {
    let s = snapshot("snapshot.yaml");
    let n = s.gpus.value().map(Vec::len).expect("gpus") as u32;
    let pairs = s.gpu_pairs.value().expect("pairs");
    assert_eq!(pairs.len() as u32, n * (n.saturating_sub(1)) / 2);
    // `nvidia-smi topo -m` on the same host: the cell of each pair (NV18 = 18 NVLinks).
    let topo = read("nvidia-smi-topo.txt");
    let cell = |a: u32, b: u32| -> String {
        topo.lines()
            .find(|l| l.starts_with(&format!("GPU{a}\t")))
            .and_then(|l| l.split('\t').nth(b as usize + 1))
            .map(|c| c.trim().to_string())
            .unwrap_or_else(|| panic!("no topo cell for GPU{a}/GPU{b}"))
    };
    for p in pairs {
        assert!(p.a < p.b && p.b < n);
        // The PCIe path between the two is one of NVML's topology levels, read, not missing.
        let level = p.topology.value().expect("topology read on the real host");
        assert!(
            ["PIX", "PXB", "PHB", "NODE", "SYS"].contains(&level.as_str()),
            "{level}"
        );
        // NVLink as nvidia-smi's matrix shows it.
        let nv = cell(p.a, p.b).starts_with("NV");
        assert_eq!(p.nvlink.value(), Some(&nv), "GPU{}/GPU{}", p.a, p.b);
    }
}

#[test]
fn orphaned_worker_matches_nvidia_smi_compute_apps() {
    let s = snapshot("snapshot-orphan.yaml");
    let procs = s.processes.value().expect("processes collected");
    // pid, process_name, used_gpu_memory [MiB]
    let smi: Vec<(u32, String, u64)> = read("orphan-nvidia-smi.csv")
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').map(str::trim).collect();
            Some((
                c.first()?.parse().ok()?,
                c.get(1)?.to_string(),
                c.get(2)?.trim_end_matches("MiB").trim().parse().ok()?,
            ))
        })
        .collect();
    assert!(!smi.is_empty());
    assert_eq!(procs.len(), smi.len());
    for (pid, name, mib) in &smi {
        let p = procs.iter().find(|p| p.pid == *pid).expect("same pid");
        assert_eq!(p.used_memory_mib, Some(*mib));
        assert!(
            p.name
                .as_deref()
                .is_some_and(|n| n.starts_with(name.as_str()))
        );
        assert!(p.is_vllm);
        assert_eq!(
            p.parent_alive,
            Some(false),
            "its launching shell had exited"
        );
    }
    let f = sm120_doctor::facts::derive(
        &s,
        false,
        &sm120_doctor::vllm::hardware::Hardware::default(),
    );
    assert_eq!(
        f.get("processes.orphans").value,
        sm120_doctor::kb::expr::Value::Num(1.0)
    );
    assert_eq!(
        f.get("processes.orphan_memory_mib").value,
        sm120_doctor::kb::expr::Value::Num(1542.0)
    );
}
