//! `check --format prometheus`: the diagnosis as metrics in the Prometheus text exposition
//! format (version 0.0.4), for node_exporter's textfile collector.
//!
//! A pure renderer over the same model `check --format json` renders (the engine's
//! [`Diagnosis`], the snapshot and the knowledge base); the caller passes the run time in.
//!
//! Labels carry identifiers and host facts only: class, finding and node ids from the knowledge
//! base, severities, versions, GPU model names, and reason *codes* ([`crate::value::ReasonCode::label`]). No finding
//! title, evidence, error message, path, hostname, environment value or GPU UUID is ever put in
//! a label or a comment, so nothing free-form (and no secret) leaves the host through a scrape.
//! Every label value is still escaped per the format ([`escape_label`]).
//!
//! Families, in this order (all gauges; the `_info` ones are always 1):
//! ```text
//! sm120_doctor_info{version,kb,kb_digest,input}            tool + KB version, what was examined
//! sm120_doctor_host_info{gpu_model,compute_capability,…}   host facts that matter
//! sm120_doctor_gpus                                        number of GPUs seen
//! sm120_doctor_gpu_info{gpu,model,compute_capability}      one per GPU
//! sm120_doctor_finding{class,id,severity,confidence}       one per finding at info or above
//! sm120_doctor_findings_by_severity{severity}              counts (error, warning, info)
//! sm120_doctor_class_state{class,state}                    state set: one series per class × state
//! sm120_doctor_questions_pending                           checks waiting for an answer
//! sm120_doctor_source_state{source,state}                  state set: collected, skipped, failed
//! sm120_doctor_source_reason{source,reason}                per source not collected, reason code
//! sm120_doctor_last_run_timestamp_seconds                  when this check ran
//! sm120_doctor_last_run_duration_seconds                   how long it took
//! ```

use crate::engine::{CheckState, Diagnosis, Outcome};
use crate::kb::KnowledgeBase;
use crate::kb::schema::Severity;
use crate::snapshot::{HostSnapshot, Probed, Reason};
use std::fmt::Write;

/// What the renderer cannot know from the model: when the check ran, and for how long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunInfo {
    /// Seconds since the Unix epoch.
    pub timestamp_seconds: f64,
    /// From the start of the command to the rendering (collection, reading, diagnosis).
    pub duration_seconds: f64,
}

/// The states of `sm120_doctor_source_state`, in output order.
pub const SOURCE_STATES: &[&str] = &["collected", "skipped", "failed"];

/// The states of `sm120_doctor_class_state`, in output order.
pub const CLASS_STATES: &[&str] = &[
    "error",
    "warning",
    "info",
    "ok",
    "needs_answer",
    "not_checked",
    "not_applicable",
];

/// The longest label value emitted; longer host strings are cut (on a character boundary).
const MAX_LABEL_CHARS: usize = 128;

/// Escape a label value per the text exposition format: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub(crate) fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// Escape HELP text per the format: `\` → `\\`, newline → `\n`.
pub(crate) fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A host string made fit for a label: other control characters become spaces, and it is cut
/// to [`MAX_LABEL_CHARS`] characters. Escaping happens when the sample is written.
fn label_value(v: &str) -> String {
    v.chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .take(MAX_LABEL_CHARS)
        .collect()
}

/// The embedded knowledge base's digest: `sha256:` and the SHA-256 of its files' bytes, the
/// files in byte order of their names, so anyone can recompute it from a checkout:
/// `cd knowledge && LC_ALL=C cat *.yaml | sha256sum`.
pub(crate) fn embedded_kb_digest() -> String {
    kb_digest(crate::kb::EMBEDDED)
}

fn kb_digest(files: &[(&str, &str)]) -> String {
    use sha2::{Digest, Sha256};
    let mut sorted: Vec<&(&str, &str)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (_, text) in sorted {
        h.update(text.as_bytes());
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// One metric family: HELP, TYPE and its samples, written together.
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Family {
    fn new(name: &'static str, help: &'static str) -> Self {
        Family {
            name,
            help,
            samples: Vec::new(),
        }
    }
    /// One sample; a second with the same labels is left out (the first stays). The format
    /// allows one series per label set, and node_exporter logs "collected before" on every
    /// scrape of a file that repeats one (a snapshot listing a GPU index twice did).
    fn add(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        let same = |l: &Vec<(&'static str, String)>| {
            l.len() == labels.len()
                && l.iter()
                    .zip(&labels)
                    .all(|((k, v), (k2, v2))| k == k2 && label_value(v) == label_value(v2))
        };
        if !self.samples.iter().any(|(l, _)| same(l)) {
            self.samples.push((labels, value));
        }
    }
    fn write(&self, out: &mut String) {
        let _ = writeln!(out, "# HELP {} {}", self.name, escape_help(self.help));
        let _ = writeln!(out, "# TYPE {} gauge", self.name);
        for (labels, value) in &self.samples {
            out.push_str(self.name);
            if !labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape_label(&label_value(v)));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", format_value(*value));
        }
    }
}

/// A sample value: integers without a fraction, other finite numbers as Rust prints them,
/// and the format's spellings for the rest.
fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn text<T: ToString>(p: &Probed<T>) -> String {
    p.value().map(|v| v.to_string()).unwrap_or_default()
}

/// Distinct values in first-seen order, joined with `, `.
fn distinct(values: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !v.is_empty() && !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(", ")
}

/// What was examined: the live host, the demo, or a recorded host (a file).
fn input_kind(snap: &HostSnapshot) -> &'static str {
    if snap.origin.is_live() {
        "live"
    } else if snap.origin.is_demo() {
        "demo"
    } else {
        "recorded"
    }
}

/// `true` / `false` / `unknown`: is any GPU of the SM12x family?
fn sm12x(snap: &HostSnapshot) -> &'static str {
    match snap.gpus.value() {
        Some(g)
            if g.iter()
                .any(|x| x.compute_capability.value().is_some_and(|c| c.is_sm12x())) =>
        {
            "true"
        }
        Some(g) if !g.is_empty() && g.iter().all(|x| x.compute_capability.value().is_some()) => {
            "false"
        }
        _ => "unknown",
    }
}

/// How a source of the snapshot ended.
enum SourceOutcome<'a> {
    Collected,
    Skipped(&'a Reason),
    Failed(&'a Reason),
}

impl<'a, T> From<&'a Probed<T>> for SourceOutcome<'a> {
    fn from(p: &'a Probed<T>) -> Self {
        match p {
            Probed::Value(_) => SourceOutcome::Collected,
            Probed::Skipped(r) => SourceOutcome::Skipped(r),
            Probed::Failed(e) => SourceOutcome::Failed(e),
        }
    }
}

/// Each top-level source of the snapshot with its outcome.
fn sources(snap: &HostSnapshot) -> Vec<(&'static str, SourceOutcome<'_>)> {
    vec![
        ("gpus", (&snap.gpus).into()),
        ("gpu_pairs", (&snap.gpu_pairs).into()),
        ("driver", (&snap.driver).into()),
        ("env", (&snap.env).into()),
        ("python", (&snap.python).into()),
        ("os", (&snap.os).into()),
        ("processes", (&snap.processes).into()),
        ("launch", (&snap.launch).into()),
        ("ipc_probe", (&snap.probe).into()),
    ]
}

/// Each KB class's state: its worst finding, else waiting for an answer, else not checked
/// when a finding of it was not checked (an input missing), or it was not walked in this mode
/// or has signatures only; else does not apply when none of its findings applies; else ok.
pub(crate) fn class_state(class: &str, d: &Diagnosis) -> &'static str {
    let of_class = || d.findings.iter().filter(|f| f.class == class);
    let worst = of_class().map(|f| f.severity).max();
    let pending = d
        .walks
        .iter()
        .any(|w| w.class == class && matches!(w.outcome, Outcome::NeedsAnswer { .. }));
    match worst {
        Some(Severity::Error) => "error",
        Some(Severity::Warning) => "warning",
        Some(Severity::Info) => "info",
        _ if pending => "needs_answer",
        Some(Severity::Ok) if of_class().any(|f| f.state == CheckState::NotChecked) => {
            "not_checked"
        }
        Some(Severity::Ok) if of_class().all(|f| f.state == CheckState::NotApplicable) => {
            "not_applicable"
        }
        Some(Severity::Ok) => "ok",
        None => "not_checked",
    }
}

/// The metrics text. Pure: the same inputs give the same bytes.
pub fn render(kb: &KnowledgeBase, snap: &HostSnapshot, d: &Diagnosis, run: &RunInfo) -> String {
    let mut families = Vec::new();

    let mut info = Family::new(
        "sm120_doctor_info",
        "sm120-doctor and knowledge-base versions, and what was examined (live, demo or recorded).",
    );
    let embedded = kb.origin == "embedded";
    info.add(
        vec![
            ("version", env!("CARGO_PKG_VERSION").to_string()),
            ("kb", if embedded { "embedded" } else { "custom" }.into()),
            (
                "kb_digest",
                if embedded {
                    embedded_kb_digest()
                } else {
                    String::new()
                },
            ),
            ("input", input_kind(snap).into()),
        ],
        1.0,
    );
    families.push(info);

    let gpus = snap.gpus.value().map(Vec::as_slice).unwrap_or_default();
    let python = snap.python.value();
    let driver = snap.driver.value();
    let mut host = Family::new(
        "sm120_doctor_host_info",
        "Host facts that matter for the diagnosis (empty when unknown).",
    );
    host.add(
        vec![
            ("gpu_model", distinct(gpus.iter().map(|g| text(&g.name)))),
            (
                "compute_capability",
                distinct(gpus.iter().map(|g| text(&g.compute_capability))),
            ),
            ("sm12x", sm12x(snap).into()),
            (
                "driver_version",
                driver.map(|d| text(&d.version)).unwrap_or_default(),
            ),
            (
                "cuda_driver_version",
                driver
                    .map(|d| text(&d.cuda_driver_version))
                    .unwrap_or_default(),
            ),
            (
                "vllm_version",
                python.map(|p| text(&p.vllm)).unwrap_or_default(),
            ),
            (
                "torch_version",
                python.map(|p| text(&p.torch)).unwrap_or_default(),
            ),
            (
                "torch_cuda_version",
                python.map(|p| text(&p.torch_cuda)).unwrap_or_default(),
            ),
        ],
        1.0,
    );
    families.push(host);

    let mut count = Family::new("sm120_doctor_gpus", "Number of GPUs seen.");
    count.add(vec![], gpus.len() as f64);
    families.push(count);

    let mut gpu_info = Family::new("sm120_doctor_gpu_info", "One series per GPU.");
    for g in gpus {
        gpu_info.add(
            vec![
                ("gpu", g.index.to_string()),
                ("model", text(&g.name)),
                ("compute_capability", text(&g.compute_capability)),
            ],
            1.0,
        );
    }
    families.push(gpu_info);

    let mut finding = Family::new(
        "sm120_doctor_finding",
        "A finding at info or above (always 1 while it holds); id is the knowledge base's conclusion id.",
    );
    for f in d.findings.iter().filter(|f| f.severity > Severity::Ok) {
        // When the check model gains a per-finding `match` (measured / inferred / …), it
        // becomes one more label here.
        finding.add(
            vec![
                ("class", f.class.clone()),
                ("id", f.id.clone()),
                ("severity", f.severity.as_str().into()),
                ("confidence", f.confidence.as_str().to_ascii_lowercase()),
            ],
            1.0,
        );
    }
    families.push(finding);

    let mut findings = Family::new(
        "sm120_doctor_findings_by_severity",
        "Number of findings by severity (info and above).",
    );
    for sev in [Severity::Error, Severity::Warning, Severity::Info] {
        let n = d.findings.iter().filter(|f| f.severity == sev).count();
        findings.add(vec![("severity", sev.as_str().into())], n as f64);
    }
    families.push(findings);

    let mut states = Family::new(
        "sm120_doctor_class_state",
        "State of each class of the knowledge base (a state set: the current state is 1).",
    );
    for class in &kb.classes {
        let now = class_state(class.id(), d);
        for s in CLASS_STATES {
            states.add(
                vec![("class", class.id().into()), ("state", (*s).into())],
                if *s == now { 1.0 } else { 0.0 },
            );
        }
    }
    families.push(states);

    let mut pending = Family::new(
        "sm120_doctor_questions_pending",
        "Checks that could not be decided from what was measured and wait for an answer.",
    );
    pending.add(vec![], d.pending().count() as f64);
    families.push(pending);

    let mut source_state = Family::new(
        "sm120_doctor_source_state",
        "How each data source of the snapshot ended: collected, skipped or failed (a state set: the current state is 1).",
    );
    let mut source_reason = Family::new(
        "sm120_doctor_source_reason",
        "Why a source was skipped or failed, as a reason code (one series per source not collected).",
    );
    for (source, outcome) in sources(snap) {
        let (now, reason) = match outcome {
            SourceOutcome::Collected => ("collected", None),
            SourceOutcome::Skipped(r) => ("skipped", Some(r)),
            SourceOutcome::Failed(e) => ("failed", Some(e)),
        };
        for s in SOURCE_STATES {
            source_state.add(
                vec![("source", source.into()), ("state", (*s).into())],
                if *s == now { 1.0 } else { 0.0 },
            );
        }
        if let Some(r) = reason {
            source_reason.add(
                vec![("source", source.into()), ("reason", r.code.label().into())],
                1.0,
            );
        }
    }
    families.push(source_state);
    families.push(source_reason);

    let mut ts = Family::new(
        "sm120_doctor_last_run_timestamp_seconds",
        "When this check ran, seconds since the Unix epoch.",
    );
    ts.add(vec![], run.timestamp_seconds);
    families.push(ts);

    let mut took = Family::new(
        "sm120_doctor_last_run_duration_seconds",
        "How long this check took, from the start of the command to writing the metrics.",
    );
    took.add(vec![], run.duration_seconds);
    families.push(took);

    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        f.write(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kb_digest_is_sha256_of_the_files_in_name_order() {
        // sha256("ab") from any sha256sum: the files are hashed as one stream, name order.
        assert_eq!(
            kb_digest(&[("b.yaml", "b"), ("a.yaml", "a")]),
            "sha256:fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603"
        );
    }

    #[test]
    fn the_embedded_kb_digest_is_the_knowledge_directorys() {
        // What README tells a reader to run, done here without a shell.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("knowledge/")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".yaml"))
            .collect();
        names.sort();
        let texts: Vec<(String, String)> = names
            .iter()
            .map(|n| {
                (
                    n.clone(),
                    std::fs::read_to_string(dir.join(n)).expect("read"),
                )
            })
            .collect();
        let files: Vec<(&str, &str)> = texts
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        assert_eq!(embedded_kb_digest(), kb_digest(&files));
    }
    use crate::engine::{self, Mode};
    use crate::snapshot::Gpu;

    fn demo() -> (KnowledgeBase, HostSnapshot, Diagnosis) {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("embedded KB");
        let snap = crate::import::demo_snapshot();
        let logs = vec![engine::classify::LogText {
            name: crate::import::demo::LOG_NAME.into(),
            text: crate::import::demo::LOG.into(),
        }];
        let d = engine::diagnose(&kb, &snap, &Default::default(), &logs, Mode::Failures);
        (kb, snap, d)
    }

    const RUN: RunInfo = RunInfo {
        timestamp_seconds: 1_764_500_000.0,
        duration_seconds: 0.25,
    };

    #[test]
    fn escapes_backslash_quote_and_newline() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("x\ny"), "x\\ny");
        assert_eq!(escape_label("plain 1.2+cu130"), "plain 1.2+cu130");
        assert_eq!(escape_help("a\\b\nc \"q\""), "a\\\\b\\nc \"q\"");
    }

    #[test]
    fn hostile_gpu_name_is_escaped_cut_and_stays_on_one_line() {
        let (kb, mut snap, d) = demo();
        let evil = format!("GPU\"}} 1\nfake_metric 2\\\t{}", "x".repeat(400));
        snap.gpus = Probed::Value(vec![Gpu::named(0, &evil, "test")]);
        let out = render(&kb, &snap, &d, &RUN);
        let line = out
            .lines()
            .find(|l| l.starts_with("sm120_doctor_gpu_info{"))
            .expect("gpu_info sample");
        assert!(
            line.starts_with(
                r#"sm120_doctor_gpu_info{gpu="0",model="GPU\"} 1\nfake_metric 2\\ xxx"#
            ),
            "{line}"
        );
        assert!(!out.lines().any(|l| l.starts_with("fake_metric")), "{out}");
        // Cut to MAX_LABEL_CHARS characters before escaping.
        let model = line
            .split("model=\"")
            .nth(1)
            .and_then(|s| s.split("\",compute_capability").next())
            .expect("model label");
        assert_eq!(model.matches('x').count(), MAX_LABEL_CHARS - 23, "{model}");
    }

    #[test]
    fn demo_has_the_allocator_finding_info_and_class_states() {
        let (kb, snap, d) = demo();
        let out = render(&kb, &snap, &d, &RUN);
        assert!(out.contains(
            "sm120_doctor_finding{class=\"allocator_ipc\",id=\"allocator_ipc\",severity=\"error\",confidence=\"confirmed\"} 1\n"
        ), "{out}");
        assert!(
            out.contains("sm120_doctor_findings_by_severity{severity=\"error\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("sm120_doctor_class_state{class=\"allocator_ipc\",state=\"error\"} 1\n")
        );
        assert!(out.contains("sm120_doctor_class_state{class=\"allocator_ipc\",state=\"ok\"} 0\n"));
        assert!(out.contains(
            "sm120_doctor_host_info{gpu_model=\"NVIDIA RTX PRO 6000 Blackwell Workstation Edition\",compute_capability=\"12.0\",sm12x=\"true\",driver_version=\"595.71.05\",cuda_driver_version=\"13.0\",vllm_version=\"0.24.0\",torch_version=\"2.11.0+cu130\",torch_cuda_version=\"13.0\"} 1\n"
        ), "{out}");
        assert!(out.contains(&format!(
            "sm120_doctor_info{{version=\"{}\",kb=\"embedded\",kb_digest=\"{}\",input=\"demo\"}} 1\n",
            env!("CARGO_PKG_VERSION"),
            embedded_kb_digest()
        )));
        assert!(
            out.contains(
                "sm120_doctor_source_reason{source=\"ipc_probe\",reason=\"not_requested\"} 1\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("sm120_doctor_source_state{source=\"ipc_probe\",state=\"skipped\"} 1\n")
        );
        assert!(
            out.contains("sm120_doctor_source_state{source=\"ipc_probe\",state=\"collected\"} 0\n")
        );
        assert!(out.contains("sm120_doctor_source_state{source=\"gpus\",state=\"collected\"} 1\n"));
        assert!(
            !out.contains("sm120_doctor_source_reason{source=\"gpus\""),
            "a collected source has no reason: {out}"
        );
        assert!(out.contains("sm120_doctor_gpus 2\n"));
        assert!(
            out.contains("sm120_doctor_last_run_timestamp_seconds 1764500000\n"),
            "{out}"
        );
        assert!(
            out.ends_with("sm120_doctor_last_run_duration_seconds 0.25\n"),
            "{out}"
        );
    }

    #[test]
    fn a_check_that_did_not_run_is_not_checked_and_one_that_does_not_apply_says_so() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let mut snap = crate::import::demo_snapshot();
        snap.launch = Probed::skipped("no launch command given");
        let d = crate::engine::diagnose(
            &kb,
            &snap,
            &crate::engine::Answers::new(),
            &[],
            crate::engine::Mode::Failures,
        );
        let out = render(&kb, &snap, &d, &RUN);
        // No log: out-of-memory was not checked; the P2P probe did not run.
        for class in ["cuda_oom", "p2p_fabric", "launch_text"] {
            let line =
                format!("sm120_doctor_class_state{{class=\"{class}\",state=\"not_checked\"}} 1\n");
            assert!(out.contains(&line), "{class}: {out}");
            let ok = format!("sm120_doctor_class_state{{class=\"{class}\",state=\"ok\"}} 1\n");
            assert!(!out.contains(&ok), "{class}");
        }
    }

    #[test]
    fn every_class_has_exactly_one_state_set() {
        let (kb, snap, d) = demo();
        let out = render(&kb, &snap, &d, &RUN);
        for class in &kb.classes {
            let ones = out
                .lines()
                .filter(|l| {
                    l.starts_with(&format!(
                        "sm120_doctor_class_state{{class=\"{}\",",
                        class.id()
                    ))
                })
                .filter(|l| l.ends_with(" 1"))
                .count();
            assert_eq!(ones, 1, "class {}", class.id());
        }
    }

    #[test]
    fn every_source_has_exactly_one_state() {
        let (kb, snap, d) = demo();
        let out = render(&kb, &snap, &d, &RUN);
        for (source, _) in sources(&snap) {
            let prefix = format!("sm120_doctor_source_state{{source=\"{source}\",");
            let series: Vec<&str> = out.lines().filter(|l| l.starts_with(&prefix)).collect();
            assert_eq!(series.len(), SOURCE_STATES.len(), "{source}: {out}");
            assert_eq!(
                series.iter().filter(|l| l.ends_with(" 1")).count(),
                1,
                "{source}"
            );
        }
    }

    /// Family names a reader cannot confuse: none is another plus or minus one letter (as
    /// `finding` and `findings` were).
    #[test]
    fn no_two_family_names_differ_by_one_letter() {
        let (kb, snap, d) = demo();
        let out = render(&kb, &snap, &d, &RUN);
        let names: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .filter_map(|l| l.split(' ').next())
            .collect();
        for a in &names {
            for b in &names {
                let one_more = b.len() == a.len() + 1
                    && (0..b.len()).any(|i| {
                        b.is_char_boundary(i) && format!("{}{}", &b[..i], &b[i + 1..]) == *a
                    });
                assert!(!one_more, "{a} and {b}");
            }
        }
        assert!(
            names.contains(&"sm120_doctor_findings_by_severity"),
            "{names:?}"
        );
    }

    #[test]
    fn no_free_text_reaches_the_output() {
        let (kb, snap, d) = demo();
        let out = render(&kb, &snap, &d, &RUN);
        let mut free: Vec<&str> = Vec::new();
        for f in &d.findings {
            free.push(&f.title.0);
            free.extend(f.evidence.iter().map(|e| e.0.as_str()));
        }
        let origin = snap.origin.to_string();
        free.push(&origin);
        if let Some(e) = snap.env.value() {
            free.extend(e.vars.values().map(String::as_str));
        }
        // Short values ("1", "True") occur by chance; anything longer must not appear.
        for t in free.into_iter().filter(|t| t.len() >= 6) {
            assert!(!out.contains(t), "free text {t:?} in\n{out}");
        }
        // Only our own HELP/TYPE comments.
        for l in out.lines().filter(|l| l.starts_with('#')) {
            assert!(l.starts_with("# HELP sm120_doctor_") || l.starts_with("# TYPE sm120_doctor_"));
        }
    }

    #[test]
    fn families_are_contiguous_with_help_and_type_once() {
        let (kb, snap, d) = demo();
        let out = render(&kb, &snap, &d, &RUN);
        let mut seen: Vec<String> = Vec::new();
        let mut current = String::new();
        for l in out.lines() {
            if let Some(rest) = l.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap_or_default().to_string();
                assert!(!seen.contains(&name), "{name} twice");
                seen.push(name.clone());
                current = name;
            } else if !l.starts_with('#') {
                let name = l.split(['{', ' ']).next().unwrap_or_default();
                assert_eq!(name, current, "{l}");
            }
        }
        assert!(seen.len() >= 10, "{seen:?}");
    }

    #[test]
    fn render_is_deterministic() {
        let (kb, snap, d) = demo();
        assert_eq!(render(&kb, &snap, &d, &RUN), render(&kb, &snap, &d, &RUN));
    }

    #[test]
    fn values_are_formatted_per_the_format() {
        assert_eq!(format_value(1.0), "1");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(1.5), "1.5");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
    }

    #[test]
    fn a_host_without_gpus_reports_skips_not_gpus() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let snap = HostSnapshot::empty(
            "live",
            Reason::new(
                crate::value::ReasonCode::NoDriver,
                "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver is installed on this host",
            ),
        );
        let d = engine::diagnose(&kb, &snap, &Default::default(), &[], Mode::Failures);
        let out = render(&kb, &snap, &d, &RUN);
        assert!(out.contains("sm120_doctor_gpus 0\n"));
        assert!(
            !out.contains("sm120_doctor_gpu_info"),
            "empty family is left out"
        );
        assert!(
            out.contains("sm120_doctor_source_reason{source=\"gpus\",reason=\"no_driver\"} 1\n"),
            "{out}"
        );
        assert!(out.contains("sm120_doctor_source_state{source=\"gpus\",state=\"collected\"} 0\n"));
        assert!(out.contains("sm120_doctor_source_state{source=\"gpus\",state=\"skipped\"} 1\n"));
        assert!(out.contains("input=\"live\""));
        let mut snap = snap;
        snap.python = Probed::failed(Reason::new(
            crate::value::ReasonCode::Timeout,
            "python3 did not answer within 15 s (raise --python-timeout)",
        ));
        let out = render(&kb, &snap, &d, &RUN);
        assert!(
            out.contains("sm120_doctor_source_reason{source=\"python\",reason=\"timeout\"} 1\n"),
            "{out}"
        );
        assert!(out.contains("sm120_doctor_source_state{source=\"python\",state=\"failed\"} 1\n"));
        assert!(!out.contains("15 s"), "no free text: {out}");
        assert!(out.contains("sm12x=\"unknown\""));
    }
}
