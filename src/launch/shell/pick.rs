//! Which command of a script is the vLLM launch: the candidates and the one picked.

use super::docker::find_docker;
use super::{At, Candidate, base_or_self};
use crate::launch::lex::{SimpleCommand, Word};
use crate::launch::{
    LaunchError, PickWords, Select, SourceFile, find_entrypoint, model_of, pick_one,
};

/// Flags only vLLM takes (none of them a `docker run` option): a `docker run` whose image is
/// named by a variable (`docker run … $IMG Qwen/Q -tp 2`) still shows it starts vLLM.
pub(super) fn is_vllm_flag(word: &str) -> bool {
    use crate::vllm::flags::*;
    let head = word.split_once('=').map_or(word, |(h, _)| h);
    if !(head.starts_with("--") || head == "-tp" || head == "-pp") {
        return false;
    }
    [
        MODEL,
        TENSOR_PARALLEL_SIZE,
        PIPELINE_PARALLEL_SIZE,
        DATA_PARALLEL_SIZE,
        MAX_MODEL_LEN,
        GPU_MEMORY_UTILIZATION,
        COMPILATION_CONFIG,
        ENFORCE_EAGER,
        DISABLE_CUSTOM_ALL_REDUCE,
        "served-model-name",
        "trust-remote-code",
        "kv-cache-dtype",
        "max-num-seqs",
    ]
    .contains(&long_name(head).as_str())
}

/// A vLLM command (or a `docker run` that looks like one), with the names it can be picked by.
pub(super) fn candidate(
    file: usize,
    index: usize,
    cmd: &SimpleCommand,
    words: &[Word],
) -> Option<Candidate> {
    let mut names = vec![format!("line:{}", cmd.line)];
    let (label, args): (String, Vec<String>) = if let Some(start) = find_docker(words) {
        let rest: Vec<String> = words[start..].iter().map(|w| w.value.clone()).collect();
        let vllm_like = rest.iter().any(|w| w.contains("vllm") || is_vllm_flag(w));
        if !vllm_like {
            return None;
        }
        for (k, w) in rest.iter().enumerate() {
            if let Some(n) = w.strip_prefix("--name=") {
                names.push(n.to_string());
            } else if w == "--name"
                && let Some(n) = rest.get(k + 1)
            {
                names.push(n.clone());
            }
        }
        (
            format!(
                "docker run {}",
                rest.iter().take(4).cloned().collect::<Vec<_>>().join(" ")
            ),
            rest,
        )
    } else {
        let (_, args_start, entry) = find_entrypoint(words)?;
        let args: Vec<String> = words[args_start..]
            .iter()
            .map(|w| w.value.clone())
            .collect();
        (
            format!(
                "{entry} {}",
                args.iter().take(3).cloned().collect::<Vec<_>>().join(" ")
            ),
            args,
        )
    };
    let (model, served) = model_of(&args);
    let picked_by: Vec<String> = names.drain(1..).collect();
    if let Some(m) = model {
        names.push(m.clone());
        names.push(base_or_self(&m).to_string());
    }
    // The most specific name last: the list shows it.
    names.extend(served);
    names.extend(picked_by);
    Some(Candidate {
        file,
        index,
        line: cmd.line,
        label: label.trim_end().to_string(),
        names,
    })
}

/// Pick the vLLM command: the one named, else the only one; several → refuse with the list.
pub(super) fn pick(
    files: &[SourceFile],
    candidates: &[Candidate],
    select: &Select,
) -> Result<Option<At>, LaunchError> {
    let list = || {
        candidates
            .iter()
            .map(|c| {
                let pick_by = c.names.iter().rev().find(|n| !n.starts_with("line:"));
                format!(
                    "  {}line {}: {} (--service {})",
                    if c.file == 0 {
                        String::new()
                    } else {
                        format!("{} ", files[c.file].name)
                    },
                    c.line,
                    c.label,
                    pick_by.unwrap_or(&c.names[0])
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if candidates.is_empty() && select.service.is_none() {
        return Ok(None);
    }
    let has_name = |c: &Candidate, want: &str| {
        let want_line = want
            .strip_prefix("line:")
            .unwrap_or(want)
            .parse::<usize>()
            .ok();
        c.names.iter().any(|n| n == want) || (want_line == Some(c.line) && c.file == 0)
    };
    let unknown = |want: &str| {
        format!(
            "--service {want}: no vLLM command here has that name; the commands are:\n{}",
            if candidates.is_empty() {
                "  (none)".to_string()
            } else {
                list()
            }
        )
    };
    let several_named = |want: &str, _: &[&Candidate]| {
        format!(
            "--service {want} matches several vLLM commands; name one by line \
             (--service line:N):\n{}",
            list()
        )
    };
    let several = |many: &[&Candidate]| {
        format!(
            "{} vLLM commands in {}; pick one with --service NAME (a model, a served model \
             name, a container name or line:N):\n{}",
            many.len(),
            files[0].name,
            list()
        )
    };
    let one = pick_one(
        candidates,
        select.service.as_deref(),
        has_name,
        candidates.iter().collect(),
        |_| None,
        PickWords {
            unknown: &unknown,
            several_named: Some(&several_named),
            several: &several,
        },
    )?;
    Ok(Some((one.file, one.index)))
}
