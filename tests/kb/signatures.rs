//! The `signatures:` schema: kinds, weights, frames by file/function, context relations
//! (`requires`, `excluded_by`, `confirm_with`, `when`). The loader rejects a broken signature
//! with the file, line and column of the field; the older `strength:` form still loads.

use sm120_doctor::kb::schema::SignatureKind;
use sm120_doctor::kb::{self, EMBEDDED, KbErrors, KnowledgeBase};

/// Load the embedded KB with one file edited.
fn load_edited(target: &str, edit: impl Fn(&str) -> String) -> Result<KnowledgeBase, KbErrors> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut edited = false;
    for (name, text) in EMBEDDED {
        let body = if *name == target {
            edited = true;
            edit(text)
        } else {
            text.to_string()
        };
        std::fs::write(dir.path().join(name), body).expect("write KB file");
    }
    assert!(edited, "{target} is not an embedded file");
    kb::load_dir(dir.path(), sm120_doctor::facts::is_known_fact)
}

/// The error text, with a check that the first error has a place in the file.
fn rejected(target: &str, edit: impl Fn(&str) -> String) -> String {
    let err = load_edited(target, edit).expect_err("must be rejected");
    let first = err.0.first().expect("one error");
    assert!(
        first.file.ends_with(target) && first.line > 0 && first.column > 0,
        "{first}"
    );
    err.to_string()
}

fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not in the file");
    text.replacen(from, to, 1)
}

#[test]
fn kinds_weights_and_relations_load() {
    let kb = kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB");
    let sig = |id: &str| {
        kb.signatures
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    let car = sig("car_invalid_argument");
    assert_eq!((car.kind, car.weight), (SignatureKind::Error, 10));
    assert_eq!(car.confirm_with.len(), 1);
    assert_eq!(
        kb.signatures[car.confirm_with[0]].id, "aipc_ctx_expandable",
        "confirm_with resolves to the context signature"
    );
    assert!(!car.unconfirmed.is_empty());
    let km = sig("km_no_kernel_image");
    assert_eq!((km.kind, km.weight), (SignatureKind::Error, 6));
    assert_eq!(kb.signatures[km.excluded_by[0]].id, "ctx_gpu_other");
    assert_eq!(sig("fp8_default_dense").kind, SignatureKind::Warning);
    assert_eq!(sig("car_worker_died").weight, 1);
    assert!(sig("ctx_gpu_sm12x").when.is_some());
    // A frame by file: searched by its file part, checked by the frame regex.
    let frame = sig("dg_warmup_frame");
    assert_eq!(frame.kind, SignatureKind::Frame);
    assert_eq!(frame.search, "deep_gemm_warmup\\.py");
    assert!(frame.regex.is_match(
        "  File \"/usr/lib/vllm/model_executor/warmup/deep_gemm_warmup.py\", line 406, in deep_gemm_warmup"
    ));
    assert!(!frame.regex.is_match("see deep_gemm_warmup.py for details"));
    // The context class and the fallback class.
    assert_eq!(
        kb.class("log_context").map(|c| c.def.kind),
        Some(kb::schema::ClassKind::Context)
    );
    assert!(
        kb.class("sm12x_unknown_gap")
            .is_some_and(|c| c.def.fallback)
    );
}

#[test]
fn the_older_strength_field_still_reads() {
    let kb = load_edited("allocator_ipc.yaml", |t| {
        replace_once(
            t,
            "  - id: car_worker_died\n    kind: supporting\n",
            "  - id: car_worker_died\n    strength: supporting\n",
        )
    })
    .expect("loads");
    let s = kb
        .signatures
        .iter()
        .find(|s| s.id == "car_worker_died")
        .expect("sig");
    assert_eq!((s.kind, s.weight), (SignatureKind::Supporting, 1));
}

#[test]
fn a_reference_to_no_signature_is_rejected() {
    let err = rejected("allocator_ipc.yaml", |t| {
        replace_once(
            t,
            "confirm_with: [aipc_ctx_expandable]",
            "confirm_with: [no_such_signature]",
        )
    });
    assert!(
        err.contains("confirm_with: \"no_such_signature\" names no signature"),
        "{err}"
    );
}

#[test]
fn a_requires_cycle_is_rejected() {
    let err = rejected("sm12x_unknown_gap.yaml", |t| {
        replace_once(t, "requires: [ctx_gpu_sm12x]", "requires: [gap_in_triton]")
    });
    assert!(err.contains("leads back to itself"), "{err}");
}

#[test]
fn frame_parts_and_patterns_do_not_mix() {
    let err = rejected("deepgemm_warmup.yaml", |t| {
        replace_once(
            t,
            "    file: \"deep_gemm_warmup\\\\.py\"\n",
            "    file: \"deep_gemm_warmup\\\\.py\"\n    pattern: \"x\"\n",
        )
    });
    assert!(err.contains("not both"), "{err}");
    let err = rejected("cuda_oom.yaml", |t| {
        replace_once(
            t,
            "  - id: cuda_oom_cuda_error\n    kind: error\n",
            "  - id: cuda_oom_cuda_error\n    kind: error\n    file: \"x\\\\.py\"\n",
        )
    });
    assert!(err.contains("are for `kind: frame` signatures"), "{err}");
}

#[test]
fn a_signature_without_a_pattern_is_rejected() {
    let err = rejected("cuda_oom.yaml", |t| {
        replace_once(t, "    pattern: \"CUDA error: out of memory\"\n", "")
    });
    assert!(err.contains("has no `pattern`"), "{err}");
}

#[test]
fn kind_and_strength_together_are_rejected() {
    let err = rejected("cuda_oom.yaml", |t| {
        replace_once(
            t,
            "  - id: cuda_oom_cuda_error\n    kind: error\n",
            "  - id: cuda_oom_cuda_error\n    kind: error\n    strength: strong\n",
        )
    });
    assert!(err.contains("not both"), "{err}");
}

#[test]
fn when_reads_known_facts_only() {
    let err = rejected("log_context.yaml", |t| {
        replace_once(
            t,
            "when: \"gpu.any_sm12x\"",
            "when: \"log('car_worker_died')\"",
        )
    });
    assert!(err.contains("reads facts only"), "{err}");
    let err = rejected("log_context.yaml", |t| {
        replace_once(t, "when: \"gpu.any_sm12x\"", "when: \"gpu.no_such_fact\"")
    });
    assert!(err.contains("unknown fact"), "{err}");
}

#[test]
fn a_context_class_holds_context_signatures_only() {
    let err = rejected("log_context.yaml", |t| {
        replace_once(
            t,
            "  - id: ctx_torch_sm120_build\n    kind: context\n",
            "  - id: ctx_torch_sm120_build\n    kind: error\n",
        )
    });
    assert!(
        err.contains("a context class holds only `kind: context` signatures"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// The message catalogue (tests/catalogue/<class>.yaml): raise/assert/log sites of upstream's
// released code, each with the releases that print it and where it was read. Every catalogued
// message, as a log line (after its `context:` lines, if any), must be named by its own class at
// the confidence its kind implies, and must not be matched by another class's error signatures.

mod catalogue {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use serde::Deserialize;
    use sm120_doctor::engine::classify::{Classification, LogMatch, MatchConfidence, Scanner};
    use sm120_doctor::kb::schema::{ClassKind, SignatureKind};
    use sm120_doctor::kb::{self, KnowledgeBase};
    use sm120_doctor::vllm::version;

    /// Components whose `releases:` is a PEP 440 range of that package's releases. DeepGEMM has
    /// no release numbers vLLM pins: its `releases:` names commits, and is read as text.
    const VERSIONED: &[&str] = &[
        "vllm",
        "torch",
        "flashinfer",
        "sglang",
        "nccl",
        "tilelang",
        "triton",
    ];
    const COMPONENTS: &[&str] = &[
        "vllm",
        "torch",
        "flashinfer",
        "deep_gemm",
        "sglang",
        "nccl",
        "tilelang",
        "triton",
    ];

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct File {
        pub class: String,
        pub entries: Vec<Entry>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Entry {
        pub text: String,
        pub component: String,
        pub releases: String,
        pub site: Site,
        pub kind: Kind,
        /// Lines the log must also show for the class to be named at this confidence (the GPU,
        /// the allocator setting): written before the message.
        #[serde(default)]
        pub context: Vec<String>,
        /// Releases (besides `site.version`) where the same text was read; each must be inside
        /// `releases`.
        #[serde(default)]
        pub seen_in: Vec<String>,
        /// The confidence the KB gives this message when it is not the kind's default (a
        /// `warnings.warn` the KB counts as the failure itself), with the reason in `why`.
        #[serde(default)]
        pub confidence: Option<String>,
        #[serde(default)]
        pub why: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Site {
        pub package: String,
        /// A release number, or a commit for DeepGEMM / a repository read at a commit.
        pub version: String,
        pub path: String,
        /// The source line; absent when the text was read from a binary's strings (`strings`).
        #[serde(default)]
        pub line: Option<u32>,
        /// For a binary site: the format string as `strings` printed it.
        #[serde(default)]
        pub strings: Option<String>,
    }

    #[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
    #[serde(rename_all = "lowercase")]
    pub enum Kind {
        /// Printed as an error (a raise, an assert, an error log): names the class, CONFIRMED.
        Error,
        /// Printed as a warning: names the class at LOW (a speed warning, a fallback notice).
        Warning,
        /// Printed at info level: like `context` unless the entry states a `confidence`.
        Info,
        /// A line the class reads as context or supporting evidence (the line that rules it
        /// out, a fallback notice): one of the class's signatures matches it, and it names no
        /// class on its own.
        Context,
    }

    pub fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/catalogue")
    }

    pub fn load() -> Vec<(String, File)> {
        let mut files: Vec<(String, File)> = std::fs::read_dir(dir())
            .expect("tests/catalogue exists")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .map(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let text = std::fs::read_to_string(&p).expect("read catalogue file");
                let file: File = serde_saphyr::from_str(&text)
                    .unwrap_or_else(|e| panic!("tests/catalogue/{name}: {e}"));
                (name, file)
            })
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
    }

    /// The log an entry stands for: its context lines, then the message.
    pub fn log_of(entry: &Entry) -> String {
        let mut log = String::new();
        for line in entry.context.iter().chain(std::iter::once(&entry.text)) {
            log.push_str(line);
            log.push('\n');
        }
        log
    }

    pub fn classify(scanner: &Scanner<'_>, log: &str) -> (Vec<LogMatch>, Classification) {
        let mut matches = Vec::new();
        scanner
            .scan_reader("catalogue", log.as_bytes(), &mut matches)
            .expect("scan");
        let raw = matches.clone();
        (raw, scanner.rank(matches))
    }

    /// The confidence the class is named at, or `None` for a line that names no class.
    fn expected(entry: &Entry, fallback: bool) -> Result<Option<MatchConfidence>, String> {
        let stated = match entry.confidence.as_deref() {
            None => None,
            Some("CONFIRMED") => Some(MatchConfidence::Confirmed),
            Some("SUSPECTED") => Some(MatchConfidence::Suspected),
            Some("LOW") => Some(MatchConfidence::Low),
            Some(other) => {
                return Err(format!(
                    "confidence: {other:?} is not CONFIRMED/SUSPECTED/LOW"
                ));
            }
        };
        if stated.is_some() && entry.why.as_deref().is_none_or(str::is_empty) {
            return Err("a `confidence:` other than the kind's needs a `why:`".into());
        }
        if stated.is_some() && entry.kind == Kind::Context {
            return Err("a `kind: context` line names no class: no `confidence:`".into());
        }
        let default = match entry.kind {
            Kind::Error => Some(MatchConfidence::Confirmed),
            Kind::Warning => Some(MatchConfidence::Low),
            Kind::Info | Kind::Context => None,
        };
        // The fallback class is never more than SUSPECTED (engine::classify::class_evidence).
        Ok(stated.or(default).map(|c| {
            if fallback {
                c.min(MatchConfidence::Suspected)
            } else {
                c
            }
        }))
    }

    /// What is wrong with one entry's shape (not its classification), if anything.
    pub fn shape_problem(entry: &Entry) -> Option<String> {
        if entry.text.trim().is_empty() || entry.text.contains('\n') {
            return Some("`text` is one non-empty line".into());
        }
        if !COMPONENTS.contains(&entry.component.as_str()) {
            return Some(format!(
                "component {:?} is not one of {COMPONENTS:?}",
                entry.component
            ));
        }
        if entry.site.path.is_empty() || entry.site.version.is_empty() {
            return Some("`site` needs a path and a version".into());
        }
        match (entry.site.line, &entry.site.strings) {
            (Some(0), _) => return Some("site.line is 1-based".into()),
            (None, None) => return Some("site needs a `line`, or `strings` for a binary".into()),
            _ => {}
        }
        if VERSIONED.contains(&entry.component.as_str()) && entry.component == entry.site.package {
            let range = match version::Range::parse(&entry.releases) {
                Ok(r) => r,
                Err(e) => return Some(format!("releases: {e}")),
            };
            for v in std::iter::once(&entry.site.version).chain(&entry.seen_in) {
                match version::parse(v) {
                    Ok(parsed) if range.contains(Some(&parsed)) => {}
                    Ok(_) => {
                        return Some(format!(
                            "{v} (where it was read) is outside releases {}",
                            entry.releases
                        ));
                    }
                    Err(e) => return Some(e),
                }
            }
        } else if entry.releases.trim().is_empty() {
            return Some("`releases` is empty".into());
        }
        if let Some(s) = &entry.site.strings {
            // The filled-in message must keep the format's literal parts.
            let literal = s
                .split("%s")
                .flat_map(|p| p.split("%d"))
                .map(str::trim)
                .find(|p| p.len() >= 6);
            if let Some(lit) = literal
                && !entry.text.contains(lit)
            {
                return Some(format!(
                    "text does not contain the format's literal {lit:?}"
                ));
            }
        }
        None
    }

    /// Why an entry's message is not recognised as the catalogue says, if it is not.
    pub fn miss(
        kb: &KnowledgeBase,
        scanner: &Scanner<'_>,
        class: &str,
        entry: &Entry,
    ) -> Option<String> {
        let fallback = kb.class(class).is_some_and(|c| c.def.fallback);
        let want = match expected(entry, fallback) {
            Ok(w) => w,
            Err(e) => return Some(e),
        };
        let (raw, c) = classify(scanner, &log_of(entry));
        // Another class's error signature on the message is a collision, whatever the ranking
        // (the fallback class matches any arch error by design and is ranked below). A generic
        // message that a class counts only in context (`requires` / `confirm_with`: "no kernel
        // image" is any binary's missing-arch error) may match another class's signature too;
        // then the ranking below must still put this entry's class first.
        let fallback_of = |name: &str| kb.class(name).is_some_and(|c| c.def.fallback);
        let in_context_only = |id: &str| {
            kb.signatures
                .iter()
                .find(|s| s.id == id)
                .is_some_and(|s| !s.requires.is_empty() || !s.confirm_with.is_empty())
        };
        if let Some(m) = raw.iter().find(|m| {
            m.class != class
                && m.kind == SignatureKind::Error
                && !fallback_of(&m.class)
                && !in_context_only(&m.signature)
        }) {
            return Some(format!(
                "matched by {}'s error signature {}",
                m.class, m.signature
            ));
        }
        match want {
            None => {
                if !raw.iter().any(|m| m.class == class) {
                    return Some("no signature of the class matches it".into());
                }
                if let Some(named) = c.classes.first() {
                    return Some(format!("a line that names no class names {named}"));
                }
                None
            }
            Some(want) => {
                let got = c.confidence.get(class).copied();
                match (c.classes.first(), got) {
                    (Some(top), Some(level)) if top == class && level == want => None,
                    (top, level) => Some(format!(
                        "want {class} first at {}, got {:?} at {:?} (signatures {:?})",
                        want.as_str(),
                        top,
                        level.map(MatchConfidence::as_str),
                        raw.iter().map(|m| m.signature.as_str()).collect::<Vec<_>>()
                    )),
                }
            }
        }
    }

    /// Classes `classify` can name from a log: failure classes with signatures (not context or
    /// checklist classes, nor those decided from the host and launch alone).
    pub fn failure_classes(kb: &KnowledgeBase) -> Vec<String> {
        kb.classes
            .iter()
            .filter(|c| c.def.kind == ClassKind::Failure)
            .filter(|c| kb.signatures.iter().any(|s| s.class == c.id()))
            .map(|c| c.id().to_string())
            .collect()
    }

    /// `tests/catalogue/UNCATALOGUED`: failure classes without a catalogue yet, one per line.
    pub fn uncatalogued() -> Vec<String> {
        std::fs::read_to_string(dir().join("UNCATALOGUED"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    pub fn embedded() -> KnowledgeBase {
        kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("KB")
    }

    /// Entries per component, per class (for the printed summary).
    pub fn summary(files: &[(String, File)]) -> String {
        let mut per: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (_, f) in files {
            for e in &f.entries {
                *per.entry((e.component.as_str(), f.class.as_str()))
                    .or_default() += 1;
            }
        }
        per.iter()
            .map(|((comp, class), n)| format!("{comp:<11} {class:<22} {n}\n"))
            .collect()
    }
}

#[test]
fn catalogue_files_are_well_formed_and_cover_the_kb() {
    let kb = catalogue::embedded();
    let files = catalogue::load();
    assert!(!files.is_empty(), "tests/catalogue has no files");
    let mut problems = Vec::new();
    for (name, file) in &files {
        if name.strip_suffix(".yaml") != Some(file.class.as_str()) {
            problems.push(format!(
                "{name}: class {} (the file is named after its class)",
                file.class
            ));
        }
        if kb.class(&file.class).is_none() {
            problems.push(format!("{name}: the KB has no class {}", file.class));
        }
        if file.entries.is_empty() {
            problems.push(format!("{name}: no entries"));
        }
        for (i, e) in file.entries.iter().enumerate() {
            if let Some(p) = catalogue::shape_problem(e) {
                problems.push(format!("{name}: entry {} ({:?}): {p}", i + 1, e.text));
            }
        }
    }
    let listed: Vec<String> = files.iter().map(|(_, f)| f.class.clone()).collect();
    let waiting = catalogue::uncatalogued();
    for class in catalogue::failure_classes(&kb) {
        if !listed.contains(&class) && !waiting.contains(&class) {
            problems.push(format!(
                "class {class} has no tests/catalogue/{class}.yaml and is not in tests/catalogue/UNCATALOGUED"
            ));
        }
        if listed.contains(&class) && waiting.contains(&class) {
            problems.push(format!(
                "class {class} is catalogued and also listed in UNCATALOGUED"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_catalogued_message_is_named_by_its_class_only() {
    let kb = catalogue::embedded();
    let scanner = sm120_doctor::engine::classify::Scanner::new(&kb);
    let files = catalogue::load();
    let mut misses = Vec::new();
    let mut total = 0;
    for (name, file) in &files {
        for e in &file.entries {
            total += 1;
            if let Some(why) = catalogue::miss(&kb, &scanner, &file.class, e) {
                misses.push(format!(
                    "{name}: {:?} ({} {}): {why}",
                    e.text, e.component, e.releases
                ));
            }
        }
    }
    println!("catalogue: {total} entries\n{}", catalogue::summary(&files));
    assert!(
        misses.is_empty(),
        "{} of {total} catalogued messages are not recognised as catalogued:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

#[test]
fn the_catalogue_check_can_fail() {
    // A message no class knows, and a real message filed under the wrong class, are both misses.
    let kb = catalogue::embedded();
    let scanner = sm120_doctor::engine::classify::Scanner::new(&kb);
    let files = catalogue::load();
    let (_, file) = files
        .iter()
        .find(|(_, f)| !f.entries.is_empty())
        .expect("an entry");
    let real = &file.entries[0];
    let other = catalogue::failure_classes(&kb)
        .into_iter()
        .find(|c| *c != file.class)
        .expect("two classes");
    assert!(
        catalogue::miss(&kb, &scanner, &other, real).is_some(),
        "{:?} under {other}",
        real.text
    );
    let unknown = catalogue::Entry {
        text: "INFO 12-01 10:00:00 all is well".into(),
        component: real.component.clone(),
        releases: real.releases.clone(),
        site: catalogue::Site {
            package: real.site.package.clone(),
            version: real.site.version.clone(),
            path: real.site.path.clone(),
            line: Some(1),
            strings: None,
        },
        kind: catalogue::Kind::Error,
        context: Vec::new(),
        seen_in: Vec::new(),
        confidence: None,
        why: None,
    };
    assert!(catalogue::miss(&kb, &scanner, &file.class, &unknown).is_some());
    // A release where the text was read must lie inside the entry's range.
    let outside = catalogue::Entry {
        component: "vllm".into(),
        releases: ">=0.20.0,<0.24.0".into(),
        site: catalogue::Site {
            package: "vllm".into(),
            version: "0.24.0".into(),
            path: "vllm/x.py".into(),
            line: Some(1),
            strings: None,
        },
        ..unknown
    };
    assert!(catalogue::shape_problem(&outside).is_some_and(|p| p.contains("outside")));
}
