//! `completions bash|zsh|fish` and `man`, exercised in the real shells and in man(1).
//! .ci/run installs bash, zsh, fish and man; without one, the test (or its part) fails under
//! CI=true and prints a skip elsewhere (tests/support).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");

fn generate(dir: &Path, shell: &str) -> PathBuf {
    let out = Command::new(BIN)
        .args(["completions", shell])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    let p = dir.join(format!("sm120-doctor.{shell}"));
    std::fs::write(&p, &out.stdout).expect("write");
    p
}

/// Source the script in bash, show `complete -p`, then call the registered function the way
/// readline does for `line` (the cursor at its end) and print COMPREPLY, one per line.
fn bash_complete(script: &Path, words: &[&str]) -> (String, Vec<String>) {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| shlex::try_quote(w).expect("quote").into_owned())
        .collect();
    let program = format!(
        r#"source {script}
spec=$(complete -p sm120-doctor) || exit 3
echo "$spec"
func=$(echo "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
"$func" sm120-doctor "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf 'reply:%s\n' "${{COMPREPLY[@]}}"
"#,
        script = shlex::try_quote(&script.display().to_string()).expect("quote"),
        words = quoted.join(" "),
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "bash failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spec = stdout.lines().next().unwrap_or_default().to_string();
    let replies = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("reply:"))
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    (spec, replies)
}

#[test]
fn bash_completes_subcommands_their_options_and_values() {
    if !support::require_tools(&["bash"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let script = generate(dir.path(), "bash");

    let (spec, replies) = bash_complete(&script, &["sm120-doctor", "ch"]);
    println!("{spec}\n`sm120-doctor ch<TAB>` → {replies:?}");
    assert!(
        spec.starts_with("complete ") && spec.ends_with(" sm120-doctor") && spec.contains(" -F "),
        "{spec}"
    );
    assert_eq!(replies, vec!["check"]);

    let (_, replies) = bash_complete(&script, &["sm120-doctor", "c"]);
    println!("`sm120-doctor c<TAB>` → {replies:?}");
    for sub in ["check", "classify", "completions"] {
        assert!(replies.iter().any(|r| r == sub), "{replies:?}");
    }

    let (_, replies) = bash_complete(&script, &["sm120-doctor", "check", "--fo"]);
    println!("`sm120-doctor check --fo<TAB>` → {replies:?}");
    assert!(replies.contains(&"--format".to_string()), "{replies:?}");
    assert!(replies.contains(&"--force".to_string()), "{replies:?}");

    let (_, replies) = bash_complete(&script, &["sm120-doctor", "check", "--format", ""]);
    println!("`sm120-doctor check --format <TAB>` → {replies:?}");
    assert_eq!(replies, vec!["text", "json", "prometheus"]);

    // Remedy ids and answers come from the embedded knowledge base, not file names.
    let (_, replies) = bash_complete(&script, &["sm120-doctor", "fix", "--remedy", "drop_exp"]);
    println!("`sm120-doctor fix --remedy drop_exp<TAB>` → {replies:?}");
    assert!(
        replies.contains(&"drop_expandable_segments".to_string()),
        "{replies:?}"
    );
    let (_, replies) = bash_complete(&script, &["sm120-doctor", "check", "--answer", ""]);
    assert!(
        !replies.is_empty()
            && replies
                .iter()
                .all(|r| r.ends_with("=yes") || r.ends_with("=no") || r.ends_with("=unsure")),
        "{replies:?}"
    );

    let (_, replies) = bash_complete(&script, &["sm120-doctor", "completions", ""]);
    println!("`sm120-doctor completions <TAB>` → {replies:?}");
    for shell in ["bash", "zsh", "fish"] {
        assert!(replies.iter().any(|r| r == shell), "{replies:?}");
    }
}

#[test]
fn zsh_and_fish_scripts_parse_and_fish_completes() {
    let dir = tempfile::tempdir().expect("tempdir");
    if let Some(zsh) = support::require_tool_for("the zsh part", "zsh") {
        let script = generate(dir.path(), "zsh");
        let out = Command::new(zsh)
            .arg("-n")
            .arg(&script)
            .output()
            .expect("zsh");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&script).expect("read");
        assert!(text.starts_with("#compdef sm120-doctor"), "{text}");
    }
    if let Some(fish) = support::require_tool_for("the fish part", "fish") {
        let script = generate(dir.path(), "fish");
        let source = format!(
            "source {}; complete -C 'sm120-doctor check --format '",
            shlex::try_quote(&script.display().to_string()).expect("quote")
        );
        let out = Command::new(fish)
            .args(["--no-config", "-c", &source])
            .output()
            .expect("fish");
        let got = String::from_utf8_lossy(&out.stdout);
        println!("fish `sm120-doctor check --format <TAB>`:\n{got}");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let values: Vec<&str> = got
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default())
            .collect();
        for v in ["text", "json", "prometheus"] {
            assert!(values.contains(&v), "{got}");
        }
    }
}

#[test]
fn man_pages_render_without_warnings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let st = Command::new(BIN)
        .args(["man", "-o"])
        .arg(dir.path())
        .status()
        .expect("man -o");
    assert!(st.success());
    let main = Command::new(BIN).arg("man").output().expect("man");
    assert!(main.status.success());
    assert_eq!(
        main.stdout,
        std::fs::read(dir.path().join("sm120-doctor.1")).expect("page"),
        "stdout and -o give the same main page"
    );
    // -o never overwrites without --force.
    let again = Command::new(BIN)
        .args(["man", "-o"])
        .arg(dir.path())
        .output()
        .expect("man -o");
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    let Some(man) = support::require_tool_for("rendering with man(1)", "man") else {
        return;
    };
    for page in ["sm120-doctor.1", "sm120-doctor-check.1"] {
        let out = Command::new(&man)
            .args(["--warnings", "-l"])
            .arg(dir.path().join(page))
            .env("MANWIDTH", "100")
            .env("MANPAGER", "cat")
            .output()
            .expect("man");
        let text = String::from_utf8_lossy(&out.stdout);
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && warnings.is_empty(),
            "{page}: {warnings}"
        );
        assert!(text.contains("NAME"), "{text}");
        if page == "sm120-doctor-check.1" {
            assert!(text.contains("prometheus"), "{text}");
        } else {
            assert!(text.contains("completions"), "{text}");
        }
    }
}
