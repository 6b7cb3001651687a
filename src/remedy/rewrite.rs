//! Apply one knowledge-base [`Edit`] to a launch through the byte spans of
//! [`crate::launch::Located`]: every byte outside the edited words stays as the user wrote it, in
//! every file the launch is read from (a script and the file it sources, a compose file and its
//! `.env`, a unit and its `EnvironmentFile=`).
//!
//! Each edit locates the launch, splices, locates the result again and checks that the edit holds
//! there and that nothing else moved (other variables, the arguments, the entrypoint, the files
//! read, the problems found); a failed check is an error, never a silent change. This is the one
//! rewriter: it decides what changes and where, and each form writes its own words
//! ([`crate::launch::render`]: [`Render`], [`InsertStyle`]).

use crate::kb::KnowledgeBase;
use crate::kb::schema::{AllocatorText, Edit, SpannedStr, fill_text};
use crate::launch::render::{self, RenderError};
use crate::launch::{
    self, EnvSite, Insert, InsertStyle, LaunchError, Located, Render, Select, SourceFile,
    YamlQuote, flag_uses, shell,
};
use crate::snapshot::EngineEnv;
use crate::vllm::alloc_conf::{self, Precedence, Switch};
use crate::vllm::flags::{self, long_name};
use std::ops::Range;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FixError {
    #[error("{0}")]
    Launch(#[from] LaunchError),
    #[error("cannot rewrite this launch: {0}")]
    ReadOnly(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("internal check failed after the edit (nothing written): {0}")]
    Verify(String),
}

/// The result of one edit on a one-file launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub text: String,
    pub notes: Vec<String>,
}

/// The result of one edit on a launch read from several files (`texts[i]` for `files[i]`).
#[derive(Debug, Clone, PartialEq)]
pub struct FilesStep {
    pub texts: Vec<String>,
    pub notes: Vec<String>,
}

/// A text replacement in one file.
#[derive(Debug, Clone, PartialEq)]
struct Splice {
    file: usize,
    range: Range<usize>,
    text: String,
}

fn splice(text: &str, range: &Range<usize>, new: &str) -> String {
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..range.start]);
    out.push_str(new);
    out.push_str(&text[range.end..]);
    out
}

/// Quote a word for bash (POSIX-safe; shlex 2 rejects NUL bytes).
pub(crate) fn shell_quote(v: &str) -> Result<String, FixError> {
    shell::render::quote(v).map_err(FixError::Unsupported)
}

/// Quote `new` the way `raw` (the old value as written) was quoted when that is still safe.
fn quote_like(raw: &str, new: &str) -> Result<String, FixError> {
    shell::render::quote_like(raw, new).map_err(FixError::Unsupported)
}

impl From<RenderError> for FixError {
    fn from(e: RenderError) -> Self {
        match e {
            RenderError::Unsupported(why) => FixError::Unsupported(why),
            RenderError::Mismatch(what) => FixError::Verify(what),
        }
    }
}

/// How a word (an argument) is rendered in this launch's form.
fn render_word(render: &Render, v: &str) -> Result<String, FixError> {
    Ok(render::word(render, v)?)
}

/// New text for an existing environment site.
fn render_env(
    files: &[String],
    site: &EnvSite,
    name: &str,
    value: &str,
) -> Result<String, FixError> {
    let raw = &files[site.file][site.span.clone()];
    Ok(render::assignment(&site.render, raw, name, value)?)
}

/// Text to insert for a new environment assignment.
fn insert_env(
    files: &[String],
    loc: &Located,
    name: &str,
    value: &str,
) -> Result<Splice, FixError> {
    if let Some(why) = loc.frozen.get(name) {
        // `readonly NAME`: bash refuses `NAME=… vllm` and `export NAME=…`, but `env` is a
        // program of its own, so `env NAME=… vllm` gives the engine the new value.
        // A builtin before the program (`exec vllm`) runs it itself: `env` goes after it.
        return match &loc.late_insert {
            Some(Insert {
                file,
                offset,
                style: InsertStyle::ShellPrefix,
            }) => {
                let text = &files[*file];
                let mut at = *offset;
                while let Some(rest) = ["exec", "command"]
                    .iter()
                    .find_map(|b| text.get(at..)?.strip_prefix(b))
                    .filter(|r| r.starts_with([' ', '\t']))
                {
                    at = text.len() - rest.trim_start_matches([' ', '\t']).len();
                }
                if text.get(at..).is_none_or(|r| r.starts_with('-')) {
                    return Err(FixError::Unsupported(why.clone()));
                }
                Ok(Splice {
                    file: *file,
                    range: at..at,
                    text: shell::render::env_prefix(name, value).map_err(FixError::Unsupported)?,
                })
            }
            _ => Err(FixError::Unsupported(why.clone())),
        };
    }
    // A name the script sets later without exporting it (or unsets) would undo a new export
    // line: it goes on the command itself.
    let at = match &loc.late_insert {
        Some(late) if loc.shadowed.iter().any(|n| n == name) => late,
        _ => &loc.env_insert,
    };
    let Insert {
        file,
        offset,
        style,
    } = at;
    Ok(Splice {
        file: *file,
        range: *offset..*offset,
        text: render::env_insert(
            style,
            files.get(*file).map_or("", String::as_str),
            name,
            value,
        )?,
    })
}

/// Text to append new argument words.
fn insert_args(loc: &Located, words: &[String]) -> Result<Splice, FixError> {
    let Insert {
        file,
        offset,
        style,
    } = &loc.arg_insert;
    Ok(Splice {
        file: *file,
        range: *offset..*offset,
        text: render::args_insert(style, words)?,
    })
}

/// Apply one edit to a one-file launch. `remedy` names the remedy in notes; `kb` gives the
/// allocator precedence rule and the sentences that explain an allocator edit.
pub fn apply_edit(
    text: &str,
    remedy: &str,
    edit: &Edit,
    kb: &KnowledgeBase,
) -> Result<Step, FixError> {
    let files = [SourceFile::new("launch", text)];
    let step = apply_edit_files(&files, &Select::default(), remedy, edit, kb)?;
    Ok(Step {
        text: step.texts.into_iter().next().unwrap_or_default(),
        notes: step.notes,
    })
}

/// Apply one edit to a launch read from `files` (`files[0]` the main one).
pub fn apply_edit_files(
    files: &[SourceFile],
    select: &Select,
    remedy: &str,
    edit: &Edit,
    kb: &KnowledgeBase,
) -> Result<FilesStep, FixError> {
    let loc = launch::locate_files(files, select)?;
    if let Some(reason) = &loc.read_only
        && !matches!(edit, Edit::PatchScript { .. } | Edit::Manual { .. })
    {
        return Err(FixError::ReadOnly(reason.clone()));
    }
    if let Some(reason) = &loc.args_read_only
        && matches!(
            edit,
            Edit::AddFlag { .. } | Edit::RemoveFlag { .. } | Edit::SetCompilationConfig { .. }
        )
    {
        return Err(FixError::ReadOnly(reason.clone()));
    }
    let texts: Vec<String> = files.iter().map(|f| f.text.clone()).collect();
    let mut notes = Vec::new();
    // The same environment edit in each peer container (a LeaderWorkerSet's worker template):
    // its processes are vLLM's too and read only their own pod's environment.
    let mut peer_splices = Vec::new();
    let env_edit = matches!(
        edit,
        Edit::SetEnv { .. } | Edit::UnsetEnv { .. } | Edit::DropAllocOption { .. }
    );
    for peer in loc.peers.iter().filter(|_| env_edit) {
        let mut peer_notes = Vec::new();
        peer_splices.extend(match edit {
            Edit::SetEnv { name, value } => set_env(&texts, peer, name, value, &mut peer_notes)?,
            Edit::UnsetEnv { name } => unset_env(peer, name, &mut peer_notes)?,
            Edit::DropAllocOption { option } => drop_alloc_option(
                &texts,
                peer,
                option,
                (&kb.allocator, Precedence::default()),
                &mut peer_notes,
            )?,
            _ => Vec::new(),
        });
        for n in peer_notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    if !peer_splices.is_empty() {
        notes.push(format!(
            "the same change is made in {}: {}",
            if loc.peers.len() == 1 {
                "the other pod template's container"
            } else {
                "the other pod templates' containers"
            },
            loc.peers
                .iter()
                .filter_map(|p| p.entrypoint.clone())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let splices: Vec<Splice> = match edit {
        Edit::SetEnv { name, value } => set_env(&texts, &loc, name, value, &mut notes)?,
        Edit::UnsetEnv { name } => unset_env(&loc, name, &mut notes)?,
        Edit::DropAllocOption { option } => drop_alloc_option(
            &texts,
            &loc,
            option,
            (&kb.allocator, Precedence::default()),
            &mut notes,
        )?,
        Edit::AddFlag { flag, value } => {
            add_flag(&texts, &loc, flag, value.as_deref(), &mut notes)?
        }
        Edit::RemoveFlag { flag } => remove_flag(&loc, flag, &mut notes),
        Edit::SetCompilationConfig { key, value } => {
            set_compilation_config(&texts, &loc, key, value, &mut notes)?
        }
        Edit::PatchScript { pr } => {
            notes.push(format!(
                "{remedy}: this remedy patches vLLM itself, not the launch; generate the script \
                 with `sm120-doctor patch-script --pr {pr} -o apply-pr-{pr}.sh`, read it, then \
                 run it (dry-run by default, --apply to apply)"
            ));
            Vec::new()
        }
        Edit::Manual { text: t } => {
            notes.push(format!("{remedy}: a step to do by hand: {t}"));
            Vec::new()
        }
    };
    // Splices never overlap; apply each file's from the end so earlier offsets stay valid.
    let mut ordered = splices;
    ordered.extend(peer_splices);
    ordered.sort_by_key(|s| (s.file, std::cmp::Reverse(s.range.start)));
    ordered.dedup();
    for w in ordered.windows(2) {
        if w[0].file == w[1].file && w[1].range.end > w[0].range.start {
            return Err(FixError::Verify(format!(
                "two edits overlap at bytes {:?} and {:?}",
                w[1].range, w[0].range
            )));
        }
    }
    let mut out = texts.clone();
    for s in &ordered {
        out[s.file] = splice(&out[s.file], &s.range, &s.text);
    }
    if out != texts {
        let after_files: Vec<SourceFile> = files
            .iter()
            .zip(&out)
            .map(|(f, t)| SourceFile::new(f.name.clone(), t.clone()))
            .collect();
        let after = launch::locate_files(&after_files, select)
            .map_err(|e| FixError::Verify(format!("the result does not parse: {e}")))?;
        verify(&loc, &after, edit, Precedence::default())?;
        if after.peers.len() != loc.peers.len() {
            return Err(FixError::Verify("the pod templates changed".into()));
        }
        for (b, a) in loc.peers.iter().zip(&after.peers).filter(|_| env_edit) {
            verify(b, a, edit, Precedence::default())?;
        }
    }
    Ok(FilesStep { texts: out, notes })
}

fn caveat(site: &EnvSite, notes: &mut Vec<String>) {
    if let Some(c) = &site.caveat {
        notes.push(c.clone());
    }
}

fn set_env(
    texts: &[String],
    loc: &Located,
    name: &str,
    value: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    match loc.env_site(name) {
        Some(site) if site.conditional && loc.late_insert.is_some() => {
            notes.push(conditional_note(site));
            Ok(vec![insert_env(texts, loc, name, value)?])
        }
        Some(site) if site.shared.is_some() && site.value.as_deref() != Some(value) => {
            notes.extend(site.shared.clone());
            Ok(vec![insert_env(texts, loc, name, value)?])
        }
        Some(site) if site.value.as_deref() == Some(value) && !site.dynamic => {
            notes.push(format!("{name} is already {value} (line {})", site.line));
            Ok(Vec::new())
        }
        Some(site) => {
            caveat(site, notes);
            Ok(vec![Splice {
                file: site.file,
                range: site.span.clone(),
                text: render_env(texts, site, name, value)?,
            }])
        }
        None => Ok(vec![insert_env(texts, loc, name, value)?]),
    }
}

fn conditional_note(site: &EnvSite) -> String {
    format!(
        "{} is set (or exported) on line {} inside a compound command that may not run: the \
         new value goes on the vLLM command itself, where it always applies",
        site.name, site.line
    )
}

fn unset_env(loc: &Located, name: &str, notes: &mut Vec<String>) -> Result<Vec<Splice>, FixError> {
    let sites: Vec<&EnvSite> = loc
        .env
        .iter()
        .filter(|s| s.name == name && !s.unset)
        .collect();
    // Removing a shared assignment would change the other launches that read it too.
    if let Some(s) = sites.iter().find(|s| s.shared.is_some()) {
        return Err(FixError::Unsupported(format!(
            "{name} is set on line {} in a place other launches read too, so removing it there \
             would change them as well; remove it by hand, or set it in this launch's own list",
            s.line
        )));
    }
    if sites.is_empty() || loc.env_site(name).is_none() {
        notes.push(match loc.form.engine_env() {
            EngineEnv::Inherited => format!(
                "{name} is not set by this command; if the environment that runs it sets it, \
                 start it with `env -u {name}` or `unset {name}` first"
            ),
            EngineEnv::Container => format!(
                "{name} is not set by this launch; the container gets no variable from the host \
                 but those the launch names, so only the image could set it"
            ),
            EngineEnv::Unit => format!(
                "{name} is not set by this unit; only the service manager's environment could \
                 set it (`systemctl show-environment`; `UnsetEnvironment={name}` removes it)"
            ),
        });
    }
    for s in &sites {
        if s.file != s.removal_file {
            notes.push(format!(
                "dropped the {name} item; the variable it read is left as it is"
            ));
        }
    }
    Ok(sites
        .iter()
        .map(|s| Splice {
            file: s.removal_file,
            range: s.removal.clone(),
            text: String::new(),
        })
        .collect())
}

/// The allocator assignment in effect in a launch, by `precedence`: (variable, site).
fn alloc_site(loc: &Located, precedence: Precedence) -> Option<(&'static str, &EnvSite)> {
    precedence
        .resolve(|var| Ok::<_, ()>(loc.env_site(var)))
        .ok()
        .flatten()
}

fn drop_alloc_option(
    texts: &[String],
    loc: &Located,
    option: &str,
    (sentences, precedence): (&AllocatorText, Precedence),
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    let n = &sentences.fix_notes;
    let say = |t: &SpannedStr, vars: &[(&str, &str)]| fill_text(&t.value, vars);
    let first = precedence.order()[0];
    let Some((name, site)) = alloc_site(loc, precedence) else {
        let value = alloc_conf::set_option("", option, alloc_conf::FALSE);
        notes.push(say(
            &n.not_in_launch,
            &[("option", option), ("value", &value)],
        ));
        return Ok(vec![insert_env(texts, loc, first, &value)?]);
    };
    let line = site.line.to_string();
    if site.dynamic {
        return Err(FixError::Unsupported(say(
            &n.dynamic,
            &[("line", &line), ("name", name), ("option", option)],
        )));
    }
    let Some(current) = &site.value else {
        // docker `-e NAME`: the value comes from the caller's environment.
        let value = alloc_conf::set_option("", option, alloc_conf::FALSE);
        notes.push(say(
            &n.passed_through,
            &[("line", &line), ("name", name), ("value", &value)],
        ));
        return Ok(vec![Splice {
            file: site.file,
            range: site.span.clone(),
            text: render_env(texts, site, name, &value)?,
        }]);
    };
    let why = if name == first {
        n.cuda_in_effect.value.as_str()
    } else {
        n.generic_in_effect.value.as_str()
    };
    let switch = alloc_conf::switch(current, option);
    let Some(new) = alloc_conf::drop_option(current, option) else {
        notes.push(say(
            &n.nothing_to_drop,
            &[
                ("line", &line),
                ("name", name),
                ("current", current),
                ("option", option),
                ("why", why),
            ],
        ));
        return Ok(Vec::new());
    };
    match &switch {
        Switch::Invalid(value) => notes.push(say(
            &n.dropped_invalid,
            &[
                ("line", &line),
                ("option", option),
                ("value", value),
                ("name", name),
                ("why", why),
            ],
        )),
        _ => notes.push(say(
            &n.dropped,
            &[
                ("line", &line),
                ("option", option),
                ("name", name),
                ("why", why),
            ],
        )),
    }
    let ignored = precedence.ignored_while(name);
    if !new.is_empty() {
        notes.push(say(&n.kept, &[("kept", &new)]));
    } else if !ignored.is_empty() {
        notes.push(say(&n.left_empty, &[]));
    }
    for o in ignored.iter().filter_map(|v| loc.env_site(v)) {
        if o.value
            .as_deref()
            .is_some_and(|v| alloc_conf::switch(v, option).is_on())
        {
            notes.push(say(
                &n.masked_also_on,
                &[("line", &o.line.to_string()), ("option", option)],
            ));
        }
    }
    if site.conditional && loc.late_insert.is_some() {
        notes.push(conditional_note(site));
        return Ok(vec![insert_env(texts, loc, name, &new)?]);
    }
    if let Some(why) = &site.shared {
        notes.push(why.clone());
        return Ok(vec![insert_env(texts, loc, name, &new)?]);
    }
    caveat(site, notes);
    Ok(vec![Splice {
        file: site.file,
        range: site.span.clone(),
        text: render_env(texts, site, name, &new)?,
    }])
}

/// Replace the value of a flag use (inline or separate word).
fn replace_flag_value(
    texts: &[String],
    loc: &Located,
    f: &launch::FlagUse,
    value: &str,
) -> Result<Splice, FixError> {
    let idx = f.value_index.unwrap_or(f.index);
    let arg = &loc.args[idx];
    // `TP=2` … `--tensor-parallel-size $TP`: the assignment changes, when nothing else reads it.
    if let Some(site) = loc.arg_vars.get(&idx).filter(|_| !f.inline)
        && references(texts, &site.name) == 1
    {
        return Ok(Splice {
            file: site.file,
            range: site.span.clone(),
            text: render_env(texts, site, &site.name, value)?,
        });
    }
    let raw = &texts[arg.file][arg.span.clone()];
    let new = if f.inline {
        let word = &arg.value;
        let head = word.split_once('=').map_or(word.as_str(), |(h, _)| h);
        match (&arg.render, raw.split_once('=')) {
            (Render::ShellWord { .. }, Some((raw_head, raw_value))) if raw_head == head => {
                format!("{head}={}", quote_like(raw_value, value)?)
            }
            (r, _) => render_word(r, &format!("{head}={value}"))?,
        }
    } else {
        match &arg.render {
            Render::ShellWord { .. } => quote_like(raw, value)?,
            r => render_word(r, value)?,
        }
    };
    Ok(Splice {
        file: arg.file,
        range: arg.span.clone(),
        text: new,
    })
}

/// How many times the texts expand `name` (`$NAME`, `${NAME…}`).
fn references(texts: &[String], name: &str) -> usize {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    texts
        .iter()
        .map(|t| {
            let plain = t
                .match_indices(&format!("${name}"))
                .filter(|(at, m)| !t[at + m.len()..].starts_with(name_char))
                .count();
            let braced = t
                .match_indices(&format!("${{{name}"))
                .filter(|(at, m)| !t[at + m.len()..].starts_with(name_char))
                .count();
            plain + braced
        })
        .sum()
}

fn add_flag(
    texts: &[String],
    loc: &Located,
    flag: &str,
    value: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    let name = long_name(flag);
    let (uses, _) = flag_uses(&loc.arg_values());
    if let Some(f) = uses.iter().rev().find(|f| f.name == name) {
        let line = loc.args[f.index].line;
        if f.negated && value.is_none() {
            // The last word is `--no-X`: it wins, so it becomes `--X` (argparse's last-wins).
            notes.push(format!("--no-{name} (line {line}) becomes {flag}"));
            let word = launch::FlagUse {
                inline: false,
                value_index: None,
                ..f.clone()
            };
            return Ok(vec![replace_flag_value(texts, loc, &word, flag)?]);
        }
        return match value {
            None if flags::is_on(&f.value) => {
                notes.push(format!("{flag} is already given (line {line})"));
                Ok(Vec::new())
            }
            None => Err(FixError::Unsupported(format!(
                "line {line}: {flag} is given with the value {:?}; set it by hand",
                f.value
            ))),
            Some(v) if v == f.value => {
                notes.push(format!("{flag} is already {v} (line {line})"));
                Ok(Vec::new())
            }
            Some(v) => Ok(vec![replace_flag_value(texts, loc, f, v)?]),
        };
    }
    let mut words = vec![flag.to_string()];
    words.extend(value.map(str::to_string));
    Ok(vec![insert_args(loc, &words)?])
}

fn remove_flag(loc: &Located, flag: &str, notes: &mut Vec<String>) -> Vec<Splice> {
    let name = long_name(flag);
    let (uses, _) = flag_uses(&loc.arg_values());
    let hits: Vec<_> = uses.iter().filter(|f| f.name == name).collect();
    if hits.is_empty() {
        notes.push(format!("{flag} is not given; nothing to remove"));
    }
    hits.iter()
        .map(|f| {
            let last = f.value_index.unwrap_or(f.index);
            Splice {
                file: loc.args[f.index].file,
                range: loc.args[f.index].removal.start..loc.args[last].removal.end,
                text: String::new(),
            }
        })
        .collect()
}

/// Set `key` in a JSON object text, keeping the rest of the text as written where possible.
pub(crate) fn set_json_key(
    json: &str,
    key: &str,
    value: &serde_json::Value,
) -> Result<String, String> {
    let parsed: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not valid JSON: {e}"))?;
    let Some(obj) = parsed.as_object() else {
        return Err("not a JSON object".into());
    };
    let lit = serde_json::to_string(value).map_err(|e| e.to_string())?;
    let key_lit = serde_json::to_string(key).map_err(|e| e.to_string())?;
    let check = |candidate: &str| -> bool {
        let Ok(serde_json::Value::Object(new)) =
            serde_json::from_str::<serde_json::Value>(candidate)
        else {
            return false;
        };
        let mut expect = obj.clone();
        expect.insert(key.to_string(), value.clone());
        new == expect
    };
    let candidate = if obj.contains_key(key) {
        // Replace the value after `"key":` when it is a plain string or scalar.
        let pat = format!(
            r#"{}(\s*:\s*)("(?:[^"\\]|\\.)*"|-?[0-9.eE+]+|true|false|null)"#,
            regex::escape(&key_lit)
        );
        regex::Regex::new(&pat).ok().and_then(|re| {
            re.captures(json).map(|c| {
                let whole = c.get(0).map_or(0..0, |m| m.range());
                let sep = c.get(1).map_or("", |m| m.as_str());
                format!(
                    "{}{key_lit}{sep}{lit}{}",
                    &json[..whole.start],
                    &json[whole.end..]
                )
            })
        })
    } else {
        json.find('{').map(|open| {
            let rest = json[open + 1..].trim_start();
            let sep = if rest.starts_with('}') { "" } else { ", " };
            format!(
                "{}{key_lit}: {lit}{sep}{}",
                &json[..=open],
                &json[open + 1..]
            )
        })
    };
    match candidate {
        Some(c) if check(&c) => Ok(c),
        _ => {
            let mut m = obj.clone();
            m.insert(key.to_string(), value.clone());
            serde_json::to_string(&m).map_err(|e| e.to_string())
        }
    }
}

fn set_compilation_config(
    texts: &[String],
    loc: &Located,
    key: &str,
    value: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    let (uses, _) = flag_uses(&loc.arg_values());
    let norm = |k: &str| k.replace('-', "_");
    let dotted = uses
        .iter()
        .rev()
        .find(|f| flags::compilation_config_key(&f.name).is_some_and(|t| t == norm(key)));
    if let Some(f) = dotted {
        if f.value == value {
            notes.push(format!("compilation config {key} is already {value}"));
            return Ok(Vec::new());
        }
        return Ok(vec![replace_flag_value(texts, loc, f, value)?]);
    }
    let json_value = serde_json::Value::String(value.to_string());
    if let Some(f) = uses
        .iter()
        .rev()
        .find(|f| f.name == flags::COMPILATION_CONFIG)
    {
        let line = loc.args[f.index].line;
        if !f.value.trim_start().starts_with('{') {
            return Err(FixError::Unsupported(format!(
                "line {line}: the compilation config {:?} is not a JSON object; add \
                 \"{key}\": \"{value}\" to it by hand",
                f.value
            )));
        }
        let current: serde_json::Value = serde_json::from_str(&f.value).map_err(|e| {
            FixError::Unsupported(format!(
                "line {line}: compilation config is not valid JSON: {e}"
            ))
        })?;
        if current.get(key) == Some(&json_value) {
            notes.push(format!(
                "compilation config {key} is already {value} (line {line})"
            ));
            return Ok(Vec::new());
        }
        let new = set_json_key(&f.value, key, &json_value).map_err(FixError::Unsupported)?;
        notes.push(format!(
            "line {line}: merged \"{key}\": \"{value}\" into the compilation config"
        ));
        return Ok(vec![replace_flag_value(texts, loc, f, &new)?]);
    }
    // A plain YAML string cannot hold `: `; everywhere else the usual spacing is kept.
    let obj = if loc.arg_insert.style
        == (InsertStyle::YamlShellSameLine {
            quote: YamlQuote::Plain,
        }) {
        format!(
            "{{\"{key}\":{}}}",
            serde_json::to_string(value).unwrap_or_default()
        )
    } else {
        format!(
            "{{\"{key}\": {}}}",
            serde_json::to_string(value).unwrap_or_default()
        )
    };
    Ok(vec![insert_args(
        loc,
        &["--compilation-config".to_string(), obj],
    )?])
}

/// After an edit: the edit holds, and nothing else in the launch changed.
fn verify(
    before: &Located,
    after: &Located,
    edit: &Edit,
    precedence: Precedence,
) -> Result<(), FixError> {
    let env_of = |l: &Located| -> Vec<(String, Option<String>, bool)> {
        let mut seen = std::collections::BTreeMap::new();
        for s in &l.env {
            seen.insert(s.name.clone(), (s.value.clone(), s.unset));
        }
        seen.into_iter().map(|(n, (v, u))| (n, v, u)).collect()
    };
    let (b_env, a_env) = (env_of(before), env_of(after));
    let touched_env: Vec<&str> = match edit {
        Edit::SetEnv { name, .. } | Edit::UnsetEnv { name } => vec![name.as_str()],
        Edit::DropAllocOption { .. } => alloc_conf::VARS.to_vec(),
        _ => Vec::new(),
    };
    let strip = |v: &[(String, Option<String>, bool)]| -> Vec<(String, Option<String>, bool)> {
        v.iter()
            .filter(|(n, ..)| !touched_env.contains(&n.as_str()))
            .cloned()
            .collect()
    };
    if strip(&b_env) != strip(&a_env) {
        return Err(FixError::Verify(
            "another environment variable changed".into(),
        ));
    }
    let args_touched = matches!(
        edit,
        Edit::AddFlag { .. } | Edit::RemoveFlag { .. } | Edit::SetCompilationConfig { .. }
    );
    if !args_touched && before.arg_values() != after.arg_values() {
        return Err(FixError::Verify("the vLLM arguments changed".into()));
    }
    if before.entrypoint != after.entrypoint || before.form != after.form {
        return Err(FixError::Verify("the command itself changed".into()));
    }
    if before.used_files != after.used_files {
        return Err(FixError::Verify(
            "the files the launch reads changed".into(),
        ));
    }
    if before.problems.len() != after.problems.len() {
        return Err(FixError::Verify(
            "the edit changed how the shell reads the text (a new problem appeared)".into(),
        ));
    }
    let (uses, _) = flag_uses(&after.arg_values());
    let ok = match edit {
        Edit::SetEnv { name, value } => {
            after.env_site(name).and_then(|s| s.value.as_deref()) == Some(value.as_str())
        }
        Edit::UnsetEnv { name } => after.env_site(name).is_none(),
        Edit::DropAllocOption { option } => alloc_site(after, precedence)
            .and_then(|(_, s)| s.value.as_deref())
            .is_some_and(|v| alloc_conf::drop_option(v, option).is_none()),
        // The last use wins (argparse), so a later `--no-X` would undo the flag.
        Edit::AddFlag { flag, value } => uses
            .iter()
            .rev()
            .find(|f| f.name == long_name(flag))
            .is_some_and(|f| match value {
                Some(v) => *v == f.value,
                None => flags::is_on(&f.value),
            }),
        Edit::RemoveFlag { flag } => !uses.iter().any(|f| f.name == long_name(flag)),
        Edit::SetCompilationConfig { key, value } => uses.iter().any(|f| {
            (f.name == flags::COMPILATION_CONFIG
                && serde_json::from_str::<serde_json::Value>(&f.value)
                    .ok()
                    .and_then(|j| j.get(key).cloned())
                    == Some(serde_json::Value::String(value.clone())))
                || (flags::compilation_config_key(&f.name)
                    .is_some_and(|t| t == key.replace('-', "_"))
                    && f.value == *value)
        }),
        Edit::PatchScript { .. } | Edit::Manual { .. } => true,
    };
    if !ok {
        return Err(FixError::Verify(format!(
            "the edit {edit:?} does not hold in the result"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_key_is_merged_in_place() {
        let v = serde_json::Value::String("PIECEWISE".into());
        assert_eq!(
            set_json_key(
                r#"{"cudagraph_mode": "FULL_AND_PIECEWISE", "level": 3}"#,
                "cudagraph_mode",
                &v
            ),
            Ok(r#"{"cudagraph_mode": "PIECEWISE", "level": 3}"#.into())
        );
        assert_eq!(
            set_json_key(r#"{"level": 3}"#, "cudagraph_mode", &v),
            Ok(r#"{"cudagraph_mode": "PIECEWISE", "level": 3}"#.into())
        );
        assert_eq!(
            set_json_key("{ }", "cudagraph_mode", &v),
            Ok(r#"{"cudagraph_mode": "PIECEWISE" }"#.into())
        );
        assert!(set_json_key("[1]", "cudagraph_mode", &v).is_err());
    }
}
