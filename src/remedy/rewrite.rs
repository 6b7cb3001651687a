//! Apply one knowledge-base [`Edit`] to a launch text through the byte spans of
//! [`crate::launch::Located`]: every byte outside the edited words stays as the user wrote it.
//!
//! Each edit re-locates the launch, splices, re-locates the result and checks that the edit
//! holds there (and that nothing else moved); a failed check is an error, never a silent change.

use crate::kb::KnowledgeBase;
use crate::kb::schema::{AllocatorText, Edit, SpannedStr, fill_text};
use crate::launch::{
    self, EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Render, flag_uses,
};
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

/// The result of one edit.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub text: String,
    pub notes: Vec<String>,
}

/// A text replacement.
#[derive(Debug, Clone, PartialEq)]
struct Splice {
    range: Range<usize>,
    text: String,
}

fn splice(text: &str, s: &Splice) -> String {
    let mut out = String::with_capacity(text.len() + s.text.len());
    out.push_str(&text[..s.range.start]);
    out.push_str(&s.text);
    out.push_str(&text[s.range.end..]);
    out
}

/// Quote a word for bash (POSIX-safe; shlex 2 rejects NUL bytes).
pub fn shell_quote(v: &str) -> Result<String, FixError> {
    shlex::try_quote(v)
        .map(|c| c.into_owned())
        .map_err(|_| FixError::Unsupported(format!("{v:?} holds a NUL byte and cannot be quoted")))
}

/// Quote `new` the way `raw` (the old value as written) was quoted when that is still safe.
fn quote_like(raw: &str, new: &str) -> Result<String, FixError> {
    let inner = |q: char| {
        raw.len() >= 2
            && raw.starts_with(q)
            && raw.ends_with(q)
            && !raw[1..raw.len() - 1].contains(q)
    };
    if inner('\'') && !new.contains('\'') {
        return Ok(format!("'{new}'"));
    }
    if inner('"')
        && !raw[1..raw.len() - 1].contains(['\\', '$', '`'])
        && !new.contains(['"', '\\', '$', '`', '!'])
    {
        return Ok(format!("\"{new}\""));
    }
    shell_quote(new)
}

fn yaml_plain_ok(v: &str) -> bool {
    let keyword = matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "y" | "n"
    );
    !v.is_empty()
        && !keyword
        && v.parse::<f64>().is_err()
        && !v.ends_with(':')
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=+,-@".contains(c))
        && !v.starts_with(['-', ':', ',', '@'])
        || (v.starts_with("--")
            && v[2..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.=-".contains(c)))
}

/// A YAML scalar for compose (`$` doubled: compose interpolates it).
pub fn yaml_scalar(v: &str) -> String {
    let v = v.replace('$', "$$");
    if yaml_plain_ok(&v) {
        v
    } else if !v.contains('\'') && !v.contains('\n') && !v.contains('\\') {
        format!("'{v}'")
    } else {
        serde_json::to_string(&v).unwrap_or_default()
    }
}

/// How a word is rendered in this launch's form.
fn render_word(loc: &Located, render: &Render, v: &str) -> Result<String, FixError> {
    match render {
        Render::Assign => shell_quote(v),
        Render::ShellWord { prefix } => {
            let q = shell_quote(v)?;
            if loc.form == Form::Compose {
                // Inside a plain YAML string: no `: ` or ` #`, and `$` doubled.
                let q = q.replace('$', "$$");
                if q.contains(": ") || q.contains(" #") || q.contains('\n') {
                    return Err(FixError::Unsupported(format!(
                        "{v:?} cannot go into a plain-string command: safely; write command: as a \
                         list ([\"--flag\", \"value\"]) and run fix again"
                    )));
                }
                return Ok(format!("{prefix}{q}"));
            }
            Ok(format!("{prefix}{q}"))
        }
        Render::YamlItem | Render::YamlMapValue => Ok(yaml_scalar(v)),
    }
}

/// New text for an existing environment site.
fn render_env(
    text: &str,
    loc: &Located,
    site: &EnvSite,
    name: &str,
    value: &str,
) -> Result<String, FixError> {
    match &site.render {
        Render::Assign => {
            let raw = &text[site.span.clone()];
            let raw_value = raw.split_once('=').map_or("", |(_, v)| v);
            Ok(format!("{name}={}", quote_like(raw_value, value)?))
        }
        Render::YamlMapValue => {
            let v = value.replace('$', "$$");
            Ok(if yaml_plain_ok(&v) {
                v
            } else {
                serde_json::to_string(&v).unwrap_or_default()
            })
        }
        Render::ShellWord { prefix } if loc.form != Form::Compose => {
            let raw = &text[site.span.clone()];
            let raw_value = raw
                .strip_prefix(prefix.as_str())
                .and_then(|r| r.strip_prefix(name))
                .and_then(|r| r.strip_prefix('='));
            let q = match raw_value {
                Some(rv) => quote_like(rv, value)?,
                None => shell_quote(value)?,
            };
            Ok(format!("{prefix}{name}={q}"))
        }
        r => render_word(loc, r, &format!("{name}={value}")),
    }
}

/// Text to insert for a new environment assignment.
fn insert_env(loc: &Located, name: &str, value: &str) -> Result<Splice, FixError> {
    let Insert { offset, style } = &loc.env_insert;
    let text = match style {
        InsertStyle::ShellPrefix => format!("{name}={} ", shell_quote(value)?),
        InsertStyle::ExportLine { indent } => {
            format!("\n{indent}export {name}={}", shell_quote(value)?)
        }
        // After the command name a word is never an assignment, so `NAME=` needs no quotes.
        InsertStyle::DockerEnv => format!("-e {name}={} ", shell_quote(value)?),
        InsertStyle::YamlBlockItem { indent } => {
            format!("\n{indent}- {}", yaml_scalar(&format!("{name}={value}")))
        }
        InsertStyle::YamlMapEntry { indent } => {
            let v = value.replace('$', "$$");
            let v = if yaml_plain_ok(&v) {
                v
            } else {
                serde_json::to_string(&v).unwrap_or_default()
            };
            format!("\n{indent}{name}: {v}")
        }
        InsertStyle::YamlNewEnvBlock { indent } => format!(
            "\n{indent}environment:\n{indent}  - {}",
            yaml_scalar(&format!("{name}={value}"))
        ),
        other => {
            return Err(FixError::Verify(format!(
                "unexpected env insertion style {other:?}"
            )));
        }
    };
    Ok(Splice {
        range: *offset..*offset,
        text,
    })
}

/// Text to append new argument words.
fn insert_args(loc: &Located, words: &[String]) -> Result<Splice, FixError> {
    let Insert { offset, style } = &loc.arg_insert;
    let shell = |words: &[String]| -> Result<String, FixError> {
        let r = Render::ShellWord {
            prefix: String::new(),
        };
        Ok(words
            .iter()
            .map(|w| render_word(loc, &r, w))
            .collect::<Result<Vec<_>, _>>()?
            .join(" "))
    };
    let text = match style {
        InsertStyle::ShellSameLine => format!(" {}", shell(words)?),
        InsertStyle::ShellNewLine { indent } => format!(" \\\n{indent}{}", shell(words)?),
        InsertStyle::YamlBlockItem { indent } => words
            .iter()
            .map(|w| format!("\n{indent}- {}", yaml_scalar(w)))
            .collect(),
        InsertStyle::YamlFlowItem { empty } => words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let q = serde_json::to_string(&w.replace('$', "$$")).unwrap_or_default();
                if i == 0 && *empty {
                    q
                } else {
                    format!(", {q}")
                }
            })
            .collect(),
        other => {
            return Err(FixError::Verify(format!(
                "unexpected argument insertion style {other:?}"
            )));
        }
    };
    Ok(Splice {
        range: *offset..*offset,
        text,
    })
}

fn relocate(text: &str) -> Result<Located, FixError> {
    launch::locate(text).map_err(|e| FixError::Verify(format!("the result does not parse: {e}")))
}

/// Apply one edit. `remedy` names the remedy in notes; `kb` gives the allocator precedence rule
/// and the sentences that explain an allocator edit.
pub fn apply_edit(
    text: &str,
    remedy: &str,
    edit: &Edit,
    kb: &KnowledgeBase,
) -> Result<Step, FixError> {
    let loc = launch::locate(text)?;
    if let Some(reason) = &loc.read_only
        && !matches!(edit, Edit::PatchScript { .. } | Edit::Manual { .. })
    {
        return Err(FixError::ReadOnly(reason.clone()));
    }
    let mut notes = Vec::new();
    let splices: Vec<Splice> = match edit {
        Edit::SetEnv { name, value } => set_env(text, &loc, name, value, &mut notes)?,
        Edit::UnsetEnv { name } => unset_env(&loc, name, &mut notes),
        Edit::DropAllocOption { option } => drop_alloc_option(
            text,
            &loc,
            option,
            (&kb.allocator, Precedence::default()),
            &mut notes,
        )?,
        Edit::AddFlag { flag, value } => add_flag(text, &loc, flag, value.as_deref(), &mut notes)?,
        Edit::RemoveFlag { flag } => remove_flag(&loc, flag, &mut notes),
        Edit::SetCompilationConfig { key, value } => {
            set_compilation_config(text, &loc, key, value, &mut notes)?
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
    // Splices never overlap; apply from the end so earlier offsets stay valid.
    let mut ordered = splices;
    ordered.sort_by_key(|s| std::cmp::Reverse(s.range.start));
    let mut out = text.to_string();
    for s in &ordered {
        out = splice(&out, s);
    }
    if out != text {
        let after = relocate(&out)?;
        verify(&loc, &after, edit, Precedence::default())?;
    }
    Ok(Step { text: out, notes })
}

fn set_env(
    text: &str,
    loc: &Located,
    name: &str,
    value: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    match loc.env_site(name) {
        Some(site) if site.value.as_deref() == Some(value) => {
            notes.push(format!("{name} is already {value} (line {})", site.line));
            Ok(Vec::new())
        }
        Some(site) => Ok(vec![Splice {
            range: site.span.clone(),
            text: render_env(text, loc, site, name, value)?,
        }]),
        None => Ok(vec![insert_env(loc, name, value)?]),
    }
}

fn unset_env(loc: &Located, name: &str, notes: &mut Vec<String>) -> Vec<Splice> {
    let sites: Vec<&EnvSite> = loc.env.iter().filter(|s| s.name == name).collect();
    if sites.is_empty() {
        notes.push(format!(
            "{name} is not set by this command; if the environment that runs it sets it, start \
             it with `env -u {name}` or `unset {name}` first"
        ));
    }
    sites
        .iter()
        .map(|s| Splice {
            range: s.removal.clone(),
            text: String::new(),
        })
        .collect()
}

/// The allocator assignment in effect in a launch, by `precedence`: (variable, site).
fn alloc_site(loc: &Located, precedence: Precedence) -> Option<(&'static str, &EnvSite)> {
    precedence
        .resolve(|var| Ok::<_, ()>(loc.env_site(var)))
        .ok()
        .flatten()
}

fn drop_alloc_option(
    text: &str,
    loc: &Located,
    option: &str,
    (texts, precedence): (&AllocatorText, Precedence),
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    let n = &texts.fix_notes;
    let say = |t: &SpannedStr, vars: &[(&str, &str)]| fill_text(&t.value, vars);
    let first = precedence.order()[0];
    let Some((name, site)) = alloc_site(loc, precedence) else {
        let value = alloc_conf::set_option("", option, alloc_conf::FALSE);
        notes.push(say(
            &n.not_in_launch,
            &[("option", option), ("value", &value)],
        ));
        return Ok(vec![insert_env(loc, first, &value)?]);
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
            range: site.span.clone(),
            text: render_env(text, loc, site, name, &value)?,
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
    Ok(vec![Splice {
        range: site.span.clone(),
        text: render_env(text, loc, site, name, &new)?,
    }])
}

/// Replace the value of a flag use (inline or separate word).
fn replace_flag_value(
    text: &str,
    loc: &Located,
    f: &launch::FlagUse,
    value: &str,
) -> Result<Splice, FixError> {
    let idx = f.value_index.unwrap_or(f.index);
    let arg = &loc.args[idx];
    let raw = &text[arg.span.clone()];
    let new = if f.inline {
        let word = &arg.value;
        let head = word.split_once('=').map_or(word.as_str(), |(h, _)| h);
        match (&arg.render, raw.split_once('=')) {
            (Render::ShellWord { .. }, Some((raw_head, raw_value))) if raw_head == head => {
                format!("{head}={}", quote_like(raw_value, value)?)
            }
            (r, _) => render_word(loc, r, &format!("{head}={value}"))?,
        }
    } else {
        match &arg.render {
            Render::ShellWord { .. } if loc.form != Form::Compose => quote_like(raw, value)?,
            r => render_word(loc, r, value)?,
        }
    };
    Ok(Splice {
        range: arg.span.clone(),
        text: new,
    })
}

fn add_flag(
    text: &str,
    loc: &Located,
    flag: &str,
    value: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<Vec<Splice>, FixError> {
    let name = long_name(flag);
    let (uses, _) = flag_uses(&loc.arg_values());
    if let Some(f) = uses.iter().rev().find(|f| f.name == name) {
        let line = loc.args[f.index].line;
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
            Some(v) => Ok(vec![replace_flag_value(text, loc, f, v)?]),
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
                range: loc.args[f.index].removal.start..loc.args[last].removal.end,
                text: String::new(),
            }
        })
        .collect()
}

/// Set `key` in a JSON object text, keeping the rest of the text as written where possible.
pub fn set_json_key(json: &str, key: &str, value: &serde_json::Value) -> Result<String, String> {
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
    text: &str,
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
        return Ok(vec![replace_flag_value(text, loc, f, value)?]);
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
        return Ok(vec![replace_flag_value(text, loc, f, &new)?]);
    }
    // A plain YAML string cannot hold `: `; everywhere else the usual spacing is kept.
    let obj = if loc.form == Form::Compose && loc.arg_insert.style == InsertStyle::ShellSameLine {
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
    let env_of = |l: &Located| -> Vec<(String, Option<String>)> {
        let mut seen = std::collections::BTreeMap::new();
        for s in &l.env {
            seen.insert(s.name.clone(), s.value.clone());
        }
        seen.into_iter().collect()
    };
    let (b_env, a_env) = (env_of(before), env_of(after));
    let touched_env: Vec<&str> = match edit {
        Edit::SetEnv { name, .. } | Edit::UnsetEnv { name } => vec![name.as_str()],
        Edit::DropAllocOption { .. } => alloc_conf::VARS.to_vec(),
        _ => Vec::new(),
    };
    let strip = |v: &[(String, Option<String>)]| -> Vec<(String, Option<String>)> {
        v.iter()
            .filter(|(n, _)| !touched_env.contains(&n.as_str()))
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
    let (uses, _) = flag_uses(&after.arg_values());
    let ok = match edit {
        Edit::SetEnv { name, value } => {
            after.env_site(name).and_then(|s| s.value.as_deref()) == Some(value.as_str())
        }
        Edit::UnsetEnv { name } => after.env_site(name).is_none(),
        Edit::DropAllocOption { option } => alloc_site(after, precedence)
            .and_then(|(_, s)| s.value.as_deref())
            .is_some_and(|v| alloc_conf::drop_option(v, option).is_none()),
        Edit::AddFlag { flag, value } => uses
            .iter()
            .any(|f| f.name == long_name(flag) && value.as_ref().is_none_or(|v| *v == f.value)),
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

    #[test]
    fn quote_like_keeps_the_users_quotes() {
        assert_eq!(quote_like("'a b'", "c d"), Ok("'c d'".into()));
        assert_eq!(quote_like("\"a b\"", "c d"), Ok("\"c d\"".into()));
        assert_eq!(quote_like("\"a b\"", "c $d"), Ok("'c $d'".into()));
        assert_eq!(quote_like("ab", "x"), Ok("x".into()));
    }

    #[test]
    fn yaml_scalars() {
        assert_eq!(
            yaml_scalar("A=expandable_segments:True"),
            "A=expandable_segments:True"
        );
        assert_eq!(yaml_scalar("0"), "'0'");
        assert_eq!(yaml_scalar("--enforce-eager"), "--enforce-eager");
        assert_eq!(yaml_scalar("a$b"), "'a$$b'");
        assert_eq!(yaml_scalar(r#"{"a": "b"}"#), r#"'{"a": "b"}'"#);
    }
}
