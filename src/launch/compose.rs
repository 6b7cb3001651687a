//! A docker compose service that runs vLLM: `environment:` (block list or map) and `command:`
//! (a plain string, a flow list `[...]` or a block list), located line by line with byte spans.
//!
//! The whole file is also parsed as YAML (serde-saphyr into a JSON value) and the values found
//! line by line must equal the parser's; a layout this module does not understand is an error,
//! never a wrong edit. Compose interpolates `$`: `$$` is a literal dollar.

use super::{Arg, EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Render};
use std::ops::Range;

/// A file with a top-level `services:` key.
pub fn looks_like_compose(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_end() == "services:" || l.starts_with("services: #"))
}

#[derive(Debug, Clone)]
struct Line<'a> {
    start: usize,
    text: &'a str,
    indent: usize,
    /// 1-based.
    no: usize,
}

impl Line<'_> {
    fn is_content(&self) -> bool {
        let t = self.text.trim();
        !t.is_empty() && !t.starts_with('#')
    }
    fn end(&self) -> usize {
        self.start + self.text.len()
    }
    /// `key: rest` at this line's indent.
    fn key(&self) -> Option<(&str, &str, usize)> {
        let body = &self.text[self.indent..];
        let colon = body.find(':')?;
        let key = &body[..colon];
        if key.is_empty() || key.contains(' ') || key.starts_with('-') || key.starts_with('#') {
            return None;
        }
        let after = &body[colon + 1..];
        if !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        let rest_off =
            self.start + self.indent + colon + 1 + (after.len() - after.trim_start().len());
        Some((key, after.trim(), rest_off))
    }
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, l) in text.split('\n').enumerate() {
        let l_trim = l.strip_suffix('\r').unwrap_or(l);
        out.push(Line {
            start,
            text: l_trim,
            indent: l_trim.len() - l_trim.trim_start_matches(' ').len(),
            no: i + 1,
        });
        start += l.len() + 1;
    }
    out
}

fn err(line: usize, message: impl Into<String>) -> LaunchError {
    LaunchError::Syntax {
        line,
        message: message.into(),
    }
}

/// A YAML scalar at `off` in `text` (up to the end of the line): its value and span.
fn scalar(
    text: &str,
    off: usize,
    end: usize,
    line: usize,
) -> Result<(String, Range<usize>), LaunchError> {
    let s = &text[off..end];
    match s.as_bytes().first() {
        Some(b'\'') => {
            let mut v = String::new();
            let mut chars = s[1..].char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c == '\'' {
                    if chars.peek().map(|p| p.1) == Some('\'') {
                        chars.next();
                        v.push('\'');
                        continue;
                    }
                    return Ok((v, off..off + 1 + i + 1));
                }
                v.push(c);
            }
            Err(err(line, "unterminated single-quoted YAML string"))
        }
        Some(b'"') => {
            let bytes = s.as_bytes();
            let mut k = 1;
            while k < bytes.len() {
                match bytes[k] {
                    b'\\' => k += 2,
                    b'"' => break,
                    _ => k += 1,
                }
            }
            if k >= bytes.len() {
                return Err(err(line, "unterminated double-quoted YAML string"));
            }
            let v: String = serde_json::from_str(&s[..=k]).map_err(|e| {
                err(
                    line,
                    format!("double-quoted YAML string this tool cannot read: {e}"),
                )
            })?;
            Ok((v, off..off + k + 1))
        }
        _ => {
            let mut e = s.len();
            if let Some(p) = s.find(" #") {
                e = p;
            }
            let v = s[..e].trim_end();
            Ok((v.to_string(), off..off + v.len()))
        }
    }
}

fn unescape_dollars(v: &str) -> String {
    v.replace("$$", "$")
}

fn yaml_json(text: &str) -> Result<serde_json::Value, LaunchError> {
    serde_saphyr::from_str::<serde_json::Value>(text).map_err(|e| {
        let line = e.location().map(|l| l.line() as usize).unwrap_or(0);
        err(
            line,
            format!(
                "not valid YAML: {}",
                e.to_string().lines().next().unwrap_or("").trim()
            ),
        )
    })
}

/// Locate the vLLM service in a compose file.
pub fn locate(text: &str) -> Result<Located, LaunchError> {
    let json = yaml_json(text)?;
    let ls = lines(text);
    let services_idx = ls
        .iter()
        .position(|l| l.indent == 0 && l.key().is_some_and(|k| k.0 == "services"))
        .ok_or(LaunchError::NoVllmCommand)?;
    // Service headers: the first content line's indent below `services:`.
    let mut i = services_idx + 1;
    let svc_indent = ls[i..]
        .iter()
        .find(|l| l.is_content())
        .map(|l| l.indent)
        .filter(|n| *n > 0)
        .ok_or(LaunchError::NoVllmCommand)?;
    while i < ls.len() {
        let l = &ls[i];
        if l.is_content() && l.indent == 0 {
            break;
        }
        if l.is_content()
            && l.indent == svc_indent
            && let Some((name, _, _)) = l.key()
        {
            let body_end = ls[i + 1..]
                .iter()
                .position(|b| b.is_content() && b.indent <= svc_indent)
                .map_or(ls.len(), |p| i + 1 + p);
            if let Some(loc) = service(text, &ls, i, body_end, name, &json)? {
                return Ok(loc);
            }
            i = body_end;
            continue;
        }
        i += 1;
    }
    Err(LaunchError::NoVllmCommand)
}

fn service(
    text: &str,
    ls: &[Line<'_>],
    header: usize,
    body_end: usize,
    name: &str,
    json: &serde_json::Value,
) -> Result<Option<Located>, LaunchError> {
    let body: Vec<usize> = (header + 1..body_end)
        .filter(|&k| ls[k].is_content())
        .collect();
    let Some(&first) = body.first() else {
        return Ok(None);
    };
    let key_indent = ls[first].indent;
    let keys: Vec<(usize, &str, &str, usize)> = body
        .iter()
        .filter(|&&k| ls[k].indent == key_indent)
        .filter_map(|&k| ls[k].key().map(|(key, rest, off)| (k, key, rest, off)))
        .collect();
    let find = |want: &str| keys.iter().find(|k| k.1 == want).copied();
    let svc_json = &json["services"][name];
    let image = svc_json["image"].as_str().unwrap_or("");
    let command = &svc_json["command"];
    let cmd_text = match command {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    let is_vllm = image.contains("vllm")
        || cmd_text.contains("vllm")
        || cmd_text.contains("--model")
        || svc_json["entrypoint"].to_string().contains("vllm");
    if !is_vllm {
        return Ok(None);
    }
    // The block of lines under a key: (first, end) indices.
    let block = |k: usize| -> Vec<usize> {
        let end = ls[k + 1..body_end]
            .iter()
            .position(|b| b.is_content() && b.indent <= key_indent)
            .map_or(body_end, |p| k + 1 + p);
        (k + 1..end).filter(|&j| ls[j].is_content()).collect()
    };
    let mut env = Vec::new();
    let env_insert = match find("environment") {
        Some((k, _, rest, _)) if rest.is_empty() || rest.starts_with('#') => {
            let items = block(k);
            let Some(&f) = items.first() else {
                return Err(err(ls[k].no, "empty environment: block"));
            };
            let indent = " ".repeat(ls[f].indent);
            let is_list = ls[f].text[ls[f].indent..].starts_with("- ");
            for &j in &items {
                let l = &ls[j];
                let removal = (l.start.saturating_sub(1))..l.end();
                if is_list {
                    let body = &l.text[l.indent..];
                    let Some(_) = body.strip_prefix("- ") else {
                        return Err(err(l.no, "mixed list and map in environment:"));
                    };
                    let off = l.start + l.indent + 2;
                    let (v, span) = scalar(text, off, l.end(), l.no)?;
                    let (name, value) = match v.split_once('=') {
                        Some((n, v)) => (n.to_string(), Some(unescape_dollars(v))),
                        None => (v.clone(), None),
                    };
                    env.push(EnvSite {
                        name,
                        value,
                        span,
                        render: Render::YamlItem,
                        removal,
                        dynamic: v.contains('$') && !v.contains("$$"),
                        line: l.no,
                    });
                } else {
                    let Some((key, rest, off)) = l.key() else {
                        return Err(err(l.no, "expected NAME: value in environment:"));
                    };
                    let (v, span) = if rest.is_empty() {
                        (String::new(), off..off)
                    } else {
                        scalar(text, off, l.end(), l.no)?
                    };
                    env.push(EnvSite {
                        name: key.to_string(),
                        value: Some(unescape_dollars(&v)),
                        span,
                        render: Render::YamlMapValue,
                        removal,
                        dynamic: v.contains('$') && !v.contains("$$"),
                        line: l.no,
                    });
                }
            }
            let last = &ls[*items.last().unwrap_or(&f)];
            Insert {
                offset: last.end(),
                style: if is_list {
                    InsertStyle::YamlBlockItem { indent }
                } else {
                    InsertStyle::YamlMapEntry { indent }
                },
            }
        }
        Some((k, _, _, _)) => {
            return Err(err(
                ls[k].no,
                "environment: in flow style ([...] or {...}) is not supported; write it as a \
                 block list (- NAME=value) or map (NAME: value)",
            ));
        }
        None => Insert {
            offset: ls[header].end(),
            style: InsertStyle::YamlNewEnvBlock {
                indent: " ".repeat(key_indent),
            },
        },
    };
    // Cross-check the environment with the YAML parser.
    let parsed_env: Vec<(String, Option<String>)> = match &svc_json["environment"] {
        serde_json::Value::Array(a) => a
            .iter()
            .map(|v| {
                let s = v.as_str().unwrap_or("").replace("$$", "$");
                match s.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (s, None),
                }
            })
            .collect(),
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    serde_json::Value::String(s) => s.replace("$$", "$"),
                    serde_json::Value::Null => String::new(),
                    other => other.to_string(),
                };
                (k.clone(), Some(s))
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut mine: Vec<(String, Option<String>)> = env
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect();
    let mut theirs = parsed_env;
    mine.sort();
    theirs.sort();
    if mine != theirs {
        return Err(err(
            ls[header].no,
            format!("service {name}: environment: has a layout this tool cannot edit safely"),
        ));
    }

    let mut args = Vec::new();
    let mut read_only = None;
    let arg_insert;
    let (ck, _, crest, coff) = find("command").ok_or_else(|| {
        err(
            ls[header].no,
            format!("service {name}: no command: (the vLLM arguments go there)"),
        )
    })?;
    let cline = &ls[ck];
    if crest.is_empty() || crest.starts_with('#') {
        let items = block(ck);
        let Some(&f) = items.first() else {
            return Err(err(cline.no, "empty command: block"));
        };
        let indent = " ".repeat(ls[f].indent);
        for &j in &items {
            let l = &ls[j];
            let body = &l.text[l.indent..];
            if !body.starts_with("- ") {
                return Err(err(l.no, "expected a list item (- ARG) under command:"));
            }
            let (v, span) = scalar(text, l.start + l.indent + 2, l.end(), l.no)?;
            args.push(Arg {
                value: unescape_dollars(&v),
                span,
                render: Render::YamlItem,
                removal: l.start.saturating_sub(1)..l.end(),
                dynamic: false,
                line: l.no,
            });
        }
        arg_insert = Insert {
            offset: ls[*items.last().unwrap_or(&f)].end(),
            style: InsertStyle::YamlBlockItem { indent },
        };
    } else if crest.starts_with('[') {
        let close = cline
            .text
            .rfind(']')
            .map(|p| cline.start + p)
            .ok_or_else(|| {
                err(
                    cline.no,
                    "a flow list for command: must close on the same line",
                )
            })?;
        let mut p = coff + 1;
        let mut prev_end = p;
        while p < close {
            let c = text.as_bytes()[p];
            if c == b' ' || c == b',' {
                p += 1;
                continue;
            }
            let item_end = if c == b'"' || c == b'\'' {
                scalar(text, p, close, cline.no)?.1.end
            } else {
                text[p..close].find(',').map_or(close, |q| p + q)
            };
            let (v, span) = scalar(text, p, item_end, cline.no)?;
            let span = span.start..span.end.max(p);
            args.push(Arg {
                value: unescape_dollars(&v),
                span: span.clone(),
                render: Render::YamlItem,
                removal: if args.is_empty() {
                    p..item_end
                } else {
                    prev_end..span.end
                },
                dynamic: false,
                line: cline.no,
            });
            prev_end = span.end;
            p = item_end;
        }
        // Removing the first item also takes the comma after it.
        if args.len() > 1 {
            let second_start = args[1].removal.start;
            let next_item = args[1].span.start;
            args[0].removal = args[0].span.start..next_item;
            args[1].removal = second_start..args[1].span.end;
        }
        arg_insert = Insert {
            offset: args.last().map_or(coff + 1, |a| a.span.end),
            style: InsertStyle::YamlFlowItem {
                empty: args.is_empty(),
            },
        };
    } else {
        let (v, span) = scalar(text, coff, cline.end(), cline.no)?;
        let quoted = text[span.clone()].starts_with(['"', '\'']);
        let inner = if quoted { span.start + 1 } else { span.start };
        if quoted {
            read_only = Some(
                "command: is a quoted string; write it as a plain string or a list so the tool \
                 can edit it"
                    .to_string(),
            );
        }
        // Compose splits a string command like a shell would.
        let words = super::lex::commands(&v)
            .map_err(|e| err(cline.no, format!("command: {}", e.message)))?;
        let words: Vec<_> = words.into_iter().flat_map(|c| c.words).collect();
        let mut prev = span.start;
        for w in &words {
            let s = inner + w.span.start..inner + w.span.end;
            args.push(Arg {
                value: unescape_dollars(&w.value),
                span: s.clone(),
                render: Render::ShellWord {
                    prefix: String::new(),
                },
                removal: prev..s.end,
                dynamic: false,
                line: cline.no,
            });
            prev = s.end;
        }
        arg_insert = Insert {
            offset: args.last().map_or(span.end, |a| a.span.end),
            style: InsertStyle::ShellSameLine,
        };
    }
    // Cross-check the command with the YAML parser (string commands were split above).
    let theirs: Vec<String> = match command {
        serde_json::Value::Array(a) => a
            .iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s.replace("$$", "$"),
                other => other.to_string(),
            })
            .collect(),
        serde_json::Value::String(s) => super::lex::commands(s)
            .map(|c| {
                c.into_iter()
                    .flat_map(|c| c.words)
                    .map(|w| w.value.replace("$$", "$"))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let mine: Vec<String> = args.iter().map(|a| a.value.clone()).collect();
    if mine != theirs {
        return Err(err(
            cline.no,
            format!("service {name}: command: has a layout this tool cannot edit safely"),
        ));
    }
    // `command: vllm serve MODEL ...` (an image without the vLLM entrypoint).
    let mut entrypoint = format!("compose service {name} (image {image})");
    let skip = if mine
        .first()
        .is_some_and(|p| crate::vllm::flags::is_serve(p, mine.get(1).map(String::as_str)))
    {
        entrypoint = "vllm serve".into();
        2
    } else {
        0
    };
    let args = args.split_off(skip);
    let mut notes = Vec::new();
    if !svc_json["env_file"].is_null() {
        notes.push(format!(
            "service {name} has env_file: variables in that file reach the container too; this \
             tool does not read it"
        ));
    }
    if let Some(r) = read_only.clone() {
        notes.push(r);
    }
    Ok(Some(Located {
        form: Form::Compose,
        entrypoint,
        env,
        args,
        env_insert,
        arg_insert,
        notes,
        read_only,
    }))
}
