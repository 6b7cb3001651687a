//! The words before the program: assignments, `env [-i] [-u NAME]`, `sudo [-E]`, and
//! wrappers that run the command somewhere the script's environment does not reach.

use super::{assign_site, base_or_self};
use crate::launch::lex::Word;
use crate::launch::{EnvSite, Render, is_assignment};

/// What `sudo` keeps of the environment.
#[derive(Debug, Clone)]
pub(super) struct SudoKeeps {
    pub(super) names: Vec<String>,
}

impl SudoKeeps {
    pub(super) fn keeps(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
}

/// The words before the program: assignments (as env sites), `env` and `sudo`.
pub(super) struct Prefixes {
    pub(super) sites: Vec<EnvSite>,
    /// Where a new assignment goes (before the program, after `env`'s / `sudo`'s options).
    pub(super) insert_at: usize,
    /// A `sudo` without `-E` / `--preserve-env`: what it keeps.
    pub(super) sudo_resets: Option<SudoKeeps>,
    /// `env -i`.
    pub(super) cleared: bool,
    /// A wrapper that starts vLLM somewhere the script's environment does not reach (`ssh
    /// host`, `docker exec`, `su`): its words.
    pub(super) elsewhere: Option<String>,
}

/// Wrappers that run their command in another environment (another host, a container, a
/// login shell): variables set here never reach it.
pub(super) const ELSEWHERE: &[&str] =
    &["ssh", "docker", "podman", "kubectl", "oc", "su", "runuser"];

/// sudo's long options that take the next word as their value.
pub(super) const SUDO_LONG_VALUE: &[&str] = &[
    "--user",
    "--group",
    "--close-from",
    "--chdir",
    "--host",
    "--prompt",
    "--role",
    "--type",
    "--other-user",
    "--command-timeout",
];

/// sudo's short options that take a value (the rest of the word, or the next word).
pub(super) const SUDO_SHORT_VALUE: &[char] = &['u', 'g', 'C', 'D', 'h', 'p', 'r', 't', 'U', 'T'];

/// One sudo option word: (does it keep the whole environment, does it take the next word).
pub(super) fn sudo_option(v: &str) -> (bool, bool) {
    if let Some(long) = v.strip_prefix("--") {
        return (long == "preserve-env", SUDO_LONG_VALUE.contains(&v));
    }
    let cluster: Vec<char> = v.chars().skip(1).collect();
    let value_at = cluster.iter().position(|c| SUDO_SHORT_VALUE.contains(c));
    let flags = &cluster[..value_at.unwrap_or(cluster.len())];
    (
        flags.contains(&'E'),
        value_at.is_some_and(|p| p + 1 == cluster.len()),
    )
}

pub(super) fn prefixes(file: usize, words: &[Word], prog: usize) -> Prefixes {
    let mut out = Prefixes {
        sites: Vec::new(),
        insert_at: words[0].span.start,
        sudo_resets: None,
        cleared: false,
        elsewhere: None,
    };
    // Assignments are read at the very start and right after `env` / `sudo` and their options.
    let mut assigning = true;
    let mut k = 0;
    while k < prog {
        let w = &words[k];
        let removal = w.span.start..words[k + 1].span.start;
        if assigning && let Some(site) = assign_site(file, w, removal) {
            out.sites.push(site);
            k += 1;
            // A new assignment goes after the ones already written.
            out.insert_at = words[k.min(prog)].span.start;
            continue;
        }
        let base = base_or_self(&w.value);
        if base == "env" {
            k += 1;
            while k < prog && words[k].value.starts_with('-') {
                let v = words[k].value.as_str();
                match v {
                    "-i" | "-" | "--ignore-environment" => {
                        out.cleared = true;
                        out.sites.clear();
                    }
                    "-u" | "--unset" => {
                        if let Some(n) = words.get(k + 1).filter(|_| k + 1 < prog) {
                            out.sites
                                .push(unset_site(file, n, words[k].span.start..n.span.end));
                            k += 1;
                        }
                    }
                    _ => {
                        let name = v
                            .strip_prefix("--unset=")
                            .or_else(|| v.strip_prefix("-u").filter(|r| !r.is_empty()));
                        if let Some(name) = name {
                            let mut s = unset_site(file, &words[k], words[k].span.clone());
                            s.name = name.to_string();
                            out.sites.push(s);
                        }
                    }
                }
                k += 1;
            }
            out.insert_at = words[k.min(prog)].span.start;
            // `env -u A B=1 vllm`: new assignments go after B=1 (see the loop above).
            assigning = true;
            while k < prog && is_assignment(&words[k].value).is_some() {
                let removal = words[k].span.start..words[k + 1].span.start;
                if let Some(site) = assign_site(file, &words[k], removal) {
                    out.sites.push(site);
                }
                k += 1;
                out.insert_at = words[k.min(prog)].span.start;
            }
            continue;
        }
        if base == "sudo" {
            let mut preserve_all = false;
            let mut keep = Vec::new();
            k += 1;
            while k < prog && words[k].value.starts_with('-') {
                let v = words[k].value.as_str();
                let (preserve, takes) = sudo_option(v);
                preserve_all |= preserve;
                if let Some(list) = v.strip_prefix("--preserve-env=") {
                    keep.extend(list.split(',').map(str::to_string));
                }
                k += if takes { 2 } else { 1 };
            }
            if !preserve_all {
                // Assignments written before sudo are lost too.
                out.sudo_resets = Some(SudoKeeps { names: keep });
                out.sites.clear();
                out.insert_at = words[k.min(prog)].span.start;
            }
            assigning = true;
            continue;
        }
        if out.elsewhere.is_none() && ELSEWHERE.contains(&base) {
            let shown: Vec<&str> = words[k..prog].iter().map(|w| w.value.as_str()).collect();
            out.elsewhere = Some(shown.join(" "));
        }
        assigning = false;
        k += 1;
    }
    out
}

pub(super) fn unset_site(file: usize, w: &Word, removal: std::ops::Range<usize>) -> EnvSite {
    let mut s = EnvSite::new(
        file,
        &w.value,
        None,
        w.span.clone(),
        Render::ShellWord {
            prefix: String::new(),
        },
        removal,
        false,
        w.line,
    );
    s.unset = true;
    s
}
