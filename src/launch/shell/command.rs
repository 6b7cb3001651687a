//! The vLLM command the script runs, as a [`Located`]: its prefixes and arguments, the
//! variables the script gives them, and what a new assignment or argument cannot undo.

use super::args::{last_real, shell_arg_insert, shell_args};
use super::docker::find_docker;
use super::prefixes::prefixes;
use super::{ENGINE_PREFIXES, Expansion, Sh, export_line, referenced_names};
use crate::launch::lex::{self, Break, LineIndex, SimpleCommand, Word};
use crate::launch::{
    Arg, EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Problem, find_entrypoint,
};
use std::collections::{BTreeMap, BTreeSet};

impl<'a> Sh<'a> {
    /// The located launch at the vLLM command `cmd`.
    pub(super) fn located_at(
        &mut self,
        file: usize,
        cmd: &SimpleCommand,
        words: &[Word],
    ) -> Result<Located, LaunchError> {
        self.used.insert(file);
        let env: Vec<EnvSite> = self
            .sites
            .iter()
            .filter(|s| s.unset || self.exported.contains(&s.name))
            .cloned()
            .map(|mut s| {
                s.conditional = self.uncertain.contains(&s.name);
                s
            })
            .collect();
        self.report_unexported(file, cmd);
        // `vllm serve m{,}`: bash makes several words of one; reading it as one would misread
        // the model and flags, and an edit would not see the words the engine gets.
        let text = self.text(file);
        if let Some(w) = words
            .iter()
            .find(|w| lex::brace_expansion(&text[w.span.clone()]).is_some())
        {
            let raw = &text[w.span.clone()];
            let at = w.span.start + lex::brace_expansion(raw).unwrap_or(0);
            let li = LineIndex::new(text);
            return Err(LaunchError::syntax(
                file,
                li.line(at),
                li.col(text, at),
                format!(
                    "`{raw}` is a brace expansion: bash makes several words of it (`m{{,}}` is \
                     `m m`), which this tool does not model; write the words out"
                ),
            ));
        }
        if let Some(start) = find_docker(words) {
            return self.locate_docker(file, cmd, words, start);
        }
        let Some((prog, args_start, entrypoint)) = find_entrypoint(words) else {
            return Err(LaunchError::NoVllmCommand);
        };
        Ok(self.locate_command(file, cmd, words, (prog, args_start, entrypoint), env))
    }

    /// Assignments that never reach the engine because nothing exports them.
    pub(super) fn report_unexported(&mut self, file: usize, cmd: &SimpleCommand) {
        let referenced = referenced_names(self.files, &self.used);
        let mut seen = BTreeSet::new();
        let bare: Vec<usize> = self.bare.iter().rev().copied().collect();
        for i in bare {
            let s = &self.sites[i];
            if self.exported.contains(&s.name) || !seen.insert(s.name.clone()) {
                continue;
            }
            let engine_like = ENGINE_PREFIXES.iter().any(|p| s.name.starts_with(p));
            let brk = self.after_break_of(s);
            if !engine_like && referenced.contains(&s.name) && brk.is_none() {
                continue;
            }
            let why = match &brk {
                Some(b) => format!(
                    " (on line {}, {}: this assignment is a command of its own, not part of the \
                     `export` above)",
                    b.line,
                    b.explain()
                ),
                None => String::new(),
            };
            let message = format!(
                "{}={} sets a shell variable that is never exported, so the vLLM command on line \
                 {}{} never sees it; write `export {}=…` (or run `set -a` before it){why}",
                s.name,
                s.value.as_deref().unwrap_or(""),
                cmd.line,
                if s.file == file {
                    String::new()
                } else {
                    format!(" of {}", self.files[file].name)
                },
                s.name
            );
            self.problems.push(Problem {
                file: s.file,
                line: s.line,
                message,
            });
        }
    }

    pub(super) fn after_break_of(&self, site: &EnvSite) -> Option<Break> {
        let cmds = self.commands(site.file);
        let k = cmds
            .iter()
            .position(|c| c.span.start <= site.span.start && site.span.end <= c.span.end)?;
        self.after_break.get(&(site.file, k)).cloned()
    }

    pub(super) fn locate_command(
        &mut self,
        file: usize,
        cmd: &SimpleCommand,
        words: &[Word],
        (prog, args_start, entrypoint): (usize, usize, String),
        mut env: Vec<EnvSite>,
    ) -> Located {
        let text = self.text(file);
        let prefix = prefixes(file, words, prog);
        let mut problems = Vec::new();
        if let Some(sudo) = &prefix.sudo_resets {
            // sudo's env_reset drops what the script exported; only its own assignments pass.
            let lost: Vec<String> = env
                .iter()
                .filter(|s| !s.unset && !sudo.keeps(&s.name))
                .map(|s| s.name.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if !lost.is_empty() {
                problems.push(Problem {
                    file,
                    line: cmd.line,
                    message: format!(
                        "sudo resets the environment (env_reset, its default), so {} set before \
                         it do not reach vLLM; run `sudo -E …` or `sudo --preserve-env={} …`, or \
                         put the assignments after sudo",
                        lost.join(", "),
                        lost.join(",")
                    ),
                });
            }
            env.retain(|s| s.unset || sudo.keeps(&s.name));
        }
        if prefix.cleared {
            self.notes.push(format!(
                "line {}: `env -i` starts vLLM with an empty environment: only the variables \
                 after it reach the engine",
                cmd.line
            ));
            env.clear();
        }
        let had_prefix = !prefix.sites.is_empty();
        let mut gaps = crate::launch::EnvGaps::default();
        if !prefix.cleared {
            for (reason, at) in &self.unread {
                let mut except: Vec<String> = self.sites[*at..]
                    .iter()
                    .chain(prefix.sites.iter())
                    .map(|s| s.name.clone())
                    .collect();
                except.sort();
                except.dedup();
                gaps.unread.push(crate::snapshot::UnreadEnv {
                    reason: reason.clone(),
                    except,
                });
            }
        }
        env.extend(prefix.sites);
        let export_insert = match &self.last_export {
            Some((efile, span))
                if !had_prefix
                    && prefix.sudo_resets.is_none()
                    && !prefix.cleared
                    && (*efile != file || span.end < cmd.span.start) =>
            {
                Some(export_line(self.text(*efile), *efile, span))
            }
            _ => None,
        };
        let prefix_insert = Insert {
            file,
            offset: prefix.insert_at,
            style: InsertStyle::ShellPrefix,
        };
        let env_insert = export_insert.unwrap_or(prefix_insert.clone());
        let entry_end = words[args_start - 1].span.end;
        let mut args = shell_args(file, &words[args_start..], entry_end);
        let arg_vars = self.resolve_args(&mut args);
        let arg_insert = shell_arg_insert(
            file,
            text,
            words[prog].line,
            last_real(text, &words[args_start..]),
            entry_end,
        );
        let read_only = prefix.elsewhere.as_ref().map(|w| {
            format!(
                "line {}: vLLM runs through `{w}`, which starts it in another environment (another \
                 host, container or login): neither the script's variables nor a prefix reach \
                 it, and its arguments are read again by a shell there; edit the command where \
                 it runs",
                cmd.line
            )
        });
        if let Some(why) = &read_only {
            self.notes.push(why.clone());
        }
        self.problems.extend(problems);
        Located {
            form: Form::Shell,
            entrypoint: Some(entrypoint),
            env,
            args,
            env_insert,
            arg_insert,
            notes: std::mem::take(&mut self.notes),
            problems: std::mem::take(&mut self.problems),
            read_only,
            args_read_only: None,
            used_files: self.used.iter().copied().collect(),
            late_insert: Some(prefix_insert),
            gaps,
            shadowed: self.shadowed(),
            frozen: self.frozen(),
            arg_vars,
            peers: Vec::new(),
        }
    }

    /// The script's variables at the command: a literal value, or `None` when it is not known
    /// (an expansion, set inside a compound command, unset).
    pub(super) fn shell_vars(&self) -> BTreeMap<String, Option<&EnvSite>> {
        let mut vars = BTreeMap::new();
        for s in &self.sites {
            let known = !s.unset && !s.dynamic && !self.uncertain.contains(&s.name);
            vars.insert(
                s.name.clone(),
                Some(s).filter(|s| known && s.value.is_some()),
            );
        }
        vars
    }

    /// Arguments that are one variable the script sets (`TP=2` … `--tensor-parallel-size
    /// $TP`, `${TP:-2}`) take its value, as bash expands them; the rest stay expansions.
    pub(super) fn resolve_args(&mut self, args: &mut [Arg]) -> BTreeMap<usize, EnvSite> {
        let vars = self.shell_vars();
        let mut from = BTreeMap::new();
        let mut notes = Vec::new();
        for (i, a) in args.iter_mut().enumerate().filter(|(_, a)| a.dynamic) {
            // The word as written is the expansion alone (`"$A"_b` reads as `$A_b` otherwise).
            let raw = &self.text(a.file)[a.span.clone()];
            let bare = raw
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .unwrap_or(raw);
            if bare != a.value {
                continue;
            }
            let Some(expansion) = Expansion::of(&a.value) else {
                continue;
            };
            let value = match vars.get(expansion.name) {
                Some(Some(site)) => {
                    let v = site.value.clone().unwrap_or_default();
                    match expansion.default {
                        Some((default, empty_counts)) if empty_counts && v.is_empty() => {
                            default.to_string()
                        }
                        _ => {
                            from.insert(i, (*site).clone());
                            v
                        }
                    }
                }
                Some(None) => continue,
                None => match expansion.default {
                    Some((default, _)) => {
                        notes.push(format!(
                            "line {}: {} is read as {default:?}: the script does not set {}, so \
                             the default applies unless the environment that runs it sets {}",
                            a.line, a.value, expansion.name, expansion.name
                        ));
                        default.to_string()
                    }
                    None => continue,
                },
            };
            // Unquoted, bash splits the value into words and globs them: one word only when
            // it holds no blank or pattern character (and is not empty).
            let quoted = raw.starts_with('"');
            if !quoted && (value.is_empty() || value.contains([' ', '\t', '\n', '*', '?', '['])) {
                from.remove(&i);
                continue;
            }
            a.value = value;
            a.dynamic = false;
        }
        self.notes.extend(notes);
        from
    }

    /// `readonly` names, with why a new assignment of them does not work.
    pub(super) fn frozen(&self) -> BTreeMap<String, String> {
        self.readonly
            .iter()
            .map(|(name, line)| {
                (
                    name.clone(),
                    format!(
                        "{name} is readonly (line {line}): bash refuses any later assignment of \
                         it (an added `export` or `{name}=… vllm` fails with \"readonly \
                         variable\"); change line {line} by hand (`export {name}=…` then \
                         `readonly {name}`)"
                    ),
                )
            })
            .collect()
    }

    /// Names assigned without export, or unset, so far.
    pub(super) fn shadowed(&self) -> Vec<String> {
        let mut out: BTreeSet<String> = self
            .bare
            .iter()
            .map(|&i| &self.sites[i])
            .filter(|s| !self.exported.contains(&s.name))
            .map(|s| s.name.clone())
            .collect();
        out.extend(
            self.sites
                .iter()
                .filter(|s| s.unset)
                .map(|s| s.name.clone()),
        );
        out.extend(self.uncertain.iter().cloned());
        out.into_iter().collect()
    }
}
