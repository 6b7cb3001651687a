//! Issue 29: where the tool has no Python of its own (the DaemonSet's image), the Python stack
//! is read from a running vLLM process's own files through /proc/PID/root. A stand-in "vLLM"
//! (python3 running a script named `vllm`, `serve`) maps a library from a fake site-packages
//! that holds `*.dist-info` folders; the collector, given an interpreter that does not exist,
//! reports that process's versions and where it read them.

use sm120_doctor::collect::python::{self, PythonMode};
use sm120_doctor::snapshot::Probed;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STAND_IN: &str = r#"
import mmap, os, sys, time
f = open(os.environ["LIB"], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
open(os.environ["READY"], "w").write(str(os.getpid()))
time.sleep(120)
"#;

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn without_an_interpreter_the_stack_of_a_running_vllm_is_read_through_its_root() {
    let Some(py) = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("skipped: no python3 to stand in for vLLM");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let site = dir.path().join("venv/lib/python3.12/site-packages");
    let lib = site.join("torch/lib/libtorch_cuda.so");
    std::fs::create_dir_all(lib.parent().expect("parent")).expect("mkdir");
    std::fs::write(&lib, [0u8; 4096]).expect("the library");
    std::fs::write(
        site.join("torch/version.py"),
        "__version__ = '2.9.0+cu128'\ncuda: Optional[str] = '12.8'\n",
    )
    .expect("version.py");
    for d in [
        "vllm-0.11.0.dist-info",
        "torch-2.9.0+cu128.dist-info",
        "triton-3.5.0.dist-info",
    ] {
        std::fs::create_dir_all(site.join(d)).expect("dist-info");
    }
    let bin = dir.path().join("venv/bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(bin.join("vllm"), STAND_IN).expect("the stand-in");
    let ready = dir.path().join("ready");
    let child = Command::new(py)
        .arg("-S")
        .arg(bin.join("vllm"))
        .args(["serve", "m"])
        .env("LIB", &lib)
        .env("READY", &ready)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("the stand-in starts");
    let pid = child.id();
    let _kill = KillOnDrop(child);
    let until = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&ready).map_or(true, |s| s.trim() != pid.to_string()) {
        assert!(
            Instant::now() < until,
            "the stand-in never mapped its library"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let stack = python::collect(
        Path::new("/nonexistent/sm120-doctor-test/python3"),
        PythonMode::Fast,
        Duration::from_secs(5),
    );
    let Probed::Value(s) = stack else {
        panic!("no stack read through /proc/{pid}/root: {stack:?}");
    };
    assert_eq!(s.vllm, Probed::Value("0.11.0".into()));
    assert_eq!(s.torch, Probed::Value("2.9.0+cu128".into()));
    assert_eq!(s.torch_cuda, Probed::Value("12.8".into()));
    assert_eq!(s.triton, Probed::Value("3.5.0".into()));
    assert_eq!(s.python, Probed::Value("3.12".into()));
    let how = s.interpreter.expect("where it was read");
    assert!(how.contains(&format!("/proc/{pid}/root")), "{how}");
    assert!(how.contains("site-packages"), "{how}");
}
