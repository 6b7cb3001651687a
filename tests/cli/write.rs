//! The one file writer through the real binary: every `-o` goes through it, so the rules hold
//! for each mode (no clobbering without --force, symlinks, modes, refused file types, scripts,
//! and a write that fails half-way leaving the old file as it was).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

fn doctor(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("binary runs")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("lstat")
        .permissions()
        .mode()
        & 0o7777
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn every_mode_refuses_to_clobber_and_force_replaces_keeping_the_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("out");
    let modes: [&[&str]; 4] = [
        &["report", "--demo", "-o"],
        &[
            "fix",
            "--launch",
            "vllm serve m",
            "--remedy",
            "enforce_eager",
            "-o",
        ],
        &["patch-script", "--pr", "43923", "-o"],
        &["snapshot", "--no-python", "-o"],
    ];
    for args in modes {
        std::fs::write(&p, "mine\n").expect("seed");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o4640)).expect("chmod");
        let mut a = args.to_vec();
        a.push(s(&p));
        let o = doctor(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(
            err(&o).contains("already exists; pass --force"),
            "{args:?}: {}",
            err(&o)
        );
        assert_eq!(
            std::fs::read_to_string(&p).expect("read"),
            "mine\n",
            "{args:?}"
        );
        a.push("--force");
        let o = doctor(&a);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        assert_ne!(
            std::fs::read_to_string(&p).expect("read"),
            "mine\n",
            "{args:?}"
        );
        assert_eq!(mode(&p), 0o640, "{args:?}: mode kept, setuid dropped");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("out")],
        "no temporary files"
    );
}

#[test]
fn fix_writes_a_launch_command_as_an_executable_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("serve.sh");
    let o = doctor(&[
        "fix",
        "--launch",
        "vllm serve m -tp 2",
        "--remedy",
        "enforce_eager",
        "-o",
        s(&p),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(&p).expect("read"),
        "#!/usr/bin/env bash\nvllm serve m -tp 2 --enforce-eager\n"
    );
    assert_eq!(mode(&p) & 0o111, 0o111, "executable: {:o}", mode(&p));
    let check = Command::new("bash")
        .args(["-n", s(&p)])
        .output()
        .expect("bash runs");
    assert!(check.status.success(), "bash -n: {}", err(&check));
}

#[test]
fn a_symlinked_output_is_refused_without_force_and_its_target_replaced_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = dir.path().join("real.md");
    std::fs::write(&real, "old\n").expect("seed");
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let o = doctor(&["report", "--demo", "-o", s(&link)]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&real).expect("read"), "old\n");
    let o = doctor(&["report", "--demo", "-o", s(&link), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("real.md"),
        "names the file written: {}",
        err(&o)
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("lstat")
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .expect("read")
            .starts_with("## sm120-doctor report")
    );
}

#[test]
fn a_fifo_is_refused_by_name_even_with_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let o = doctor(&["report", "--demo", "-o", s(&fifo), "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(
        err(&o).contains("pipe: is a FIFO (named pipe); only a regular file is replaced"),
        "{}",
        err(&o)
    );
}

/// A write that fails half-way (here: the file-size limit, EFBIG) leaves the old file byte for
/// byte as it was, and no temporary file behind.
#[test]
fn a_failed_write_leaves_the_old_file_byte_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("r.md");
    let old: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    std::fs::write(&p, &old).expect("seed");
    // `ulimit -f 1`: at most 1024 bytes per file; SIGXFSZ ignored so write(2) returns EFBIG.
    let o = Command::new("bash")
        .arg("-c")
        .arg(r#"ulimit -f 1; trap '' XFSZ; exec "$0" report --demo -o "$1" --force"#)
        .arg(BIN)
        .arg(&p)
        .output()
        .expect("bash runs");
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("r.md: cannot write"), "{}", err(&o));
    assert_eq!(std::fs::read(&p).expect("read"), old);
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
}
