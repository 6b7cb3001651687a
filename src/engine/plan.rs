//! The fix plan: the chosen remedy of each finding composed into one plan — one launch command
//! with every edit applied in order, the remedies one makes unnecessary left out, conflicting
//! remedies refused with the reason, plus the manual steps and the scripts the plan needs.
//!
//! Every front end composes through here (`check`, the reports, the TUI, `fix` with several
//! `--remedy`), so they show the same command. Edits go through the one rewrite engine,
//! [`crate::remedy::rewrite`], which sits below the engine: it reads only the knowledge base,
//! the launch parser and vLLM's rules.
//!
//! What makes a remedy moot or conflicting is knowledge (`moots:` / `conflicts:` in
//! knowledge/remedies.yaml); two remedies whose edits set one variable, flag or compilation key
//! differently conflict without being told.

use super::{Diagnosis, Finding, RemedyView};
use crate::facts::Facts;
use crate::kb::KnowledgeBase;
use crate::kb::schema::{Confidence, Edit, Remedy, Severity, fill_text};
use crate::launch::{LaunchSource, Select, SourceFile};
use crate::remedy::rewrite;
use crate::snapshot::HostSnapshot;
use crate::value::Value;
use crate::vllm::{alloc_conf, flags};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which remedy each finding gets. A finding with no choice gets its default remedy (see
/// [`default_remedy`]) when it is at warning or above, and none otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// Picked per finding (conclusion id → remedy id), as in the TUI.
    pub per_finding: BTreeMap<String, String>,
    /// Picked without naming a finding (`--remedy ID`): each applies to every finding that
    /// offers it; the first offered wins.
    pub preferred: Vec<String>,
}

impl Choices {
    /// `--remedy` ids.
    pub fn preferred(ids: &[String]) -> Choices {
        Choices {
            preferred: ids.to_vec(),
            ..Choices::default()
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChosenBy {
    /// Picked in the TUI or with `--remedy`.
    User,
    /// The finding's default: its cheapest CONFIRMED remedy, else its cheapest one.
    Cheapest,
}

impl ChosenBy {
    pub fn as_str(self) -> &'static str {
        match self {
            ChosenBy::User => "user",
            ChosenBy::Cheapest => "cheapest",
        }
    }
}

/// A remedy in the plan, with the finding it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Planned {
    pub remedy: String,
    pub title: String,
    /// The finding (conclusion id) it was chosen for; `None` for `fix --remedy`.
    pub finding: Option<String>,
    pub chosen_by: ChosenBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LeftOutKind {
    /// Another remedy of the plan makes it unnecessary.
    Moot,
    /// It cannot go into one plan with another remedy of a more severe finding.
    Conflict,
}

/// A chosen remedy the plan leaves out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    pub remedy: String,
    pub finding: Option<String>,
    pub kind: LeftOutKind,
    /// The remedy of the plan that makes it moot or conflicts with it.
    pub because_of: String,
    pub reason: String,
}

/// A script the plan needs (the PR apply script).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PlanScript {
    pub pr: u32,
    pub file: String,
    /// The tool command that writes it.
    pub command: String,
}

/// The plan.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Remedy ids in the order their edits were applied.
    pub remedies: Vec<String>,
    /// The launch with every edit applied; `None` when no launch is known.
    pub launch: Option<String>,
    /// What to know: the rewrite's notes, remedies left out and why.
    pub notes: Vec<String>,
    /// The launch as given.
    pub original: Option<String>,
    /// Steps a person takes (manual remedies; launch edits in words when no launch is known).
    pub steps: Vec<String>,
    pub scripts: Vec<PlanScript>,
    pub chosen: Vec<Planned>,
    pub left_out: Vec<LeftOut>,
    /// The other files the launch reads (`--launch-with`) that the plan changes, as it leaves them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PlannedFile>,
}

/// A file besides the main one that the plan changes (a sourced script, an env file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PlannedFile {
    pub name: String,
    pub text: String,
}

impl Plan {
    /// The plan changes the launch: its main text or a file it reads.
    pub fn changed(&self) -> bool {
        self.launch_changed() || !self.files.is_empty()
    }
    /// The combined launch (the main file or command) differs from the one given.
    pub(crate) fn launch_changed(&self) -> bool {
        matches!((&self.original, &self.launch), (Some(a), Some(b)) if a != b)
    }
    pub fn is_empty(&self) -> bool {
        self.remedies.is_empty() && self.left_out.is_empty()
    }
}

/// `fix --remedy` could not make a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("unknown remedy {id:?}; valid remedy ids: {}", valid.join(", "))]
    Unknown { id: String, valid: Vec<String> },
    #[error("remedy {refused} cannot go with {kept}: {reason}")]
    Conflict {
        kept: String,
        refused: String,
        reason: String,
    },
    #[error("remedy {remedy}: {error}")]
    Fix {
        remedy: String,
        error: rewrite::FixError,
    },
    #[error("{0}")]
    Launch(#[from] crate::launch::LaunchError),
}

/// The remedy a finding gets under `choices`, and who chose it; `None` leaves it out of the
/// plan (below warning with no choice, or nothing offered).
pub(crate) fn choice_for<'f>(
    f: &'f Finding,
    choices: &Choices,
) -> Option<(&'f RemedyView, ChosenBy)> {
    if let Some(id) = choices.per_finding.get(&f.id)
        && let Some(r) = f.remedies.iter().find(|r| &r.id == id)
    {
        return Some((r, ChosenBy::User));
    }
    for c in &choices.preferred {
        if let Some(r) = f.remedies.iter().find(|r| &r.id == c) {
            return Some((r, ChosenBy::User));
        }
    }
    if f.severity < Severity::Warning {
        return None;
    }
    default_remedy(f).map(|r| (r, ChosenBy::Cheapest))
}

/// How a default pick reads, by its claim: "the cheapest confirmed", or for a guess taken
/// because nothing confirmed is offered, "likely — not confirmed".
pub(crate) fn default_words(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::Confirmed => "the cheapest confirmed",
        Confidence::Suspected => "the cheapest; likely — not confirmed",
    }
}

/// The remedy a finding gets when nobody chose one: the cheapest CONFIRMED remedy, and only
/// when it offers none, the cheapest SUSPECTED one. A cheaper guess must not silently stand in
/// for a fix known to work (issue 27: the demo's warmup skip over `VLLM_USE_DEEP_GEMM=0`).
pub(crate) fn default_remedy(f: &Finding) -> Option<&RemedyView> {
    f.remedies
        .iter()
        .min_by_key(|r| (r.confidence != Confidence::Confirmed, r.cost_rank))
}

/// Why `kept` makes `other` unnecessary, if it does (`moots:` in the knowledge base).
pub fn moots<'k>(kb: &'k KnowledgeBase, kept: &str, other: &str) -> Option<&'k str> {
    kb.remedy(kept)?
        .moots
        .iter()
        .find(|m| m.remedy.value == other)
        .map(|m| m.why.as_str())
}

/// Why two remedies cannot go into one plan: a `conflicts:` entry on either side, or edits that
/// set one variable, flag or compilation-config key differently.
pub fn conflict(kb: &KnowledgeBase, a: &str, b: &str) -> Option<String> {
    let (ra, rb) = (kb.remedy(a)?, kb.remedy(b)?);
    let declared = |x: &Remedy, y: &str| {
        x.conflicts
            .iter()
            .find(|c| c.remedy.value == y)
            .map(|c| c.why.clone())
    };
    if let Some(why) = declared(ra, b).or_else(|| declared(rb, a)) {
        return Some(why);
    }
    ra.edits
        .iter()
        .flat_map(|ea| rb.edits.iter().map(move |eb| (ea, eb)))
        .find_map(|(ea, eb)| edit_conflict(ea, eb))
}

/// Two edits that cannot both hold.
fn edit_conflict(a: &Edit, b: &Edit) -> Option<String> {
    let same_flag = |x: &str, y: &str| flags::long_name(x) == flags::long_name(y);
    match (a, b) {
        (Edit::SetEnv { name: n, value: v }, Edit::SetEnv { name: m, value: w })
            if n == m && v != w =>
        {
            Some(format!("both set {n}, one to {v:?} and one to {w:?}"))
        }
        (Edit::SetEnv { name: n, .. }, Edit::UnsetEnv { name: m })
        | (Edit::UnsetEnv { name: m }, Edit::SetEnv { name: n, .. })
            if n == m =>
        {
            Some(format!("one sets {n} and the other unsets it"))
        }
        (Edit::AddFlag { flag: f, .. }, Edit::RemoveFlag { flag: g })
        | (Edit::RemoveFlag { flag: g }, Edit::AddFlag { flag: f, .. })
            if same_flag(f, g) =>
        {
            Some(format!("one adds {f} and the other removes it"))
        }
        (Edit::AddFlag { flag: f, value: v }, Edit::AddFlag { flag: g, value: w })
            if same_flag(f, g) && v != w =>
        {
            Some(format!(
                "both set {f}, one to {} and one to {}",
                v.as_deref().unwrap_or("(no value)"),
                w.as_deref().unwrap_or("(no value)")
            ))
        }
        (
            Edit::SetCompilationConfig { key: k, value: v },
            Edit::SetCompilationConfig { key: l, value: w },
        ) if k == l && v != w => Some(format!(
            "both set the compilation config's {k}, one to {v} and one to {w}"
        )),
        _ => None,
    }
}

/// A launch edit in words, for when no launch is known or it could not be rewritten.
pub fn describe(edit: &Edit, kb: &KnowledgeBase) -> String {
    match edit {
        Edit::SetEnv { name, value } => {
            format!("Set `{name}={value}` in the environment vLLM starts with.")
        }
        Edit::UnsetEnv { name } => format!("Unset `{name}` in the environment vLLM starts with."),
        Edit::DropAllocOption { option } => fill_text(
            &kb.allocator.fix_notes.no_launch.value,
            &[("option", option)],
        ),
        Edit::AddFlag {
            flag,
            value: Some(v),
        } => format!("Add `{flag} {v}` to the vLLM launch."),
        Edit::AddFlag { flag, value: None } => format!("Add `{flag}` to the vLLM launch."),
        Edit::RemoveFlag { flag } => format!("Remove `{flag}` from the vLLM launch."),
        Edit::SetCompilationConfig { key, value } => {
            format!("Set `{key}` to `{value}` in the launch's `--compilation-config`.")
        }
        Edit::PatchScript { pr } => format!("Apply PR #{pr}."),
        Edit::Manual { text } => text.clone(),
    }
}

fn str_fact(facts: &Facts, name: &str) -> Option<String> {
    match facts.get(name).value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// An allocator option that comes from the host's environment, not the launch, is dropped by
/// setting the variable for this launch to the host's value without that option. The variable
/// edited is the one in effect (`alloc.var`): when the launch sets only the other one (say
/// `PYTORCH_ALLOC_CONF`) while the host's `PYTORCH_CUDA_ALLOC_CONF` wins over it, editing the
/// launch's would change nothing, so the host's variable is set for this launch instead.
pub(crate) fn host_alloc_edit(option: &str, snap: &HostSnapshot, facts: &Facts) -> Option<Edit> {
    let var = str_fact(facts, "alloc.var")?;
    let launch_sets_it = snap
        .launch
        .value()
        .is_some_and(|l| l.env.contains_key(&var));
    if launch_sets_it {
        return None;
    }
    let conf = str_fact(facts, "alloc.conf")?;
    let kept = alloc_conf::drop_option(&conf, option).unwrap_or(conf);
    let value = if kept.is_empty() {
        alloc_conf::set_option("", option, alloc_conf::FALSE)
    } else {
        kept
    };
    Some(Edit::SetEnv { name: var, value })
}

/// The script a `patch_script` edit needs, and the step that runs it.
pub(crate) fn script_for(pr: u32) -> (PlanScript, String) {
    let file = format!("apply-pr-{pr}.sh");
    let step = format!("Review {file}, run `bash {file}` (a dry run), then `bash {file} --apply`.");
    (
        PlanScript {
            pr,
            command: format!("sm120-doctor patch-script --pr {pr} -o {file}"),
            file,
        },
        step,
    )
}

/// One chosen remedy before the plan decides on it.
struct Candidate<'a> {
    remedy: &'a Remedy,
    finding: Option<String>,
    by: ChosenBy,
}

/// Keep, in order, what no other kept remedy makes moot, then refuse what conflicts with an
/// earlier kept one (the earlier answers a more severe finding).
fn select<'a>(
    kb: &KnowledgeBase,
    cands: Vec<Candidate<'a>>,
    notes: &mut Vec<String>,
) -> (Vec<Candidate<'a>>, Vec<LeftOut>) {
    // One remedy serves every finding that chose it.
    let mut unique: Vec<Candidate<'a>> = Vec::new();
    for c in cands {
        let id = &c.remedy.id.value;
        match unique.iter().find(|u| &u.remedy.id.value == id) {
            Some(first) => notes.push(format!(
                "{id} answers {} as well as {}",
                c.finding.as_deref().unwrap_or("this launch"),
                first.finding.as_deref().unwrap_or("this launch")
            )),
            None => unique.push(c),
        }
    }
    let id = |c: &Candidate<'_>| c.remedy.id.value.clone();
    // Moots form no cycle (the loader checks), so deciding each remedy once all that could make
    // it moot are decided ends; `Some(true)` keeps it.
    let n = unique.len();
    let mut kept: Vec<Option<bool>> = vec![None; n];
    let mut left_out: Vec<LeftOut> = Vec::new();
    loop {
        let mut progress = false;
        for i in 0..n {
            if kept[i].is_some() {
                continue;
            }
            let mooters: Vec<usize> = (0..n)
                .filter(|&j| j != i && moots(kb, &id(&unique[j]), &id(&unique[i])).is_some())
                .collect();
            if mooters.iter().any(|&j| kept[j].is_none()) {
                continue;
            }
            progress = true;
            match mooters.iter().find(|&&j| kept[j] == Some(true)) {
                Some(&j) => {
                    kept[i] = Some(false);
                    let why = moots(kb, &id(&unique[j]), &id(&unique[i])).unwrap_or_default();
                    left_out.push(LeftOut {
                        remedy: id(&unique[i]),
                        finding: unique[i].finding.clone(),
                        kind: LeftOutKind::Moot,
                        because_of: id(&unique[j]),
                        reason: why.to_string(),
                    });
                }
                None => kept[i] = Some(true),
            }
        }
        if !progress {
            break;
        }
    }
    let mut out: Vec<Candidate<'a>> = Vec::new();
    for (i, c) in unique.into_iter().enumerate() {
        if kept[i] == Some(false) {
            continue;
        }
        let cid = id(&c);
        match out
            .iter()
            .find_map(|k| conflict(kb, &id(k), &cid).map(|why| (id(k), why)))
        {
            Some((other, why)) => left_out.push(LeftOut {
                remedy: cid,
                finding: c.finding.clone(),
                kind: LeftOutKind::Conflict,
                because_of: other,
                reason: why,
            }),
            None => out.push(c),
        }
    }
    for l in &left_out {
        notes.push(match l.kind {
            LeftOutKind::Moot => format!(
                "{} is left out: {} makes it unnecessary ({})",
                l.remedy, l.because_of, l.reason
            ),
            LeftOutKind::Conflict => format!(
                "{} is refused: it conflicts with {} ({}); pick another remedy for {}",
                l.remedy,
                l.because_of,
                l.reason,
                l.finding.as_deref().unwrap_or("it")
            ),
        });
    }
    (out, left_out)
}

/// The host the plan is for, when known: an allocator option set in its environment is dropped
/// by setting the variable for the launch.
struct Host<'a> {
    snap: &'a HostSnapshot,
    facts: &'a Facts,
}

/// Apply the kept remedies in order. `strict` (for `fix`) turns a failed rewrite into an error;
/// otherwise the edit becomes a step in words, with a note.
fn apply(
    kb: &KnowledgeBase,
    kept: &[Candidate<'_>],
    launch: Option<&LaunchSource>,
    host: Option<Host<'_>>,
    strict: bool,
    mut plan: Plan,
) -> Result<(Plan, Option<Vec<SourceFile>>), PlanError> {
    plan.original = launch.and_then(|l| l.files.first()).map(|f| f.text.clone());
    let select = launch.map(|l| l.select.clone()).unwrap_or_default();
    // The files as the edits leave them; `None` when there is no launch or it cannot be read.
    let mut current = match launch {
        Some(l) => match crate::launch::locate_files(&l.files, &l.select) {
            Ok(loc) => {
                plan.notes.extend(loc.notes.iter().cloned());
                Some(l.files.clone())
            }
            Err(e) if strict => return Err(e.into()),
            Err(e) => {
                plan.notes.push(format!(
                    "the launch could not be read ({e}); its edits are steps"
                ));
                None
            }
        },
        None => None,
    };
    for c in kept {
        let id = c.remedy.id.value.as_str();
        plan.remedies.push(id.to_string());
        plan.chosen.push(Planned {
            remedy: id.to_string(),
            title: c.remedy.title.clone(),
            finding: c.finding.clone(),
            chosen_by: c.by,
        });
        for edit in &c.remedy.edits {
            match edit {
                Edit::PatchScript { pr } => {
                    if !plan.scripts.iter().any(|s| s.pr == *pr) {
                        let (script, step) = script_for(*pr);
                        plan.scripts.push(script);
                        plan.steps.push(step);
                    }
                }
                Edit::Manual { text } => plan.steps.push(text.clone()),
                edit => {
                    let edit = match (edit, &host) {
                        (Edit::DropAllocOption { option }, Some(h)) => {
                            match host_alloc_edit(option, h.snap, h.facts) {
                                Some(e) => {
                                    if let Edit::SetEnv { name, value } = &e {
                                        let source = h.facts.get("alloc.conf").source;
                                        plan.notes.push(fill_text(
                                            &kb.allocator.fix_notes.from_host.value,
                                            &[
                                                ("name", name),
                                                ("source", &source),
                                                ("option", option),
                                                ("value", value),
                                            ],
                                        ));
                                    }
                                    e
                                }
                                None => edit.clone(),
                            }
                        }
                        _ => edit.clone(),
                    };
                    let Some(files) = &mut current else {
                        plan.steps.push(describe(&edit, kb));
                        continue;
                    };
                    match rewrite::apply_edit_files(files, &select, id, &edit, kb) {
                        Ok(step) => {
                            plan.notes.extend(step.notes);
                            for (f, t) in files.iter_mut().zip(step.texts) {
                                f.text = t;
                            }
                        }
                        Err(error) if strict => {
                            return Err(PlanError::Fix {
                                remedy: id.to_string(),
                                error,
                            });
                        }
                        Err(e) => {
                            plan.notes
                                .push(format!("{id}: the launch could not be rewritten ({e})"));
                            plan.steps.push(describe(&edit, kb));
                        }
                    }
                }
            }
        }
    }
    if let (Some(now), Some(given)) = (&current, launch) {
        plan.launch = now.first().map(|f| f.text.clone());
        plan.files = now
            .iter()
            .zip(&given.files)
            .skip(1)
            .filter(|(now, given)| now.text != given.text)
            .map(|(now, _)| PlannedFile {
                name: now.name.clone(),
                text: now.text.clone(),
            })
            .collect();
    }
    Ok((plan, current))
}

/// The plan for a diagnosis: each finding's chosen remedy (see [`choice_for`]), in the order
/// of the findings (most severe first), composed over the snapshot's launch.
pub fn for_findings(
    kb: &KnowledgeBase,
    d: &Diagnosis,
    snap: &HostSnapshot,
    choices: &Choices,
) -> Plan {
    for_findings_over(kb, d, snap, choices, None)
}

/// As [`for_findings`], with each edit made in the file of `source` where the setting lives
/// (the launch's own files, as `fix` edits them); `None`: the snapshot's launch text.
pub(crate) fn for_findings_over(
    kb: &KnowledgeBase,
    d: &Diagnosis,
    snap: &HostSnapshot,
    choices: &Choices,
    source: Option<&LaunchSource>,
) -> Plan {
    let cands: Vec<Candidate<'_>> = d
        .findings
        .iter()
        .filter_map(|f| {
            let (r, by) = choice_for(f, choices)?;
            Some(Candidate {
                remedy: kb.remedy(&r.id)?,
                finding: Some(f.id.clone()),
                by,
            })
        })
        .collect();
    let mut plan = Plan::default();
    let (kept, left_out) = select(kb, cands, &mut plan.notes);
    plan.left_out = left_out;
    // The files as given when the caller has them (`--launch-with`, `--service`), else the
    // snapshot's launch text.
    let from_snapshot = snap.launch.value().map(|l| LaunchSource::text(&l.raw));
    let launch = source.or(from_snapshot.as_ref());
    let host = Host {
        snap,
        facts: &d.facts,
    };
    // Not strict: a failed edit becomes a step with a note, so this cannot fail.
    apply(kb, &kept, launch, Some(host), false, plan)
        .map(|(plan, _)| plan)
        .unwrap_or_default()
}

/// The remedies the user named, in order, as plan candidates: an unknown id or two that
/// conflict is an error; one mooted by another is left out with a note in the plan.
fn chosen_by_user<'a>(
    kb: &'a KnowledgeBase,
    ids: &[String],
) -> Result<(Vec<Candidate<'a>>, Plan), PlanError> {
    let mut cands = Vec::new();
    for id in ids {
        let remedy = kb.remedy(id).ok_or_else(|| PlanError::Unknown {
            id: id.clone(),
            valid: kb.remedies.keys().cloned().collect(),
        })?;
        cands.push(Candidate {
            remedy,
            finding: None,
            by: ChosenBy::User,
        });
    }
    let mut plan = Plan::default();
    let (kept, left_out) = select(kb, cands, &mut plan.notes);
    if let Some(l) = left_out.iter().find(|l| l.kind == LeftOutKind::Conflict) {
        return Err(PlanError::Conflict {
            kept: l.because_of.clone(),
            refused: l.remedy.clone(),
            reason: l.reason.clone(),
        });
    }
    plan.left_out = left_out;
    Ok((kept, plan))
}

/// The plan for `fix` over a launch read from several files (`files[0]` the main one: a script
/// and the file it sources, a compose file and its `.env`, a unit and its `EnvironmentFile=`),
/// the launch picked by `sel`: as `for_remedies`, each edit made in the file where the
/// setting lives. Returns the plan (its `launch` is the main file's text) and every file's text.
pub(crate) fn for_remedies_files(
    kb: &KnowledgeBase,
    files: &[SourceFile],
    sel: &Select,
    ids: &[String],
) -> Result<(Plan, Vec<String>), PlanError> {
    let (kept, plan) = chosen_by_user(kb, ids)?;
    let launch = LaunchSource {
        files: files.to_vec(),
        select: sel.clone(),
    };
    let (plan, now) = apply(kb, &kept, Some(&launch), None, true, plan)?;
    // Strict: a launch that cannot be read was an error above, so every file is here.
    let texts = now
        .unwrap_or(launch.files)
        .into_iter()
        .map(|f| f.text)
        .collect();
    Ok((plan, texts))
}

/// The plan for `fix`: the remedies `ids` in order over a launch text, with no host. A remedy
/// another makes unnecessary is left out with a note; a conflict or an edit that cannot be made
/// is an error. (Only the tests build a plan over one launch text; `fix` goes through
/// [`for_remedies_files`].)
#[cfg(test)]
pub(crate) fn for_remedies(
    kb: &KnowledgeBase,
    launch_text: &str,
    ids: &[String],
) -> Result<Plan, PlanError> {
    let (kept, plan) = chosen_by_user(kb, ids)?;
    let launch = LaunchSource::text(launch_text);
    apply(kb, &kept, Some(&launch), None, true, plan).map(|(plan, _)| plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb() -> KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn edits_that_set_one_thing_differently_conflict() {
        let env = |v: &str| Edit::SetEnv {
            name: "X".into(),
            value: v.into(),
        };
        assert!(edit_conflict(&env("0"), &env("1")).is_some_and(|w| w.contains("both set X")));
        assert_eq!(edit_conflict(&env("0"), &env("0")), None);
        assert!(
            edit_conflict(&env("0"), &Edit::UnsetEnv { name: "X".into() })
                .is_some_and(|w| w.contains("unsets"))
        );
        let add = Edit::AddFlag {
            flag: "--enforce-eager".into(),
            value: None,
        };
        let remove = Edit::RemoveFlag {
            flag: "--enforce_eager".into(),
        };
        assert!(edit_conflict(&add, &remove).is_some());
        let cc = |v: &str| Edit::SetCompilationConfig {
            key: "cudagraph_mode".into(),
            value: v.into(),
        };
        assert!(edit_conflict(&cc("PIECEWISE"), &cc("FULL")).is_some());
        assert_eq!(edit_conflict(&add, &cc("FULL")), None);
    }

    #[test]
    fn fix_refuses_conflicting_remedies_with_the_reason() {
        let e = for_remedies(
            &kb(),
            "vllm serve m",
            &ids(&["breakable_cudagraph_off", "breakable_cudagraph_on"]),
        )
        .expect_err("conflict");
        let s = e.to_string();
        assert!(
            s.contains("breakable_cudagraph_on cannot go with breakable_cudagraph_off")
                && s.contains("VLLM_USE_BREAKABLE_CUDAGRAPH"),
            "{s}"
        );
    }

    #[test]
    fn a_moot_remedy_is_left_out_with_the_reason() {
        let p = for_remedies(
            &kb(),
            "vllm serve m --tensor-parallel-size 2",
            &ids(&["cudagraph_piecewise", "enforce_eager"]),
        )
        .expect("plan");
        assert_eq!(p.remedies, ids(&["enforce_eager"]));
        assert_eq!(
            p.launch.as_deref(),
            Some("vllm serve m --tensor-parallel-size 2 --enforce-eager")
        );
        assert_eq!(p.left_out.len(), 1);
        assert_eq!(p.left_out[0].kind, LeftOutKind::Moot);
        assert!(
            p.notes
                .iter()
                .any(|n| n.starts_with("cudagraph_piecewise is left out: enforce_eager")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn a_chain_of_moots_keeps_what_nothing_kept_makes_moot() {
        // enforce_eager moots drop_expandable_segments, which moots apply_pr_43923; enforce_eager
        // moots apply_pr_43923 too, so both go.
        let p = for_remedies(
            &kb(),
            "vllm serve m -tp 2",
            &ids(&[
                "apply_pr_43923",
                "drop_expandable_segments",
                "enforce_eager",
            ]),
        )
        .expect("plan");
        assert_eq!(p.remedies, ids(&["enforce_eager"]));
        assert_eq!(p.left_out.len(), 2);
        assert!(p.scripts.is_empty(), "a moot PR needs no script");
    }

    #[test]
    fn scripts_and_manual_steps_are_collected_once() {
        let p = for_remedies(
            &kb(),
            "vllm serve m -tp 2",
            &ids(&["apply_pr_43923", "deep_gemm_warmup_skip"]),
        )
        .expect("plan");
        assert_eq!(p.scripts.len(), 1);
        assert_eq!(p.scripts[0].file, "apply-pr-43923.sh");
        assert_eq!(
            p.scripts[0].command,
            "sm120-doctor patch-script --pr 43923 -o apply-pr-43923.sh"
        );
        assert!(
            p.steps[0].contains("bash apply-pr-43923.sh --apply"),
            "{:?}",
            p.steps
        );
        assert_eq!(
            p.launch.as_deref(),
            Some("VLLM_DEEP_GEMM_WARMUP=skip vllm serve m -tp 2")
        );
        assert!(p.changed());
    }

    #[test]
    fn unknown_remedy_lists_the_valid_ones() {
        let e = for_remedies(&kb(), "vllm serve m", &ids(&["nope"])).expect_err("unknown");
        assert!(e.to_string().contains("enforce_eager"), "{e}");
    }
}
