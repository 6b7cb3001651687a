//! `docker run ... IMAGE ARGS` in a script: `-e`, `--env`, `--env-file`, and the image
//! arguments vLLM gets, with docker's own option parsing (spf13/pflag).

use super::args::{last_real, shell_arg_insert, shell_args};
use super::{Sh, base_or_self};
use crate::launch::lex::{SimpleCommand, Word};
use crate::launch::{
    EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Render, envfile, find_entrypoint,
    find_file, is_assignment,
};
use std::collections::BTreeMap;

impl<'a> Sh<'a> {
    pub(super) fn locate_docker(
        &mut self,
        file: usize,
        cmd: &SimpleCommand,
        words: &[Word],
        start: usize,
    ) -> Result<Located, LaunchError> {
        let text = self.text(file);
        let mut notes = std::mem::take(&mut self.notes);
        let exported: BTreeMap<String, EnvSite> = self
            .sites
            .iter()
            .filter(|s| self.exported.contains(&s.name))
            .map(|s| (s.name.clone(), s.clone()))
            .collect();
        if !exported.is_empty() {
            notes.push(
                "variables exported in the shell do not reach the container unless passed with \
                 -e; only the -e/--env options (and --env-file files) of `docker run` are used"
                    .to_string(),
            );
        }
        let mut env_file_sites = Vec::new();
        let mut env = Vec::new();
        let mut unread_env_files = Vec::new();
        let mut i = start;
        let mut image = None;
        while i < words.len() {
            let w = &words[i];
            let v = w.value.as_str();
            if !v.starts_with('-') || v == "-" {
                image = Some(i);
                break;
            }
            let (opt, inline) = match v.split_once('=') {
                Some((o, val)) if o.starts_with("--") => (o, Some(val)),
                _ => docker_short_option(v),
            };
            let takes_value = DOCKER_VALUE_OPTS.contains(&opt);
            let (value, value_word, next) = match (inline, takes_value) {
                (Some(val), _) => (Some(val.to_string()), i, i + 1),
                (None, true) => match words.get(i + 1) {
                    Some(n) => (Some(n.value.clone()), i + 1, i + 2),
                    None => (None, i, i + 1),
                },
                (None, false) => (None, i, i + 1),
            };
            if opt == "-e" || opt == "--env" {
                if let Some(val) = value {
                    let vw = &words[value_word];
                    let prefix = if value_word == i {
                        // Inline: the option text stays in front.
                        let raw = &text[vw.span.clone()];
                        let opt_len = v.len() - val.len();
                        raw.get(..opt_len).unwrap_or("").to_string()
                    } else {
                        String::new()
                    };
                    let removal = words[i - 1].span.end..vw.span.end;
                    let (name, value) = match is_assignment(&val) {
                        Some((n, v)) => (n.to_string(), Some(v.to_string())),
                        None => match exported.get(&val).and_then(|s| s.value.clone()) {
                            Some(from_shell) => {
                                notes.push(format!(
                                    "-e {val}: the container takes {val} from the shell that \
                                     runs docker, which sets it to {from_shell:?}"
                                ));
                                (val.clone(), Some(from_shell))
                            }
                            None => {
                                notes.push(format!(
                                    "-e {val}: the container takes {val} from the environment \
                                     that runs docker; its value is not in the command"
                                ));
                                (val.clone(), None)
                            }
                        },
                    };
                    env.push(EnvSite::new(
                        file,
                        &name,
                        value,
                        vw.span.clone(),
                        Render::ShellWord { prefix },
                        removal,
                        vw.dynamic,
                        vw.line,
                    ));
                }
            } else if opt == "--env-file" {
                let named = value.unwrap_or_default();
                match find_file(self.files, &named) {
                    Some(f) => {
                        self.used.insert(f);
                        let read = envfile::read(self.files, f, envfile::Dialect::Docker)?;
                        env_file_sites.extend(read.sites);
                        notes.extend(read.notes);
                    }
                    None => {
                        unread_env_files.push(format!(
                            "docker run --env-file {named} (line {}): that file was not given, so \
                             the variables it gives the container are not read (give it too: \
                             --launch-with {named})",
                            w.line
                        ));
                        notes.push(format!(
                            "--env-file {named}: variables in that file reach the container too; \
                             give it as well (--launch-with {named}) so they are read, or check \
                             it for {}",
                            crate::vllm::alloc_conf::VARS.join(" / ")
                        ))
                    }
                }
            }
            i = next;
        }
        let image = image.ok_or(LaunchError::NoVllmCommand)?;
        let rest = &words[image + 1..];
        let (args_start, entrypoint) = match find_entrypoint(rest) {
            Some((_, s, e)) => (image + 1 + s, e),
            None => (
                image + 1,
                format!("docker run {} (image entrypoint)", words[image].value),
            ),
        };
        let entry_end = words[args_start - 1].span.end;
        let mut args = shell_args(file, &words[args_start..], entry_end);
        let arg_vars = self.resolve_args(&mut args);
        let arg_insert = shell_arg_insert(
            file,
            text,
            cmd.line,
            last_real(text, &words[args_start..]),
            entry_end,
        );
        // `-e` wins over `--env-file`, whatever their order.
        let mut gaps = crate::launch::EnvGaps::default();
        for reason in unread_env_files {
            gaps.unread_before(reason, &env);
        }
        env_file_sites.extend(env);
        Ok(Located {
            form: Form::Docker,
            entrypoint: Some(entrypoint),
            env: env_file_sites,
            args,
            env_insert: Insert {
                file,
                offset: words[image].span.start,
                style: InsertStyle::DockerEnv,
            },
            arg_insert,
            notes,
            problems: std::mem::take(&mut self.problems),
            read_only: None,
            args_read_only: None,
            used_files: self.used.iter().copied().collect(),
            late_insert: None,
            gaps,
            shadowed: Vec::new(),
            frozen: Default::default(),
            arg_vars,
            peers: Vec::new(),
        })
    }
}

/// `docker run` / `podman run` / `docker container run`: index of the first word after `run`.
pub(super) fn find_docker(words: &[Word]) -> Option<usize> {
    words.iter().enumerate().find_map(|(i, w)| {
        let base = base_or_self(&w.value);
        if !matches!(base, "docker" | "podman" | "nvidia-docker") {
            return None;
        }
        match (
            words.get(i + 1).map(|w| w.value.as_str()),
            words.get(i + 2).map(|w| w.value.as_str()),
        ) {
            (Some("run"), _) => Some(i + 2),
            (Some("container"), Some("run")) => Some(i + 3),
            _ => None,
        }
    })
}

/// `docker run`'s one-letter options that take no value (`-d`, `-i`, `-t`, `-P`).
pub(super) const DOCKER_BOOL_SHORTS: &[char] = &['d', 'i', 't', 'P'];

/// A one-dash `docker run` word as docker's flag parser (spf13/pflag) reads it: the one-letter
/// option that takes a value and the value written into the word, if any. pflag's
/// `parseSingleShortArg` (flag.go, read at commit a750a0e7f1a5) takes `-e=VALUE` (the text after
/// `=`), `-eVALUE` (the rest of the word) or `-e VALUE` (the next word), and reads a cluster
/// letter by letter, so `-de=A=1` and `-itdeA=1` are `-d` (`-i`, `-t`) then `-e A=1`. A word of
/// value-less letters only (`-it`) comes back whole, with no value.
pub(super) fn docker_short_option(word: &str) -> (&str, Option<&str>) {
    let Some(letters) = word.strip_prefix('-').filter(|l| !l.starts_with('-')) else {
        return (word, None);
    };
    let skip = letters
        .char_indices()
        .find(|(_, c)| !DOCKER_BOOL_SHORTS.contains(c));
    let Some((at, c)) = skip else {
        return (word, None);
    };
    // The value-taking letter names the option (`-de…` is `-e`); a letter this table does not
    // know leaves the word as it is.
    let Some(opt) = DOCKER_VALUE_OPTS
        .iter()
        .copied()
        .find(|o| o.len() == 2 && o.ends_with(c))
    else {
        return (word, None);
    };
    let rest = &word[1 + at + c.len_utf8()..];
    let value = match rest.strip_prefix('=') {
        Some(v) if !v.is_empty() => Some(v),
        _ if rest.is_empty() => None,
        _ => Some(rest),
    };
    (opt, value)
}

/// `docker run` options that take a value (so the next word is not the image).
pub(super) const DOCKER_VALUE_OPTS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "-p",
    "--publish",
    "--name",
    "--gpus",
    "--ipc",
    "--shm-size",
    "--network",
    "--net",
    "--entrypoint",
    "-w",
    "--workdir",
    "--runtime",
    "-u",
    "--user",
    "--device",
    "--ulimit",
    "--mount",
    "-l",
    "--label",
    "--restart",
    "--cpus",
    "--memory",
    "-m",
    "--platform",
    "--pull",
    "--log-driver",
    "--log-opt",
    "-h",
    "--hostname",
    "--add-host",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--tmpfs",
    "--cidfile",
    "--cpuset-cpus",
    "--memory-swap",
    "--pid",
    "--uts",
    "--group-add",
    "--dns",
    "--expose",
    "--health-cmd",
    "--stop-signal",
    "--stop-timeout",
    "--volumes-from",
    "--link",
    "--label-file",
    "--cgroupns",
    "--userns",
    "--privileged-mode",
];

#[cfg(test)]
mod tests {
    #[test]
    fn docker_short_options_as_pflag_reads_them() {
        use super::docker_short_option as d;
        assert_eq!(d("-e=A=1"), ("-e", Some("A=1")));
        assert_eq!(d("-eA=1"), ("-e", Some("A=1")));
        assert_eq!(d("-e"), ("-e", None));
        assert_eq!(d("-de=A=1"), ("-e", Some("A=1")));
        assert_eq!(d("-itdeA=1"), ("-e", Some("A=1")));
        assert_eq!(d("-de"), ("-e", None));
        assert_eq!(d("-dp"), ("-p", None));
        assert_eq!(d("-p8000:8000"), ("-p", Some("8000:8000")));
        assert_eq!(d("-it"), ("-it", None));
        assert_eq!(d("--env"), ("--env", None));
        assert_eq!(d("-Z"), ("-Z", None));
    }
}
