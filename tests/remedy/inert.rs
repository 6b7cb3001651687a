//! An edit either reaches the vLLM process or `fix` is refused with the reason: never exit 0 with
//! an edit vLLM does not see.
//!
//! Scripts run in bash under stub commands: `vllm` (and a `python` the script names by a
//! variable) write their argv and environment to a file; `ssh` runs its command in a fresh
//! environment, as another host would. Each repro of a script form the tool used to edit inertly
//! has a test; a property test generates scripts of compound commands (`if`, `case`, loops,
//! functions, `{ }`) and wrappers (`time -p`, `coproc`, `nohup`, `exec`, `env`, `ssh host`) and
//! checks every `fix` result by running it. A second property does the same for `bash -c`
//! scripts in Kubernetes containers and compose services (commands before vLLM, `export`s in
//! the script, pipes and `&&`/`;` after it), running the container's env list and argv as read
//! back from the YAML's data.
//! Without bash the tests fail under `CI=true` and print a skip elsewhere (tests/support).

use crate::support;

use proptest::prelude::*;
use sm120_doctor::kb::schema::Edit;
use sm120_doctor::launch::{self, Select, SourceFile};
use sm120_doctor::remedy::{self, rewrite};
use std::collections::BTreeMap;
use std::process::Command;

static KB: std::sync::LazyLock<sm120_doctor::kb::KnowledgeBase> = std::sync::LazyLock::new(|| {
    sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("embedded KB loads")
});

/// The stub programs, written once (writing an executable while another thread forks can make
/// its exec fail with ETXTBSY).
static STUBS: std::sync::LazyLock<tempfile::TempDir> = std::sync::LazyLock::new(|| {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let engine =
        "#!/bin/bash\n{ printf '%s\\0' \"$@\"; printf '\\1\\0'; env -0; } > \"$STUB_OUT\"\n";
    // Another host: its own environment, the command line read again by its shell.
    let ssh = "#!/bin/bash\nwhile [[ $1 == -* ]]; do shift; done\nshift\nexec env -i PATH=\"$PATH\" STUB_OUT=\"$STUB_OUT\" bash -c \"$*\"\n";
    for (name, text) in [("vllm", engine), ("python-stub", engine), ("ssh", ssh)] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write a stub");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    dir
});

/// What the engine got: its argv (after the program) and its `P_*` / `VLLM_*` variables.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
}

/// Run `script` in bash with the stubs first on PATH; `None` when no engine ran.
fn run(script: &str) -> Result<Option<Seen>, String> {
    run_full(script).map(|r| r.0)
}

/// As [`run`], with how many errors bash reported (syntax errors, readonly assignments).
fn run_full(script: &str) -> Result<(Option<Seen>, usize), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("engine.out");
    let path = format!(
        "{}:{}",
        STUBS.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::fs::write(dir.path().join("run.sh"), script).map_err(|e| e.to_string())?;
    let go = || {
        Command::new("bash")
            .arg("--norc")
            .arg("-c")
            .arg("source ./run.sh; wait")
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", &path)
            .env("LC_ALL", "C")
            .env("STUB_OUT", &out)
            .env("PY", STUBS.path().join("python-stub"))
            .output()
            .map_err(|e| e.to_string())
    };
    let mut o = go()?;
    for _ in 0..3 {
        if !String::from_utf8_lossy(&o.stderr).contains("Text file busy") {
            break;
        }
        o = go()?;
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    let errors =
        stderr.matches("syntax error").count() + stderr.matches("readonly variable").count();
    let Ok(bytes) = std::fs::read(&out) else {
        return Ok((None, errors));
    };
    let s = String::from_utf8_lossy(&bytes).into_owned();
    let mut parts: Vec<&str> = s.split('\0').collect();
    parts.pop();
    let sep = parts
        .iter()
        .position(|p| *p == "\u{1}")
        .ok_or("no separator")?;
    let argv = parts[..sep].iter().map(|s| s.to_string()).collect();
    let env = parts[sep + 1..]
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| k.starts_with("P_") || k.starts_with("VLLM_"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Ok((Some(Seen { argv, env }), errors))
}

fn edit(text: &str, e: &Edit) -> Result<String, String> {
    rewrite::apply_edit_files(
        &[SourceFile::new("run.sh", text)],
        &Select::default(),
        "t",
        e,
        &KB,
    )
    .map(|s| s.texts[0].clone())
    .map_err(|e| e.to_string())
}

fn set(name: &str, value: &str) -> Edit {
    Edit::SetEnv {
        name: name.into(),
        value: value.into(),
    }
}

fn flag(v: &str) -> Edit {
    Edit::AddFlag {
        flag: "--x-test".into(),
        value: Some(v.into()),
    }
}

/// `fix` of `script` with `e` is refused, or bash shows the engine got the edit: (refused?).
fn reaches_or_refused(script: &str, e: &Edit) -> Result<bool, String> {
    let (before, errors_before) = run_full(script)?;
    let after_text = match edit(script, e) {
        Err(_) => return Ok(true),
        Ok(t) => t,
    };
    let (after, errors_after) = run_full(&after_text)?;
    if errors_after > errors_before {
        return Err(format!(
            "fix exited 0 with a result bash reports errors in:\n{script}\n->\n{after_text}"
        ));
    }
    let after = after.ok_or_else(|| {
        format!("fix exited 0 but no engine runs any more:\n{script}\n->\n{after_text}")
    })?;
    let mut want = before.ok_or_else(|| format!("no engine ran before the edit:\n{script}"))?;
    match e {
        Edit::SetEnv { name, value } => {
            want.env.insert(name.clone(), value.clone());
        }
        Edit::AddFlag { flag, value } => {
            want.argv.push(flag.clone());
            want.argv.extend(value.clone());
        }
        other => return Err(format!("not a test edit: {other:?}")),
    }
    if after != want {
        return Err(format!(
            "fix exited 0 with an edit the engine does not see as intended:\n{script}\n->\n\
             {after_text}\nwanted {want:?}\ngot    {after:?}"
        ));
    }
    Ok(false)
}

fn bash_here() -> bool {
    support::require_tools(&["bash"])
}

#[test]
fn an_unrecognised_command_is_not_read_as_an_env_file() {
    if !bash_here() {
        return;
    }
    // `eval "$CMD"`: no vLLM command to read; an export appended after it would be inert.
    let script = "#!/bin/bash\nCMD=\"vllm serve m\"\nexport P_A=1\neval \"$CMD\"\n";
    let e = edit(script, &set("VLLM_USE_DEEP_GEMM", "0")).expect_err("refused");
    assert!(e.contains("line 4 runs `eval $CMD`"), "{e}");
    let e = remedy::fix(script, &KB, &["disable_custom_all_reduce".into()]).expect_err("refused");
    assert!(e.to_string().contains("eval"), "{e}");
    // An env file with only bookkeeping stays an env file.
    let env = "#!/bin/bash\nexport P_A=1\nmkdir -p /tmp/x\necho ready\n";
    let out = edit(env, &set("P_B", "2")).expect("an env file");
    assert!(out.contains("export P_B=2"), "{out}");
}

#[test]
fn an_interpreter_named_by_a_variable_is_the_vllm_command() {
    if !bash_here() {
        return;
    }
    let script =
        "#!/bin/bash\nexec \"$PY\" -m vllm.entrypoints.openai.api_server --model m -tp 2\n";
    let loc = launch::locate(script).expect("recognised");
    assert_eq!(
        loc.entrypoint.as_deref(),
        Some("python -m vllm.entrypoints.openai.api_server")
    );
    for e in [set("VLLM_USE_DEEP_GEMM", "0"), flag("1")] {
        assert!(
            !reaches_or_refused(script, &e).expect("runs"),
            "{e:?} applied"
        );
    }
}

#[test]
fn docker_run_with_the_image_in_a_variable_is_read_as_docker() {
    let script = "#!/bin/bash\nIMG=vllm/vllm-openai:latest\ndocker run --gpus all $IMG Qwen/Qwen3-8B -tp 2\n";
    let loc = launch::locate(script).expect("recognised");
    assert_eq!(loc.form, launch::Form::Docker);
    let l = launch::parse_launch(script).expect("parses");
    assert_eq!(l.tensor_parallel_size, Some(2));
    assert_eq!(l.model.as_deref(), Some("Qwen/Qwen3-8B"));
    let out = edit(script, &set("VLLM_USE_DEEP_GEMM", "0")).expect("edits");
    assert!(
        out.contains("docker run --gpus all -e VLLM_USE_DEEP_GEMM=0 $IMG Qwen/Qwen3-8B -tp 2"),
        "{out}"
    );
}

#[test]
fn no_export_lands_inside_a_compound_command() {
    if !bash_here() {
        return;
    }
    for script in [
        "#!/bin/bash\nif [ -n \"$HOME\" ]; then\n  export P_A=1\nfi\nvllm serve m\n",
        "#!/bin/bash\nif false; then\n  export P_A=1\nfi\nvllm serve m\n",
        "#!/bin/bash\nsetup() {\n  export P_A=1\n}\nvllm serve m\n",
        "#!/bin/bash\ncase x in\n  x) export P_A=1;;\nesac\nvllm serve m\n",
        "#!/bin/bash\ncase y in x) export P_A=1;; esac\nvllm serve m\n",
        "#!/bin/bash\nfor i in 1; do export P_A=$i; done\nvllm serve m\n",
        "#!/bin/bash\n{ export P_A=1; }\nvllm serve m\n",
    ] {
        let refused = reaches_or_refused(script, &set("P_NEW", "v")).expect("runs");
        assert!(!refused, "applied:\n{script}");
        let out = edit(script, &set("P_NEW", "v")).expect("edits");
        assert!(out.contains("P_NEW=v vllm serve m"), "{out}");
    }
    // An export at the top level still takes the new line after it.
    let script = "#!/bin/bash\nexport P_A=1\nif true; then\n  vllm serve m\nfi\n";
    let out = edit(script, &set("P_NEW", "v")).expect("edits");
    assert!(out.contains("export P_A=1\nexport P_NEW=v\n"), "{out}");
    assert!(!reaches_or_refused(script, &set("P_NEW", "v")).expect("runs"));
}

#[test]
fn a_prefix_never_goes_between_a_wrapper_and_its_options() {
    if !bash_here() {
        return;
    }
    for (script, want) in [
        (
            "time -p vllm serve m -tp 2\n",
            "time -p P_NEW=v vllm serve m",
        ),
        ("coproc vllm serve m -tp 2\n", "coproc P_NEW=v vllm serve m"),
        ("nohup vllm serve m -tp 2 &\n", "P_NEW=v nohup vllm serve m"),
    ] {
        let out = edit(script, &set("P_NEW", "v")).expect("edits");
        assert!(out.contains(want), "{out}");
        assert!(
            !reaches_or_refused(script, &set("P_NEW", "v")).expect("runs"),
            "{script}"
        );
        assert!(!reaches_or_refused(script, &flag("x")).expect("runs"));
    }
    // Another host: nothing set here reaches it, and its shell reads the words again.
    let script = "export P_A=1\nssh -t host vllm serve m -tp 2\n";
    let e = edit(script, &set("P_NEW", "v")).expect_err("refused");
    assert!(e.contains("`ssh -t host`"), "{e}");
    assert!(edit(script, &flag("x")).is_err());
    assert!(reaches_or_refused(script, &set("P_NEW", "v")).expect("runs"));
}

#[test]
fn readonly_is_an_assignment_a_new_one_cannot_override() {
    if !bash_here() {
        return;
    }
    // Not exported: a later `export` or `VLLM_X=0 vllm` would fail with "readonly variable";
    // `env VLLM_X=0 vllm` (a program, not an assignment) reaches the engine.
    for script in [
        "readonly VLLM_X=1\nvllm serve m\n",
        "readonly VLLM_X=1\ntime -p vllm serve m\n",
        "readonly VLLM_X=1\nif true; then\n  exec vllm serve m\nfi\n",
    ] {
        let out = edit(script, &set("VLLM_X", "0")).expect("edited");
        assert!(out.contains("env VLLM_X=0 "), "{out}");
        assert!(!reaches_or_refused(script, &set("VLLM_X", "0")).expect("runs"));
    }
    // Exported: the readonly line itself is edited.
    let script = "export VLLM_X=1\nreadonly VLLM_X=1\nvllm serve m\n";
    assert!(!reaches_or_refused(script, &set("VLLM_X", "0")).expect("runs"));
    let script = "declare -rx VLLM_X=1\nvllm serve m\n";
    assert!(!reaches_or_refused(script, &set("VLLM_X", "0")).expect("runs"));
    assert_eq!(
        launch::parse_launch(script)
            .expect("parses")
            .env
            .get("VLLM_X")
            .map(String::as_str),
        Some("1")
    );
}

#[test]
fn a_process_substitution_is_one_word() {
    if !bash_here() {
        return;
    }
    let script = "vllm serve m --config <(echo x) -tp 2\n";
    let loc = launch::locate(script).expect("locates");
    assert_eq!(
        loc.arg_values(),
        vec!["m", "--config", "<(echo x)", "-tp", "2"]
    );
    let script = "vllm serve m --config <(echo x)\n";
    assert!(!reaches_or_refused(script, &flag("1")).expect("runs"));
    let out = edit(script, &flag("1")).expect("edits");
    assert_eq!(out, "vllm serve m --config <(echo x) --x-test 1\n");
}

#[test]
fn systemd_exec_start_flags_go_to_the_vllm_command() {
    let unit = "[Service]\nExecStart=/usr/bin/vllm serve m -tp 2 ; /bin/true\n";
    let loc = launch::locate(unit).expect("locates");
    assert_eq!(loc.arg_values(), vec!["m", "-tp", "2"]);
    let out = remedy::fix(unit, &KB, &["disable_custom_all_reduce".into()]).expect("fix");
    assert!(
        out.text.contains(
            "ExecStart=/usr/bin/vllm serve m -tp 2 --disable-custom-all-reduce ; /bin/true"
        ),
        "{}",
        out.text
    );
    // The vLLM command second.
    let unit = "[Service]\nExecStart=/bin/mkdir -p /run/v ; /usr/bin/vllm serve m\n";
    let loc = launch::locate(unit).expect("locates");
    assert_eq!(loc.arg_values(), vec!["m"]);
}

// ---------------------------------------------------------------------------------------------
// The property: scripts of compound commands and wrappers, every `fix` refused or effective.
// ---------------------------------------------------------------------------------------------

fn pooled() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["P_A", "P_B", "P_C"]).prop_map(String::from)
}

fn value() -> impl Strategy<Value = String> {
    "[a-z0-9:_ ]{0,6}"
}

/// A command before the vLLM one.
fn before() -> impl Strategy<Value = String> {
    let v = || (pooled(), "[a-z0-9]{0,4}");
    prop_oneof![
        v().prop_map(|(n, x)| format!("export {n}={x}\n")),
        v().prop_map(|(n, x)| format!("{n}={x}\n")),
        v().prop_map(|(n, x)| format!("readonly {n}={x}\n")),
        v().prop_map(|(n, x)| format!("if true; then\n  export {n}={x}\nfi\n")),
        v().prop_map(|(n, x)| format!("if false; then export {n}={x}; else :; fi\n")),
        v().prop_map(|(n, x)| format!("setup() {{\n  export {n}={x}\n}}\n")),
        v().prop_map(|(n, x)| format!("function setup {{ export {n}={x}; }}\n")),
        v().prop_map(|(n, x)| format!("case \"$1\" in\n  go) export {n}={x};;\n  *) :;;\nesac\n")),
        v().prop_map(|(n, x)| format!("while false; do export {n}={x}; done\n")),
        v().prop_map(|(n, x)| format!("( export {n}={x} )\n")),
        v().prop_map(|(n, x)| format!("{{ export {n}={x}; }}\n")),
        Just("echo hi > /dev/null\n".to_string()),
    ]
}

/// How the vLLM command is started.
fn wrapper() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        "time -p ",
        "time ",
        "coproc ",
        "nohup ",
        "exec ",
        "env ",
        "nice -n 1 ",
        "ssh host ",
        "ssh -t host ",
        "! ",
        "stdbuf -oL ",
        "timeout 100 ",
        "command ",
        "env -i PATH=\"$PATH\" STUB_OUT=\"$STUB_OUT\" ",
        "env -u P_A ",
    ])
}

/// Around the vLLM command.
fn around() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("", "\n"),
        ("if true; then\n  ", "\nfi\n"),
        ("start() {\n  ", "\n}\nstart\n"),
        ("case x in\n  x) ", ";;\nesac\n"),
        ("{ ", "; }\n"),
        ("", " &\n"),
        ("", " > /dev/null 2>&1\n"),
        ("while true; do\n  ", "\n  break\ndone\n"),
        ("until false; do ", "; break; done\n"),
        ("( ", " )\n"),
        ("cd / && ", "\n"),
        ("", " || exit 1\n"),
        ("", " | cat\n"),
        ("if false; then :; else\n  ", "\nfi\n"),
        ("f() { ", "; }\nf \"$@\"\n"),
    ])
}

#[test]
fn every_fix_of_a_compound_script_reaches_the_engine_or_is_refused() {
    if !bash_here() {
        return;
    }
    compound_cases();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    // Not a #[test] itself: the test above checks for bash first.
    fn compound_cases(
        pre in prop::collection::vec(before(), 0..4),
        wrap in wrapper(),
        (open, close) in around(),
        name in prop_oneof![pooled(), Just("P_NEW".to_string())],
        v in value(),
        f in "[a-z0-9]{1,4}",
    ) {
        let mut script = String::from("#!/bin/bash\n");
        for p in &pre {
            script.push_str(p);
        }
        script.push_str(open);
        script.push_str(wrap);
        script.push_str("vllm serve m -tp 2");
        script.push_str(close);
        if run(&script).map_err(TestCaseError::fail)?.is_none() {
            // The generated script never starts the engine (a wrapper bash refuses): skip.
            return Ok(());
        }
        reaches_or_refused(&script, &set(&name, &v)).map_err(TestCaseError::fail)?;
        reaches_or_refused(&script, &flag(&f)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn a_flag_given_by_a_variable_is_edited_so_the_engine_gets_the_new_value() {
    if !bash_here() {
        return;
    }
    let script = "#!/bin/bash\nTP=2\nvllm serve m --tensor-parallel-size \"$TP\" --port 8000\n";
    let before = run(script).expect("runs").expect("engine ran");
    assert_eq!(
        before.argv,
        vec![
            "serve",
            "m",
            "--tensor-parallel-size",
            "2",
            "--port",
            "8000"
        ]
    );
    let out = edit(
        script,
        &Edit::AddFlag {
            flag: "--tensor-parallel-size".into(),
            value: Some("1".into()),
        },
    )
    .expect("edits");
    assert!(
        out.contains("TP=1\n") && out.contains("\"$TP\""),
        "the assignment changes: {out}"
    );
    let after = run(&out).expect("runs").expect("engine ran");
    assert_eq!(
        after.argv,
        vec![
            "serve",
            "m",
            "--tensor-parallel-size",
            "1",
            "--port",
            "8000"
        ]
    );
    // Unquoted and split by bash: not one word, so not read as one.
    let script = "#!/bin/bash\nARGS='-tp 2'\nvllm serve m $ARGS\n";
    let loc = launch::locate(script).expect("locates");
    assert_eq!(loc.arg_values(), vec!["m", "$ARGS"]);
}

/// A UTF-8 byte-order mark before a launch (Windows editors write one) is read past, and kept.
#[test]
fn a_byte_order_mark_is_read_past_and_kept() {
    for text in [
        "#!/bin/bash\nexport A=1\nvllm serve m -tp 2\n",
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      - A=1\n    command: [\"--model\", \"m\", \"-tp\", \"2\"]\n",
        "[Service]\nEnvironment=A=1\nExecStart=/usr/bin/vllm serve m -tp 2\n",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: v\nspec:\n  containers:\n    - name: vllm\n      image: vllm/vllm-openai\n      args: [\"--model\", \"m\", \"-tp\", \"2\"]\n",
    ] {
        let with_bom = format!("\u{feff}{text}");
        let plain = launch::parse_launch(text).expect("parses");
        let bom = launch::parse_launch(&with_bom).expect("parses with a BOM");
        assert_eq!(
            bom.tensor_parallel_size, plain.tensor_parallel_size,
            "{text}"
        );
        let ids = [
            "deep_gemm_off".to_string(),
            "disable_custom_all_reduce".to_string(),
        ];
        let a = remedy::fix(text, &KB, &ids).expect("fix");
        let b = remedy::fix(&with_bom, &KB, &ids).expect("fix with a BOM");
        assert_eq!(b.text, format!("\u{feff}{}", a.text), "{text}");
    }
}

#[test]
fn a_script_bash_cannot_parse_is_refused_with_its_line() {
    if !bash_here() {
        return;
    }
    for (script, at) in [
        (
            "#!/bin/bash\nif true; then\nvllm serve m -tp 2\n",
            "line 2, column 1",
        ),
        (
            "#!/bin/bash\nexport P_A=1\nstart() {\n  vllm serve m -tp 2\n",
            "line 3, column 9",
        ),
        (
            "#!/bin/bash\ncase x in\n  x) vllm serve m ;;\n",
            "line 2, column 1",
        ),
        (
            "#!/bin/bash\nfor i in 1; do\n  vllm serve m\n",
            "line 2, column 1",
        ),
    ] {
        // bash runs none of it: no edit can reach the engine.
        let (seen, errors) = run_full(script).expect("runs");
        assert!(seen.is_none() && errors > 0, "{script}");
        for e in [set("P_NEW", "v"), flag("1")] {
            let why = edit(script, &e).expect_err("refused");
            assert!(why.contains(at) && why.contains("never closed"), "{why}");
        }
        let e = launch::locate(script).expect_err("check refuses it too");
        assert!(e.to_string().contains("never closed"), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// The same property for YAML forms: a `bash -c` script in a Kubernetes container or a compose
// service, run as the container would run it (its env: / environment: then the script).
// ---------------------------------------------------------------------------------------------

fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The container's environment and its `bash -c` script, read from the YAML's data (as
/// kubectl or compose reads it), as a bash script that runs it.
fn container_script(yaml: &str, k8s: bool) -> Result<String, String> {
    let v: serde_json::Value = serde_saphyr::from_str(yaml).map_err(|e| e.to_string())?;
    let c = if k8s {
        &v["spec"]["containers"][0]
    } else {
        &v["services"]["vllm"]
    };
    let mut out = String::new();
    if k8s {
        for e in c["env"].as_array().into_iter().flatten() {
            let (n, val) = (e["name"].as_str(), e["value"].as_str());
            let (Some(n), Some(val)) = (n, val) else {
                return Err(format!("an env entry without name or value: {e}"));
            };
            out.push_str(&format!("export {n}={}\n", sq(val)));
        }
    } else {
        for e in c["environment"].as_array().into_iter().flatten() {
            let kv = e.as_str().ok_or("not NAME=value")?;
            let (n, val) = kv.split_once('=').ok_or("not NAME=value")?;
            out.push_str(&format!("export {n}={}\n", sq(val)));
        }
    }
    let argv: Vec<&str> = if k8s {
        c["command"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(c["args"].as_array().into_iter().flatten())
            .filter_map(|a| a.as_str())
            .collect()
    } else {
        c["command"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str())
            .collect()
    };
    let words: Vec<String> = argv.iter().map(|w| sq(w)).collect();
    out.push_str(&words.join(" "));
    out.push('\n');
    Ok(out)
}

fn yaml_edit(text: &str, e: &Edit) -> Result<String, String> {
    rewrite::apply_edit_files(
        &[SourceFile::new("launch.yaml", text)],
        &Select::default(),
        "t",
        e,
        &KB,
    )
    .map(|s| s.texts[0].clone())
    .map_err(|e| e.to_string())
}

/// `fix` of a YAML launch is refused, or the container's run shows the engine got the edit.
fn yaml_reaches_or_refused(yaml: &str, k8s: bool, e: &Edit) -> Result<(), String> {
    let before = run(&container_script(yaml, k8s)?)?;
    let Ok(after_text) = yaml_edit(yaml, e) else {
        return Ok(());
    };
    let after = run(&container_script(&after_text, k8s)?)?
        .ok_or_else(|| format!("fix exited 0 but no engine runs:\n{yaml}\n->\n{after_text}"))?;
    let mut want = before.ok_or_else(|| format!("no engine ran before the edit:\n{yaml}"))?;
    match e {
        Edit::SetEnv { name, value } => {
            want.env.insert(name.clone(), value.clone());
        }
        Edit::AddFlag { flag, value } => {
            want.argv.push(flag.clone());
            want.argv.extend(value.clone());
        }
        other => return Err(format!("not a test edit: {other:?}")),
    }
    if after != want {
        return Err(format!(
            "fix exited 0 with an edit the engine does not see as intended:\n{yaml}\n->\n\
             {after_text}\nwanted {want:?}\ngot    {after:?}"
        ));
    }
    Ok(())
}

/// A command a container script runs before vLLM.
fn script_before() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "cd /",
        "echo hi > /dev/null",
        "export P_A=2",
        "export P_NEW=x",
        "P_B=3",
        "true || exit 1",
        "if true; then export P_C=1; fi",
    ])
}

fn script_after() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "",
        " 2>&1 | cat",
        " && echo done > /dev/null",
        "; echo done > /dev/null",
        " || exit 1",
        " > /dev/null 2>&1",
    ])
}

#[test]
fn every_fix_of_a_container_script_reaches_the_engine_or_is_refused() {
    if !bash_here() {
        return;
    }
    // Not vacuous: a plain case is edited (not refused) and reaches the engine.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    command: [\"bash\", \"-c\"]\n    args: [\"cd / && vllm serve m -tp 2 2>&1 | cat\"]\n";
    for e in [set("P_NEW", "v"), flag("1")] {
        yaml_edit(pod, &e).expect("edited");
        yaml_reaches_or_refused(pod, true, &e).expect("reaches");
    }
    container_cases();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    // Not a #[test] itself: the test above checks for bash first.
    fn container_cases(
        pre in prop::collection::vec(script_before(), 0..3),
        joiner in prop::sample::select(vec![" && ", "; "]),
        wrap in prop::sample::select(vec!["", "exec ", "time -p ", "env "]),
        post in script_after(),
        k8s in any::<bool>(),
        with_env in any::<bool>(),
        name in prop_oneof![pooled(), Just("P_NEW".to_string())],
        v in "[a-z0-9:_]{0,6}",
        f in "[a-z0-9]{1,4}",
    ) {
        let mut script: String = pre.iter().map(|p| format!("{p}{joiner}")).collect();
        script.push_str(&format!("{wrap}vllm serve m -tp 2{post}"));
        let quoted = serde_json::to_string(&script).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let yaml = if k8s {
            let env = if with_env { "\n    env:\n    - name: P_A\n      value: \"1\"" } else { "" };
            format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    command: [\"bash\", \"-c\"]\n    args: [{quoted}]{env}\n")
        } else {
            let env = if with_env { "\n    environment:\n      - P_A=1" } else { "" };
            format!("services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"bash\", \"-c\", {quoted}]{env}\n")
        };
        yaml_reaches_or_refused(&yaml, k8s, &set(&name, &v)).map_err(TestCaseError::fail)?;
        yaml_reaches_or_refused(&yaml, k8s, &flag(&f)).map_err(TestCaseError::fail)?;
    }
}
