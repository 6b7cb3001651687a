//! Kubernetes manifests (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob,
//! List; several documents per file) and the vLLM production-stack Helm values.
//!
//! A container's argv is `command` + `args` (`sh -c "vllm serve …"` read inside the script,
//! with the `export NAME=value` before vLLM as read-only sites); `env` entries with `value` are
//! sites, `valueFrom` ones are left alone (read-only, their value unknown), `envFrom` leaves
//! every variable the `env:` list does not set unknown (`EnvGaps`). Kubernetes expands `$(VAR)`
//! in values and arguments and reads `$$` as `$`.
//!
//! The production-stack Helm values are read in [`super::helm`], with this module's `env:`
//! entries and argument lists.

use super::compose::{self, DotEnv};
use super::yaml::{self, Doc, Node, NodeKind};
use super::{
    Arg, EnvSite, Form, Insert, InsertStyle, LaunchError, Located, PickWords, Render, Select,
    SourceFile, pick_one,
};

/// A file whose documents have top-level `apiVersion:` and `kind:`.
pub(crate) fn looks_like_manifest(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("apiVersion:"))
        && text.lines().any(|l| l.starts_with("kind:"))
}

/// Helm values of vLLM's production-stack chart.
pub(crate) fn looks_like_helm_values(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_end() == "servingEngineSpec:" || l.starts_with("servingEngineSpec: #"))
}

/// Kubernetes' `$(VAR)` expansion: the value as written with `$$` read as `$`, and whether it
/// refers to another variable.
fn expand(raw: &str) -> (String, bool) {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut dynamic = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'$') {
            out.push('$');
            i += 2;
            continue;
        }
        if b[i] == b'$' && b.get(i + 1) == Some(&b'(') {
            dynamic = true;
        }
        let ch = raw[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&raw[i..i + ch]);
        i += ch;
    }
    (out, dynamic)
}

struct Container<'a> {
    doc: &'a Doc,
    /// `Kind/name`.
    resource: String,
    name: String,
    node: &'a Node,
    /// The resource it belongs to and which of its pod templates holds it.
    obj: &'a Node,
    pod: usize,
}

impl Container<'_> {
    fn id(&self) -> String {
        format!("{}/{}", self.resource, self.name)
    }
}

/// The pod spec of a workload document.
fn pod_spec<'a>(doc: &'a Doc, obj: &'a Node) -> Option<&'a Node> {
    let kind = obj.get("kind")?.as_str()?;
    let spec = doc.resolve(obj.get("spec")?);
    match kind {
        "Pod" => Some(spec),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "ReplicationController" => spec
            .get("template")
            .map(|t| doc.resolve(t))?
            .get("spec")
            .map(|s| doc.resolve(s)),
        "CronJob" => spec
            .get("jobTemplate")?
            .get("spec")?
            .get("template")?
            .get("spec")
            .map(|s| doc.resolve(s)),
        _ => None,
    }
}

/// How deep under a resource's `spec:` a pod template is looked for.
const MAX_TEMPLATE_DEPTH: usize = 12;

/// Every pod spec (a map with a `containers:` list) under `n`: the pod templates of any kind
/// (LeaderWorkerSet's leader and worker templates, KServe runtimes, Ray clusters, ...), found
/// by shape rather than by a list of kinds.
fn pod_specs<'a>(doc: &'a Doc, n: &'a Node, depth: usize, out: &mut Vec<&'a Node>) {
    let n = doc.resolve(n);
    if depth > MAX_TEMPLATE_DEPTH {
        return;
    }
    if let Some(c) = n.get("containers")
        && matches!(doc.resolve(c).kind, NodeKind::Seq { .. })
    {
        out.push(n);
        return;
    }
    for (_, v) in n.entries() {
        pod_specs(doc, v, depth + 1, out);
    }
    for v in n.items() {
        pod_specs(doc, v, depth + 1, out);
    }
}

fn containers<'a>(doc: &'a Doc, obj: &'a Node, out: &mut Vec<Container<'a>>) {
    if obj.get("kind").and_then(Node::as_str) == Some("List") {
        for item in obj.get("items").map_or(&[][..], Node::items) {
            containers(doc, doc.resolve(item), out);
        }
        return;
    }
    let mut specs = Vec::new();
    match pod_spec(doc, obj) {
        Some(spec) => specs.push(spec),
        None => {
            if let Some(spec) = obj.get("spec") {
                pod_specs(doc, spec, 0, &mut specs);
            }
        }
    }
    let kind = obj.get("kind").and_then(Node::as_str).unwrap_or("");
    let name = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Node::as_str)
        .unwrap_or("");
    let all = specs.iter().enumerate().flat_map(|(pod, spec)| {
        spec.get("containers")
            .map_or(&[][..], Node::items)
            .iter()
            .map(move |c| (pod, c))
    });
    for (pod, c) in all {
        let c = doc.resolve(c);
        out.push(Container {
            obj,
            pod,
            doc,
            resource: format!("{kind}/{name}"),
            name: c
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_string(),
            node: c,
        });
    }
}

fn list_text(n: Option<&Node>) -> String {
    n.map(|n| {
        n.items()
            .iter()
            .filter_map(Node::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    })
    .unwrap_or_default()
}

fn is_vllm(c: &Node) -> bool {
    let image = c.get("image").and_then(Node::as_str).unwrap_or("");
    let argv = format!(
        "{} {}",
        list_text(c.get("command")),
        list_text(c.get("args"))
    );
    image.contains("vllm") || argv.contains("vllm") || argv.contains("--model")
}

/// The containers that start vLLM's server itself (by their command line or the image's).
fn starts_server<'a, 'b>(cs: &[&'b Container<'a>]) -> Vec<&'b Container<'a>> {
    cs.iter()
        .copied()
        .filter(|c| {
            let argv = format!(
                "{} {}",
                list_text(c.node.get("command")),
                list_text(c.node.get("args"))
            );
            // No command: the vLLM image's own entrypoint, the server.
            let image_entry = c.node.get("command").is_none()
                && c.node
                    .get("image")
                    .and_then(Node::as_str)
                    .is_some_and(|i| i.contains("vllm"));
            image_entry || argv.contains("vllm serve") || argv.contains("vllm.entrypoints")
        })
        .collect()
}

/// Locate the vLLM container in a manifest (`files[0]`).
pub fn locate(files: &[SourceFile], select: &Select) -> Result<Located, LaunchError> {
    let text = &files[0].text;
    let docs = yaml::parse(text, 0)?;
    let mut all = Vec::new();
    for d in &docs {
        containers(d, d.resolve(&d.root), &mut all);
    }
    let vllm: Vec<&Container> = all.iter().filter(|c| is_vllm(c.node)).collect();
    let list = |v: &[&Container]| {
        v.iter()
            .map(|c| {
                format!(
                    "  {} (line {}, --container {})",
                    c.id(),
                    c.node.line,
                    c.id()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let unknown = |want: &str| {
        format!(
            "--container {want}: no such container in {}; its containers are:\n{}",
            files[0].name,
            list(&all.iter().collect::<Vec<_>>())
        )
    };
    let several_named = |want: &str, many: &[&Container]| {
        format!(
            "--container {want} matches several containers; name one as \
             Kind/name/container:\n{}",
            list(many)
        )
    };
    let several = |many: &[&Container]| {
        format!(
            "{} containers in {} run vLLM; pick one with --container NAME:\n{}",
            many.len(),
            files[0].name,
            list(many)
        )
    };
    let chosen: &Container = pick_one(
        &all,
        select.container.as_deref(),
        |c, want| {
            c.name == want
                || c.id() == want
                || c.id().split_once('/').is_some_and(|(_, rest)| rest == want)
        },
        vllm,
        // A LeaderWorkerSet's worker runs the vLLM image but starts a Ray worker: the one
        // container that starts the server is the launch (its peers get env edits too).
        |many| match starts_server(many).as_slice() {
            [one] => Some(*one),
            _ => None,
        },
        PickWords {
            unknown: &unknown,
            several_named: Some(&several_named),
            several: &several,
        },
    )?;
    // Other containers that take the same `env:` list through a YAML anchor change with it.
    let sharing: Vec<String> = env_anchor(chosen)
        .map(|id| {
            all.iter()
                .filter(|c| {
                    !std::ptr::eq(c.node, chosen.node)
                        && std::ptr::eq(c.doc, chosen.doc)
                        && env_anchor(c) == Some(id)
                })
                .map(Container::id)
                .collect()
        })
        .unwrap_or_default();
    let mut loc = container(text, chosen, false)?;
    // A LeaderWorkerSet runs vLLM in its leader and its worker pods: each reads its own
    // environment (Ray carries only vLLM's own variables to the workers), so an environment
    // edit goes to the vLLM container of every pod template of the resource.
    if chosen.resource.starts_with("LeaderWorkerSet/") {
        for peer in all
            .iter()
            .filter(|c| std::ptr::eq(c.obj, chosen.obj) && c.pod != chosen.pod && is_vllm(c.node))
        {
            loc.peers.push(container(text, peer, true)?);
        }
    }
    if !sharing.is_empty() {
        let note = format!(
            "{}'s env: list is a YAML anchor shared with {}: an edit to it changes {} too",
            chosen.id(),
            sharing.join(", "),
            if sharing.len() == 1 {
                "that container"
            } else {
                "those containers"
            }
        );
        for s in loc.env.iter_mut().filter(|s| s.caveat.is_none()) {
            s.caveat = Some(note.clone());
        }
        loc.notes.push(note);
    }
    Ok(loc)
}

/// The anchor a container's `env:` list defines (`env: &e`) or uses (`env: *e`).
fn env_anchor(c: &Container<'_>) -> Option<usize> {
    let e = c.node.get("env")?;
    match e.kind {
        NodeKind::Alias(id) => Some(id),
        _ if e.anchor != 0 => Some(e.anchor),
        _ => None,
    }
}

/// `peer`: read for its environment only (a LeaderWorkerSet worker whose script starts a Ray
/// worker rather than `vllm serve`).
fn container(text: &str, c: &Container<'_>, peer: bool) -> Result<Located, LaunchError> {
    let doc = c.doc;
    let node = c.node;
    let mut notes = Vec::new();
    // The column of the container's keys: the first key often follows the list's `- `, so the
    // line's own indentation is the dash's, not the keys'.
    let key_indent = node
        .entries()
        .first()
        .map(|(k, _)| yaml::column_indent(text, k.span.start))
        .unwrap_or_default();
    let end = super::content_line_end(text, node.span.end);
    let mut env = Vec::new();
    let env_insert = match node.get("env").map(|e| doc.resolve(e)) {
        Some(e) if !e.is_null() => {
            read_env(text, 0, e, node.key_node("env"), &mut env, &mut notes)?
        }
        Some(_) => Insert {
            file: 0,
            offset: 0,
            style: InsertStyle::Nowhere {
                why: format!(
                    "{}: `env:` is there but empty; write the entry under it by hand",
                    c.id()
                ),
            },
        },
        // `{name: vllm, image: …}`: a flow entry before the closing brace.
        None if node.is_flow() => Insert {
            file: 0,
            offset: node.span.end.saturating_sub(1),
            style: InsertStyle::K8sNewFlowEnv {
                empty: node.entries().is_empty(),
            },
        },
        None => Insert {
            file: 0,
            offset: end,
            style: InsertStyle::K8sNewEnv {
                indent: key_indent.clone(),
            },
        },
    };
    let mut unread = Vec::new();
    note_env_from(node.get("envFrom"), &c.id(), &mut notes, &mut unread);
    let image = node.get("image").and_then(Node::as_str).unwrap_or("");
    let command = node.get("command").map(|n| doc.resolve(n));
    let args_node = node.get("args").map(|n| doc.resolve(n));
    let (args, entrypoint, arg_insert, read_only, before) = argv(
        text,
        command,
        args_node,
        &key_indent,
        end,
        &format!("image {image}"),
        peer,
    )?;
    let mut gaps = super::EnvGaps::default();
    for reason in unread {
        gaps.unread_before(reason, &env);
    }
    env.extend(compose::script_exports(&before));
    Ok(Located {
        form: Form::Kubernetes,
        entrypoint: Some(if peer {
            c.id()
        } else {
            format!("{entrypoint} ({})", c.id())
        }),
        env,
        args,
        env_insert,
        arg_insert,
        notes,
        problems: Vec::new(),
        read_only: None,
        args_read_only: read_only,
        used_files: vec![0],
        late_insert: None,
        gaps,
        shadowed: Vec::new(),
        frozen: Default::default(),
        arg_vars: Default::default(),
        peers: Vec::new(),
    })
}

fn note_env_from(n: Option<&Node>, who: &str, notes: &mut Vec<String>, unread: &mut Vec<String>) {
    for item in n.map_or(&[][..], Node::items) {
        for (k, v) in item.entries() {
            let what = k.as_str().unwrap_or("");
            let name = v.get("name").and_then(Node::as_str).unwrap_or("?");
            unread.push(format!(
                "{who} (line {}): envFrom {what} {name} gives the container variables that are \
                 not in the manifest, so they are not known here (put the allocator variables \
                 in the container's env: list, or check {name} for {})",
                item.line,
                crate::vllm::alloc_conf::VARS.join(" / ")
            ));
            notes.push(format!(
                "{who}: envFrom {what} {name}: its variables reach the container too and are not \
                 read here; check it for {}",
                crate::vllm::alloc_conf::VARS.join(" / ")
            ));
        }
    }
}

/// `env:` entries (`- name: N` + `value: V` / `valueFrom: …`) as sites.
pub(super) fn read_env(
    text: &str,
    file: usize,
    e: &Node,
    key: Option<&Node>,
    env: &mut Vec<EnvSite>,
    notes: &mut Vec<String>,
) -> Result<Insert, LaunchError> {
    let flow = e.is_flow();
    let items = e.items();
    let spans: Vec<_> = items.iter().map(|i| i.span.clone()).collect();
    let removals = compose::last_takes_key(text, key, compose::removals(text, spans, flow), flow);
    for (item, removal) in items.iter().zip(removals) {
        let Some(name) = item.get("name").and_then(Node::as_str) else {
            return Err(LaunchError::syntax(
                file,
                item.line,
                1,
                "an env entry without a name:",
            ));
        };
        let entry_flow = flow || item.is_flow();
        if let Some(v) = item.get("value") {
            let raw = if v.is_null() {
                ""
            } else {
                v.as_str().unwrap_or("")
            };
            let (value, dynamic) = expand(raw);
            env.push(EnvSite::new(
                file,
                name,
                Some(value),
                v.span.clone(),
                Render::YamlScalar {
                    with_name: false,
                    flow: entry_flow,
                    dollars: true,
                },
                removal,
                dynamic,
                v.line,
            ));
        } else if item.get("valueFrom").is_some() {
            notes.push(format!(
                "line {}: {name} comes from valueFrom (a Secret, ConfigMap or field): not read, \
                 left alone",
                item.line
            ));
            let mut s = EnvSite::new(
                file,
                name,
                None,
                item.span.clone(),
                Render::Fixed {
                    why: format!(
                        "{name} is set with valueFrom (line {}); change the Secret or ConfigMap, \
                         or replace the entry by hand",
                        item.line
                    ),
                },
                removal,
                true,
                item.line,
            );
            s.caveat = None;
            env.push(s);
        } else {
            // `- name: N` alone sets N to the empty string.
            let at = item.span.end;
            env.push(EnvSite::new(
                file,
                name,
                Some(String::new()),
                at..at,
                Render::Fixed {
                    why: format!(
                        "{name} has no value: line (line {}); add one by hand",
                        item.line
                    ),
                },
                removal,
                false,
                item.line,
            ));
        }
    }
    Ok(match e.append_point(text) {
        yaml::AppendPoint::Flow { offset, empty } => Insert {
            file,
            offset,
            style: InsertStyle::K8sFlowEnvItem { empty },
        },
        yaml::AppendPoint::Block { offset, indent } => Insert {
            file,
            offset,
            style: InsertStyle::K8sEnvItem { indent },
        },
        yaml::AppendPoint::Empty => Insert {
            file,
            offset: 0,
            style: InsertStyle::Nowhere {
                why: "empty env list".into(),
            },
        },
    })
}

/// The vLLM arguments, the entrypoint, where new arguments go, why it is read-only, and the
/// words a `sh -c` script runs before vLLM (`export NAME=value &&`).
type Argv = (Vec<Arg>, String, Insert, Option<String>, Vec<Arg>);

/// A string-list node's items as arguments.
pub(super) fn list_args(text: &str, n: &Node) -> Result<Vec<Arg>, LaunchError> {
    let flow = n.is_flow();
    let spans: Vec<_> = n.items().iter().map(|i| i.span.clone()).collect();
    let removals = compose::removals(text, spans, flow);
    n.items()
        .iter()
        .zip(removals)
        .map(|(i, removal)| {
            let raw = i.as_str().ok_or_else(|| {
                LaunchError::syntax(0, i.line, 1, "command: and args: items must be strings")
            })?;
            let (value, dynamic) = expand(raw);
            Ok(Arg {
                file: 0,
                value,
                span: i.span.clone(),
                render: Render::YamlScalar {
                    with_name: false,
                    flow,
                    dollars: true,
                },
                removal,
                dynamic,
                line: i.line,
            })
        })
        .collect()
}

/// Where a new item of `command:` / `args:` / `extraArgs:` goes (a node that is no list yet
/// takes a flow item just inside its start).
pub(super) fn list_insert(text: &str, n: &Node) -> Insert {
    let (offset, style) = match n.append_point(text) {
        yaml::AppendPoint::Flow { offset, empty } => (offset, InsertStyle::YamlFlowItem { empty }),
        yaml::AppendPoint::Block { offset, indent } => {
            (offset, InsertStyle::YamlBlockItem { indent })
        }
        yaml::AppendPoint::Empty => (n.span.start + 1, InsertStyle::YamlFlowItem { empty: true }),
    };
    Insert {
        file: 0,
        offset,
        style,
    }
}

/// The vLLM arguments of `command` + `args`.
fn argv(
    text: &str,
    command: Option<&Node>,
    args: Option<&Node>,
    key_indent: &str,
    container_end: usize,
    image: &str,
    peer: bool,
) -> Result<Argv, LaunchError> {
    let cmd_args = match command {
        Some(c) => list_args(text, c)?,
        None => Vec::new(),
    };
    let arg_args = match args {
        Some(a) => list_args(text, a)?,
        None => Vec::new(),
    };
    let n_cmd = cmd_args.len();
    let mut all: Vec<Arg> = cmd_args;
    all.extend(arg_args);
    let values: Vec<String> = all.iter().map(|a| a.value.clone()).collect();
    // `sh -c "vllm serve …"` in command or args.
    if let Some(k) = compose::shell_c(&values) {
        let node = if k < n_cmd {
            command.map(|c| &c.items()[k])
        } else {
            args.map(|a| &a.items()[k - n_cmd])
        };
        if let Some(node) = node {
            let (words, read_only) = words_in(text, node)?;
            let vals: Vec<String> = words.iter().map(|a| a.value.clone()).collect();
            let (skip, entry) = compose::entry_skip(&vals);
            let entry = match entry {
                Some(e) => e,
                None if peer => "its sh -c script".to_string(),
                None => return Err(LaunchError::NoVllmCommand),
            };
            let quote = node.quote().unwrap_or(super::YamlQuote::Plain);
            let last_end = words.last().map_or(node.span.end, |a| a.span.end);
            let mut words = words;
            let vllm = words.split_off(skip.min(words.len()));
            return Ok((
                vllm,
                entry,
                Insert {
                    file: 0,
                    offset: last_end,
                    style: InsertStyle::YamlShellSameLine { quote },
                },
                read_only,
                words,
            ));
        }
    }
    let (skip, entry) = compose::entry_skip(&values);
    let entry = entry.unwrap_or_else(|| format!("the image's entrypoint ({image})"));
    let insert = match (args, command) {
        (Some(a), _) => list_insert(text, a),
        (None, Some(c)) if skip > 0 => list_insert(text, c),
        _ => Insert {
            file: 0,
            offset: container_end,
            style: InsertStyle::YamlNewList {
                indent: key_indent.to_string(),
                key: "args".into(),
            },
        },
    };
    Ok((
        all.split_off(skip.min(all.len())),
        entry,
        insert,
        None,
        Vec::new(),
    ))
}

/// Words of a shell script in a YAML string (no compose interpolation: the shell expands `$`).
fn words_in(text: &str, node: &Node) -> Result<(Vec<Arg>, Option<String>), LaunchError> {
    let (mut words, ro) = compose::scalar_words(text, 0, node, &DotEnv { sites: Vec::new() })
        .or_else(|_| Ok::<_, LaunchError>((Vec::new(), None)))?;
    if words.is_empty() {
        let value = node.as_str().unwrap_or("");
        let script = super::lex::script(value).map_err(|e| {
            LaunchError::syntax(0, node.line, 1, format!("sh -c script: {}", e.message))
        })?;
        let map = yaml::value_offsets(text, node);
        let mut prev = map.as_ref().map_or(node.span.start, |m| m[0]);
        for w in compose::through_vllm(script.commands) {
            let span = match &map {
                Some(m) => m[w.span.start]..m[w.span.end],
                None => node.span.clone(),
            };
            words.push(Arg {
                file: 0,
                value: w.value.clone(),
                span: span.clone(),
                render: Render::YamlShellWord {
                    quote: node.quote().unwrap_or(super::YamlQuote::Plain),
                },
                removal: prev..span.end,
                dynamic: w.dynamic,
                line: node.line,
            });
            prev = span.end;
        }
        return Ok((
            words,
            map.is_none().then(|| {
                "the sh -c script spans lines; write it on one line so the tool can edit it"
                    .to_string()
            }),
        ));
    }
    Ok((words, ro))
}

/// An env entry's value: always double-quoted (`$` doubled: Kubernetes expands `$(VAR)`).
fn quoted_value(v: &str) -> String {
    let v = v.replace('$', "$$");
    serde_json::to_string(&v).unwrap_or_default()
}

/// A new env entry: `- name: NAME` + `value: "v"`.
pub(crate) fn env_item(indent: &str, name: &str, value: &str) -> String {
    format!(
        "\n{indent}- name: {name}\n{indent}  value: {}",
        quoted_value(value)
    )
}

/// A new `env:` list under a container, with its first entry.
pub(crate) fn new_env(indent: &str, name: &str, value: &str) -> String {
    format!(
        "\n{indent}env:\n{indent}  - name: {name}\n{indent}    value: {}",
        quoted_value(value)
    )
}

/// A new env entry in a flow list: `{name: NAME, value: "v"}` (after a comma unless `empty`).
pub(crate) fn flow_env_item(empty: bool, name: &str, value: &str) -> String {
    let item = format!("{{name: {name}, value: {}}}", quoted_value(value));
    if empty { item } else { format!(", {item}") }
}

/// A new `env:` list in a flow-style container (after a comma unless the container is `empty`).
pub(crate) fn new_flow_env(empty: bool, name: &str, value: &str) -> String {
    let list = format!("env: [{{name: {name}, value: {}}}]", quoted_value(value));
    if empty { list } else { format!(", {list}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{locate, locate_files, parse_launch};

    const DEPLOY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.24.0\n          args:\n            - --model\n            - Qwen/Qwen3.6-27B-FP8\n            - --tensor-parallel-size\n            - \"2\"\n          env:\n            - name: PYTORCH_CUDA_ALLOC_CONF\n              value: expandable_segments:True\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {name: hf, key: token}\n          envFrom:\n            - configMapRef:\n                name: vllm-env\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llm\n";

    #[test]
    fn deployment_container_env_and_args() {
        let l = parse_launch(DEPLOY).expect("parses");
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(
            l.env.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
            Some("expandable_segments:True")
        );
        assert!(!l.env.contains_key("HF_TOKEN"));
        let loc = locate(DEPLOY).expect("locates");
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("envFrom configMapRef vllm-env"))
        );
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("HF_TOKEN comes from valueFrom"))
        );
    }

    #[test]
    fn several_containers_need_a_name() {
        let two = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: vllm/vllm-openai\n      args: [--model, a]\n    - name: b\n      image: vllm/vllm-openai\n      command: [\"sh\", \"-c\", \"vllm serve b -tp 2\"]\n";
        let e = locate(two).expect_err("two");
        assert!(e.to_string().contains("--container Pod/p/b"), "{e}");
        let files = [SourceFile::new("pod.yaml", two)];
        let sel = Select {
            container: Some("b".into()),
            ..Default::default()
        };
        let loc = locate_files(&files, &sel).expect("b");
        assert_eq!(loc.arg_values(), vec!["b", "-tp", "2"]);
    }

    #[test]
    fn helm_values() {
        let text = "servingEngineSpec:\n  runtimeClassName: \"\"\n  modelSpec:\n  - name: \"llama3\"\n    repository: \"vllm/vllm-openai\"\n    tag: \"latest\"\n    modelURL: \"meta-llama/Llama-3.1-8B-Instruct\"\n    vllmConfig:\n      enableChunkedPrefill: false\n      enablePrefixCaching: false\n      maxModelLen: 4096\n      tensorParallelSize: 2\n      extraArgs: [\"--gpu-memory-utilization\", \"0.8\"]\n    env:\n      - name: PYTORCH_CUDA_ALLOC_CONF\n        value: \"expandable_segments:True\"\n";
        let l = parse_launch(text).expect("parses");
        assert_eq!(l.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.max_model_len, Some(4096));
        assert_eq!(l.gpu_memory_utilization, Some(0.8));
        assert_eq!(
            l.flags.get("enable-prefix-caching").map(String::as_str),
            Some("false"),
            "--no-enable-prefix-caching turns it off"
        );
        assert_eq!(
            l.env.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
            Some("expandable_segments:True")
        );
    }

    #[test]
    fn kubernetes_dollars() {
        assert_eq!(expand("a$$b"), ("a$b".to_string(), false));
        assert_eq!(expand("$(HOME)/x"), ("$(HOME)/x".to_string(), true));
    }
}
