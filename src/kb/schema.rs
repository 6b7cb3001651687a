//! The knowledge-base file format (knowledge/*.yaml).
//!
//! One file per failure class (or checklist), plus `remedies.yaml`. Identifiers that other parts
//! refer to are [`Spanned`] so the validator can point at the exact line and column.

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

/// A YAML string with its position in the file.
pub type SpannedStr = Spanned<String>;

/// A class file: the tree for one failure class (or the onboarding checklist).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassFile {
    /// Stable class id, e.g. `allocator_ipc`.
    pub class: SpannedStr,
    pub title: String,
    /// `failure` (the default) or `checklist` (onboarding: every start is one item).
    #[serde(default)]
    pub kind: ClassKind,
    /// What this class is, in a sentence or two, for the user.
    #[serde(default)]
    pub summary: String,
    /// Set when the tree is not written yet; `kb lint` reports it.
    #[serde(default)]
    pub stub: bool,
    #[serde(default)]
    pub signatures: Vec<Signature>,
    /// Where the walk begins. A checklist has one start per item.
    #[serde(default)]
    pub start: Vec<SpannedStr>,
    #[serde(default)]
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub conclusions: Vec<Conclusion>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassKind {
    #[default]
    Failure,
    Checklist,
}

/// A regular expression that marks a class in a log. Line numbers in sources vary by version,
/// so patterns use `\d+` for them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signature {
    pub id: SpannedStr,
    pub pattern: SpannedStr,
    /// `strong` names the class on its own; `supporting` only adds weight.
    #[serde(default)]
    pub strength: Strength,
    /// The same line also matching one of these means it is not this class.
    #[serde(default)]
    pub unless: Vec<SpannedStr>,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    #[default]
    Strong,
    Supporting,
}

/// One step of a walk: an automatic check, a manual question, or both (the question is asked
/// when the check cannot be decided from what is known).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub id: SpannedStr,
    /// The question, as the user reads it.
    pub question: String,
    /// Expression over facts, log matches and answers; see `kb::expr`.
    #[serde(default)]
    pub check: Option<SpannedStr>,
    /// Asked when `check` is absent or unknown. Defaults to yes/no.
    #[serde(default)]
    pub ask: Option<Ask>,
    /// Why this question matters, with its source.
    #[serde(default)]
    pub why: String,
    pub yes: SpannedStr,
    pub no: SpannedStr,
    /// Where "I don't know" leads; without it the walk waits for an answer.
    #[serde(default)]
    pub unsure: Option<SpannedStr>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ask {
    /// Extra help shown with the manual question (how to find the answer).
    #[serde(default)]
    pub hint: String,
    #[serde(default = "default_yes_label")]
    pub yes_label: String,
    #[serde(default = "default_no_label")]
    pub no_label: String,
}

fn default_yes_label() -> String {
    "yes".into()
}
fn default_no_label() -> String {
    "no".into()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The check passed or the class does not apply.
    Ok,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Confidence {
    #[serde(rename = "CONFIRMED")]
    Confirmed,
    #[serde(rename = "SUSPECTED")]
    Suspected,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Confirmed => "CONFIRMED",
            Confidence::Suspected => "SUSPECTED",
        }
    }
}

/// A leaf of the tree: what the tool concludes, and why.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conclusion {
    pub id: SpannedStr,
    pub severity: Severity,
    pub confidence: Confidence,
    pub title: String,
    /// Evidence lines; `{fact.name}` is replaced by the fact's value.
    #[serde(default)]
    pub evidence: Vec<SpannedStr>,
    #[serde(default)]
    pub sources: Vec<String>,
    /// Remedy ids, in the order to try them (cheapest first).
    #[serde(default)]
    pub remedies: Vec<SpannedStr>,
    /// What this finding does not explain or fix.
    #[serde(default)]
    pub does_not_fix: Vec<String>,
    /// Where sources disagree, shown to the user as is.
    #[serde(default)]
    pub contradictions: Vec<String>,
}

/// `remedies.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemedyFile {
    pub remedies: Vec<Remedy>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remedy {
    pub id: SpannedStr,
    pub title: String,
    pub cost: Cost,
    pub confidence: Confidence,
    /// What it was verified on (hardware, version, report).
    pub verified: String,
    #[serde(default)]
    pub sources: Vec<String>,
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// Known limits of this remedy.
    #[serde(default)]
    pub limits: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// Lower is cheaper; remedies are offered in this order.
    pub rank: u32,
    pub text: String,
}

/// A change to the user's launch or host that a remedy makes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    SetEnv {
        name: String,
        value: String,
    },
    UnsetEnv {
        name: String,
    },
    /// Remove one option (e.g. `expandable_segments`) from the allocator config in effect.
    DropAllocOption {
        option: String,
    },
    AddFlag {
        flag: String,
        #[serde(default)]
        value: Option<String>,
    },
    RemoveFlag {
        flag: String,
    },
    SetCompilationConfig {
        key: String,
        value: String,
    },
    PatchScript {
        pr: u32,
    },
    /// A step the tool cannot make for the user (upgrade, downgrade, file copy).
    Manual {
        text: String,
    },
}
