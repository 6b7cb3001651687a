//! What [`super::locate_files`] finds in a launch: every environment assignment and vLLM
//! argument with its file and bytes ([`EnvSite`], [`Arg`]), where new ones go, and what the text
//! does differently from what it seems to say ([`Problem`]).

use super::{Form, Insert, Render};
use std::collections::BTreeMap;
use std::ops::Range;

/// One environment assignment the launch makes.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvSite {
    /// Index of the file it is in (0: the main one).
    pub file: usize,
    pub name: String,
    /// `None` for docker `-e NAME` (the value comes from the caller's environment).
    pub value: Option<String>,
    /// Bytes to replace with a new rendering.
    pub span: Range<usize>,
    pub render: Render,
    /// Bytes to delete to remove the assignment (in `removal_file`).
    pub removal: Range<usize>,
    pub removal_file: usize,
    /// The value holds an expansion (`$X`), so the tool cannot know what the engine gets.
    pub dynamic: bool,
    /// `unset NAME` / `env -u NAME`: the variable is removed, not set.
    pub unset: bool,
    pub line: usize,
    /// Something to say when this site is edited (a host variable that would still win, ...).
    pub caveat: Option<String>,
    /// Whether it is in effect depends on how the script runs: it is made (or its name is
    /// exported or unset) inside `if`, a loop, a `case` arm, a function body or a subshell.
    /// A new value goes on the command itself rather than here.
    pub conditional: bool,
    /// The assignment is shared with launches other than the selected one (production-stack's
    /// global `servingEngineSpec.env` with several models, a compose `<<: *anchor` merge): a
    /// new value goes in the launch's own list (`env_insert`), which wins, and this says why.
    pub shared: Option<String>,
}

impl EnvSite {
    /// A site whose replacement and removal are in the same file.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        file: usize,
        name: &str,
        value: Option<String>,
        span: Range<usize>,
        render: Render,
        removal: Range<usize>,
        dynamic: bool,
        line: usize,
    ) -> Self {
        EnvSite {
            file,
            name: name.to_string(),
            value,
            span,
            render,
            removal,
            removal_file: file,
            dynamic,
            unset: false,
            line,
            caveat: None,
            conditional: false,
            shared: None,
        }
    }
}

/// One word of the vLLM argument list.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub file: usize,
    pub value: String,
    pub span: Range<usize>,
    pub render: Render,
    /// Bytes to delete to remove this word (with its separator).
    pub removal: Range<usize>,
    pub dynamic: bool,
    pub line: usize,
}

/// Something in the launch that does not do what it seems to (a broken continuation, a
/// variable that never reaches the engine): reported as a finding, with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub file: usize,
    pub line: usize,
    pub message: String,
}

/// A launch with the positions of everything a remedy may edit.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub form: Form,
    /// `None`: the text sets only the environment (an env file, a sourced script).
    pub entrypoint: Option<String>,
    /// Assignments in effect order (a later one wins over an earlier one of the same name).
    pub env: Vec<EnvSite>,
    pub args: Vec<Arg>,
    pub env_insert: Insert,
    pub arg_insert: Insert,
    /// Things the user should know (variables inherited from the caller, env files, ...).
    pub notes: Vec<String>,
    /// What does not do what it seems to.
    pub problems: Vec<Problem>,
    /// Why this launch cannot be rewritten (it can still be read), if it cannot.
    pub read_only: Option<String>,
    /// Why the vLLM arguments cannot be edited while the environment can (a YAML block-scalar
    /// command: its words cannot be mapped back to bytes, but the container's `env:` or
    /// `environment:` is elsewhere), if so.
    pub args_read_only: Option<String>,
    /// Which of the files given the launch reads (index 0 always).
    pub used_files: Vec<usize>,
    /// Where a new assignment goes when `env_insert` would be overridden: for a name in
    /// `shadowed` (a script sets it later without exporting it, or unsets it), a prefix on the
    /// command itself.
    pub late_insert: Option<Insert>,
    /// Names the script assigns without exporting, or unsets, before the command.
    pub shadowed: Vec<String>,
    /// Names a new assignment cannot set (`readonly NAME=…`: bash refuses any later one), with
    /// what to do instead.
    pub frozen: BTreeMap<String, String>,
    /// Arguments that are one variable the script sets (`--tensor-parallel-size $TP`), by
    /// index in `args`: the assignment that gives the value, where a new value goes when the
    /// script reads the variable nowhere else.
    pub arg_vars: BTreeMap<usize, EnvSite>,
    /// What the text leaves open about the engine's environment.
    pub gaps: EnvGaps,
    /// Containers that run vLLM processes of the same deployment in other pod templates (a
    /// LeaderWorkerSet's workers when the leader is chosen, and the other way round): an
    /// environment edit is made in each of them too.
    pub peers: Vec<Located>,
}

/// What a launch text leaves open about the engine's environment: files it reads that were not
/// given, and variables whose value cannot be read from it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EnvGaps {
    /// Files read but not given, in the order the launch reads them.
    pub unread: Vec<crate::snapshot::UnreadEnv>,
    /// Variables set to something the text does not give (a Kubernetes `valueFrom`, an
    /// `export` in a `sh -c` script), with why.
    pub unknown: BTreeMap<String, String>,
}

impl EnvGaps {
    /// An unread file that every assignment of the launch wins over (docker's `-e` over
    /// `--env-file`, compose's `environment:` over `env_file:`, Kubernetes' `env:` over
    /// `envFrom:`).
    pub(crate) fn unread_before(&mut self, reason: String, env: &[EnvSite]) {
        let mut except: Vec<String> = env.iter().map(|s| s.name.clone()).collect();
        except.sort();
        except.dedup();
        self.unread
            .push(crate::snapshot::UnreadEnv { reason, except });
    }
}

impl Located {
    /// The assignment in effect for `name`, if the launch sets it (`None` when it is unset).
    pub fn env_site(&self, name: &str) -> Option<&EnvSite> {
        self.env
            .iter()
            .rev()
            .find(|s| s.name == name)
            .filter(|s| !s.unset)
    }

    /// Argument values, as the program receives them.
    pub fn arg_values(&self) -> Vec<String> {
        self.args.iter().map(|a| a.value.clone()).collect()
    }

    /// Variables the launch removes (`env -u`, `unset`) and does not set again.
    pub(crate) fn unset_names(&self) -> Vec<String> {
        let mut last: BTreeMap<&str, bool> = BTreeMap::new();
        for s in &self.env {
            last.insert(&s.name, s.unset);
        }
        last.into_iter()
            .filter(|(_, u)| *u)
            .map(|(n, _)| n.to_string())
            .collect()
    }
}
