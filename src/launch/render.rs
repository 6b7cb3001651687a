//! How new text is written into a launch: the styles the forms' readers attach to every site
//! ([`Render`]) and insertion point ([`InsertStyle`]), and the one dispatch from a style to the
//! form that writes it. Each form renders its own words beside its reader: [`super::shell`]
//! (bash words, `export` lines, docker `-e`), [`super::yaml`] (YAML scalars and list items),
//! [`super::compose`] (shell words in a YAML string, `${VAR:-default}`, a new `environment:`),
//! [`super::k8s`] (`env:` entries), [`super::envfile`] and [`super::systemd`].
//!
//! `remedy::rewrite` decides what to change and where; it writes the words through here.

use super::{compose, envfile, k8s, shell, systemd, yaml};

/// How a YAML scalar is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YamlQuote {
    Plain,
    Single,
    Double,
}

/// How an item's text is written, so a replacement is quoted the same way.
#[derive(Debug, Clone, PartialEq)]
pub enum Render {
    /// A shell assignment `NAME=value` (the name must stay unquoted).
    Assign,
    /// A shell word (an argument, or a docker `-e` word); `prefix` is kept before it (`--env=`).
    ShellWord { prefix: String },
    /// A whole YAML scalar: `NAME=value` when `with_name`, else the value or argument alone.
    /// `dollars`: `$` is written `$$` (compose and Kubernetes expand `$`).
    YamlScalar {
        with_name: bool,
        flow: bool,
        dollars: bool,
    },
    /// A shell word inside a YAML scalar (compose's string `command:`).
    YamlShellWord { quote: YamlQuote },
    /// The default inside compose's `${VAR:-default}`, in a scalar quoted `quote`.
    InterpDefault { quote: YamlQuote, flow: bool },
    /// `NAME=value` in an env file (the span covers the value only).
    EnvFile { dialect: envfile::Dialect },
    /// One `NAME=value` word of a systemd `Environment=` line.
    SystemdAssign,
    /// One word of a systemd `ExecStart=` command line.
    SystemdWord,
    /// Not editable here; the reason says where to change it.
    Fixed { why: String },
}

/// Where and how new text is inserted.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub file: usize,
    pub offset: usize,
    pub style: InsertStyle,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InsertStyle {
    /// `NAME=value ` before the program word.
    ShellPrefix,
    /// A new `export NAME=value` line after `offset` (the end of the last export line), or
    /// before it (`offset` a line start) when `before`.
    ExportLine { indent: String, before: bool },
    /// `-e NAME=value ` before the image word.
    DockerEnv,
    /// ` WORD...` on the same line.
    ShellSameLine,
    /// ` \` + newline + indent + `WORD...`.
    ShellNewLine { indent: String },
    /// A YAML block-list item per word: newline + indent + `- WORD`.
    YamlBlockItem { indent: String },
    /// A YAML map entry: newline + indent + `NAME: "value"`.
    YamlMapEntry { indent: String },
    /// A flow-list item: `, "WORD"` (or `"WORD"` when the list is empty).
    YamlFlowItem { empty: bool },
    /// A flow-map entry: `, NAME: "value"` (or without the comma when the map is empty).
    YamlFlowMapEntry { empty: bool },
    /// ` WORD...` inside a YAML string holding a shell command (compose's string `command:`).
    YamlShellSameLine { quote: YamlQuote },
    /// A new `environment:` block under the service: newline + indent + `environment:` + item.
    YamlNewEnvBlock { indent: String },
    /// A Kubernetes env entry: newline + indent + `- name: NAME` + `value: "v"`.
    K8sEnvItem { indent: String },
    /// A new `env:` list under a container: newline + indent + `env:` + an entry.
    K8sNewEnv { indent: String },
    /// A Kubernetes env entry in a flow list: `, {name: NAME, value: "v"}`.
    K8sFlowEnvItem { empty: bool },
    /// A new `env:` list in a flow-style container: `, env: [{name: NAME, value: "v"}]` (no
    /// comma when the container is empty).
    K8sNewFlowEnv { empty: bool },
    /// A new block list under a map: newline + indent + `KEY:` + an item per word.
    YamlNewList { indent: String, key: String },
    /// A new line at the end of an env file (or an env-only script: `export NAME=value`).
    EnvFileLine { dialect: Option<envfile::Dialect> },
    /// A new `Environment="NAME=value"` line after `offset`.
    SystemdEnvLine,
    /// ` WORD...` on an `ExecStart=` line.
    SystemdSameLine,
    /// ` \` + newline + indent + `WORD...` on an `ExecStart=` with continuations.
    SystemdNewLine { indent: String },
    /// Nothing can be inserted here; the reason says why.
    Nowhere { why: String },
}

/// Why a word cannot be written.
#[derive(Debug, Clone, PartialEq)]
pub enum RenderError {
    /// The value cannot be written safely in this place; the text says why and what to do.
    Unsupported(String),
    /// The site or insertion point is of a style this rendering does not apply to.
    Mismatch(String),
}

fn unsupported(e: String) -> RenderError {
    RenderError::Unsupported(e)
}

/// How a word (an argument) is rendered in this launch's form.
pub fn word(render: &Render, v: &str) -> Result<String, RenderError> {
    match render {
        Render::Assign => shell::render::quote(v).map_err(unsupported),
        Render::ShellWord { prefix } => shell::render::word(prefix, v).map_err(unsupported),
        Render::YamlScalar { flow, .. } => Ok(yaml::scalar_in(v, *flow)),
        Render::YamlShellWord { quote } => compose::shell_word(v, *quote).map_err(unsupported),
        Render::SystemdWord => systemd::render_word(v).map_err(unsupported),
        Render::Fixed { why } => Err(RenderError::Unsupported(why.clone())),
        Render::InterpDefault { .. } | Render::EnvFile { .. } | Render::SystemdAssign => Err(
            RenderError::Mismatch(format!("an argument cannot be rendered as {render:?}")),
        ),
    }
}

/// New text for an existing environment site whose text is `raw`.
pub fn assignment(
    render: &Render,
    raw: &str,
    name: &str,
    value: &str,
) -> Result<String, RenderError> {
    match render {
        Render::Assign => shell::render::assign(raw, name, value).map_err(unsupported),
        Render::ShellWord { prefix } => {
            shell::render::env_word(prefix, raw, name, value).map_err(unsupported)
        }
        Render::YamlScalar {
            with_name: true,
            flow,
            ..
        } => Ok(yaml::scalar_in(&format!("{name}={value}"), *flow)),
        Render::YamlScalar {
            with_name: false,
            flow,
            ..
        } => Ok(yaml::value(value, *flow)),
        Render::InterpDefault { quote, flow } => {
            compose::interp_default(value, *quote, *flow).map_err(unsupported)
        }
        Render::EnvFile { dialect } => {
            envfile::render_value(*dialect, raw, value).map_err(unsupported)
        }
        Render::SystemdAssign => {
            systemd::render_assign(name, value, raw.starts_with('"')).map_err(unsupported)
        }
        Render::Fixed { why } => Err(RenderError::Unsupported(why.clone())),
        Render::YamlShellWord { .. } | Render::SystemdWord => Err(RenderError::Mismatch(format!(
            "an assignment cannot be rendered as {render:?}"
        ))),
    }
}

/// Text that inserts a new assignment at a point of style `style` in `file_text`.
pub(crate) fn env_insert(
    style: &InsertStyle,
    file_text: &str,
    name: &str,
    value: &str,
) -> Result<String, RenderError> {
    let text = match style {
        InsertStyle::ShellPrefix => shell::render::prefix_assign(name, value),
        InsertStyle::ExportLine { indent, before } => {
            shell::render::export_line(indent, *before, name, value)
        }
        InsertStyle::DockerEnv => shell::render::docker_env(name, value),
        InsertStyle::YamlBlockItem { indent } => Ok(yaml::env_block_item(indent, name, value)),
        InsertStyle::YamlMapEntry { indent } => Ok(yaml::map_entry(indent, name, value)),
        InsertStyle::YamlFlowItem { empty } => Ok(yaml::env_flow_item(*empty, name, value)),
        InsertStyle::YamlFlowMapEntry { empty } => Ok(yaml::flow_map_entry(*empty, name, value)),
        InsertStyle::YamlNewEnvBlock { indent } => Ok(compose::new_env_block(indent, name, value)),
        InsertStyle::K8sEnvItem { indent } => Ok(k8s::env_item(indent, name, value)),
        InsertStyle::K8sNewEnv { indent } => Ok(k8s::new_env(indent, name, value)),
        InsertStyle::K8sFlowEnvItem { empty } => Ok(k8s::flow_env_item(*empty, name, value)),
        InsertStyle::K8sNewFlowEnv { empty } => Ok(k8s::new_flow_env(*empty, name, value)),
        InsertStyle::EnvFileLine { dialect } => envfile::new_line(*dialect, file_text, name, value),
        InsertStyle::SystemdEnvLine => systemd::env_line(name, value),
        InsertStyle::Nowhere { why } => return Err(RenderError::Unsupported(why.clone())),
        other => {
            return Err(RenderError::Mismatch(format!(
                "unexpected env insertion style {other:?}"
            )));
        }
    };
    text.map_err(unsupported)
}

/// Text that appends new argument words at a point of style `style`.
pub(crate) fn args_insert(style: &InsertStyle, words: &[String]) -> Result<String, RenderError> {
    let text = match style {
        InsertStyle::ShellSameLine => shell::render::same_line(words),
        InsertStyle::ShellNewLine { indent } => shell::render::new_line(indent, words),
        InsertStyle::YamlShellSameLine { quote } => compose::shell_same_line(*quote, words),
        InsertStyle::SystemdSameLine => systemd::same_line(words),
        InsertStyle::SystemdNewLine { indent } => systemd::new_line(indent, words),
        InsertStyle::YamlBlockItem { indent } => Ok(yaml::block_items(indent, words)),
        InsertStyle::YamlNewList { indent, key } => Ok(yaml::new_list(indent, key, words)),
        InsertStyle::YamlFlowItem { empty } => Ok(yaml::flow_items(*empty, words)),
        InsertStyle::Nowhere { why } => return Err(RenderError::Unsupported(why.clone())),
        other => {
            return Err(RenderError::Mismatch(format!(
                "unexpected argument insertion style {other:?}"
            )));
        }
    };
    text.map_err(unsupported)
}
