//! Real launch files, judged by effect.
//!
//! tests/launch_corpus/ holds launch files of vLLM taken from public repositories and reduced to
//! what the launch reader needs (INDEX.md names each source, commit and what was dropped). For
//! every file this test runs the tool as a user would: `check --launch-file F` (is the launch
//! read or refused?) and `fix --launch-file F --remedy R` for the three remedies the allocator
//! and DeepGEMM findings offer (an environment edit, an allocator-option drop and a flag) and for
//! all three together. A fix that exits 0 is judged by what it did, not by its text:
//!
//! - the edited file still parses in its own tool: `bash -n` for a script or env file, a YAML
//!   parser (every document) for compose/Kubernetes/Helm, `systemd-analyze verify` for a unit
//!   (no error the original did not have);
//! - re-reading the edited file shows each remedy's effect where the engine sees it (its
//!   environment, its arguments), and nothing else the engine gets changed (its other variables,
//!   flags, model and parallel sizes).
//!
//! A refusal (exit 2) passes only when its reason is one the README lists as refused; each such
//! reason is tied to the README sentence that documents it, and the test checks that sentence is
//! still there. Run with `--nocapture` to see the table (files, read, refused, fixes
//! right/wrong/refused) that INDEX.md records.

use crate::support;

use sm120_doctor::launch::{self, Select, SourceFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sm120-doctor");
/// A recorded host, so `check` does not collect this machine live.
const SNAPSHOT: &str = "tests/fixtures/h200-live-2026-11-30/snapshot-nopy.yaml";
const REMEDIES: [&str; 3] = [
    "drop_expandable_segments",
    "deep_gemm_off",
    "disable_custom_all_reduce",
];

/// Refusals the README documents: (a phrase of the refusal, the README text that lists it).
const DOCUMENTED_REFUSALS: &[(&str, &str)] = &[
    (
        "the vLLM command is a YAML block scalar",
        "flag remedies are refused with the reason",
    ),
    (
        "is an env file with no vLLM command",
        "an env file with no command",
    ),
    (
        "not vLLM itself; give that script as the launch",
        "whose `ExecStart=` runs a script is refused",
    ),
    (
        "ExecStart= runs docker compose, not vLLM itself",
        "one that runs `docker compose` names the compose file to give",
    ),
    (
        "has no vllmConfig; adding one",
        "a modelSpec with no `vllmConfig:` takes no flag remedy",
    ),
];

struct Case {
    name: String,
    path: PathBuf,
    text: String,
    /// `--service NAME` / `--container NAME` from a `# select:` header line.
    select_args: Vec<String>,
    select: Select,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/launch_corpus")
}

fn cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/launch_corpus exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n != "INDEX.md"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a corpus file is UTF-8");
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("a file name")
                .to_string();
            let select_args: Vec<String> = text
                .lines()
                .find_map(|l| l.strip_prefix("# select: "))
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            let select = match select_args.as_slice() {
                [] => Select::default(),
                [flag, v] if flag == "--service" => Select::service(v),
                [flag, v] if flag == "--container" => Select::container(v),
                other => {
                    panic!("{name}: a select line names one --service or --container: {other:?}")
                }
            };
            Case {
                name,
                path,
                text,
                select_args,
                select,
            }
        })
        .collect()
}

/// Exit status, stdout, stderr without the tool's notes, and the remedies a note says were left
/// out (another one of the same run makes them unnecessary).
fn tool(case: &Case, args: &[&str]) -> (i32, String, String, Vec<String>) {
    let out = Command::new(BIN)
        .args(args)
        .arg("--launch-file")
        .arg(&case.path)
        .args(&case.select_args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    let raw = String::from_utf8_lossy(&out.stderr);
    let left_out = raw
        .lines()
        .filter_map(|l| l.strip_prefix("note: "))
        .filter_map(|l| l.split_once(" is left out: "))
        .map(|(id, _)| id.to_string())
        .collect();
    let stderr = raw
        .lines()
        .filter(|l| !l.starts_with("note") && !l.starts_with("sm120-doctor: note"))
        .collect::<Vec<_>>()
        .join("\n");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        left_out,
    )
}

/// The README text, whitespace collapsed (its lines wrap anywhere).
fn readme() -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The README sentence that documents this refusal, when the README still has it.
fn documented(readme: &str, reason: &str) -> Option<&'static str> {
    DOCUMENTED_REFUSALS
        .iter()
        .find(|(phrase, doc)| reason.contains(phrase) && readme.contains(doc))
        .map(|(_, doc)| *doc)
}

enum Kind {
    Shell,
    Yaml,
    Unit,
}

fn kind(case: &Case) -> Kind {
    match case.path.extension().and_then(|e| e.to_str()) {
        Some("yaml") => Kind::Yaml,
        Some("service") => Kind::Unit,
        _ => Kind::Shell,
    }
}

/// Errors `systemd-analyze verify` reports for `text` as a unit named like the case.
fn unit_errors(case: &Case, text: &str) -> Result<Vec<String>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let p = dir.path().join(&case.name);
    std::fs::write(&p, text).map_err(|e| e.to_string())?;
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&p)
        .output()
        .map_err(|e| e.to_string())?;
    let dir_text = dir.path().display().to_string();
    Ok(String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| l.replace(&dir_text, ""))
        .collect())
}

/// The edited file still parses in its own tool.
fn parses(case: &Case, after: &str) -> Result<(), String> {
    match kind(case) {
        Kind::Shell => {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let p = dir.path().join("edited.sh");
            std::fs::write(&p, after).map_err(|e| e.to_string())?;
            let out = Command::new("bash")
                .arg("-n")
                .arg(&p)
                .output()
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "bash -n: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        }
        Kind::Yaml => serde_saphyr::from_multiple::<serde_json::Value>(after)
            .map(|_| ())
            .map_err(|e| format!("YAML: {e}")),
        Kind::Unit => {
            if !support::have("systemd-analyze") {
                return Ok(());
            }
            let before = unit_errors(case, &case.text)?;
            let after_errors = unit_errors(case, after)?;
            let new: Vec<&String> = after_errors
                .iter()
                .filter(|l| !before.contains(l))
                .collect();
            if new.is_empty() {
                Ok(())
            } else {
                Err(format!("systemd-analyze verify: {new:?}"))
            }
        }
    }
}

fn read(case: &Case, text: &str) -> Result<sm120_doctor::snapshot::Launch, String> {
    launch::parse_launch_files(&[SourceFile::new(&case.name, text)], &case.select)
        .map_err(|e| e.to_string())
}

/// Does an allocator config turn expandable segments on (its last `expandable_segments` option
/// is `True`, as PyTorch reads it)?
fn expandable_on(conf: &str) -> bool {
    conf.split(',')
        .filter_map(|o| o.split_once(':'))
        .rfind(|(k, _)| k.trim() == "expandable_segments")
        .is_some_and(|(_, v)| v.trim() == "True")
}

const ALLOC: [&str; 2] = ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"];

/// Re-reading the edited file shows every remedy's effect and nothing else changed.
fn effect(case: &Case, after_text: &str, remedies: &[&str]) -> Result<(), String> {
    let before = read(case, &case.text)?;
    let after = read(case, after_text).map_err(|e| format!("the edited file is not read: {e}"))?;
    let mut touched_env: Vec<&str> = Vec::new();
    let mut touched_flags: Vec<&str> = Vec::new();
    for r in remedies {
        match *r {
            "deep_gemm_off" => {
                touched_env.push("VLLM_USE_DEEP_GEMM");
                if after.env.get("VLLM_USE_DEEP_GEMM").map(String::as_str) != Some("0") {
                    return Err(format!(
                        "deep_gemm_off: the engine's VLLM_USE_DEEP_GEMM is {:?}",
                        after.env.get("VLLM_USE_DEEP_GEMM")
                    ));
                }
            }
            "disable_custom_all_reduce" => {
                touched_flags.push("--disable-custom-all-reduce");
                if !after.disable_custom_all_reduce {
                    return Err("disable_custom_all_reduce: the engine's arguments have no \
                                --disable-custom-all-reduce"
                        .into());
                }
            }
            "drop_expandable_segments" => {
                touched_env.extend(ALLOC);
                for n in ALLOC {
                    if let Some(v) = after.env.get(n).filter(|v| expandable_on(v)) {
                        return Err(format!(
                            "drop_expandable_segments: the engine's {n} is {v:?}"
                        ));
                    }
                }
            }
            other => return Err(format!("no effect check for {other}")),
        }
    }
    let keep = |m: &BTreeMap<String, String>, touched: &[&str]| -> BTreeMap<String, String> {
        m.iter()
            .filter(|(k, _)| !touched.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    if keep(&before.env, &touched_env) != keep(&after.env, &touched_env) {
        return Err(format!(
            "other variables changed: {:?} -> {:?}",
            keep(&before.env, &touched_env),
            keep(&after.env, &touched_env)
        ));
    }
    let flag_keys = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        m.iter()
            .filter(|(k, _)| {
                !touched_flags
                    .iter()
                    .any(|t| t.trim_start_matches('-') == k.trim_start_matches('-'))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    if flag_keys(&before.flags) != flag_keys(&after.flags) {
        return Err(format!(
            "other flags changed: {:?} -> {:?}",
            flag_keys(&before.flags),
            flag_keys(&after.flags)
        ));
    }
    if (
        &before.model,
        before.tensor_parallel_size,
        before.pipeline_parallel_size,
        before.data_parallel_size,
    ) != (
        &after.model,
        after.tensor_parallel_size,
        after.pipeline_parallel_size,
        after.data_parallel_size,
    ) {
        return Err("the model or a parallel size changed".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Scripts run under stub commands: a second judge that does not use the tool's reader.
// ---------------------------------------------------------------------------------------------

/// Stub programs: `vllm`, `python`, `python3` record their argv and environment; `docker run`
/// records the arguments after the image and the `-e` variables (a container sees only those);
/// `uv run`, `systemd-run` and `conda run` start the rest of their command line.
static STUBS: std::sync::LazyLock<tempfile::TempDir> = std::sync::LazyLock::new(|| {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let engine =
        "#!/bin/bash\n{ printf '%s\\0' \"$@\"; printf '\\1\\0'; env -0; } > \"$STUB_OUT\"\n";
    let uv = "#!/bin/bash\n[ \"$1\" = run ] && shift\nexec \"$@\"\n";
    let systemd_run = "#!/bin/bash\nwhile [[ $1 == -* ]]; do case $1 in -p|--property|--unit|-u) shift 2;; *) shift;; esac; done\nexec \"$@\"\n";
    let docker = r#"#!/bin/bash
[ "$1" = run ] || exit 0
shift
envs=()
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    -e|--env) if [[ $2 == *=* ]]; then envs+=("$2"); else envs+=("$2=${!2}"); fi; shift 2;;
    --env=*) envs+=("${1#--env=}"); shift;;
    -v|-p|--name|--ulimit|--gpus|--runtime|--shm-size|--entrypoint|--network|--ipc|--env-file|-w) shift 2;;
    *) shift;;
  esac
done
shift
{ printf '%s\0' "$@"; printf '\1\0'; for e in "${envs[@]}"; do printf '%s\0' "$e"; done; } > "$STUB_OUT"
"#;
    for (name, text) in [
        ("vllm", engine),
        ("python", engine),
        ("python3", engine),
        ("uv", uv),
        ("systemd-run", systemd_run),
        ("docker", docker),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write a stub");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    dir
});

/// What the engine got under the stubs: its argv and its `VLLM_*` / `PYTORCH_*` variables.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
}

/// Run `script` in bash with the stubs first on PATH; `None` when no engine ran.
fn run_script(script: &str) -> Result<Option<Seen>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("engine.out");
    std::fs::write(dir.path().join("run.sh"), script).map_err(|e| e.to_string())?;
    let path = format!(
        "{}:{}",
        STUBS.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut o = None;
    for _ in 0..4 {
        let r = Command::new("bash")
            .arg("--norc")
            .arg("-c")
            .arg("bash ./run.sh; wait")
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", &path)
            .env("HOME", "/home/stub")
            .env("LC_ALL", "C")
            .env("STUB_OUT", &out)
            .env("COORDINATOR_IP", "10.0.0.1")
            .env("START_RANK", "0")
            .output()
            .map_err(|e| e.to_string())?;
        let busy = String::from_utf8_lossy(&r.stderr).contains("Text file busy");
        o = Some(r);
        if !busy {
            break;
        }
    }
    if o.is_none() {
        return Err("bash did not run".into());
    }
    let Ok(bytes) = std::fs::read(&out) else {
        return Ok(None);
    };
    let s = String::from_utf8_lossy(&bytes).into_owned();
    let mut parts: Vec<&str> = s.split('\0').collect();
    parts.pop();
    let sep = parts
        .iter()
        .position(|p| *p == "\u{1}")
        .ok_or("no separator")?;
    Ok(Some(Seen {
        argv: parts[..sep].iter().map(|s| s.to_string()).collect(),
        env: parts[sep + 1..]
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .filter(|(k, _)| k.starts_with("VLLM_") || k.starts_with("PYTORCH_"))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }))
}

/// For a script: run it before and after the fix under stubs and compare what the engine got.
/// `Ok(false)` when the engine does not run under the stubs (nothing to compare).
fn stub_effect(before_text: &str, after_text: &str, applied: &[&str]) -> Result<bool, String> {
    let Some(before) = run_script(before_text)? else {
        return Ok(false);
    };
    let after =
        run_script(after_text)?.ok_or("the engine no longer runs under the stubs after the fix")?;
    let mut want = before.clone();
    let mut got = after.clone();
    for r in applied {
        match *r {
            "deep_gemm_off" => {
                want.env.insert("VLLM_USE_DEEP_GEMM".into(), "0".into());
            }
            "disable_custom_all_reduce" => {
                let n = got
                    .argv
                    .iter()
                    .filter(|a| *a == "--disable-custom-all-reduce")
                    .count();
                if n == 0 {
                    return Err(
                        "under the stubs the engine's argv has no --disable-custom-all-reduce"
                            .into(),
                    );
                }
                got.argv.retain(|a| a != "--disable-custom-all-reduce");
                want.argv.retain(|a| a != "--disable-custom-all-reduce");
            }
            "drop_expandable_segments" => {
                for n in ALLOC {
                    if got.env.get(n).is_some_and(|v| expandable_on(v)) {
                        return Err(format!(
                            "under the stubs the engine's {n} is {:?}",
                            got.env[n]
                        ));
                    }
                    want.env.remove(n);
                    got.env.remove(n);
                }
            }
            _ => {}
        }
    }
    if want != got {
        return Err(format!(
            "under the stubs the engine got\n  {got:?}\nwanted\n  {want:?}"
        ));
    }
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// YAML launches judged from their parsed data: the container compose or kubelet would start,
// run under the same stubs.
// ---------------------------------------------------------------------------------------------

fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|x| match x {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Every Kubernetes container (`containers:` lists in any document, at any depth: pod templates
/// of any kind) and compose service, as (name, object, is it compose).
fn yaml_containers(docs: &[serde_json::Value]) -> Vec<(String, serde_json::Value, bool)> {
    fn walk(v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value, bool)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    if k == "containers" {
                        for c in x.as_array().into_iter().flatten() {
                            let name = c["name"].as_str().unwrap_or("").to_string();
                            out.push((name, c.clone(), false));
                        }
                    } else {
                        walk(x, out);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for d in docs {
        if let Some(services) = d
            .get("services")
            .and_then(|s| s.as_object())
            .filter(|_| d.get("apiVersion").is_none())
        {
            for (name, svc) in services {
                out.push((name.clone(), svc.clone(), true));
            }
            continue;
        }
        walk(d, &mut out);
    }
    out
}

/// The chosen container of a YAML launch as a bash script (its environment, then its command
/// as the container runtime would start it); `None` for Helm values (the chart renders them).
fn yaml_engine_script(case: &Case, text: &str) -> Result<Option<String>, String> {
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| format!("YAML: {e}"))?;
    let all = yaml_containers(&docs);
    let wanted = case.select_args.get(1);
    let mentions_vllm = |c: &serde_json::Value| {
        let words = [&c["command"], &c["args"], &c["entrypoint"], &c["image"]]
            .iter()
            .map(|v| v.to_string())
            .collect::<String>();
        words.contains("vllm")
    };
    let Some((_, c, compose)) = all
        .iter()
        .find(|(n, c, _)| wanted.map_or(mentions_vllm(c), |w| n == w))
    else {
        return Ok(None);
    };
    let mut out = String::new();
    let env = if *compose {
        &c["environment"]
    } else {
        &c["env"]
    };
    match env {
        serde_json::Value::Array(items) => {
            for e in items {
                let (n, v) = match e {
                    serde_json::Value::String(kv) => match kv.split_once('=') {
                        Some((n, v)) => (n.to_string(), v.to_string()),
                        None => continue,
                    },
                    obj => match (obj["name"].as_str(), obj["value"].as_str()) {
                        (Some(n), Some(v)) => (n.to_string(), v.to_string()),
                        _ => continue,
                    },
                };
                out.push_str(&format!("export {n}={}\n", sq(&v)));
            }
        }
        serde_json::Value::Object(m) => {
            for (n, v) in m {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                out.push_str(&format!("export {n}={}\n", sq(&v)));
            }
        }
        _ => {}
    }
    // What the container runs: its entrypoint (the image's `vllm serve` when none is given),
    // then its command / args. A compose string command is split by the shell here, as
    // compose splits it.
    let (entry, rest) = if *compose {
        (&c["entrypoint"], &c["command"])
    } else {
        (&c["command"], &c["args"])
    };
    let mut words: Vec<String> = strings(entry).iter().map(|w| sq(w)).collect();
    let rest_words: Vec<String> = match rest {
        serde_json::Value::String(s) => vec![s.clone()],
        other => strings(other).iter().map(|w| sq(w)).collect(),
    };
    if words.is_empty() {
        let first = match rest {
            serde_json::Value::String(s) => s.split_whitespace().next().unwrap_or("").to_string(),
            other => strings(other).first().cloned().unwrap_or_default(),
        };
        if !matches!(
            first.as_str(),
            "vllm" | "python" | "python3" | "sh" | "bash" | "/bin/sh" | "/bin/bash"
        ) {
            words.push("vllm serve".into());
        }
    }
    words.extend(rest_words);
    out.push_str(&words.join(" "));
    out.push('\n');
    Ok(Some(out))
}

#[derive(Default)]
struct Tally {
    files: usize,
    read: usize,
    refused: usize,
    right: usize,
    wrong: usize,
    refused_documented: usize,
    refused_undocumented: usize,
    ran_under_stubs: usize,
    yaml_under_stubs: usize,
}

#[test]
fn every_corpus_file_is_read_and_every_fix_reaches_the_engine_or_is_refused_as_documented() {
    if !support::require_tools(&["bash"]) {
        return;
    }
    let readme = readme();
    let cases = cases();
    assert!(cases.len() >= 50, "the corpus has {} files", cases.len());
    let mut t = Tally::default();
    let mut failures: Vec<String> = Vec::new();
    let mut rows: Vec<String> = Vec::new();
    for case in &cases {
        t.files += 1;
        let (rc, _, err, _) = tool(case, &["check", "--snapshot", SNAPSHOT, "--format", "json"]);
        let read_cell = if rc == 2 {
            t.refused += 1;
            match documented(&readme, &err) {
                Some(_) => "refused (documented)".to_string(),
                None => {
                    failures.push(format!("{}: check refused it: {err}", case.name));
                    "REFUSED".to_string()
                }
            }
        } else {
            t.read += 1;
            "read".to_string()
        };
        let mut cells = Vec::new();
        let mut runs: Vec<Vec<&str>> = REMEDIES.iter().map(|r| vec![*r]).collect();
        runs.push(REMEDIES.to_vec());
        for run in &runs {
            let mut args = vec!["fix"];
            for r in run {
                args.push("--remedy");
                args.push(r);
            }
            let (rc, out, err, left_out) = tool(case, &args);
            let applied: Vec<&str> = run
                .iter()
                .copied()
                .filter(|r| !left_out.iter().any(|l| l == r))
                .collect();
            let label = if run.len() == 1 { run[0] } else { "all three" };
            let cell = match rc {
                0 => match parses(case, &out)
                    .and_then(|()| effect(case, &out, &applied))
                    .and_then(|()| match kind(case) {
                        Kind::Shell => stub_effect(&case.text, &out, &applied).map(|ran| {
                            if ran {
                                t.ran_under_stubs += 1;
                            }
                        }),
                        Kind::Yaml => match (
                            yaml_engine_script(case, &case.text),
                            yaml_engine_script(case, &out),
                        ) {
                            (Ok(Some(b)), Ok(Some(a))) => {
                                stub_effect(&b, &a, &applied).map(|ran| {
                                    if ran {
                                        t.yaml_under_stubs += 1;
                                    }
                                })
                            }
                            (Ok(None), Ok(None)) => Ok(()),
                            (b, a) => Err(format!(
                                "the container is not found the same before and after: {b:?} / {a:?}"
                            )),
                        },
                        Kind::Unit => Ok(()),
                    }) {
                    Ok(()) => {
                        t.right += 1;
                        "right"
                    }
                    Err(why) => {
                        t.wrong += 1;
                        failures.push(format!("{} {label}: exit 0 but {why}\n{out}", case.name));
                        "WRONG"
                    }
                },
                2 => match documented(&readme, &err) {
                    Some(_) => {
                        t.refused_documented += 1;
                        "refused (documented)"
                    }
                    None => {
                        t.refused_undocumented += 1;
                        failures.push(format!("{} {label}: refused: {err}", case.name));
                        "REFUSED"
                    }
                },
                other => {
                    t.wrong += 1;
                    failures.push(format!("{} {label}: exit {other}: {err}", case.name));
                    "WRONG"
                }
            };
            cells.push(cell);
        }
        rows.push(format!(
            "| {} | {} | {} |",
            case.name,
            read_cell,
            cells.join(" | ")
        ));
    }
    println!(
        "| file | check | drop_expandable_segments | deep_gemm_off | disable_custom_all_reduce | all three |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        println!("{r}");
    }
    println!(
        "\nfiles {}, read {}, refused {}; fixes: right {}, wrong {}, refused {} ({} documented, {} not); \
         script fixes also judged under stubs: {}, YAML fixes run from their parsed data: {}",
        t.files,
        t.read,
        t.refused,
        t.right,
        t.wrong,
        t.refused_documented + t.refused_undocumented,
        t.refused_documented,
        t.refused_undocumented,
        t.ran_under_stubs,
        t.yaml_under_stubs
    );
    // Not vacuous: most fixes are made and judged.
    assert!(
        t.right * 2 > t.files * 4,
        "only {} fixes were made",
        t.right
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The judges are not vacuous: edits that do not reach the engine are caught.
#[test]
fn the_judges_catch_edits_that_do_not_reach_the_engine() {
    if !support::require_tools(&["bash"]) {
        return;
    }
    let all = cases();
    let case = |name: &str| {
        all.iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} is in the corpus"))
    };
    // An export after the vLLM command (what an env file reading used to write).
    let sh = case("sh_python_m_plain.sh");
    let late = format!("{}export VLLM_USE_DEEP_GEMM=0\n", sh.text);
    assert!(effect(sh, &late, &["deep_gemm_off"]).is_err());
    assert!(stub_effect(&sh.text, &late, &["deep_gemm_off"]).is_err());
    // A flag after a pipe goes to the next command.
    let piped = sh.text.replace(
        "--port 8000",
        "--port 8000 | cat --disable-custom-all-reduce",
    );
    assert!(stub_effect(&sh.text, &piped, &["disable_custom_all_reduce"]).is_err());
    // A variable set in the init container, not the vLLM one.
    let y = case("k8s_aibrix_llava_initcontainer.yaml");
    let wrong = y.text.replace(
        "            - name: DOWNLOADER_NUM_THREADS",
        "            - name: VLLM_USE_DEEP_GEMM\n              value: \"0\"\n            - name: DOWNLOADER_NUM_THREADS",
    );
    assert_ne!(wrong, y.text);
    assert!(parses(y, &wrong).is_ok());
    assert!(effect(y, &wrong, &["deep_gemm_off"]).is_err());
    let before = yaml_engine_script(y, &y.text)
        .expect("parses")
        .expect("a container");
    let after = yaml_engine_script(y, &wrong)
        .expect("parses")
        .expect("a container");
    assert!(stub_effect(&before, &after, &["deep_gemm_off"]).is_err());
    // The right edit passes the same judge (it is not failing everything).
    let right = y.text.replace(
        "            - name: VLLM_RPC_TIMEOUT",
        "            - name: VLLM_USE_DEEP_GEMM\n              value: \"0\"\n            - name: VLLM_RPC_TIMEOUT",
    );
    let after = yaml_engine_script(y, &right)
        .expect("parses")
        .expect("a container");
    assert_eq!(stub_effect(&before, &after, &["deep_gemm_off"]), Ok(true));
    // Invalid YAML and an invalid script are caught by their own tools.
    assert!(parses(y, &format!("{}  - [\n", y.text)).is_err());
    assert!(parses(sh, &format!("{}if true; then\n", sh.text)).is_err());
}
