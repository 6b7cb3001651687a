//! Helm values of vLLM's production-stack chart: `servingEngineSpec.modelSpec[]` entries (picked
//! by `name` with `--service`), whose `vllmConfig` keys the chart turns into flags, in the order
//! of helm/templates/deployment-vllm-multi.yaml (vllm-project/production-stack, stable since
//! 60eb7107, 2025-01-20; read at a6c01db0), with `extraArgs` appended and `env` entries added to
//! the container after `servingEngineSpec.env`. Its `env:` entries and argument lists are
//! Kubernetes' ([`super::k8s`]), and so is their rendering.

use super::k8s::{list_args, list_insert, read_env};
use super::yaml::{self, Node};
use super::{
    Arg, Form, Insert, InsertStyle, LaunchError, Located, PickWords, Render, Select, SourceFile,
    line_end, pick_one,
};

/// vLLM production-stack Helm values.
pub fn locate(files: &[SourceFile], select: &Select) -> Result<Located, LaunchError> {
    let text = &files[0].text;
    let docs = yaml::parse(text, 0)?;
    let doc = docs.first().ok_or(LaunchError::NoVllmCommand)?;
    let ses = doc
        .root
        .get("servingEngineSpec")
        .map(|n| doc.resolve(n))
        .ok_or(LaunchError::NoVllmCommand)?;
    let specs: Vec<&Node> = ses
        .get("modelSpec")
        .map_or(&[][..], Node::items)
        .iter()
        .map(|n| doc.resolve(n))
        .collect();
    let name_of = |n: &Node| {
        n.get("name")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string()
    };
    let list = || {
        specs
            .iter()
            .map(|s| {
                format!(
                    "  {} (line {}, --service {})",
                    name_of(s),
                    s.line,
                    name_of(s)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let unknown = |want: &str| {
        format!(
            "--service {want}: no modelSpec entry has that name; the entries are:\n{}",
            list()
        )
    };
    let several = |_: &[&&Node]| {
        format!(
            "{} modelSpec entries in {}; pick one with --service NAME:\n{}",
            specs.len(),
            files[0].name,
            list()
        )
    };
    let spec: &Node = pick_one(
        &specs,
        select.service.as_deref(),
        |s, want| name_of(s) == want,
        specs.iter().collect(),
        |_| None,
        PickWords {
            unknown: &unknown,
            several_named: None,
            several: &several,
        },
    )?;
    let name = name_of(spec);
    let mut notes = vec![format!(
        "Helm values: the production-stack chart turns modelSpec {name}'s vllmConfig into \
         `vllm serve` flags (its template also adds --host, --port and chart-set variables, \
         which are not shown)"
    )];
    // The column of the entry's keys: the first key follows the list's `- `, so the line's own
    // indentation is the dash's (a new `env:` there would land in servingEngineSpec).
    let entry_indent = spec
        .entries()
        .first()
        .map(|(k, _)| yaml::column_indent(text, k.span.start))
        .unwrap_or_default();
    let spec_end = super::content_line_end(text, spec.span.end);
    // Environment: the global list, then the model's (a later entry wins). The chart's
    // ray-cluster template (a model with raySpec) renders only the model's own list.
    let mut env = Vec::new();
    if let Some(g) = ses.get("env").map(|n| doc.resolve(n))
        && !g.is_null()
    {
        if spec.get("raySpec").is_some_and(|r| !r.is_null()) {
            notes.push(format!(
                "modelSpec {name} has raySpec: the chart's ray-cluster template renders only \
                 modelSpec[].env, so servingEngineSpec.env (line {}) does not reach its engine \
                 and is not read",
                g.line
            ));
        } else {
            let from = env.len();
            read_env(text, 0, g, ses.key_node("env"), &mut env, &mut notes)?;
            if specs.len() > 1 {
                for s in &mut env[from..] {
                    s.shared = Some(format!(
                        "{} is set in servingEngineSpec.env (line {}), which every modelSpec \
                         reads: the new value goes in modelSpec {name}'s env:, which the chart \
                         puts after it, so only {name} changes",
                        s.name, s.line
                    ));
                }
            }
        }
    }
    let env_insert = match spec.get("env").map(|n| doc.resolve(n)) {
        Some(e) if !(e.is_null() || e.is_flow() && e.items().is_empty()) => {
            read_env(text, 0, e, spec.key_node("env"), &mut env, &mut notes)?
        }
        Some(e) if e.is_flow() => Insert {
            file: 0,
            offset: e.span.start + 1,
            style: InsertStyle::K8sFlowEnvItem { empty: true },
        },
        _ => Insert {
            file: 0,
            offset: spec_end,
            style: InsertStyle::K8sNewEnv {
                indent: entry_indent.clone(),
            },
        },
    };
    let mut helm_unread = Vec::new();
    if let Some(s) = spec
        .get("envFromSecret")
        .filter(|s| !s.entries().is_empty())
    {
        let n = s.get("name").and_then(Node::as_str).unwrap_or("?");
        notes.push(format!(
            "modelSpec {name}: envFromSecret {n}: its variables reach the container too and are \
             not read here"
        ));
        helm_unread.push(format!(
            "modelSpec {name}: envFromSecret {n} gives the container variables that are not in \
             the values, so they are not known here"
        ));
    }
    let mut args = Vec::new();
    if let Some(m) = spec.get("modelURL") {
        args.push(fixed_arg(
            m,
            m.as_str().unwrap_or(""),
            "the model is modelURL",
            m.span.end..m.span.end,
        ));
    }
    let arg_insert = match spec.get("vllmConfig").map(|n| doc.resolve(n)) {
        Some(cfg) if !cfg.is_null() => helm_config_args(text, cfg, &mut args)?,
        _ => Insert {
            file: 0,
            offset: 0,
            style: InsertStyle::Nowhere {
                why: format!(
                    "modelSpec {name} has no vllmConfig; adding one also makes the chart pass \
                     --no-enable-prefix-caching unless enablePrefixCaching: true is set, so add \
                     vllmConfig (with extraArgs) by hand"
                ),
            },
        },
    };
    if let Some(r) = spec.get("modelRevision") {
        args.push(fixed_arg(
            r,
            "--revision",
            "modelRevision",
            r.span.end..r.span.end,
        ));
        args.push(fixed_arg(
            r,
            r.as_str().unwrap_or(""),
            "modelRevision",
            r.span.end..r.span.end,
        ));
    }
    let mut gaps = super::EnvGaps::default();
    for reason in helm_unread {
        gaps.unread_before(reason, &env);
    }
    Ok(Located {
        form: Form::HelmValues,
        entrypoint: Some(format!(
            "vllm serve (production-stack chart, modelSpec {name})"
        )),
        env,
        args,
        env_insert,
        arg_insert,
        notes,
        problems: Vec::new(),
        read_only: None,
        args_read_only: None,
        used_files: vec![0],
        late_insert: None,
        gaps,
        shadowed: Vec::new(),
        frozen: Default::default(),
        arg_vars: Default::default(),
        peers: Vec::new(),
    })
}

fn fixed_arg(n: &Node, value: &str, why: &str, removal: std::ops::Range<usize>) -> Arg {
    Arg {
        file: 0,
        value: value.to_string(),
        span: n.span.clone(),
        render: Render::Fixed {
            why: format!("{why} (line {}); change it there by hand", n.line),
        },
        removal,
        dynamic: false,
        line: n.line,
    }
}

/// `vllmConfig` keys in the chart's order, as flags; `extraArgs` as written.
fn helm_config_args(text: &str, cfg: &Node, args: &mut Vec<Arg>) -> Result<Insert, LaunchError> {
    let entry = |key: &str| -> Option<(&Node, &Node, std::ops::Range<usize>)> {
        let k = cfg.key_node(key)?;
        let v = cfg.get(key)?;
        let removal = if cfg.is_flow() {
            let spans: Vec<_> = cfg
                .entries()
                .iter()
                .map(|(k, v)| k.span.start..v.span.end.max(k.span.end))
                .collect();
            let i = cfg.entries().iter().position(|(kk, _)| kk.span == k.span)?;
            yaml::flow_removals(&spans)[i].clone()
        } else {
            yaml::block_removal(text, k.span.start, v.span.end.max(k.span.end))
        };
        Some((k, v, removal))
    };
    let bool_flag =
        |key: &str, on: &str, off: &str, absent_off: bool, args: &mut Vec<Arg>| match entry(key) {
            Some((k, v, removal)) => {
                let is_on = matches!(v.as_str(), Some("true" | "True" | "yes"));
                args.push(fixed_arg(
                    k,
                    if is_on { on } else { off },
                    &format!("vllmConfig.{key}"),
                    removal,
                ));
            }
            None if absent_off => args.push(Arg {
                file: 0,
                value: off.to_string(),
                span: cfg.span.start..cfg.span.start,
                render: Render::Fixed {
                    why: format!("the chart passes {off} unless vllmConfig.{key} is true"),
                },
                removal: cfg.span.start..cfg.span.start,
                dynamic: false,
                line: cfg.line,
            }),
            None => {}
        };
    bool_flag(
        "enableChunkedPrefill",
        "--enable-chunked-prefill",
        "--no-enable-chunked-prefill",
        false,
        args,
    );
    bool_flag(
        "enablePrefixCaching",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        true,
        args,
    );
    for (key, flag) in HELM_VALUE_KEYS {
        if let Some((k, v, removal)) = entry(key) {
            args.push(fixed_arg(
                k,
                flag,
                &format!("vllmConfig.{key}"),
                removal.clone(),
            ));
            args.push(Arg {
                file: 0,
                value: v.as_str().unwrap_or("").to_string(),
                span: v.span.clone(),
                render: Render::YamlScalar {
                    with_name: false,
                    flow: cfg.is_flow(),
                    dollars: true,
                },
                removal,
                dynamic: false,
                line: v.line,
            });
        }
    }
    match cfg.get("extraArgs") {
        Some(x) if !x.is_null() => {
            args.extend(list_args(text, x)?);
            Ok(list_insert(text, x))
        }
        _ if cfg.is_flow() => Ok(Insert {
            file: 0,
            offset: 0,
            style: InsertStyle::Nowhere {
                why: "vllmConfig is a flow map with no extraArgs; add extraArgs by hand".into(),
            },
        }),
        _ => Ok(Insert {
            file: 0,
            offset: line_end(text, cfg.span.end),
            style: InsertStyle::YamlNewList {
                indent: cfg
                    .entries()
                    .first()
                    .map(|(k, _)| yaml::indent_of(text, k.span.start))
                    .unwrap_or_default(),
                key: "extraArgs".into(),
            },
        }),
    }
}

/// `vllmConfig` keys with a value and the flag the chart writes for them, in its order.
const HELM_VALUE_KEYS: &[(&str, &str)] = &[
    ("maxModelLen", "--max-model-len"),
    ("dtype", "--dtype"),
    ("tensorParallelSize", "--tensor-parallel-size"),
    ("maxNumSeqs", "--max-num-seqs"),
    ("gpuMemoryUtilization", "--gpu_memory_utilization"),
    ("maxLoras", "--max_loras"),
    ("runner", "--runner"),
    ("convert", "--convert"),
];
