//! A systemd unit that runs vLLM: `Environment=` (several assignments per line, quoted),
//! `EnvironmentFile=` (read, and edited, when the file is given alongside; it overrides
//! `Environment=`), `UnsetEnvironment=`, and the `ExecStart=` command line with its backslash
//! continuations.
//!
//! A small lexer for systemd.syntax(7) / systemd.service(5): logical lines joined at a final `\`
//! (comment lines inside are skipped), words split at blanks with `"…"` / `'…'` quoting and C
//! escapes, `%%` for a literal `%`, and in `ExecStart=` `$$` for a literal `$` (`$VAR` / `${VAR}`
//! are expanded by systemd, so such a word is dynamic).

use super::{
    Arg, EnvSite, Form, Insert, InsertStyle, LaunchError, Located, Render, SourceFile, envfile,
    find_entrypoint, find_file, is_assignment, lex,
};
use std::ops::Range;

/// A unit file: a `[Section]` header and an `ExecStart=` (or `Environment=`) line.
pub(crate) fn looks_like_unit(text: &str) -> bool {
    let mut header = false;
    let mut key = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with('[') && t.ends_with(']') {
            header = true;
        }
        if t.starts_with("ExecStart=") || t.starts_with("Environment=") {
            key = true;
        }
    }
    header && key
}

/// One `Key=value` setting, possibly continued over several lines.
#[derive(Debug, Clone)]
struct Setting {
    section: String,
    key: String,
    /// The value's bytes (continuations and skipped comment lines included).
    value: Range<usize>,
    line: usize,
    /// The logical line's bytes from the key to the end of its last physical line.
    whole: Range<usize>,
    continued: bool,
}

fn settings(text: &str) -> Vec<Setting> {
    let li = lex::LineIndex::new(text);
    let mut out = Vec::new();
    let mut section = String::new();
    let mut pos = 0;
    let b = text.as_bytes();
    while pos < text.len() {
        let end = memchr::memchr(b'\n', &b[pos..]).map_or(text.len(), |p| pos + p);
        let line = &text[pos..end];
        let t = line.trim();
        let start = pos;
        pos = (end + 1).min(text.len()).max(end);
        if end == text.len() {
            pos = text.len();
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            section = t[1..t.len() - 1].to_string();
            continue;
        }
        let Some(eq) = line.find('=') else {
            continue;
        };
        let key = line[..eq].trim().to_string();
        let lead = line.len() - line.trim_start().len();
        let vstart = start + eq + 1;
        let mut vend = end;
        let mut continued = false;
        // A final backslash continues the setting on the next line.
        let mut cur_end = end;
        while cur_end < text.len()
            && text[..cur_end]
                .trim_end_matches([' ', '\t', '\r'])
                .ends_with('\\')
        {
            continued = true;
            // The next line, skipping comment lines (systemd ignores them inside a continuation).
            let mut ns = cur_end + 1;
            loop {
                let ne = memchr::memchr(b'\n', &b[ns..]).map_or(text.len(), |p| ns + p);
                cur_end = ne;
                vend = ne;
                let nt = text[ns..ne].trim_start();
                if (nt.starts_with('#') || nt.starts_with(';')) && ne < text.len() {
                    ns = ne + 1;
                    continue;
                }
                break;
            }
        }
        if continued {
            pos = (vend + 1).min(text.len());
        }
        out.push(Setting {
            section: section.clone(),
            key,
            value: vstart..vend,
            line: li.line(start),
            whole: start + lead..vend,
            continued,
        });
    }
    out
}

/// A word of a setting's value.
#[derive(Debug, Clone)]
struct UWord {
    span: Range<usize>,
    value: String,
    dynamic: bool,
    line: usize,
}

/// Split a value into words (quotes, escapes, continuations, `%%`, and `$$` when `exec`).
fn words(
    text: &str,
    value: Range<usize>,
    exec: bool,
    li: &lex::LineIndex,
) -> Result<Vec<UWord>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = value.start;
    let end = value.end;
    while i < end {
        let c = b[i];
        if c == b'\n' {
            // A comment line inside a continuation is skipped.
            i += 1;
            let mut k = i;
            while k < end && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            if k < end && (b[k] == b'#' || b[k] == b';') {
                i = memchr::memchr(b'\n', &b[k..end]).map_or(end, |p| k + p);
            }
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            continue;
        }
        if c == b'\\' && matches!(b.get(i + 1), Some(b'\n') | Some(b'\r')) {
            i += 1;
            continue;
        }
        let start = i;
        let mut v = String::new();
        let mut dynamic = false;
        let mut quote: Option<u8> = None;
        while i < end {
            let c = b[i];
            match quote {
                None if matches!(c, b' ' | b'\t' | b'\r' | b'\n') => break,
                None if c == b'\\' && matches!(b.get(i + 1), Some(b'\n') | Some(b'\r')) => break,
                None if c == b'"' || c == b'\'' => {
                    quote = Some(c);
                    i += 1;
                }
                Some(q) if c == q => {
                    quote = None;
                    i += 1;
                }
                Some(b'\'') => {
                    let ch = text[i..].chars().next().map_or(1, char::len_utf8);
                    v.push_str(&text[i..i + ch]);
                    i += ch;
                }
                _ if c == b'\\' => {
                    let e = *b.get(i + 1).ok_or("a backslash at the end")?;
                    v.push(match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        other => other as char,
                    });
                    i += 2;
                }
                _ if c == b'%' => {
                    if b.get(i + 1) == Some(&b'%') {
                        v.push('%');
                        i += 2;
                    } else {
                        dynamic = true;
                        v.push('%');
                        i += 1;
                    }
                }
                _ if c == b'$' && exec => {
                    if b.get(i + 1) == Some(&b'$') {
                        v.push('$');
                        i += 2;
                    } else {
                        dynamic = true;
                        v.push('$');
                        i += 1;
                    }
                }
                _ => {
                    let ch = text[i..].chars().next().map_or(1, char::len_utf8);
                    v.push_str(&text[i..i + ch]);
                    i += ch;
                }
            }
        }
        if quote.is_some() {
            return Err(format!("unterminated quote (line {})", li.line(start)));
        }
        out.push(UWord {
            span: start..i,
            value: v,
            dynamic,
            line: li.line(start),
        });
    }
    Ok(out)
}

/// What a unit's `[Service]` settings say around its command.
struct ServiceSettings<'s> {
    env: Vec<EnvSite>,
    file_sites: Vec<EnvSite>,
    unread_files: Vec<String>,
    unset: Vec<EnvSite>,
    notes: Vec<String>,
    used: Vec<usize>,
    /// The end of the last `Environment=` line.
    last_env_line: Option<usize>,
    /// The `ExecStart=` lines in effect (an empty one resets the list).
    execs: Vec<&'s Setting>,
    workdir: Option<String>,
}

fn setting_error(text: &str, li: &lex::LineIndex, s: &Setting, m: String) -> LaunchError {
    LaunchError::syntax(
        0,
        s.line,
        li.col(text, s.value.start),
        format!("{}=: {m}", s.key),
    )
}

/// Read the `[Service]` settings: `Environment=`, `EnvironmentFile=` (from the files given),
/// `UnsetEnvironment=`, `PassEnvironment=`, `WorkingDirectory=` and `ExecStart=`.
fn read_service<'s>(
    files: &[SourceFile],
    service: &[&'s Setting],
    li: &lex::LineIndex,
) -> Result<ServiceSettings<'s>, LaunchError> {
    let text = &files[0].text;
    let mut st = ServiceSettings {
        env: Vec::new(),
        file_sites: Vec::new(),
        unread_files: Vec::new(),
        unset: Vec::new(),
        notes: Vec::new(),
        used: vec![0],
        last_env_line: None,
        execs: Vec::new(),
        workdir: None,
    };
    let syntax = |s: &Setting, m: String| setting_error(text, li, s, m);
    for s in service {
        match s.key.as_str() {
            "Environment" => {
                st.last_env_line = Some(super::line_end(text, s.whole.end));
                let ws = words(text, s.value.clone(), false, li).map_err(|m| syntax(s, m))?;
                if ws.is_empty() {
                    // `Environment=` resets the list.
                    st.env.clear();
                    continue;
                }
                let n = ws.len();
                for (k, w) in ws.iter().enumerate() {
                    let Some((name, value)) = is_assignment(&w.value) else {
                        st.notes.push(format!(
                            "line {}: {:?} is not NAME=value; systemd ignores it",
                            w.line, w.value
                        ));
                        continue;
                    };
                    let removal = if n == 1 {
                        let ls = super::line_start(text, s.whole.start);
                        ls..(super::line_end(text, s.whole.end) + 1).min(text.len())
                    } else if k == 0 {
                        w.span.start..ws[1].span.start
                    } else {
                        ws[k - 1].span.end..w.span.end
                    };
                    st.env.push(EnvSite::new(
                        0,
                        name,
                        Some(value.to_string()),
                        w.span.clone(),
                        Render::SystemdAssign,
                        removal,
                        w.dynamic,
                        w.line,
                    ));
                }
            }
            "EnvironmentFile" => {
                let raw = text[s.value.clone()].trim();
                let path = raw.trim_start_matches('-');
                match find_file(files, path) {
                    Some(i) => {
                        st.used.push(i);
                        let r = envfile::read(files, i, envfile::Dialect::Systemd)?;
                        st.notes.extend(r.notes);
                        st.file_sites.extend(r.sites);
                    }
                    None => {
                        st.unread_files.push(format!(
                            "EnvironmentFile={raw} (line {}) was not given, so the variables it \
                             sets (they override Environment=) are not read (give it too: \
                             --launch-with {path})",
                            s.line
                        ));
                        st.notes.push(format!(
                            "line {}: EnvironmentFile={raw}: its variables override Environment= \
                             and are not read here; give it too (--launch-with {path}) to have it \
                             read and edited",
                            s.line
                        ))
                    }
                }
            }
            "UnsetEnvironment" => {
                for w in words(text, s.value.clone(), false, li).map_err(|m| syntax(s, m))? {
                    let mut site = EnvSite::new(
                        0,
                        &w.value,
                        None,
                        w.span.clone(),
                        Render::SystemdWord,
                        w.span.clone(),
                        false,
                        w.line,
                    );
                    site.unset = true;
                    st.unset.push(site);
                }
            }
            "PassEnvironment" => st.notes.push(format!(
                "line {}: PassEnvironment={}: those variables come from the service manager's \
                 environment",
                s.line,
                text[s.value.clone()].trim()
            )),
            "WorkingDirectory" => {
                st.workdir = Some(
                    text[s.value.clone()]
                        .trim()
                        .trim_start_matches('-')
                        .to_string(),
                )
            }
            "ExecStart" => {
                if text[s.value.clone()].trim().is_empty() {
                    st.execs.clear();
                } else {
                    st.execs.push(*s);
                }
            }
            _ => {}
        }
    }
    Ok(st)
}

/// An `ExecStart=` line that runs vLLM: the setting, its words (up to a lone `;`) and where
/// the entrypoint is in them.
type ExecCandidate<'s> = (&'s Setting, Vec<UWord>, (usize, usize, String));

/// Which `ExecStart=` lines run vLLM, and the lines that run a script or docker compose
/// instead (notes for those that run docker).
type ExecReading<'s> = (Vec<ExecCandidate<'s>>, Vec<(usize, String)>, Vec<usize>);

fn exec_candidates<'s>(
    text: &str,
    execs: &[&'s Setting],
    li: &lex::LineIndex,
    notes: &mut Vec<String>,
) -> Result<ExecReading<'s>, LaunchError> {
    let syntax = |s: &Setting, m: String| setting_error(text, li, s, m);
    let mut candidates = Vec::new();
    // `ExecStart=/opt/start.sh` or `/bin/bash /opt/start.sh`: (line, the script).
    let mut scripts: Vec<(usize, String)> = Vec::new();
    // `ExecStart=/usr/bin/docker compose up`: the line (the compose file holds the launch).
    let mut composes: Vec<usize> = Vec::new();
    for s in execs {
        let all_ws = words(text, s.value.clone(), true, li).map_err(|m| syntax(s, m))?;
        // A lone `;` separates command lines (`ExecStart=vllm serve m ; /bin/true`): each is
        // a command of its own, so the vLLM one ends there.
        let mut ws = Vec::new();
        for w in all_ws {
            if &text[w.span.clone()] == ";" {
                if find_entrypoint(&lex_words(&ws)).is_some() {
                    break;
                }
                ws.clear();
                continue;
            }
            ws.push(w);
        }
        if let Some(first) = ws.first_mut() {
            // `ExecStart=-/usr/bin/vllm`: the prefixes are not part of the path.
            first.value = first
                .value
                .trim_start_matches(['@', '-', ':', '+', '!'])
                .to_string();
        }
        let lw = lex_words(&ws);
        if let Some(found) = find_entrypoint(&lw) {
            candidates.push((*s, ws, found));
        } else if let Some(script) = script_run(&lw) {
            scripts.push((s.line, script));
        } else if runs_compose(&lw) {
            composes.push(s.line);
        } else if lw
            .iter()
            .any(|w| w.value.rsplit('/').next() == Some("docker"))
        {
            notes.push(format!(
                "line {}: ExecStart= runs docker; give the `docker run` command itself (as a \
                 script) to read and edit its options",
                s.line
            ));
        }
    }
    Ok((candidates, scripts, composes))
}

/// Locate the vLLM command of a unit (`files[0]`).
pub fn locate(files: &[SourceFile]) -> Result<Located, LaunchError> {
    let text = &files[0].text;
    let li = lex::LineIndex::new(text);
    let all = settings(text);
    let service: Vec<&Setting> = all.iter().filter(|s| s.section == "Service").collect();
    let ServiceSettings {
        mut env,
        file_sites,
        unread_files,
        unset,
        mut notes,
        used,
        last_env_line,
        execs,
        workdir,
    } = read_service(files, &service, &li)?;
    let mut exec: Option<&Setting> = None;
    let (mut candidates, scripts, composes) = exec_candidates(text, &execs, &li, &mut notes)?;
    let (s, ws, (_, args_start, entrypoint)) = match candidates.len() {
        0 => {
            return Err(match scripts.first() {
                Some((line, script)) => LaunchError::UnitRunsScript {
                    line: *line,
                    script: script.clone(),
                },
                None => match composes.first() {
                    Some(line) => LaunchError::UnitRunsCompose {
                        line: *line,
                        dir: workdir.clone().unwrap_or_else(|| "WorkingDirectory".into()),
                    },
                    None => LaunchError::NoVllmCommand,
                },
            });
        }
        1 => candidates.remove(0),
        _ => {
            return Err(LaunchError::Ambiguous {
                message: format!(
                    "{} ExecStart= lines run vLLM (lines {}); keep one",
                    candidates.len(),
                    candidates
                        .iter()
                        .map(|c| c.0.line.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    };
    exec.replace(s);
    let mut prev = ws[args_start - 1].span.end;
    let args: Vec<Arg> = ws[args_start..]
        .iter()
        .map(|w| {
            let a = Arg {
                file: 0,
                value: w.value.clone(),
                span: w.span.clone(),
                render: Render::SystemdWord,
                removal: prev..w.span.end,
                dynamic: w.dynamic,
                line: w.line,
            };
            prev = w.span.end;
            a
        })
        .collect();
    let last = ws.last().map_or(s.value.end, |w| w.span.end);
    let arg_insert = if s.continued && ws.last().is_some_and(|w| w.line > s.line) {
        Insert {
            file: 0,
            offset: last,
            style: InsertStyle::SystemdNewLine {
                indent: super::indent_at(text, last.saturating_sub(1)),
            },
        }
    } else {
        Insert {
            file: 0,
            offset: last,
            style: InsertStyle::SystemdSameLine,
        }
    };
    let env_insert_at = last_env_line.unwrap_or_else(|| {
        all.iter()
            .find(|x| x.section == "Service")
            .map(|x| super::line_start(text, x.whole.start).saturating_sub(1))
            .unwrap_or(0)
    });
    // EnvironmentFile= overrides Environment=; UnsetEnvironment= applies last.
    let mut gaps = super::EnvGaps::default();
    for reason in unread_files {
        gaps.unread_before(reason, &unset);
    }
    env.extend(file_sites);
    env.extend(unset);
    Ok(Located {
        form: Form::Systemd,
        entrypoint: Some(entrypoint),
        env,
        args,
        env_insert: Insert {
            file: 0,
            offset: env_insert_at,
            style: InsertStyle::SystemdEnvLine,
        },
        arg_insert,
        notes,
        problems: Vec::new(),
        read_only: None,
        args_read_only: None,
        used_files: used,
        late_insert: None,
        gaps,
        shadowed: Vec::new(),
        frozen: Default::default(),
        arg_vars: Default::default(),
        peers: Vec::new(),
    })
}

/// `docker compose …` / `docker-compose …`: the unit starts a compose project, whose file holds
/// the vLLM launch.
fn runs_compose(words: &[lex::Word]) -> bool {
    let base = |w: &lex::Word| w.value.rsplit('/').next().unwrap_or("").to_string();
    match words.first().map(base).as_deref() {
        Some("docker-compose") | Some("podman-compose") => true,
        Some("docker") | Some("podman") => words.get(1).is_some_and(|w| w.value == "compose"),
        _ => false,
    }
}

/// The script an `ExecStart=` command runs (`/opt/start.sh`, `bash -c`-less `sh start.sh`).
fn script_run(words: &[lex::Word]) -> Option<String> {
    let is_script = |w: &str| w.ends_with(".sh") || w.ends_with(".bash");
    let first = words.first()?;
    if is_script(&first.value) {
        return Some(first.value.clone());
    }
    let shell = matches!(
        super::base_name(&first.value),
        "bash" | "sh" | "dash" | "zsh"
    );
    words
        .iter()
        .skip(1)
        .find(|w| !w.value.starts_with('-'))
        .filter(|w| shell && is_script(&w.value))
        .map(|w| w.value.clone())
}

fn lex_words(ws: &[UWord]) -> Vec<lex::Word> {
    ws.iter()
        .map(|w| lex::Word {
            span: w.span.clone(),
            value: w.value.clone(),
            dynamic: w.dynamic,
            line: w.line,
        })
        .collect()
}

/// A word for `ExecStart=` (`$` and `%` escaped, quoted when needed).
pub(crate) fn render_word(v: &str) -> Result<String, String> {
    if v.contains('\n') || v.contains('\0') {
        return Err(format!(
            "{v:?} holds a line break and cannot go into a unit file"
        ));
    }
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@".contains(c));
    if plain {
        return Ok(v.to_string());
    }
    let mut o = String::from("\"");
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c);
            }
            '$' => o.push_str("$$"),
            '%' => o.push_str("%%"),
            c => o.push(c),
        }
    }
    o.push('"');
    Ok(o)
}

/// A `NAME=value` word for `Environment=` (double-quoted when `quoted` or when needed).
pub(crate) fn render_assign(name: &str, v: &str, quoted: bool) -> Result<String, String> {
    if v.contains('\n') || v.contains('\0') {
        return Err(format!(
            "{v:?} holds a line break and cannot go into a unit file"
        ));
    }
    let plain = !quoted
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@".contains(c));
    if plain {
        return Ok(format!("{name}={v}"));
    }
    let mut o = format!("\"{name}=");
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                o.push('\\');
                o.push(c);
            }
            '%' => o.push_str("%%"),
            c => o.push(c),
        }
    }
    o.push('"');
    Ok(o)
}

/// A new `Environment=NAME=value` line.
pub fn env_line(name: &str, value: &str) -> Result<String, String> {
    Ok(format!(
        "\nEnvironment={}",
        render_assign(name, value, false)?
    ))
}

fn joined(words: &[String]) -> Result<String, String> {
    Ok(words
        .iter()
        .map(|w| render_word(w))
        .collect::<Result<Vec<_>, _>>()?
        .join(" "))
}

/// ` WORD...` on an `ExecStart=` line.
pub(crate) fn same_line(words: &[String]) -> Result<String, String> {
    Ok(format!(" {}", joined(words)?))
}

/// ` \` + newline + indent + `WORD...` on an `ExecStart=` with continuations.
pub(crate) fn new_line(indent: &str, words: &[String]) -> Result<String, String> {
    Ok(format!(" \\\n{indent}{}", joined(words)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{Select, locate_files, parse_launch};

    const UNIT: &str = "[Unit]\nDescription=vLLM\n\n[Service]\nEnvironment=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\" HF_HOME=/data/hf\nEnvironment='VLLM_USE_DEEP_GEMM=1'\nEnvironmentFile=-/etc/vllm/vllm.env\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen3.6-27B-FP8 \\\n    --tensor-parallel-size 2 \\\n    --max-model-len 32768\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n";

    #[test]
    fn environment_words_and_exec_continuations() {
        let l = parse_launch(UNIT).expect("parses");
        assert_eq!(l.model.as_deref(), Some("Qwen/Qwen3.6-27B-FP8"));
        assert_eq!(l.tensor_parallel_size, Some(2));
        assert_eq!(l.max_model_len, Some(32768));
        assert_eq!(
            l.env.get("PYTORCH_CUDA_ALLOC_CONF").map(String::as_str),
            Some("expandable_segments:True")
        );
        assert_eq!(l.env.get("HF_HOME").map(String::as_str), Some("/data/hf"));
        assert_eq!(
            l.env.get("VLLM_USE_DEEP_GEMM").map(String::as_str),
            Some("1")
        );
    }

    #[test]
    fn environment_file_overrides_when_given() {
        let files = [
            SourceFile::new("vllm.service", UNIT),
            SourceFile::new("/etc/vllm/vllm.env", "VLLM_USE_DEEP_GEMM=0\n"),
        ];
        let loc = locate_files(&files, &Select::default()).expect("ok");
        let s = loc.env_site("VLLM_USE_DEEP_GEMM").expect("site");
        assert_eq!((s.file, s.value.as_deref()), (1, Some("0")));
        let loc = crate::launch::locate(UNIT).expect("ok");
        assert!(
            loc.notes
                .iter()
                .any(|n| n.contains("EnvironmentFile=-/etc/vllm/vllm.env"))
        );
    }

    #[test]
    fn a_unit_that_runs_a_script_names_it() {
        for exec in [
            "/opt/vllm/start.sh --port 8000",
            "/bin/bash /opt/vllm/start.sh",
        ] {
            let unit = format!("[Service]\nExecStart={exec}\n");
            let e = locate(&[SourceFile::new("v.service", unit)]).expect_err("no vLLM");
            assert_eq!(
                e,
                LaunchError::UnitRunsScript {
                    line: 2,
                    script: "/opt/vllm/start.sh".into()
                },
                "{exec}"
            );
            assert!(e.to_string().contains("--launch-file /opt/vllm/start.sh"));
        }
        let e = locate(&[SourceFile::new(
            "v.service",
            "[Service]\nExecStart=/bin/true\n",
        )]);
        assert_eq!(e, Err(LaunchError::NoVllmCommand));
        // dashaun/rtx5090-vllm's unit: the compose file is the launch.
        let e = locate(&[SourceFile::new(
            "v.service",
            "[Service]\nWorkingDirectory=/opt/llm\nExecStart=/usr/bin/docker compose up -d\n",
        )]);
        assert_eq!(
            e,
            Err(LaunchError::UnitRunsCompose {
                line: 3,
                dir: "/opt/llm".into()
            })
        );
        let e = locate(&[SourceFile::new(
            "v.service",
            "[Service]\nExecStart=/usr/bin/docker-compose -f /srv/c.yml up\n",
        )]);
        assert!(matches!(
            e,
            Err(LaunchError::UnitRunsCompose { line: 2, .. })
        ));
    }

    #[test]
    fn renders() {
        assert_eq!(render_word("--x"), Ok("--x".into()));
        assert_eq!(render_word("{\"a\": 1}"), Ok("\"{\\\"a\\\": 1}\"".into()));
        assert_eq!(render_word("50%"), Ok("\"50%%\"".into()));
        assert_eq!(render_assign("A", "x y", false), Ok("\"A=x y\"".into()));
        assert_eq!(render_assign("A", "a:1,b", false), Ok("A=a:1,b".into()));
        assert_eq!(render_assign("A", "", true), Ok("\"A=\"".into()));
    }
}
