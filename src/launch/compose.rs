//! A docker compose service that runs vLLM, read through the YAML tree ([`super::yaml`]):
//! `environment:` (block or flow, list or map), `env_file:` and compose's `.env` when given,
//! `command:` (a plain or quoted string, a flow or block list, `sh -c "…"`), `entrypoint:`.
//!
//! Compose interpolates `$` everywhere ([`super::interp`]): `${VAR:-default}` is the default
//! unless the host (or `.env`) sets VAR, so an edit changes the default in place (or the `.env`
//! line that sets VAR) and says that a value exported on the host would still win.

use super::yaml::{self, Doc, Node};
use super::{
    Arg, EnvSite, Form, Insert, InsertStyle, LaunchError, Located, PickWords, Render, Select,
    SourceFile, YamlQuote, envfile, find_entrypoint, find_file, interp, lex, line_end, pick_one,
};
use std::collections::BTreeMap;

/// A file with a top-level `services:` key.
pub fn looks_like_compose(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_end() == "services:" || l.starts_with("services: #"))
}

/// Variables compose's `.env` sets (for interpolation), with their sites.
pub(crate) struct DotEnv {
    pub sites: Vec<EnvSite>,
}

impl DotEnv {
    pub fn value(&self, name: &str) -> Option<String> {
        self.sites
            .iter()
            .rev()
            .find(|s| s.name == name)
            .and_then(|s| s.value.clone())
    }
    fn site(&self, name: &str) -> Option<&EnvSite> {
        self.sites.iter().rev().find(|s| s.name == name)
    }
}

/// A value with compose interpolation: what it evaluates to and where to edit it.
pub(crate) struct Interpolated {
    pub value: Option<String>,
    pub target: Option<interp::Target>,
}

pub(crate) fn interpolate(raw: &str, dotenv: &DotEnv) -> Result<Interpolated, String> {
    let pieces = interp::parse(raw)?;
    let known = |n: &str| dotenv.value(n);
    let value = match interp::eval(&pieces, &known) {
        interp::Eval::Known(v) => Some(v),
        interp::Eval::Unknown(_) => None,
    };
    Ok(Interpolated {
        value,
        target: interp::target(&pieces, &known),
    })
}

/// An environment site for a compose value (`NAME=rest` in a list item, or a map value), with
/// the value in effect and the place that sets it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn env_site(
    text: &str,
    file: usize,
    name: &str,
    node: &Node,
    rest_offset: usize,
    with_name: bool,
    flow: bool,
    removal: std::ops::Range<usize>,
    dotenv: &DotEnv,
) -> Result<EnvSite, LaunchError> {
    let whole = node.as_str().unwrap_or("");
    let rest = whole.get(rest_offset..).unwrap_or("");
    let li = || lex::LineIndex::new(text);
    let ip = interpolate(rest, dotenv).map_err(|m| {
        LaunchError::syntax(
            file,
            node.line,
            li().col(text, node.span.start),
            format!("{name}: {m}"),
        )
    })?;
    let whole_render = Render::YamlScalar {
        with_name,
        flow,
        dollars: true,
    };
    let mut site = EnvSite::new(
        file,
        name,
        ip.value.clone(),
        node.span.clone(),
        whole_render,
        removal,
        ip.value.is_none(),
        node.line,
    );
    match ip.target {
        Some(interp::Target::Default {
            span,
            overridden_by,
        }) => {
            if let (Some(map), Some(quote)) = (yaml::value_offsets(text, node), node.quote()) {
                let a = rest_offset + span.start;
                let b = rest_offset + span.end;
                if let (Some(&ra), Some(&rb)) = (map.get(a), map.get(b)) {
                    site.span = ra..rb;
                    site.render = Render::InterpDefault { quote, flow };
                }
            }
            site.caveat = Some(format!(
                "{} is a compose default: a value of {} exported on the host (or set in .env) \
                 would still win over it",
                name,
                overridden_by.join(" or ")
            ));
        }
        Some(interp::Target::Known(var)) => {
            if let Some(src) = dotenv.site(&var) {
                site.file = src.file;
                site.span = src.span.clone();
                site.render = src.render.clone();
                site.line = src.line;
                site.caveat = Some(format!(
                    "{name} comes from {var} in .env; a value of {var} exported on the host would \
                     still win over it"
                ));
            }
        }
        Some(interp::Target::Whole) | None => {}
    }
    Ok(site)
}

/// A shell word inside a YAML string of the given quoting (compose's string `command:`, a
/// `sh -c` script in a list item).
pub(crate) fn shell_word(v: &str, quote: YamlQuote) -> Result<String, String> {
    let q = super::shell::render::quote(v)?.replace('$', "$$");
    match quote {
        YamlQuote::Plain => {
            if q.contains(": ") || q.contains(" #") || q.contains('\n') || q.ends_with(':') {
                return Err(format!(
                    "{v:?} cannot go into a plain-string command: safely; write command: as a \
                     list ([\"--flag\", \"value\"]) and run fix again"
                ));
            }
            Ok(q)
        }
        YamlQuote::Single => Ok(q.replace('\'', "''")),
        YamlQuote::Double => Ok(q.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

/// ` WORD...` appended inside a YAML string holding a shell command.
pub(crate) fn shell_same_line(quote: YamlQuote, words: &[String]) -> Result<String, String> {
    let words = words
        .iter()
        .map(|w| shell_word(w, quote))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(format!(" {}", words.join(" ")))
}

/// A default inside `${VAR:-default}` in a YAML scalar of the given quoting.
pub(crate) fn interp_default(v: &str, quote: YamlQuote, flow: bool) -> Result<String, String> {
    if v.contains(['}', '$', '\n']) {
        return Err(format!(
            "{v:?} cannot be written as a compose default (it holds `}}`, `$` or a line break); \
             set it by hand"
        ));
    }
    match quote {
        YamlQuote::Plain => {
            if v.contains(" #")
                || v.contains(": ")
                || v.ends_with(':')
                || (flow && v.contains([',', '[', ']', '{']))
            {
                return Err(format!(
                    "{v:?} cannot go into a plain YAML string as a compose default; quote the \
                     item and run fix again"
                ));
            }
            Ok(v.to_string())
        }
        YamlQuote::Single => Ok(v.replace('\'', "''")),
        YamlQuote::Double => Ok(v.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

/// A new `environment:` block under the service, with its first item.
pub(crate) fn new_env_block(indent: &str, name: &str, value: &str) -> String {
    format!(
        "\n{indent}environment:\n{indent}  - {}",
        yaml::scalar(&format!("{name}={value}"))
    )
}

/// A compose service that may run vLLM.
struct Service<'a> {
    name: String,
    key: &'a Node,
    node: &'a Node,
}

fn is_vllm_service(doc: &Doc, svc: &Node) -> bool {
    let text_of = |key: &str| -> String {
        match doc.get(svc, key) {
            Some((n, _)) => match &n.kind {
                yaml::NodeKind::Scalar { value, .. } => value.clone(),
                yaml::NodeKind::Seq { items, .. } => items
                    .iter()
                    .filter_map(|i| i.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            },
            None => String::new(),
        }
    };
    let image = text_of("image");
    let command = text_of("command");
    let entry = text_of("entrypoint");
    image.contains("vllm")
        || command.contains("vllm")
        || command.contains("--model")
        || entry.contains("vllm")
}

/// Locate the vLLM service in a compose file (`files[0]`), reading `.env` and `env_file:` files
/// given alongside.
pub fn locate(files: &[SourceFile], select: &Select) -> Result<Located, LaunchError> {
    let text = &files[0].text;
    let docs = yaml::parse(text, 0)?;
    let doc = docs.first().ok_or(LaunchError::NoVllmCommand)?;
    let services = doc
        .root
        .get("services")
        .map(|s| doc.resolve(s))
        .ok_or(LaunchError::NoVllmCommand)?;
    let all: Vec<Service> = services
        .entries()
        .iter()
        .filter_map(|(k, v)| {
            Some(Service {
                name: k.as_str()?.to_string(),
                key: k,
                node: doc.resolve(v),
            })
        })
        .collect();
    let vllm: Vec<&Service> = all
        .iter()
        .filter(|s| is_vllm_service(doc, s.node))
        .collect();
    let list = |v: &[&Service]| {
        v.iter()
            .map(|s| format!("  {} (line {}, --service {})", s.name, s.key.line, s.name))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let unknown = |want: &str| {
        format!(
            "--service {want}: no such service in {}; its services are: {}",
            files[0].name,
            all.iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let several = |many: &[&Service]| {
        format!(
            "{} services in {} run vLLM; pick one with --service NAME:\n{}",
            many.len(),
            files[0].name,
            list(many)
        )
    };
    let svc = pick_one(
        &all,
        select.service.as_deref(),
        |s, want| s.name == want,
        vllm,
        |_| None,
        PickWords {
            unknown: &unknown,
            several_named: None,
            several: &several,
        },
    )?;
    service(files, doc, svc)
}

fn service(files: &[SourceFile], doc: &Doc, svc: &Service<'_>) -> Result<Located, LaunchError> {
    let text = &files[0].text;
    let name = &svc.name;
    let mut used = vec![0];
    let mut notes = Vec::new();
    // compose reads `.env` next to the file for interpolation.
    let dotenv = match files
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, f)| super::base_name(&f.name) == ".env")
    {
        Some((i, _)) => {
            used.push(i);
            let r = envfile::read(files, i, envfile::Dialect::Compose)?;
            notes.extend(r.notes);
            DotEnv { sites: r.sites }
        }
        None => DotEnv { sites: Vec::new() },
    };
    let mut env = Vec::new();
    let mut unread_files = Vec::new();
    // env_file: first (environment: wins over it).
    if let Some((ef, _)) = doc.get(svc.node, "env_file") {
        let paths: Vec<String> = match &ef.kind {
            yaml::NodeKind::Scalar { value, .. } => vec![value.clone()],
            yaml::NodeKind::Seq { items, .. } => items
                .iter()
                .filter_map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .or_else(|| i.get("path").and_then(|p| p.as_str()).map(str::to_string))
                })
                .collect(),
            _ => Vec::new(),
        };
        for p in paths {
            match find_file(files, &p) {
                Some(i) => {
                    if !used.contains(&i) {
                        used.push(i);
                    }
                    let r = envfile::read(files, i, envfile::Dialect::Compose)?;
                    notes.extend(r.notes);
                    env.extend(r.sites);
                }
                None => {
                    unread_files.push(format!(
                        "service {name} has env_file: {p}, which was not given, so the \
                         variables it gives the container are not read (give it too: \
                         --launch-with {p})"
                    ));
                    notes.push(format!(
                        "service {name} has env_file: {p}: variables in that file reach the \
                         container too; give it as well (--launch-with {p}) so they are read"
                    ))
                }
            }
        }
    }
    let header_end = line_end(text, svc.key.span.end);
    let key_indent = svc
        .node
        .entries()
        .first()
        .map(|(k, _)| yaml::indent_of(text, k.span.start))
        .unwrap_or_else(|| format!("{}  ", yaml::indent_of(text, svc.key.span.start)));
    let from_env_files = env.len();
    let mut caveat_all: Option<String> = None;
    let env_insert = match doc
        .get(svc.node, "environment")
        .filter(|(e, _)| !e.is_null())
    {
        Some((e, merged)) => {
            if merged {
                caveat_all = Some(format!(
                    "service {name} takes environment: from a YAML anchor: editing it changes \
                     every service that uses the anchor"
                ));
            }
            let key = svc.node.key_node("environment").filter(|_| !merged);
            read_environment(text, doc, e, key, &dotenv, &mut env)?
        }
        None => Insert {
            file: 0,
            offset: header_end,
            style: InsertStyle::YamlNewEnvBlock { indent: key_indent },
        },
    };
    if let Some(c) = &caveat_all {
        for s in env.iter_mut().filter(|s| s.file == 0) {
            s.caveat = Some(c.clone());
        }
    }
    let image = doc
        .get(svc.node, "image")
        .and_then(|(n, _)| n.as_str().map(str::to_string))
        .unwrap_or_default();
    let entry_words: Vec<String> = match doc.get(svc.node, "entrypoint") {
        Some((n, _)) => match &n.kind {
            yaml::NodeKind::Scalar { value, .. } => {
                value.split_whitespace().map(str::to_string).collect()
            }
            _ => n
                .items()
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
        },
        None => Vec::new(),
    };
    // `entrypoint: ["sh", "-c"]`: the command's first item is the script (the rest are its
    // `$0`, `$1`, ..., which vLLM never sees).
    let shell_entry = {
        let mut probe = entry_words.clone();
        probe.push(String::new());
        !entry_words.is_empty() && shell_c(&probe) == Some(entry_words.len())
    };
    let (args, mut entrypoint, arg_insert, read_only, before) = match doc.get(svc.node, "command") {
        Some((cmd, _)) => command_args(text, 0, cmd, &dotenv, name, shell_entry)?,
        None => (
            Vec::new(),
            None,
            Insert {
                file: 0,
                offset: 0,
                style: InsertStyle::Nowhere {
                    why: format!(
                        "service {name} has no command: (its image's default runs); add a \
                         command: list with the vLLM arguments first"
                    ),
                },
            },
            None,
            Vec::new(),
        ),
    };
    // `export NAME=value &&` in the script before vLLM wins over environment:.
    env.extend(script_exports(&before));
    if entrypoint.is_none() && !entry_words.is_empty() {
        let joined = entry_words.join(" ");
        if joined.contains("vllm") {
            entrypoint = Some(format!("{joined} (entrypoint:)"));
        }
    }
    let entrypoint =
        entrypoint.unwrap_or_else(|| format!("compose service {name} (image {image})"));
    let mut gaps = super::EnvGaps::default();
    for reason in unread_files {
        gaps.unread_before(reason, &env[from_env_files..]);
    }
    Ok(Located {
        form: Form::Compose,
        entrypoint: Some(entrypoint),
        env,
        args,
        env_insert,
        arg_insert,
        notes,
        problems: Vec::new(),
        read_only: None,
        args_read_only: read_only,
        used_files: used,
        late_insert: None,
        gaps,
        shadowed: Vec::new(),
        frozen: Default::default(),
        arg_vars: Default::default(),
        peers: Vec::new(),
    })
}

/// The sites of an `environment:` node, and where a new variable goes.
fn read_environment(
    text: &str,
    doc: &yaml::Doc,
    e: &Node,
    key: Option<&Node>,
    dotenv: &DotEnv,
    env: &mut Vec<EnvSite>,
) -> Result<Insert, LaunchError> {
    let flow = e.is_flow();
    match &e.kind {
        yaml::NodeKind::Seq { items, .. } => {
            let removals = last_takes_key(
                text,
                key,
                removals(text, items.iter().map(|n| n.span.clone()).collect(), flow),
                flow,
            );
            for (item, removal) in items.iter().zip(removals) {
                let v = item.as_str().ok_or_else(|| {
                    LaunchError::syntax(0, item.line, 1, "expected NAME=value in environment:")
                })?;
                match v.split_once('=') {
                    Some((n, _)) => env.push(env_site(
                        text,
                        0,
                        n,
                        item,
                        n.len() + 1,
                        true,
                        flow,
                        removal,
                        dotenv,
                    )?),
                    None => env.push(passthrough(v, item, removal, dotenv, flow)),
                }
            }
            Ok(list_insert(text, 0, e))
        }
        yaml::NodeKind::Map { entries, .. } => {
            let spans = entries
                .iter()
                .map(|(k, v)| k.span.start..v.span.end.max(k.span.end))
                .collect();
            let removals = last_takes_key(text, key, removals(text, spans, flow), flow);
            merged_environment(text, doc, entries, dotenv, env)?;
            for ((k, v), removal) in entries.iter().zip(removals) {
                let n = k.as_str().unwrap_or("");
                if n == "<<" {
                    continue;
                }
                if v.is_null() {
                    env.push(passthrough(n, v, removal, dotenv, flow));
                    continue;
                }
                if v.as_str().is_none() {
                    return Err(LaunchError::syntax(
                        0,
                        v.line,
                        1,
                        format!("environment: {n} is not a plain value"),
                    ));
                }
                env.push(env_site(text, 0, n, v, 0, false, flow, removal, dotenv)?);
            }
            Ok(match (flow, entries.last()) {
                (true, last) => Insert {
                    file: 0,
                    offset: last.map_or(e.span.start + 1, |(k, v)| v.span.end.max(k.span.end)),
                    style: InsertStyle::YamlFlowMapEntry {
                        empty: last.is_none(),
                    },
                },
                (false, Some((k, v))) => Insert {
                    file: 0,
                    offset: line_end(text, v.span.end.max(k.span.end)),
                    style: InsertStyle::YamlMapEntry {
                        indent: yaml::indent_of(text, k.span.start),
                    },
                },
                (false, None) => unreachable_insert(),
            })
        }
        _ if e.is_null() => Err(LaunchError::syntax(
            0,
            e.line,
            1,
            "empty environment: (write - NAME=value items or NAME: value entries)",
        )),
        _ => Err(LaunchError::syntax(
            0,
            e.line,
            1,
            "environment: must be a list or a map",
        )),
    }
}

/// The assignments a `sh -c` script makes before it runs vLLM (`export NAME=value && vllm …`,
/// `NAME=value vllm …`) in a compose service or Kubernetes container: they win over its
/// `environment:` / `env:`. Not editable here.
pub(crate) fn script_exports(before: &[Arg]) -> Vec<EnvSite> {
    before
        .iter()
        .filter_map(|a| {
            let (name, value) = super::is_assignment(&a.value)?;
            Some(EnvSite::new(
                a.file,
                name,
                Some(value.to_string()),
                a.span.clone(),
                Render::Fixed {
                    why: format!(
                        "{name} is set inside the sh -c script (line {}); edit the script",
                        a.line
                    ),
                },
                a.span.clone(),
                a.dynamic,
                a.line,
            ))
        })
        .collect()
}

/// The entries an `environment:` map takes through `<<: *anchor` (or `<<: [*a, *b]`) merge
/// keys, as sites before the map's own entries, which win over them as in compose. A merged
/// value is shared with every map that merges the anchor: a new value goes in the service's
/// own map ([`EnvSite::shared`]), and a merged entry is never removed.
fn merged_environment(
    text: &str,
    doc: &yaml::Doc,
    entries: &[(Node, Node)],
    dotenv: &DotEnv,
    env: &mut Vec<EnvSite>,
) -> Result<(), LaunchError> {
    for (k, v) in entries.iter().filter(|(k, _)| k.as_str() == Some("<<")) {
        let v = doc.resolve(v);
        let sources: Vec<&Node> = match &v.kind {
            yaml::NodeKind::Seq { items, .. } => items.iter().map(|i| doc.resolve(i)).collect(),
            _ => vec![v],
        };
        // In a list of merged maps the first that has a key wins: read the last first.
        for m in sources.into_iter().rev() {
            if !matches!(m.kind, yaml::NodeKind::Map { .. }) {
                return Err(LaunchError::syntax(
                    0,
                    k.line,
                    1,
                    "environment: << must merge a map (or a list of maps)",
                ));
            }
            for (mk, mv) in m.entries() {
                let n = mk.as_str().unwrap_or("");
                let mv = doc.resolve(mv);
                let mut site = if mv.is_null() {
                    passthrough(n, mv, mv.span.clone(), dotenv, m.is_flow())
                } else if mv.as_str().is_some() {
                    env_site(
                        text,
                        0,
                        n,
                        mv,
                        0,
                        false,
                        m.is_flow(),
                        mv.span.clone(),
                        dotenv,
                    )?
                } else {
                    return Err(LaunchError::syntax(
                        0,
                        mv.line,
                        1,
                        format!(
                            "environment: {n} (merged by << on line {}) is not a plain value",
                            k.line
                        ),
                    ));
                };
                site.shared = Some(format!(
                    "{n} comes from a YAML anchor merged into environment: by << (line {}, value \
                     on line {}), which other services may merge too: the new value goes in \
                     this service's own environment:, which wins over the merge",
                    k.line, mv.line
                ));
                env.push(site);
            }
        }
    }
    Ok(())
}

/// Where a new item of a list (`environment:`, `command:`) goes.
fn list_insert(text: &str, file: usize, list: &Node) -> Insert {
    match list.append_point(text) {
        yaml::AppendPoint::Flow { offset, empty } => Insert {
            file,
            offset,
            style: InsertStyle::YamlFlowItem { empty },
        },
        yaml::AppendPoint::Block { offset, indent } => Insert {
            file,
            offset,
            style: InsertStyle::YamlBlockItem { indent },
        },
        yaml::AppendPoint::Empty => unreachable_insert(),
    }
}

fn unreachable_insert() -> Insert {
    Insert {
        file: 0,
        offset: 0,
        style: InsertStyle::Nowhere {
            why: "empty collection".into(),
        },
    }
}

/// `- NAME` / `NAME:` with no value: compose takes it from the host (or `.env`).
fn passthrough(
    name: &str,
    node: &Node,
    removal: std::ops::Range<usize>,
    dotenv: &DotEnv,
    flow: bool,
) -> EnvSite {
    let mut site = EnvSite::new(
        0,
        name,
        None,
        node.span.clone(),
        Render::YamlScalar {
            with_name: true,
            flow,
            dollars: true,
        },
        removal,
        false,
        node.line,
    );
    if let Some(src) = dotenv.site(name) {
        site.value = src.value.clone();
        site.file = src.file;
        site.span = src.span.clone();
        site.render = src.render.clone();
        site.line = src.line;
        site.caveat = Some(format!(
            "{name} comes from .env; a value exported on the host would still win over it"
        ));
    }
    site
}

/// When a block collection has one member, removing it removes its key line too (a key with
/// nothing under it would be null, or mean something else).
pub(crate) fn last_takes_key(
    text: &str,
    key: Option<&Node>,
    mut removals: Vec<std::ops::Range<usize>>,
    flow: bool,
) -> Vec<std::ops::Range<usize>> {
    if let (Some(k), false, [only]) = (key, flow, removals.as_slice()) {
        let whole = yaml::block_removal(text, k.span.start, only.end);
        removals = vec![whole];
    }
    removals
}

/// Removal ranges for collection members: whole lines in block style, item and comma in flow.
pub(crate) fn removals(
    text: &str,
    spans: Vec<std::ops::Range<usize>>,
    flow: bool,
) -> Vec<std::ops::Range<usize>> {
    if flow {
        return yaml::flow_removals(&spans);
    }
    spans
        .iter()
        .map(|s| yaml::block_removal(text, yaml::dash_before(text, s.start), s.end))
        .collect()
}

type CommandArgs = (Vec<Arg>, Option<String>, Insert, Option<String>, Vec<Arg>);

/// The vLLM arguments of a `command:` (string or list), the entrypoint written in it, where new
/// arguments go, and why it cannot be edited (if it cannot).
pub(crate) fn command_args(
    text: &str,
    file: usize,
    cmd: &Node,
    dotenv: &DotEnv,
    name: &str,
    shell_entry: bool,
) -> Result<CommandArgs, LaunchError> {
    let li = lex::LineIndex::new(text);
    match &cmd.kind {
        yaml::NodeKind::Scalar { .. } => {
            let (words, read_only) = scalar_words(text, file, cmd, dotenv)?;
            let values: Vec<String> = words.iter().map(|a| a.value.clone()).collect();
            let (skip, entry) = entry_skip(&values);
            let quote = cmd.quote().unwrap_or(super::YamlQuote::Plain);
            let last_end = words.last().map_or(cmd.span.end, |a| a.span.end);
            let mut words = words;
            let args: Vec<Arg> = words.split_off(skip.min(words.len()));
            let insert = Insert {
                file,
                offset: last_end,
                style: InsertStyle::YamlShellSameLine { quote },
            };
            Ok((args, entry, insert, read_only, words))
        }
        yaml::NodeKind::Seq { items, flow } => {
            let values: Vec<String> = items
                .iter()
                .map(|i| {
                    i.as_str().map(str::to_string).ok_or_else(|| {
                        LaunchError::syntax(
                            file,
                            i.line,
                            li.col(text, i.span.start),
                            format!("service {name}: command: items must be strings"),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            // `["sh", "-c", "vllm serve …"]`: the vLLM command is inside the script.
            // (A command that is itself `sh -c SCRIPT` is read as that script, as before.)
            let script = match shell_c(&values) {
                None if shell_entry && !items.is_empty() => Some(0),
                other => other,
            };
            if let Some(script) = script {
                let node = &items[script];
                let (words, read_only) = scalar_words(text, file, node, dotenv)?;
                let vals: Vec<String> = words.iter().map(|a| a.value.clone()).collect();
                let (skip, entry) = entry_skip(&vals);
                if entry.is_none() {
                    return Err(LaunchError::NoVllmCommand);
                }
                let quote = node.quote().unwrap_or(super::YamlQuote::Plain);
                let last_end = words.last().map_or(node.span.end, |a| a.span.end);
                let mut words = words;
                return Ok((
                    words.split_off(skip.min(words.len())),
                    entry,
                    Insert {
                        file,
                        offset: last_end,
                        style: InsertStyle::YamlShellSameLine { quote },
                    },
                    read_only,
                    words,
                ));
            }
            let removals = removals(text, items.iter().map(|n| n.span.clone()).collect(), *flow);
            let mut args = Vec::new();
            for (item, removal) in items.iter().zip(removals) {
                let raw = item.as_str().unwrap_or("");
                let ip = interpolate(raw, dotenv).map_err(|m| {
                    LaunchError::syntax(file, item.line, li.col(text, item.span.start), m)
                })?;
                args.push(Arg {
                    file,
                    value: ip.value.clone().unwrap_or_else(|| raw.to_string()),
                    span: item.span.clone(),
                    render: Render::YamlScalar {
                        with_name: false,
                        flow: *flow,
                        dollars: true,
                    },
                    removal,
                    dynamic: ip.value.is_none(),
                    line: item.line,
                });
            }
            let vals: Vec<String> = args.iter().map(|a| a.value.clone()).collect();
            let (skip, entry) = entry_skip(&vals);
            let insert = list_insert(text, file, cmd);
            Ok((
                args.split_off(skip.min(args.len())),
                entry,
                insert,
                None,
                Vec::new(),
            ))
        }
        _ => Err(LaunchError::syntax(
            file,
            cmd.line,
            li.col(text, cmd.span.start),
            format!("service {name}: command: must be a string or a list"),
        )),
    }
}

/// `sh -c SCRIPT` / `bash -lc SCRIPT`: the index of SCRIPT.
pub(crate) fn shell_c(values: &[String]) -> Option<usize> {
    let base = values.first()?.rsplit('/').next()?;
    if !matches!(base, "sh" | "bash" | "dash") {
        return None;
    }
    let k = values.iter().position(|v| {
        v.starts_with('-')
            && v.len() > 1
            && v[1..].chars().all(|c| c.is_ascii_alphabetic())
            && v.contains('c')
    })?;
    // `bash -lc -- SCRIPT`: `--` ends the shell's options; SCRIPT is the next word.
    let script = if values.get(k + 1).is_some_and(|v| v == "--") {
        k + 2
    } else {
        k + 1
    };
    (script < values.len()).then_some(script)
}

/// The words of a script's simple commands up to and including the one that runs vLLM (all
/// of them when none does): a command after it (`| tee log`, `&& echo done`, `; sleep 1`) is
/// not vLLM's, so a flag appended after its words would go to that command instead.
pub(crate) fn through_vllm(commands: Vec<lex::SimpleCommand>) -> Vec<lex::Word> {
    let k = commands
        .iter()
        .position(|c| find_entrypoint(&c.words).is_some())
        .map_or(commands.len(), |k| k + 1);
    commands.into_iter().take(k).flat_map(|c| c.words).collect()
}

/// How many leading words are the vLLM entrypoint (`vllm serve`, `python -m vllm…`).
pub(crate) fn entry_skip(values: &[String]) -> (usize, Option<String>) {
    let words: Vec<lex::Word> = values
        .iter()
        .map(|v| lex::Word {
            span: 0..0,
            value: v.clone(),
            dynamic: false,
            line: 0,
        })
        .collect();
    match find_entrypoint(&words) {
        Some((_, s, e)) => (s, Some(e)),
        None => (0, None),
    }
}

/// The shell words of a string scalar (compose splits a string `command:` as a shell would),
/// mapped back to their bytes in the YAML text. A scalar that cannot be mapped back (a block
/// scalar, a folded line) is read but marked read-only.
pub(crate) fn scalar_words(
    text: &str,
    file: usize,
    node: &Node,
    dotenv: &DotEnv,
) -> Result<(Vec<Arg>, Option<String>), LaunchError> {
    let value = node.as_str().unwrap_or("");
    let li = lex::LineIndex::new(text);
    let script = lex::script(value).map_err(|e| {
        LaunchError::syntax(
            file,
            node.line,
            li.col(text, node.span.start),
            format!("command: {}", e.message),
        )
    })?;
    let words = through_vllm(script.commands);
    let map = yaml::value_offsets(text, node);
    let quote = node.quote().unwrap_or(super::YamlQuote::Plain);
    let read_only = map.is_none().then(|| {
        "the vLLM command is a YAML block scalar or spans lines; write it on one line or as a \
         list so the tool can edit it"
            .to_string()
    });
    let mut prev = map.as_ref().map_or(node.span.start, |m| m[0]);
    let mut out = Vec::new();
    for w in words {
        let span = match &map {
            Some(m) => m[w.span.start]..m[w.span.end],
            None => node.span.clone(),
        };
        let ip = interpolate(&w.value, dotenv).ok();
        let value = ip
            .as_ref()
            .and_then(|i| i.value.clone())
            .unwrap_or_else(|| w.value.clone());
        out.push(Arg {
            file,
            value,
            span: span.clone(),
            render: Render::YamlShellWord { quote },
            removal: prev..span.end,
            dynamic: ip.is_none_or(|i| i.value.is_none()),
            line: node.line,
        });
        prev = span.end;
    }
    Ok((out, read_only))
}

/// The compose variables a text uses (for notes).
pub fn variables(raw: &str) -> BTreeMap<String, ()> {
    let mut out = BTreeMap::new();
    if let Ok(p) = interp::parse(raw) {
        collect_vars(&p, &mut out);
    }
    out
}

fn collect_vars(p: &[interp::Piece], out: &mut BTreeMap<String, ()>) {
    for piece in p {
        if let interp::Piece::Var { name, arg, .. } = piece {
            out.insert(name.clone(), ());
            collect_vars(arg, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{Select, locate, locate_files};

    #[test]
    fn interpolation_defaults_are_read_and_targeted() {
        let text = "services:\n  vllm:\n    image: vllm/vllm-openai\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}\n      - B=${X:-${Y:-0}}\n      - COST=$$5\n    command: [\"--model\", \"m\"]\n";
        let loc = locate(text).expect("locates");
        let s = loc.env_site("PYTORCH_CUDA_ALLOC_CONF").expect("site");
        assert_eq!(s.value.as_deref(), Some("expandable_segments:True"));
        assert_eq!(&text[s.span.clone()], "expandable_segments:True");
        assert!(
            s.caveat
                .as_deref()
                .is_some_and(|c| c.contains("exported on the host"))
        );
        let b = loc.env_site("B").expect("B");
        assert_eq!(&text[b.span.clone()], "0");
        assert_eq!(
            loc.env_site("COST")
                .and_then(|s| s.value.clone())
                .as_deref(),
            Some("$5")
        );
    }

    #[test]
    fn flow_map_environment_and_quoted_string_command() {
        let text = "services:\n  llm:\n    image: vllm/vllm-openai\n    environment: {A: \"1\", B: x}\n    command: \"--model m --tensor-parallel-size 2\"\n";
        let loc = locate(text).expect("locates");
        assert_eq!(loc.env.len(), 2);
        assert_eq!(
            loc.arg_values(),
            vec!["--model", "m", "--tensor-parallel-size", "2"]
        );
        assert_eq!(&text[loc.args[3].span.clone()], "2");
        assert_eq!(loc.read_only, None);
    }

    #[test]
    fn several_vllm_services_need_a_name() {
        let text = "services:\n  a:\n    image: vllm/vllm-openai\n    command: --model a\n  b:\n    image: vllm/vllm-openai\n    command: --model b\n  web:\n    image: nginx\n";
        let e = locate(text).expect_err("two");
        let s = e.to_string();
        assert!(
            s.contains("a (line 2, --service a)") && s.contains("b (line 5"),
            "{s}"
        );
        let files = [SourceFile::new("compose.yaml", text)];
        let loc = locate_files(&files, &Select::service("b")).expect("picked");
        assert_eq!(loc.arg_values(), vec!["--model", "b"]);
        let e = locate_files(&files, &Select::service("nope")).expect_err("none");
        assert!(e.to_string().contains("a, b, web"), "{e}");
    }

    #[test]
    fn dotenv_and_env_file_given_alongside() {
        let files = [
            SourceFile::new(
                "compose.yaml",
                "services:\n  vllm:\n    image: vllm/vllm-openai\n    env_file: vllm.env\n    environment:\n      - PYTORCH_CUDA_ALLOC_CONF=${PCAC:-x}\n    command: [--model, m]\n",
            ),
            SourceFile::new(".env", "PCAC=expandable_segments:True\n"),
            SourceFile::new("vllm.env", "VLLM_USE_DEEP_GEMM=0\n"),
        ];
        let loc = locate_files(&files, &Select::default()).expect("locates");
        let s = loc.env_site("PYTORCH_CUDA_ALLOC_CONF").expect("site");
        assert_eq!(s.file, 1);
        assert_eq!(s.value.as_deref(), Some("expandable_segments:True"));
        assert_eq!(loc.env_site("VLLM_USE_DEEP_GEMM").map(|s| s.file), Some(2));
    }

    #[test]
    fn sh_c_command() {
        let text = "services:\n  vllm:\n    image: vllm/vllm-openai\n    entrypoint: [\"/bin/bash\", \"-c\"]\n    command: [\"sh\", \"-c\", \"vllm serve m --tensor-parallel-size 2\"]\n";
        let loc = locate(text).expect("locates");
        assert_eq!(loc.entrypoint.as_deref(), Some("vllm serve"));
        assert_eq!(loc.arg_values(), vec!["m", "--tensor-parallel-size", "2"]);
    }

    #[test]
    fn shell_options_end_before_the_script() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // aibrix's RayClusterFleet sample: `["/bin/bash", "-lc", "--"]` then the script.
        assert_eq!(
            shell_c(&v(&["/bin/bash", "-lc", "--", "vllm serve m"])),
            Some(3)
        );
        assert_eq!(shell_c(&v(&["sh", "-c", "vllm serve m"])), Some(2));
        assert_eq!(shell_c(&v(&["bash", "-lc", "--"])), None);
        assert_eq!(shell_c(&v(&["python", "-c", "x"])), None);
    }
}
