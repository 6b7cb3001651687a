//! The knowledge base: decision trees and log signatures as data (knowledge/*.yaml).
//!
//! [`load_dir`] reads and validates; every error names the file, line and column. The loader
//! does not know which facts exist: the caller passes that predicate in ([`KnownFact`]; the
//! product passes `facts::is_known_fact`), so `kb` imports only `value`, never `facts`.
//!
//! The embedded knowledge base is loaded and validated when sm120-doctor is built: its build.rs
//! depends on this crate and runs [`load_embedded_yaml`] over knowledge/, then stores the
//! [`KnowledgeBase`] in a compact binary form (postcard, [`Built::to_bytes`]) that
//! [`load_built`] reads back at start-up with no YAML parsing, no validation and no regex
//! compiled ([`LazyRegex`] compiles on first use). Every type a [`KnowledgeBase`] holds therefore
//! derives `Serialize` and `Deserialize`. sm120-doctor's `kb::load_embedded` and `kb::load`
//! (src/kb.rs) pass it the bytes it embeds; `--kb DIR` runs the full loader, as before.

pub mod expr;
pub mod lazy_regex;
pub mod literals;
pub mod schema;
pub mod sources;
pub mod spanned;
mod validate;
pub mod versions;

use crate::vllm::hardware::Hardware;
pub use lazy_regex::LazyRegex;
use schema::{
    AllocatorFile, AllocatorText, Change, ClassFile, Conclusion, HardwareFile, Node, PrBase,
    Remedy, RemedyFile, RunSignsFile,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

pub use validate::{Lint, lints, placeholders};
pub use versions::VersionBound;

/// The files that hold tables, not a class: each must be there exactly once.
pub const TABLE_FILES: [&str; 4] = [REMEDIES_FILE, HARDWARE_FILE, ALLOCATOR_FILE, RUN_SIGNS_FILE];
pub const REMEDIES_FILE: &str = "remedies.yaml";
pub const HARDWARE_FILE: &str = "hardware.yaml";
pub const ALLOCATOR_FILE: &str = "allocator.yaml";
pub const RUN_SIGNS_FILE: &str = "run_signs.yaml";

/// The shipped knowledge base, embedded in the binary. Order is the display order.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "remedies.yaml",
        include_str!("../../../../knowledge/remedies.yaml"),
    ),
    (
        "hardware.yaml",
        include_str!("../../../../knowledge/hardware.yaml"),
    ),
    (
        "allocator.yaml",
        include_str!("../../../../knowledge/allocator.yaml"),
    ),
    (
        "run_signs.yaml",
        include_str!("../../../../knowledge/run_signs.yaml"),
    ),
    (
        "allocator_ipc.yaml",
        include_str!("../../../../knowledge/allocator_ipc.yaml"),
    ),
    (
        "deepgemm_warmup.yaml",
        include_str!("../../../../knowledge/deepgemm_warmup.yaml"),
    ),
    (
        "fp8_tuning.yaml",
        include_str!("../../../../knowledge/fp8_tuning.yaml"),
    ),
    (
        "cooperative_topk.yaml",
        include_str!("../../../../knowledge/cooperative_topk.yaml"),
    ),
    (
        "flashinfer_sampler.yaml",
        include_str!("../../../../knowledge/flashinfer_sampler.yaml"),
    ),
    (
        "breakable_cudagraph.yaml",
        include_str!("../../../../knowledge/breakable_cudagraph.yaml"),
    ),
    (
        "sm120_kernel_missing.yaml",
        include_str!("../../../../knowledge/sm120_kernel_missing.yaml"),
    ),
    (
        "cuda_oom.yaml",
        include_str!("../../../../knowledge/cuda_oom.yaml"),
    ),
    (
        "orphan_workers.yaml",
        include_str!("../../../../knowledge/orphan_workers.yaml"),
    ),
    (
        "p2p_fabric.yaml",
        include_str!("../../../../knowledge/p2p_fabric.yaml"),
    ),
    (
        "launch_gpus.yaml",
        include_str!("../../../../knowledge/launch_gpus.yaml"),
    ),
    (
        "alloc_conf_invalid.yaml",
        include_str!("../../../../knowledge/alloc_conf_invalid.yaml"),
    ),
    (
        "moe_backend_sm12x.yaml",
        include_str!("../../../../knowledge/moe_backend_sm12x.yaml"),
    ),
    (
        "sparse_mla_sm12x.yaml",
        include_str!("../../../../knowledge/sparse_mla_sm12x.yaml"),
    ),
    (
        "sm12x_build_target.yaml",
        include_str!("../../../../knowledge/sm12x_build_target.yaml"),
    ),
    (
        "nccl_too_old_sm12x.yaml",
        include_str!("../../../../knowledge/nccl_too_old_sm12x.yaml"),
    ),
    (
        "sm12x_unknown_gap.yaml",
        include_str!("../../../../knowledge/sm12x_unknown_gap.yaml"),
    ),
    (
        "unrecognized_failure.yaml",
        include_str!("../../../../knowledge/unrecognized_failure.yaml"),
    ),
    (
        "gpu_access.yaml",
        include_str!("../../../../knowledge/gpu_access.yaml"),
    ),
    (
        "onboarding.yaml",
        include_str!("../../../../knowledge/onboarding.yaml"),
    ),
    (
        "log_context.yaml",
        include_str!("../../../../knowledge/log_context.yaml"),
    ),
    (
        "launch_text.yaml",
        include_str!("../../../../knowledge/launch_text.yaml"),
    ),
];

/// A knowledge-base error with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KbError {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub message: String,
}

impl fmt::Display for KbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for KbError {}

/// Errors from loading: all of them, so one `kb lint` run shows everything.
#[derive(Debug, Clone)]
pub struct KbErrors(pub Vec<KbError>);

impl fmt::Display for KbErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for KbErrors {}

/// A compiled log signature (its regexes are compiled when first used).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompiledSignature {
    pub id: String,
    pub class: String,
    pub kind: schema::SignatureKind,
    pub weight: u32,
    /// The line regex (for a `frame` given by file/function, the regex built from them).
    pub regex: LazyRegex,
    /// What the scanner searches the text for to find candidate lines (the regex itself, or a
    /// frame's file or function part); `regex` then decides.
    pub search: String,
    /// Literals one of which every match of `regex` holds ([`literals::required_literals`],
    /// found when the knowledge base loads; `None`: none known, the pattern itself is searched).
    pub needles: Option<Vec<Vec<u8>>>,
    pub unless: Vec<LazyRegex>,
    /// Signature ids one of which must match an earlier line of the same log.
    pub after: Vec<String>,
    /// Patterns that, matching any line of the same log, cancel this signature there.
    pub unless_log: Vec<LazyRegex>,
    /// Indexes into `KnowledgeBase::signatures`.
    pub requires: Vec<usize>,
    pub excluded_by: Vec<usize>,
    pub confirm_with: Vec<usize>,
    /// Conditions on the run (run_signs.yaml) that must all hold for the match to count.
    pub requires_run: Vec<schema::RunCondition>,
    /// A context that also counts as present when this holds on the host (facts only).
    pub when: Option<expr::Expr>,
    pub unconfirmed: String,
    pub note: String,
    pub sources: Vec<String>,
}

/// A run-sign pattern after loading (run_signs.yaml; see [`schema::RunSignDef`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompiledRunSign {
    pub id: String,
    pub sign: schema::RunSignKind,
    pub regex: LazyRegex,
    pub failure: Option<schema::RunFailureKind>,
    pub consequence: bool,
    pub phase: Option<schema::RunPhase>,
    pub milestone: Option<schema::RunMilestone>,
    /// `stall`: lines needed after the last progress line.
    pub min_count: u32,
    /// Literals one of which every matching line holds (the prefilter searches for these).
    pub needles: Vec<String>,
    pub unless: Vec<LazyRegex>,
    pub sources: Vec<String>,
}

/// One class after loading: its file, its tree and its compiled checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Class {
    pub file: String,
    pub def: ClassFile,
    pub checks: BTreeMap<String, expr::Expr>,
    /// Compiled `holds:` ranges, by conclusion id.
    pub holds: BTreeMap<String, Vec<VersionBound>>,
}

impl Class {
    pub fn id(&self) -> &str {
        &self.def.class.value
    }
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.def.nodes.iter().find(|n| n.id.value == id)
    }
    pub fn conclusion(&self, id: &str) -> Option<&Conclusion> {
        self.def.conclusions.iter().find(|c| c.id.value == id)
    }
    /// A conclusion's version ranges (empty: it holds for every version).
    pub fn holds(&self, conclusion: &str) -> &[VersionBound] {
        self.holds.get(conclusion).map_or(&[], Vec::as_slice)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnowledgeBase {
    pub classes: Vec<Class>,
    pub remedies: BTreeMap<String, Remedy>,
    pub signatures: Vec<CompiledSignature>,
    /// The PRs `patch_script` edits apply, with the vLLM version each was written for.
    pub prs: Vec<PrBase>,
    /// SKUs that share a chip and model families (hardware.yaml), for the facts.
    pub hardware: Hardware,
    /// What the tool says about the allocator variables (allocator.yaml).
    pub allocator: AllocatorText,
    /// The lines that show how a run went, whatever the class (run_signs.yaml), in file order.
    pub run_signs: Vec<CompiledRunSign>,
    /// Every `changes:` entry (a release where something changed), by id.
    pub changes: BTreeMap<String, Change>,
    /// The file each change is declared in, by id.
    pub change_files: BTreeMap<String, String>,
    /// Compiled `holds:` ranges of remedies, by remedy id.
    pub remedy_holds: BTreeMap<String, Vec<VersionBound>>,
    /// Where it came from: `embedded` or a directory.
    pub origin: String,
}

impl KnowledgeBase {
    /// What is known about a PR's base.
    pub fn pr(&self, pr: u32) -> Option<&PrBase> {
        self.prs.iter().find(|p| p.pr.value == pr)
    }
    /// The class a live probe measures, if one names it.
    pub fn class_for_probe(&self, probe: schema::ProbeKind) -> Option<&Class> {
        self.classes.iter().find(|c| c.def.probe == Some(probe))
    }
    pub fn class(&self, id: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.id() == id)
    }
    pub fn remedy(&self, id: &str) -> Option<&Remedy> {
        self.remedies.get(id)
    }
    /// The class that owns a node id, with the node.
    pub fn find_node(&self, id: &str) -> Option<(&Class, &Node)> {
        self.classes.iter().find_map(|c| c.node(id).map(|n| (c, n)))
    }
    /// A remedy's version ranges (empty: it applies to every version).
    pub fn remedy_holds(&self, remedy: &str) -> &[VersionBound] {
        self.remedy_holds.get(remedy).map_or(&[], Vec::as_slice)
    }
    /// Can the user answer `id`: a node's question, or a version question
    /// (`vllm_at_least_0.25.0`) at an edge of some `holds:` range?
    pub fn has_question(&self, id: &str) -> bool {
        if self.find_node(id).is_some() {
            return true;
        }
        let Some(q) = crate::vllm::version::VersionQuestion::parse(id) else {
            return false;
        };
        self.classes
            .iter()
            .flat_map(|c| c.holds.values())
            .chain(self.remedy_holds.values())
            .flatten()
            .any(|b| b.package == q.package && b.change_at(&q.edge).is_some())
    }
}

/// Which fact names a check or an evidence placeholder may use.
pub type KnownFact = fn(&str) -> bool;

/// The embedded knowledge base as build.rs leaves it: [`load_embedded_yaml`]'s result, and the
/// fact names the loader asked the predicate about (the caller's predicate decides at start).
#[derive(Debug, Serialize, Deserialize)]
pub struct Built {
    pub facts: Vec<String>,
    pub kb: KnowledgeBase,
}

impl Built {
    /// The built form as build.rs stores it (postcard).
    pub fn to_bytes(&self) -> Result<Vec<u8>, postcard::Error> {
        postcard::to_allocvec(self)
    }
    /// A built form read back (`None`: the bytes do not read as one, which only a broken build
    /// gives).
    pub fn from_bytes(bytes: &[u8]) -> Option<Built> {
        postcard::from_bytes(bytes).ok()
    }
}

/// Load a knowledge base from its built form `bytes` (what build.rs validated and stored), when
/// every fact it names is one `known_fact` knows. Otherwise the full loader runs over the
/// embedded YAML, for its errors with file, line and column (a stale embed never loads in
/// silence).
pub fn load_built(bytes: &[u8], known_fact: KnownFact) -> Result<KnowledgeBase, KbErrors> {
    match Built::from_bytes(bytes) {
        Some(b) if b.facts.iter().all(|f| known_fact(f)) => Ok(b.kb),
        _ => load_embedded_yaml(known_fact),
    }
}

/// The full loader over the embedded YAML (knowledge/ as the binary was built): what
/// sm120-doctor's build.rs runs, and what its `kb::load_embedded` must equal (tests/kb_embed.rs).
pub fn load_embedded_yaml(known_fact: KnownFact) -> Result<KnowledgeBase, KbErrors> {
    let files: Vec<(String, String)> = EMBEDDED
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    load_files(&files, "embedded", known_fact)
}

/// Load every `*.yaml` in `dir` (sorted by name, `remedies.yaml` first). Each file is read by
/// [`crate::read`]'s rules: a regular file (a FIFO named `a.yaml` is refused by name, never
/// opened for a blocking read) under [`crate::read::KB_FILE`]; at most
/// [`crate::read::KB_MAX_FILES`] files and [`crate::read::KB_TOTAL`] bytes in all.
pub fn load_dir(dir: &Path, known_fact: KnownFact) -> Result<KnowledgeBase, KbErrors> {
    let shown = dir.display().to_string();
    let whole = |message: String| {
        KbErrors(vec![KbError {
            file: shown.clone(),
            line: 0,
            column: 0,
            message,
        }])
    };
    let entries =
        std::fs::read_dir(dir).map_err(|e| whole(format!("cannot read directory: {e}")))?;
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .take(crate::read::KB_MAX_FILES + 1)
        .collect();
    if paths.len() > crate::read::KB_MAX_FILES {
        return Err(whole(format!(
            "more than {} *.yaml files; a knowledge base is read from at most that many",
            crate::read::KB_MAX_FILES
        )));
    }
    paths.sort_by_key(|p| {
        (
            p.file_name().is_none_or(|n| n != "remedies.yaml"),
            p.clone(),
        )
    });
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut total = 0u64;
    for p in paths {
        match crate::read::read_text(&p, crate::read::KB_FILE, crate::read::Stdin::Refused) {
            Ok(text) => {
                total += text.len() as u64;
                files.push((p.display().to_string(), text));
            }
            Err(e) => {
                let (line, column) = match &e {
                    crate::read::ReadError::NotUtf8 { line, column, .. } => {
                        (*line as u64, *column as u64)
                    }
                    _ => (0, 0),
                };
                let full = e.to_string();
                let message = match &e {
                    crate::read::ReadError::NotUtf8 { .. } => {
                        "not UTF-8 text (is this a binary file?)".to_string()
                    }
                    _ => full
                        .strip_prefix(&format!("{}: ", e.path()))
                        .unwrap_or(&full)
                        .to_string(),
                };
                errors.push(KbError {
                    file: p.display().to_string(),
                    line,
                    column,
                    message,
                });
            }
        }
        if total > crate::read::KB_TOTAL.bytes {
            return Err(whole(format!(
                "larger than {} in all, the limit for {}",
                crate::read::size(crate::read::KB_TOTAL.bytes),
                crate::read::KB_TOTAL.what
            )));
        }
    }
    if !errors.is_empty() {
        return Err(KbErrors(errors));
    }
    load_files(&files, &shown, known_fact)
}

fn yaml_error(file: &str, e: &serde_saphyr::Error) -> KbError {
    let (line, column, message) = crate::yaml::error_parts(e);
    KbError {
        file: file.to_string(),
        line: line as u64,
        column: column as u64,
        message,
    }
}

enum Parsed {
    Remedies(String, RemedyFile),
    Hardware(String, HardwareFile),
    Allocator(String, Box<AllocatorFile>),
    RunSigns(String, RunSignsFile),
    Class(Box<Class>),
}

/// Text (scalar bytes, aliases counted each time they are followed) that all the files of one
/// load may reach together: serde-saphyr's budget is per document, so each file gets a share.
const KB_EXPANDED_BYTES: usize = 64 * 1024 * 1024;

/// One file's share of [`KB_EXPANDED_BYTES`]; never less than its own text, which is already read.
fn kb_yaml_options(text: &str, files: usize) -> serde_saphyr::Options {
    let share = (KB_EXPANDED_BYTES / files.max(1)).max(text.len());
    let mut budget = serde_saphyr::Budget::default();
    budget.max_total_scalar_bytes = share;
    budget.max_recorded_anchor_bytes = share;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

fn parse_file(name: &str, text: &str, files: usize) -> Result<Parsed, KbError> {
    let opts = || kb_yaml_options(text, files);
    let base = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let owned = || name.to_string();
    let err = |e: serde_saphyr::Error| yaml_error(name, &e);
    if base == REMEDIES_FILE {
        serde_saphyr::from_str_with_options::<RemedyFile>(text, opts())
            .map(|r| Parsed::Remedies(owned(), r))
            .map_err(err)
    } else if base == HARDWARE_FILE {
        serde_saphyr::from_str_with_options::<HardwareFile>(text, opts())
            .map(|h| Parsed::Hardware(owned(), h))
            .map_err(err)
    } else if base == ALLOCATOR_FILE {
        serde_saphyr::from_str_with_options::<AllocatorFile>(text, opts())
            .map(|a| Parsed::Allocator(owned(), Box::new(a)))
            .map_err(err)
    } else if base == RUN_SIGNS_FILE {
        serde_saphyr::from_str::<RunSignsFile>(text)
            .map(|r| Parsed::RunSigns(owned(), r))
            .map_err(err)
    } else {
        serde_saphyr::from_str_with_options::<ClassFile>(text, opts())
            .map(|def| {
                Parsed::Class(Box::new(Class {
                    file: name.to_string(),
                    def,
                    checks: BTreeMap::new(),
                    holds: BTreeMap::new(),
                }))
            })
            .map_err(|e| yaml_error(name, &e))
    }
}

/// Parse and validate a set of (name, text) files.
pub fn load_files(
    files: &[(String, String)],
    origin: &str,
    known_fact: KnownFact,
) -> Result<KnowledgeBase, KbErrors> {
    // YAML parsing is most of the load time; files are independent, so parse them in parallel.
    let parsed: Vec<Result<Parsed, KbError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .iter()
            .map(|(name, text)| scope.spawn(move || parse_file(name, text, files.len())))
            .collect();
        handles
            .into_iter()
            .zip(files)
            .map(|(h, (name, _))| {
                h.join().unwrap_or_else(|_| {
                    Err(KbError {
                        file: name.clone(),
                        line: 0,
                        column: 0,
                        message: "the YAML parser panicked on this file".into(),
                    })
                })
            })
            .collect()
    });
    let mut errors = Vec::new();
    let mut files = validate::Files::default();
    for p in parsed {
        match p {
            Ok(Parsed::Remedies(name, r)) => files.remedies.push((name, r)),
            Ok(Parsed::Hardware(name, h)) => files.hardware.push((name, h)),
            Ok(Parsed::Allocator(name, a)) => files.allocator.push((name, a.allocator)),
            Ok(Parsed::RunSigns(name, r)) => files.run_signs.push((name, r)),
            Ok(Parsed::Class(c)) => files.classes.push(*c),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(KbErrors(errors));
    }
    let kb = validate::build(files, origin, known_fact)?;
    Ok(kb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caller_decides_which_facts_exist() {
        let errs = load_embedded_yaml(|_| false).expect_err("no fact is known");
        assert!(
            errs.0.iter().any(|e| e.message.contains("unknown fact")
                && e.file == "allocator_ipc.yaml"
                && e.line > 0),
            "{errs}"
        );
        assert!(load_embedded_yaml(|_| true).is_ok());
    }
}
