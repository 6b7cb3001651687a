//! A script as bash runs it: a sequence of simple commands, each changing the shell's state
//! (`export`, `declare -x`, `unset`, `set -a` / `set +a`, `source` / `.` of a file given
//! alongside, assignments on their own), then the vLLM command (`vllm serve`, `python -m
//! vllm.entrypoints...`, `docker run`) with its prefixes (`A=1 cmd`, `env [-u N] A=1 cmd`,
//! `sudo [-E] cmd`).
//!
//! The engine's environment is what bash exports at that command. What the text seems to say
//! but bash does not do (a continuation a comment ends, a variable set but never exported, a
//! `sudo` that drops the exports) becomes a [`Problem`] with its line, never an input error.

mod args;
mod command;
mod docker;
mod pick;
mod prefixes;
pub mod render;

use super::{
    EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Problem, Render, Select, SourceFile,
    find_file, indent_at, is_assignment, is_name, line_end, line_start,
};
use crate::launch::lex::{self, Break, BreakKind, LineIndex, SimpleCommand, Word};
use std::collections::{BTreeMap, BTreeSet};

/// How deep `source` may nest (a file that sources itself stops here).
const MAX_SOURCE_DEPTH: usize = 16;

/// Words that start a compound command and may precede a simple command on its line.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "{", "!", "time", "coproc",
];

/// Variable prefixes the engine reads: one of these set but not exported is always reported.
const ENGINE_PREFIXES: &[&str] = &[
    "VLLM_",
    "PYTORCH_",
    "TORCH_",
    "CUDA_",
    "NCCL_",
    "HF_",
    "FLASHINFER_",
    "TRANSFORMERS_",
    "OMP_",
];

/// A vLLM command found in the program (in program order).
#[derive(Debug, Clone)]
struct Candidate {
    file: usize,
    index: usize,
    line: usize,
    label: String,
    /// Names it can be picked by (`--service NAME`).
    names: Vec<String>,
}

/// Where a command sits in the program: its file and index there.
type At = (usize, usize);

struct Sh<'a> {
    files: &'a [SourceFile],
    scripts: Vec<Option<lex::Script>>,
    lines: Vec<Option<LineIndex>>,
    used: BTreeSet<usize>,
    notes: Vec<String>,
    problems: Vec<Problem>,
    // Shell state.
    sites: Vec<EnvSite>,
    exported: BTreeSet<String>,
    allexport: bool,
    /// Indices in `sites` of assignments made while their name was not exported.
    bare: Vec<usize>,
    /// The last `export` command at the top level of its file (a line added after one inside
    /// `if`, a loop, a `case` arm or a function body would only run there): (file, span).
    last_export: Option<(usize, std::ops::Range<usize>)>,
    /// `readonly` names: bash refuses any later assignment of them (name → its line).
    readonly: BTreeMap<String, usize>,
    /// Names assigned, exported or unset inside a compound command: whether that happened
    /// depends on how the script runs.
    uncertain: BTreeSet<String>,
    /// Commands that follow a comment or empty line that broke a continuation.
    after_break: BTreeMap<At, Break>,
    stack: Vec<usize>,
    /// Sourced files that were not given: (why, how many sites were made before).
    unread: Vec<(String, usize)>,
}

impl<'a> Sh<'a> {
    fn new(files: &'a [SourceFile]) -> Self {
        Sh {
            files,
            scripts: vec![None; files.len()],
            lines: vec![None; files.len()],
            used: BTreeSet::from([0]),
            notes: Vec::new(),
            problems: Vec::new(),
            sites: Vec::new(),
            exported: BTreeSet::new(),
            allexport: false,
            bare: Vec::new(),
            last_export: None,
            readonly: BTreeMap::new(),
            uncertain: BTreeSet::new(),
            after_break: BTreeMap::new(),
            stack: Vec::new(),
            unread: Vec::new(),
        }
    }

    /// Forget the shell's state (not the parsed files).
    fn reset_state(&mut self) {
        self.used = BTreeSet::from([0]);
        self.notes.clear();
        self.sites.clear();
        self.exported.clear();
        self.allexport = false;
        self.bare.clear();
        self.last_export = None;
        self.readonly.clear();
        self.uncertain.clear();
        self.stack.clear();
        self.unread.clear();
    }

    fn text(&self, file: usize) -> &'a str {
        &self.files[file].text
    }

    /// Parse a file once; its continuation breaks become problems (or notes for later).
    fn load(&mut self, file: usize) -> Result<(), LaunchError> {
        if self.scripts[file].is_some() {
            return Ok(());
        }
        let text = self.text(file);
        let script = lex::script(text).map_err(|e| LaunchError::from_lex(file, e))?;
        let li = LineIndex::new(text);
        // Bash reads a whole script before it runs any of it: an `if` with no `fi` makes it
        // refuse every line, so no edit (and no reading) of it means anything.
        if let Some((at, word)) = &script.unclosed {
            let closer = match word.as_str() {
                "if" => "fi",
                "case" => "esac",
                "{" => "}",
                "(" => ")",
                _ => "done",
            };
            return Err(LaunchError::syntax(
                file,
                li.line(*at),
                li.col(text, *at),
                format!(
                    "`{word}` is never closed (no `{closer}`): bash stops at the end of the \
                     file with \"syntax error: unexpected end of file\" and runs none of it"
                ),
            ));
        }
        // A `fi` or `done` that closes nothing: bash (and `bash -n`) stops there with a syntax
        // error, so a file that holds one is not a script bash runs as written.
        if let Some((at, word)) = &script.stray {
            return Err(LaunchError::syntax(
                file,
                li.line(*at),
                li.col(text, *at),
                format!(
                    "`{word}` ends or continues a compound command that was never opened: bash \
                     stops there with \"syntax error near unexpected token `{word}'\""
                ),
            ));
        }
        for b in &script.breaks {
            let after = script.commands.iter().position(|c| c.span.start > b.offset);
            let next = after.map(|k| &script.commands[k]);
            let orphan_flags = next.filter(|c| c.words[0].value.starts_with('-'));
            let context = orphan_flags.map(|c| {
                format!(
                    "; `{}` (line {}) then runs as a command of its own, so the command before \
                     never gets it",
                    words_text(&c.words),
                    c.line
                )
            });
            match b.kind {
                // An escaped blank at the end of the last line is an argument like any other;
                // it breaks something only when flags follow on the next line.
                BreakKind::BlankAfterBackslash | BreakKind::CrlfAfterBackslash
                    if orphan_flags.is_none() => {}
                BreakKind::Glued
                | BreakKind::BlankAfterBackslash
                | BreakKind::CrlfAfterBackslash => {
                    self.problems.push(Problem {
                        file,
                        line: b.line,
                        message: format!("{}{}", b.explain(), context.unwrap_or_default()),
                    });
                }
                BreakKind::CommentAfterContinuation | BreakKind::EmptyLineAfterContinuation => {
                    if let Some(c) = orphan_flags {
                        self.problems.push(Problem {
                            file,
                            line: c.line,
                            message: format!(
                                "`{}` runs as a command of its own, not as arguments of the \
                                 command above it: on line {}, {}",
                                words_text(&c.words),
                                b.line,
                                b.explain()
                            ),
                        });
                    } else if let Some(k) = after {
                        self.after_break.insert((file, k), b.clone());
                    }
                }
            }
        }
        self.scripts[file] = Some(script);
        self.lines[file] = Some(li);
        Ok(())
    }

    fn commands(&self, file: usize) -> &[SimpleCommand] {
        self.scripts[file]
            .as_ref()
            .map_or(&[][..], |s| s.commands.as_slice())
    }

    /// Every vLLM command, in program order (following `source`).
    fn candidates(&mut self, file: usize, out: &mut Vec<Candidate>) -> Result<(), LaunchError> {
        self.load(file)?;
        self.stack.push(file);
        let n = self.commands(file).len();
        for k in 0..n {
            let words = strip_reserved(&self.commands(file)[k].words).to_vec();
            if words.is_empty() {
                continue;
            }
            if let Some(target) = self.sourced(&words) {
                if self.stack.len() < MAX_SOURCE_DEPTH && !self.stack.contains(&target) {
                    self.candidates(target, out)?;
                }
                continue;
            }
            if let Some(c) = pick::candidate(file, k, &self.commands(file)[k], &words) {
                out.push(c);
            }
        }
        self.stack.pop();
        Ok(())
    }

    /// `source FILE` / `. FILE` naming a file given alongside.
    fn sourced(&self, words: &[Word]) -> Option<usize> {
        if !matches!(words[0].value.as_str(), "source" | ".") {
            return None;
        }
        let w = words.get(1)?;
        let named = if w.dynamic {
            // `source "$DIR/env.sh"`: the file name part is still literal.
            base_or_self(&w.value).to_string()
        } else {
            w.value.clone()
        };
        find_file(self.files, &named)
    }

    /// Run the program up to the vLLM command `stop`; then keep reading for problems only.
    fn run(
        &mut self,
        file: usize,
        stop: At,
        found: &mut Option<Located>,
    ) -> Result<(), LaunchError> {
        self.load(file)?;
        self.used.insert(file);
        self.stack.push(file);
        let n = self.commands(file).len();
        for k in 0..n {
            let cmd = self.commands(file)[k].clone();
            let words = strip_reserved(&cmd.words).to_vec();
            if words.is_empty() {
                continue;
            }
            if (file, k) == stop {
                *found = Some(self.located_at(file, &cmd, &words)?);
                continue;
            }
            if found.is_some() {
                continue;
            }
            self.step(file, k, &cmd, &words, stop, found)?;
        }
        self.stack.pop();
        Ok(())
    }

    /// One command's effect on the shell's state.
    fn step(
        &mut self,
        file: usize,
        k: usize,
        cmd: &SimpleCommand,
        words: &[Word],
        stop: At,
        found: &mut Option<Located>,
    ) -> Result<(), LaunchError> {
        let text = self.text(file);
        let head = words[0].value.as_str();
        if cmd.depth > 0 {
            self.uncertain.extend(touched_names(words));
        }
        if words.iter().all(|w| is_assignment(&w.value).is_some()) {
            for (i, w) in words.iter().enumerate() {
                let removal = match i {
                    0 => w.span.start..words.get(1).map_or(w.span.end, |n| n.span.start),
                    _ => words[i - 1].span.end..w.span.end,
                };
                let removal = if words.len() == 1 {
                    whole_line(text, cmd)
                } else {
                    removal
                };
                if let Some(site) = assign_site(file, w, removal) {
                    let exported = self.allexport || self.exported.contains(&site.name);
                    if exported {
                        self.exported.insert(site.name.clone());
                    } else {
                        self.bare.push(self.sites.len());
                    }
                    self.sites.push(site);
                }
            }
            let _ = k;
            return Ok(());
        }
        match head {
            "export" | "declare" | "typeset" | "readonly" => {
                let mut exporting = head == "export";
                let mut unexport = false;
                let mut read_only = head == "readonly";
                let n_assign = words[1..]
                    .iter()
                    .filter(|w| is_assignment(&w.value).is_some())
                    .count();
                for (i, w) in words.iter().enumerate().skip(1) {
                    let v = w.value.as_str();
                    if v.starts_with('-') || v.starts_with('+') {
                        if v.starts_with('-') && v.contains('x') {
                            exporting = true;
                        }
                        if head == "export" && v.contains('n') {
                            unexport = true;
                        }
                        if head != "export" && v.starts_with('-') && v.contains('r') {
                            read_only = true;
                        }
                        continue;
                    }
                    let removal = if n_assign == 1 && words.len() == 2 {
                        whole_line(text, cmd)
                    } else {
                        words[i - 1].span.end..w.span.end
                    };
                    let name = v.split_once('=').map_or(v, |(n, _)| n).to_string();
                    if !is_name(&name) {
                        continue;
                    }
                    if unexport {
                        self.exported.remove(&name);
                        continue;
                    }
                    if read_only {
                        self.readonly.insert(name.clone(), w.line);
                    }
                    if let Some(site) = assign_site(file, w, removal) {
                        if !exporting {
                            self.bare.push(self.sites.len());
                        }
                        self.sites.push(site);
                    }
                    if exporting {
                        self.exported.insert(name);
                    }
                }
                if head == "export" && cmd.depth == 0 {
                    self.last_export = Some((file, cmd.span.clone()));
                }
            }
            "unset" => {
                for (i, w) in words.iter().enumerate().skip(1) {
                    if w.value == "-f" {
                        break;
                    }
                    if !is_name(&w.value) {
                        continue;
                    }
                    self.exported.remove(&w.value);
                    let mut site = EnvSite::new(
                        file,
                        &w.value,
                        None,
                        w.span.clone(),
                        Render::ShellWord {
                            prefix: String::new(),
                        },
                        words[i - 1].span.end..w.span.end,
                        false,
                        w.line,
                    );
                    site.unset = true;
                    self.sites.push(site);
                }
            }
            "set" => {
                let mut iter = words[1..].iter().peekable();
                while let Some(w) = iter.next() {
                    let v = w.value.as_str();
                    let on = v.starts_with('-');
                    if (v == "-o" || v == "+o")
                        && iter.peek().is_some_and(|n| n.value == "allexport")
                    {
                        self.allexport = on;
                        iter.next();
                    } else if (on || v.starts_with('+'))
                        && v.len() > 1
                        && v[1..].chars().all(|c| c.is_ascii_alphabetic())
                        && v.contains('a')
                    {
                        self.allexport = on;
                    }
                }
            }
            "source" | "." => match self.sourced(words) {
                Some(target) => {
                    if self.stack.contains(&target) || self.stack.len() >= MAX_SOURCE_DEPTH {
                        self.notes.push(format!(
                            "{}: line {}: sources {} again (a loop); read once",
                            self.files[file].name, cmd.line, self.files[target].name
                        ));
                    } else {
                        self.run(target, stop, found)?;
                    }
                }
                None => {
                    let named = words.get(1).map_or("", |w| w.value.as_str());
                    if !is_activate(named) {
                        self.unread.push((
                            format!(
                                "{} line {} sources {named}, which was not given: the variables \
                                 it sets are not read (give it too: --launch-with {named})",
                                self.files[file].name, cmd.line
                            ),
                            self.sites.len(),
                        ));
                        self.notes.push(format!(
                            "line {}: sources {named}, which was not given: the variables it sets \
                             are not known here (give it too: --launch-file {} --launch-with {named})",
                            cmd.line, self.files[0].name
                        ));
                    }
                }
            },
            _ => {}
        }
        Ok(())
    }

    /// No vLLM command: the script sets the environment a wrapper sources.
    fn env_only(&mut self) -> Result<Located, LaunchError> {
        let mut notes = std::mem::take(&mut self.notes);
        for &i in &self.bare {
            let s = &self.sites[i];
            if !self.exported.contains(&s.name) {
                notes.push(format!(
                    "line {}: {} is not exported here: it reaches vLLM only if the script that \
                     sources this file exports it (`set -a` before `source`)",
                    s.line, s.name
                ));
            }
        }
        if self.sites.is_empty() {
            return Err(LaunchError::NoVllmCommand);
        }
        // A script that runs something is not an env file: a line added to it may land after
        // the command that starts vLLM (or in a shell that never reaches it).
        let runs = self.runs_a_command();
        let read_only = runs.as_ref().map(|(file, line, what)| {
            format!(
                "{}: line {line} runs `{what}`, which is not a vLLM command this tool recognises \
                 (`vllm serve`, `python -m vllm.entrypoints…`, `docker run IMAGE …` with vLLM \
                 arguments), so an edit here may never reach the engine; write the vLLM command \
                 out in the script (or give the script that runs it)",
                self.files[*file].name
            )
        });
        match &read_only {
            Some(why) => notes.push(why.clone()),
            None => notes.push(format!(
                "{} holds no vLLM command: read as the environment the engine inherits",
                self.files[0].name
            )),
        }
        let env_insert = match &self.last_export {
            Some((efile, span)) => export_line(self.text(*efile), *efile, span),
            None => Insert {
                file: 0,
                offset: self.text(0).len(),
                style: InsertStyle::EnvFileLine { dialect: None },
            },
        };
        Ok(Located {
            form: Form::Shell,
            entrypoint: None,
            env: self.sites.clone(),
            args: Vec::new(),
            env_insert,
            arg_insert: Insert {
                file: 0,
                offset: 0,
                style: InsertStyle::Nowhere {
                    why: format!(
                        "{} holds no vLLM command, so there are no flags to change; give the \
                         script that runs vLLM",
                        self.files[0].name
                    ),
                },
            },
            notes,
            problems: std::mem::take(&mut self.problems),
            read_only,
            args_read_only: None,
            used_files: self.used.iter().copied().collect(),
            late_insert: Some(Insert {
                file: 0,
                offset: self.text(0).len(),
                style: InsertStyle::EnvFileLine { dialect: None },
            }),
            gaps: Default::default(),
            shadowed: self
                .sites
                .iter()
                .filter(|s| s.unset)
                .map(|s| s.name.clone())
                .collect(),
            frozen: self.frozen(),
            arg_vars: Default::default(),
            peers: Vec::new(),
        })
    }

    /// The first command of the files read that is more than shell bookkeeping (setting
    /// variables, `cd`, `echo`, tests): (file, line, its first words).
    fn runs_a_command(&self) -> Option<(usize, usize, String)> {
        self.used.iter().find_map(|&f| {
            self.commands(f).iter().find_map(|c| {
                let words = strip_reserved(&c.words);
                let head = words.iter().find(|w| is_assignment(&w.value).is_none())?;
                let benign = !head.dynamic && BOOKKEEPING.contains(&head.value.as_str());
                (!benign).then(|| {
                    let shown: Vec<&str> = words.iter().take(4).map(|w| w.value.as_str()).collect();
                    (f, c.line, shown.join(" "))
                })
            })
        })
    }
}

/// Commands that only keep the shell's state or print: an env file a wrapper sources may hold
/// them and still start nothing.
const BOOKKEEPING: &[&str] = &[
    "export", "declare", "typeset", "readonly", "local", "unset", "set", "shopt", "source", ".",
    "cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "test", "[", "[[", "return",
    "exit", "trap", "alias", "umask", "ulimit", "mkdir", "command", "hash", "read", "sleep", "for",
    "select", "case", "in", "fi", "done", "esac", "}", "function", "then", "else",
];

/// A new `export` line next to the export command at `span`: after it, or before it when its
/// last line ends with a backslash (a line after it would join that continuation).
fn export_line(text: &str, file: usize, span: &std::ops::Range<usize>) -> Insert {
    let end = line_end(text, span.end);
    let continued = text[..end]
        .trim_end_matches([' ', '\t', '\r'])
        .ends_with('\\');
    Insert {
        file,
        offset: if continued {
            line_start(text, span.start)
        } else {
            end
        },
        style: InsertStyle::ExportLine {
            indent: indent_at(text, span.start),
            before: continued,
        },
    }
}

/// A word that is one variable expansion: `$NAME`, `${NAME}`, `${NAME:-default}` or
/// `${NAME-default}` (the default literal text; `:-` also takes it for an empty value).
#[derive(Debug, PartialEq)]
struct Expansion<'a> {
    name: &'a str,
    default: Option<(&'a str, bool)>,
}

impl<'a> Expansion<'a> {
    fn of(word: &'a str) -> Option<Self> {
        if let Some(name) = word.strip_prefix('$').filter(|n| is_name(n)) {
            return Some(Expansion {
                name,
                default: None,
            });
        }
        let inner = word.strip_prefix("${")?.strip_suffix('}')?;
        if is_name(inner) {
            return Some(Expansion {
                name: inner,
                default: None,
            });
        }
        let (name, default, empty_counts) = match inner.split_once(":-") {
            Some((n, d)) => (n, d, true),
            None => {
                let (n, d) = inner.split_once('-')?;
                (n, d, false)
            }
        };
        let literal = !default.contains(['$', '`', '{', '}', '\\', '\'', '"']);
        (is_name(name) && literal).then_some(Expansion {
            name,
            default: Some((default, empty_counts)),
        })
    }
}

/// The variable names a state command (`export`, `declare`, `readonly`, `unset`, bare
/// assignments) touches.
fn touched_names(words: &[Word]) -> Vec<String> {
    let state = matches!(
        words[0].value.as_str(),
        "export" | "declare" | "typeset" | "readonly" | "local" | "unset"
    );
    words
        .iter()
        .filter(|w| !w.value.starts_with(['-', '+']))
        .filter_map(|w| match is_assignment(&w.value) {
            Some((n, _)) => Some(n.to_string()),
            None if state && is_name(&w.value) => Some(w.value.clone()),
            None => None,
        })
        .collect()
}

/// The command's words with leading compound-command words (`then`, `do`, ...) removed.
/// `time`'s options (`time -p`) go too: a prefix written before them would become `time`'s
/// word, not an assignment.
fn strip_reserved(words: &[Word]) -> &[Word] {
    let mut skip = 0;
    while let Some(w) = words.get(skip) {
        if !RESERVED.contains(&w.value.as_str()) {
            break;
        }
        skip += 1;
        if w.value == "time" {
            while words
                .get(skip)
                .is_some_and(|o| o.value.starts_with('-') && o.value.len() > 1)
            {
                skip += 1;
            }
        }
    }
    &words[skip..]
}

fn words_text(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.value.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn base_or_self(v: &str) -> &str {
    v.rsplit('/').next().unwrap_or(v)
}

/// A virtualenv / conda activation script: sourcing it sets no engine variables.
fn is_activate(path: &str) -> bool {
    base_or_self(path) == "activate" || path.ends_with("/bin/activate")
}

/// The whole line of a one-assignment command, with its newline.
fn whole_line(text: &str, cmd: &SimpleCommand) -> std::ops::Range<usize> {
    let s = line_start(text, cmd.span.start);
    let e = line_end(text, cmd.span.end);
    s..(e + 1).min(text.len())
}

fn assign_site(file: usize, w: &Word, removal: std::ops::Range<usize>) -> Option<EnvSite> {
    let (name, value) = is_assignment(&w.value)?;
    Some(EnvSite::new(
        file,
        name,
        Some(value.to_string()),
        w.span.clone(),
        Render::Assign,
        removal,
        w.dynamic,
        w.line,
    ))
}

/// Names the scripts read as `$NAME` or `${NAME…}`.
fn referenced_names(files: &[SourceFile], used: &BTreeSet<usize>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for &f in used {
        let b = files[f].text.as_bytes();
        for p in memchr::memchr_iter(b'$', b) {
            let mut k = p + 1;
            if b.get(k) == Some(&b'{') {
                k += 1;
            }
            let s = k;
            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                k += 1;
            }
            if k > s {
                out.insert(String::from_utf8_lossy(&b[s..k]).into_owned());
            }
        }
    }
    out
}

/// Locate the vLLM launch in a script (`files[0]`), following `source` into the other files.
pub fn locate(files: &[SourceFile], select: &Select) -> Result<Located, LaunchError> {
    let mut sh = Sh::new(files);
    let mut cands = Vec::new();
    sh.candidates(0, &mut cands)?;
    let mut seen = BTreeSet::new();
    cands.retain(|c| seen.insert((c.file, c.index)));
    let stop = pick::pick(files, &cands, select)?;
    // Run again with the parsed files (and the problems their parsing found), fresh state.
    sh.reset_state();
    let mut found = None;
    sh.run(0, stop.unwrap_or((usize::MAX, 0)), &mut found)?;
    match found {
        Some(mut loc) => {
            // Problems found after the command (orphaned flags) and in files read later.
            loc.problems.append(&mut sh.problems);
            loc.notes.append(&mut sh.notes);
            loc.used_files = sh.used.iter().copied().collect();
            sort_problems(&mut loc.problems);
            Ok(loc)
        }
        None => {
            let mut loc = sh.env_only()?;
            sort_problems(&mut loc.problems);
            Ok(loc)
        }
    }
}

fn sort_problems(p: &mut Vec<Problem>) {
    p.sort_by_key(|p| (p.file, p.line));
    p.dedup();
}

#[cfg(test)]
mod tests {
    #[test]
    fn docker_env_short_forms_reach_the_container() {
        for form in [
            "-e=PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "-ePYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "-e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "-de=PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "-it -de PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "--env=PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        ] {
            let text =
                format!("docker run --gpus all {form} vllm/vllm-openai:latest --model m -tp 2");
            let l = crate::launch::parse_launch(&text).expect("parses");
            assert_eq!(
                l.env.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
                Some("expandable_segments:True"),
                "{form}"
            );
            assert_eq!(l.tensor_parallel_size, Some(2), "{form}");
        }
    }

    use super::*;
    use crate::launch::{locate, locate_files, parse_launch};

    fn env_of(text: &str) -> BTreeMap<String, String> {
        parse_launch(text)
            .expect("parses")
            .env
            .into_iter()
            .collect()
    }

    #[test]
    fn a_new_argument_never_lands_between_a_flag_and_an_escaped_blank_value() {
        // `--model \ ` passes the one-space word to --model; the next line runs on its own.
        let text = "vllm serve m --model \\ \n --model";
        let loc = locate(text).expect("locates");
        let at = loc.arg_insert.offset;
        assert!(at >= text.find("\\ ").expect("escaped blank") + 2, "{at}");
        // A boolean flag before the escaped blank takes no value: the new word goes before it,
        // so the continuation reads as the user meant.
        let text = "vllm serve m --enforce-eager \\ \n --model x";
        let loc = locate(text).expect("locates");
        assert_eq!(loc.arg_insert.offset, text.find(" \\ ").expect("blank"));
    }

    #[test]
    fn export_chain_ended_by_a_comment_line_is_fine() {
        let text = "export A=1 \\\n  B=2 \\\n# the model\nvllm serve m\n";
        let l = parse_launch(text).expect("bash runs it");
        assert_eq!(l.env.get("A").map(String::as_str), Some("1"));
        assert_eq!(l.env.get("B").map(String::as_str), Some("2"));
        assert!(l.problems.is_empty(), "{:?}", l.problems);
    }

    #[test]
    fn assignments_cut_off_by_a_comment_are_a_problem() {
        let text = "export VLLM_A=1 \\\n# comment\n  VLLM_B=2 \\\n  VLLM_C=3\nvllm serve m\n";
        let l = parse_launch(text).expect("bash runs it");
        assert_eq!(l.env.len(), 1, "{:?}", l.env);
        assert_eq!(l.problems.len(), 2, "{:?}", l.problems);
        assert_eq!(l.problems[0].line, 3);
        assert!(
            l.problems[0]
                .message
                .contains("VLLM_B=2 sets a shell variable that is never exported")
        );
        assert!(
            l.problems[0].message.contains("on line 2"),
            "{}",
            l.problems[0].message
        );
    }

    #[test]
    fn set_a_and_late_export_and_unset() {
        assert_eq!(
            env_of("set -a\nA=1\nset +a\nB=2\nC=3\nexport C\nvllm serve m\n"),
            BTreeMap::from([("A".into(), "1".into()), ("C".into(), "3".into())])
        );
        let l = parse_launch("export A=1\nunset A\nenv -u B vllm serve m\n").expect("parses");
        assert!(l.env.is_empty());
        assert_eq!(l.unset, vec!["A".to_string(), "B".to_string()]);
        // An assignment to an exported name stays exported.
        assert_eq!(
            env_of("export A=1\nA=2\nvllm serve m\n")
                .get("A")
                .map(String::as_str),
            Some("2")
        );
    }

    #[test]
    fn unexported_engine_variable_is_a_problem_but_a_script_variable_is_not() {
        let l =
            parse_launch("MODEL=Qwen/Q\nVLLM_USE_DEEP_GEMM=0\nvllm serve $MODEL\n").expect("ok");
        assert!(l.env.is_empty());
        assert_eq!(l.problems.len(), 1, "{:?}", l.problems);
        assert_eq!(l.problems[0].line, 2);
    }

    #[test]
    fn sudo_without_e_drops_the_exports() {
        let l = parse_launch("export VLLM_X=1\nsudo -u svc vllm serve m\n").expect("ok");
        assert!(l.env.is_empty());
        assert!(
            l.problems[0]
                .message
                .contains("sudo resets the environment"),
            "{:?}",
            l.problems
        );
        let l = parse_launch("export VLLM_X=1\nsudo -E vllm serve m\n").expect("ok");
        assert_eq!(l.env.get("VLLM_X").map(String::as_str), Some("1"));
        assert!(l.problems.is_empty());
        let loc = locate("sudo A=1 vllm serve m\n").expect("ok");
        assert_eq!(loc.env.len(), 1);
        assert_eq!(
            loc.env_insert.offset, 9,
            "after the assignments sudo passes"
        );
    }

    #[test]
    fn sourced_file_given_alongside_is_read() {
        let files = [
            SourceFile::new("run.sh", "#!/bin/bash\nsource ./set_env.sh\nvllm serve m\n"),
            SourceFile::new(
                "set_env.sh",
                "# env\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
            ),
        ];
        let loc = locate_files(&files, &Select::default()).expect("ok");
        let s = loc.env_site("PYTORCH_CUDA_ALLOC_CONF").expect("site");
        assert_eq!(s.file, 1);
        assert_eq!(loc.used_files, vec![0, 1]);
        // Not given: a note, not an error.
        let loc = locate("source ./set_env.sh\nvllm serve m\n").expect("ok");
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("set_env.sh, which was not given"))
        );
    }

    #[test]
    fn env_only_script() {
        let loc = locate_files(
            &[SourceFile::new("set_env.sh", "export A=1\nB=2\n")],
            &Select::default(),
        )
        .expect("env only");
        assert_eq!(loc.entrypoint, None);
        assert_eq!(loc.env.len(), 2);
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("B is not exported here"))
        );
    }

    #[test]
    fn orphaned_flags_after_a_broken_continuation() {
        let l = parse_launch("vllm serve m \\ \n  --enforce-eager\n").expect("ok");
        assert!(!l.enforce_eager);
        assert_eq!(l.problems.len(), 1);
        assert!(
            l.problems[0]
                .message
                .contains("a space follows the backslash")
        );
        assert!(l.problems[0].message.contains("`--enforce-eager` (line 2)"));
    }

    #[test]
    fn a_variable_in_a_flag_takes_the_value_the_script_gives_it() {
        let l = parse_launch("TP=2\nM=Qwen/Q\nvllm serve \"$M\" --tensor-parallel-size $TP\n")
            .expect("parses");
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.model.as_deref(), Some("Qwen/Q"));
        assert_eq!(l.args_unknown, None);
        // A default, with the variable set or not (then a note says the caller's would win).
        let l = parse_launch("TP=4\nvllm serve m -tp ${TP:-2}\n").expect("parses");
        assert_eq!(l.tensor_parallel_size, Some(4));
        let loc = locate("vllm serve m -tp ${TP:-2}\n").expect("locates");
        assert_eq!(loc.arg_values(), vec!["m", "-tp", "2"]);
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("unless the environment"))
        );
        let l = parse_launch("TP=\nvllm serve m -tp ${TP:-2}\n").expect("parses");
        assert_eq!(
            l.tensor_parallel_size,
            Some(2),
            ":- takes the default for empty"
        );
        // From outside, set inside a compound command, or glued to text: unknown, not an error.
        for text in [
            "vllm serve m --tensor-parallel-size $TP\n",
            "if [ -n \"$X\" ]; then TP=4; fi\nvllm serve m -tp $TP\n",
            "TP=2\nvllm serve m -tp \"$TP\"0\n",
            "TP=$(nproc)\nvllm serve m -tp $TP\n",
        ] {
            let l = parse_launch(text).expect("unknown, not an error");
            assert_eq!(l.tensor_parallel_size, None, "{text}");
            assert!(
                l.args_unknown.as_deref().is_some_and(|w| w.contains("$TP")),
                "{text}: {:?}",
                l.args_unknown
            );
        }
        // A flag the model does not read stays as written, and nothing becomes unknown.
        let l = parse_launch("vllm serve m --port $PORT -tp 2\n").expect("parses");
        assert_eq!(l.args_unknown, None);
        assert_eq!(l.tensor_parallel_size, Some(2));
    }

    #[test]
    fn expansions_a_flag_value_may_be() {
        fn e(w: &str) -> Option<(String, Option<(&str, bool)>)> {
            Expansion::of(w).map(|x| (x.name.to_string(), x.default))
        }
        assert_eq!(e("$TP"), Some(("TP".into(), None)));
        assert_eq!(e("${TP}"), Some(("TP".into(), None)));
        assert_eq!(e("${TP:-2}"), Some(("TP".into(), Some(("2", true)))));
        assert_eq!(e("${TP-2}"), Some(("TP".into(), Some(("2", false)))));
        assert_eq!(e("${TP:-$X}"), None);
        assert_eq!(e("$TP$X"), None);
        assert_eq!(e("x$TP"), None);
    }

    #[test]
    fn docker_env_file_given_alongside() {
        let files = [
            SourceFile::new(
                "run.sh",
                "docker run --env-file ./vllm.env -e B=2 vllm/vllm-openai --model m\n",
            ),
            SourceFile::new("vllm.env", "A=\"x\"\nB=1\n"),
        ];
        let l = crate::launch::parse_launch_files(&files, &Select::default()).expect("ok");
        assert_eq!(
            l.env.get("A").map(String::as_str),
            Some("\"x\""),
            "docker keeps quotes"
        );
        assert_eq!(l.env.get("B").map(String::as_str), Some("2"), "-e wins");
    }
}
