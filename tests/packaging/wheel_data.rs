//! The wheel's data files (packaging/wheel-data/data/share/…: completions and man pages) are
//! what this binary generates from its clap definitions. Regenerate with
//! `packaging/gen-wheel-data.sh` after changing the command line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

fn share() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/wheel-data/data/share")
}

fn files_under(dir: &Path, base: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files_under(&p, base, out);
        } else {
            let rel = p.strip_prefix(base).expect("under base");
            out.insert(rel.display().to_string(), std::fs::read(&p).expect("read"));
        }
    }
}

fn generated() -> BTreeMap<String, Vec<u8>> {
    let dir = tempfile::tempdir().expect("tempdir");
    let man = dir.path().join("man/man1");
    std::fs::create_dir_all(&man).expect("mkdir");
    let st = Command::new(BIN)
        .args(["man", "-o"])
        .arg(&man)
        .output()
        .expect("man");
    assert!(st.status.success());
    let mut out = BTreeMap::new();
    files_under(dir.path(), dir.path(), &mut out);
    for (shell, rel) in [
        ("bash", "bash-completion/completions/sm120-doctor"),
        ("zsh", "zsh/site-functions/_sm120-doctor"),
        ("fish", "fish/vendor_completions.d/sm120-doctor.fish"),
    ] {
        let o = Command::new(BIN)
            .args(["completions", shell])
            .output()
            .expect("completions");
        assert!(o.status.success());
        out.insert(rel.to_string(), o.stdout);
    }
    out
}

#[test]
fn wheel_data_matches_what_the_binary_generates() {
    let mut committed = BTreeMap::new();
    files_under(&share(), &share(), &mut committed);
    let fresh = generated();
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&committed),
        names(&fresh),
        "run packaging/gen-wheel-data.sh"
    );
    for (name, bytes) in &fresh {
        assert!(
            committed.get(name) == Some(bytes),
            "packaging/wheel-data/data/share/{name} is stale: run packaging/gen-wheel-data.sh"
        );
    }
    assert!(committed.contains_key("man/man1/sm120-doctor-check.1"));
}
