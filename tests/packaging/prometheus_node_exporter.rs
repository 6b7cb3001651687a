//! Real components: `check --demo --format prometheus -o DIR/sm120.prom`, then Debian's
//! node_exporter with `--collector.textfile.directory=DIR` on a free 127.0.0.1 port, scraped
//! with curl; `promtool check metrics` on the file. node_exporter is stopped by its pid.
//!
//! Needs `prometheus-node-exporter` (or `node_exporter`), `promtool` (Debian's `prometheus`)
//! and `curl`: .ci/run installs them. Under CI=true a missing tool FAILS the test; elsewhere the
//! test says SKIPPED and why (tests/support). SM120_DOCTOR_BIN picks another binary
//! (.ci/reach.sh passes the one installed from the wheel).

use crate::support;

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test: this build, or another one (.ci/reach.sh passes the wheel's).
fn bin() -> PathBuf {
    std::env::var_os("SM120_DOCTOR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sm120-doctor")))
}

/// The tools, or `None` after the skip or failure tests/support gives.
fn tools() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let mut found = support::require(
        "",
        &["prometheus-node-exporter|node_exporter", "promtool", "curl"],
    )?
    .into_iter();
    Some((found.next()?, found.next()?, found.next()?))
}

/// Stops node_exporter (by its pid) however the test ends.
struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        // SIGTERM by pid, then SIGKILL if it has not exited within 5 s.
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

fn start_exporter(exe: &Path, dir: &Path, log: &Path) -> (Exporter, u16) {
    // A port picked free can be taken before node_exporter binds it: try a few.
    for _ in 0..5 {
        let port = free_port();
        let child = Command::new(exe)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).expect("log file"))
            .spawn()
            .expect("start node_exporter");
        let mut exporter = Exporter(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = exporter.0.try_wait() {
                break; // exited: port taken, try another
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (exporter, port);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(exporter);
    }
    panic!(
        "node_exporter did not start; its log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

#[test]
fn node_exporter_serves_the_findings_from_the_textfile() {
    let Some((node_exporter, promtool, curl)) = tools() else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let textfile = work.path().join("textfile");
    std::fs::create_dir(&textfile).expect("mkdir");
    let prom = textfile.join("sm120.prom");

    // 1. Our file, written atomically where node_exporter looks.
    let bin = bin();
    println!("binary under test: {}", bin.display());
    let out = Command::new(&bin)
        .args(["check", "--demo", "--format", "prometheus", "-o"])
        .arg(&prom)
        .output()
        .expect("run sm120-doctor");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the demo has findings; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "with -o nothing goes to stdout");
    let text = std::fs::read_to_string(&prom).expect("the .prom file");
    let leftovers: Vec<_> = std::fs::read_dir(&textfile)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("sm120.prom")]);

    // 2. promtool accepts it (syntax and lint).
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let checked = check.wait_with_output().expect("promtool output");
    println!(
        "promtool check metrics: exit {:?}, stdout {:?}, stderr {:?}",
        checked.status.code(),
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(checked.status.success(), "promtool rejected:\n{text}");
    assert!(
        checked.stdout.is_empty() && checked.stderr.is_empty(),
        "lint output"
    );

    // 3. node_exporter serves it.
    let log = work.path().join("node_exporter.log");
    let (exporter, port) = start_exporter(&node_exporter, &textfile, &log);
    let pid = exporter.0.id();
    let scraped = Command::new(&curl)
        .args(["-sS", "--fail", "--max-time", "10"])
        .arg(format!("http://127.0.0.1:{port}/metrics"))
        .output()
        .expect("curl");
    assert!(
        scraped.status.success(),
        "curl: {}",
        String::from_utf8_lossy(&scraped.stderr)
    );
    let body = String::from_utf8_lossy(&scraped.stdout);
    let wanted = [
        "sm120_doctor_finding{class=\"allocator_ipc\",confidence=\"confirmed\",id=\"allocator_ipc\",severity=\"error\"} 1",
        "sm120_doctor_findings_by_severity{severity=\"error\"} 1",
        "sm120_doctor_class_state{class=\"allocator_ipc\",state=\"error\"} 1",
        "sm120_doctor_source_state{source=\"ipc_probe\",state=\"skipped\"} 1",
        "sm120_doctor_source_reason{reason=\"not_requested\",source=\"ipc_probe\"} 1",
        "sm120_doctor_last_run_duration_seconds ",
        "sm120_doctor_host_info{compute_capability=\"12.0\"",
        "node_textfile_scrape_error 0",
    ];
    for w in wanted {
        assert!(body.contains(w), "scrape lacks {w:?}:\n{body}");
    }
    let ours: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("sm120_doctor_finding{"))
        .collect();
    println!(
        "node_exporter pid {pid} on 127.0.0.1:{port}: {} sm120_doctor_* samples; findings:",
        body.lines()
            .filter(|l| l.starts_with("sm120_doctor_"))
            .count()
    );
    for l in &ours {
        println!("  {l}");
    }
    assert_eq!(ours.len(), 4, "{body}");

    // 4. Stop it by its pid and see it gone.
    drop(exporter);
    let gone = Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .map(|s| !s.success())
        .unwrap_or(true);
    assert!(gone, "node_exporter {pid} still running");
}
