//! Issue 18's resource bounds, measured on the real binary: for each hostile input, the wall
//! time, the peak RSS of the process (getrusage through wait4) and the output size, checked
//! against the bound the README's "Limits" section promises.
//!
//! `cargo bench --bench bounds` (release build). Large inputs are generated on the fly and fed
//! through standard input, so nothing big is written to disk except one 100 MB log file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
const MIB: u64 = 1 << 20;

struct Measured {
    rc: i32,
    wall: Duration,
    rss_kib: i64,
    out_bytes: usize,
    stderr: String,
}

/// Writes a child's standard input.
type Feed = Box<dyn FnOnce(&mut dyn Write) + Send>;

/// Run the binary; `feed` writes standard input on a thread. Returns exit code, wall time, peak
/// RSS and output size. The child is reaped by wait4 (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn measure(args: &[&str], feed: Option<Feed>) -> Measured {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(if feed.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    let feeder = feed.map(|f| {
        let mut sink = child.stdin.take().expect("stdin");
        std::thread::spawn(move || f(&mut sink))
    });
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut n = 0usize;
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(k) = std::io::Read::read(&mut out, &mut buf) {
            if k == 0 {
                break;
            }
            n += k;
        }
        n
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for the child we spawned; std's Child is not waited on afterwards.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert!(pid > 0, "wait4: {}", std::io::Error::last_os_error());
    let wall = start.elapsed();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let out_bytes = reader.join().unwrap_or(0);
    let stderr = err_reader.join().unwrap_or_default();
    let rc = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Measured {
        rc,
        wall,
        rss_kib: usage.ru_maxrss,
        out_bytes,
        stderr,
    }
}

/// Write `total` bytes: `line` repeated (a newline-free `line` makes one endless line).
fn stream(line: &'static [u8], total: u64) -> Feed {
    Box::new(move |w: &mut dyn Write| {
        let mut chunk = Vec::with_capacity(1 << 20);
        while chunk.len() < 1 << 20 {
            chunk.extend_from_slice(line);
        }
        let mut left = total;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            if w.write_all(&chunk[..n]).is_err() {
                return;
            }
            left -= n as u64;
        }
    })
}

struct Row {
    case: String,
    bound: String,
    m: Measured,
    ok: bool,
}

fn row(case: &str, bound: &str, m: Measured, ok: impl Fn(&Measured) -> bool) -> Row {
    let ok = ok(&m);
    Row {
        case: case.into(),
        bound: bound.into(),
        m,
        ok,
    }
}

fn topology_collect_env(dir: &Path, n: usize) -> PathBuf {
    let mut t =
        String::from("PyTorch version: 2.11.0\nOS: Ubuntu 24.04\nGPU models and configuration:\n");
    for i in 0..n {
        t.push_str(&format!("GPU {i}: NVIDIA H200\n"));
    }
    t.push_str("Nvidia driver version: 580.95.05\nGPU Topology:\n\t");
    t.push_str(
        &(0..n)
            .map(|i| format!("GPU{i}"))
            .collect::<Vec<_>>()
            .join("\t"),
    );
    t.push_str("\tCPU Affinity\n");
    for i in 0..n {
        let r: Vec<&str> = (0..n).map(|j| if i == j { "X" } else { "NV18" }).collect();
        t.push_str(&format!("GPU{i}\t{}\t0-63\n", r.join("\t")));
    }
    let p = dir.join(format!("topo{n}.txt"));
    std::fs::write(&p, t).expect("write");
    p
}

fn replay_report(dir: &Path, files: usize, line: usize) -> PathBuf {
    let o = Command::new(BIN)
        .args(["report", "--demo", "--format", "json", "--no-redact"])
        .output()
        .expect("demo report");
    let mut r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let m = r["log_matches"][0].clone();
    let matches: Vec<serde_json::Value> = (0..files)
        .map(|i| {
            let mut x = m.clone();
            x["file"] = format!("w{i}.log").into();
            x["line"] = line.into();
            x
        })
        .collect();
    r["log_matches"] = matches.into();
    let p = dir.join(format!("replay_{files}x{line}.json"));
    std::fs::write(&p, serde_json::to_vec(&r).expect("json")).expect("write");
    p
}

fn main() {
    // `cargo bench` passes --bench; this harness takes no options.
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let s = |p: &Path| p.to_str().expect("utf8").to_string();
    let mut rows = Vec::new();

    // classify: one 512 MiB line through stdin (line cap: bounded memory).
    let m = measure(
        &["classify", "--log", "-"],
        Some(stream(b"0123456789abcdef", 512 * MIB)),
    );
    rows.push(row(
        "classify --log - : one 512 MiB line",
        "RSS < 64 MiB",
        m,
        |m| m.rc == 0 && m.rss_kib < 64 * 1024,
    ));
    // classify: 1 GiB of ordinary log lines through stdin (time bound: the 4 GiB cap).
    let m = measure(
        &["classify", "--log", "-"],
        Some(stream(
            b"(EngineCore pid=2800) INFO [gpu_worker.py:341] Loading weights took 3.1 seconds\n",
            1024 * MIB,
        )),
    );
    rows.push(row(
        "classify --log - : 1 GiB of log lines",
        "RSS < 64 MiB; 4 GiB cap => time = 4 x this",
        m,
        |m| m.rc == 0 && m.rss_kib < 64 * 1024,
    ));
    // classify: more than the 4 GiB stream cap.
    let m = measure(
        &["classify", "--log", "-"],
        Some(stream(b"x\n", 4096 * MIB + MIB)),
    );
    rows.push(row(
        "classify --log - : 4 GiB + 1 MiB",
        "refused (exit 2), RSS < 64 MiB",
        m,
        |m| m.rc == 2 && m.stderr.contains("larger than 4096 MiB") && m.rss_kib < 64 * 1024,
    ));
    // classify: a crash loop, one matched line repeated to 512 MiB (issue 28: every copy was
    // kept, 1.2 GB RSS and 436 MB of output for 128 MB). A bounded sample per signature now.
    for format in ["text", "json"] {
        let m = measure(
            &["classify", "--format", format, "--log", "-"],
            Some(stream(
                b"RuntimeError: CUDA error: out of memory\n",
                512 * MIB,
            )),
        );
        rows.push(row(
            &format!("classify --format {format} --log - : 512 MiB crash loop"),
            "RSS < 128 MiB, output < 64 KiB",
            m,
            |m| m.rc <= 1 && m.rss_kib < 128 * 1024 && m.out_bytes < 64 * 1024,
        ));
    }
    // classify /dev/zero: refused at once.
    let m = measure(&["classify", "--log", "/dev/zero"], None);
    rows.push(row("classify --log /dev/zero", "refused < 1 s", m, |m| {
        m.rc == 2 && m.wall < Duration::from_secs(1)
    }));
    // check: a 100 MiB log file held in memory (cap 128 MiB).
    let big = d.join("big.log");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).expect("create"));
        stream(
            b"(VllmWorker rank=0 pid=2817) INFO [custom_all_reduce.py:208] Registering 4760 cuda graph addresses\n",
            100 * MIB,
        )(&mut f);
        f.flush().expect("flush");
    }
    let m = measure(&["check", "--demo", "--log", &s(&big)], None);
    rows.push(row(
        "check --log FILE: 100 MiB (in memory, cap 128 MiB)",
        "RSS < 4 x size",
        m,
        |m| m.rc <= 1 && m.rss_kib < 400 * 1024,
    ));
    std::fs::remove_file(&big).expect("rm");
    // Replays: at the 8M-line limit, and far past it.
    let at_limit = replay_report(d, 8, 1_000_000);
    let m = measure(&["check", "--snapshot", &s(&at_limit)], None);
    rows.push(row(
        "replay: 8 logs x 1,000,000 lines (the 8M limit)",
        "RSS < 64 MiB, < 10 s",
        m,
        |m| m.rc <= 1 && m.rss_kib < 64 * 1024 && m.wall < Duration::from_secs(10),
    ));
    let past = replay_report(d, 200, 5_000_000);
    let m = measure(&["check", "--snapshot", &s(&past)], None);
    rows.push(row(
        "replay: 200 logs x 5,000,000 lines (old: ~2 GB)",
        "refused < 1 s, RSS < 64 MiB",
        m,
        |m| m.rc == 2 && m.wall < Duration::from_secs(1) && m.rss_kib < 64 * 1024,
    ));
    // Topology: 400 GPUs.
    let topo = topology_collect_env(d, 400);
    let m = measure(
        &["report", "--collect-env", &s(&topo), "--format", "json"],
        None,
    );
    rows.push(row(
        "report --collect-env: 400-GPU topo matrix (old: 10 MB, 320 MB RSS)",
        "report < 1 MiB, RSS < 64 MiB",
        m,
        |m| m.rc == 0 && m.out_bytes < MIB as usize && m.rss_kib < 64 * 1024,
    ));
    // The collector's stdout: a flooding python.
    let flood = d.join("python");
    std::fs::write(
        &flood,
        "#!/bin/sh\nexec yes 0123456789abcdef0123456789abcdef\n",
    )
    .expect("w");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&flood)
        .status()
        .expect("chmod");
    let m = measure(
        &[
            "snapshot",
            "--python",
            &s(&flood),
            "--python-timeout",
            "60",
            "-o",
            &s(&d.join("flood.yaml")),
        ],
        None,
    );
    rows.push(row(
        "snapshot with a flooding python (old: 4.2 GB, abort)",
        "stopped at 4 MiB: < 5 s, RSS < 64 MiB",
        m,
        |m| m.rc == 0 && m.wall < Duration::from_secs(5) && m.rss_kib < 64 * 1024,
    ));
    // Every reader's cap: refused before reading (sparse files, no disk used).
    for (flag, len, cap) in [
        ("--snapshot", 33 * MIB, "32 MiB"),
        ("--collect-env", 5 * MIB, "4 MiB"),
        ("--launch-file", 2 * MIB, "1 MiB"),
        ("--answers", 2 * MIB, "1 MiB"),
        ("--log", 129 * MIB, "128 MiB"),
    ] {
        let p = d.join(format!("sparse{}", flag.trim_start_matches('-')));
        std::fs::File::create(&p)
            .expect("create")
            .set_len(len)
            .expect("set_len");
        let ps = s(&p);
        let args: Vec<&str> = match flag {
            "--snapshot" | "--collect-env" => vec!["check", flag, &ps],
            _ => vec!["check", "--demo", flag, &ps],
        };
        let m = measure(&args, None);
        rows.push(row(
            &format!("check {flag}: over its cap ({cap})"),
            "refused < 1 s, RSS < 64 MiB",
            m,
            |m| {
                m.rc == 2
                    && m.stderr.contains(&format!("larger than {cap}"))
                    && m.wall < Duration::from_secs(1)
                    && m.rss_kib < 64 * 1024
            },
        ));
    }
    // A check nested 30,000 deep in a --kb directory.
    let kb = d.join("kb");
    std::fs::create_dir_all(&kb).expect("mkdir");
    for (name, text) in sm120_doctor::kb::EMBEDDED {
        let text = if *name == "orphan_workers.yaml" {
            text.replacen(
                "check: \"processes.orphans > 0\"",
                &format!("check: \"{}true\"", "!".repeat(30_000)),
                1,
            )
        } else {
            text.to_string()
        };
        std::fs::write(kb.join(name), text).expect("write");
    }
    let m = measure(&["kb", "lint", &s(&kb)], None);
    rows.push(row(
        "kb lint: a check nested 30,000 deep (old: rc 134)",
        "error (exit 2) < 1 s",
        m,
        |m| m.rc == 2 && m.wall < Duration::from_secs(1),
    ));

    println!("\n| case | bound | exit | wall | peak RSS | output | within |");
    println!("|---|---|---|---|---|---|---|");
    let mut failed = 0;
    for r in &rows {
        println!(
            "| {} | {} | {} | {:.2} s | {:.1} MiB | {} B | {} |",
            r.case,
            r.bound,
            r.m.rc,
            r.m.wall.as_secs_f64(),
            r.m.rss_kib as f64 / 1024.0,
            r.m.out_bytes,
            if r.ok { "yes" } else { "NO" }
        );
        if !r.ok {
            failed += 1;
            eprintln!("{}: stderr: {}", r.case, r.m.stderr.trim());
        }
    }
    if failed > 0 {
        eprintln!("{failed} bound(s) not met");
        std::process::exit(1);
    }
}
