//! YAML reading shared by the knowledge base, snapshots and answer files.

/// Line, column and a one-line message from a serde-saphyr error. Its rendered form repeats the
/// position and a source snippet; callers print `file:line:col: message` themselves.
pub fn error_parts(e: &serde_saphyr::Error) -> (usize, usize, String) {
    let (line, column) = e
        .location()
        .map(|l| (l.line() as usize, l.column() as usize))
        .unwrap_or((0, 0));
    let rendered = e.to_string();
    let first = rendered.lines().next().unwrap_or("invalid YAML").trim();
    let message = plain_budget(strip_position_prefix(first));
    (line, column, message)
}

/// serde-saphyr words a resource-limit stop with Rust's debug form of its enum
/// (`budget breached: ScalarBytes { total_scalar_bytes: 67108865 }`); say it in plain words.
fn plain_budget(message: &str) -> String {
    let Some(rest) = message.strip_prefix("budget breached: ") else {
        return message.to_string();
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let what = match name.as_str() {
        "Events" => "it has too many YAML elements",
        "Nodes" => "it has too many values (more than 250,000)",
        "Aliases" => "it has too many aliases (*name)",
        "Anchors" => "it has too many anchors (&name)",
        "AliasAnchorRatio" => "it repeats its anchors through too many aliases (an alias bomb?)",
        "Depth" | "InclusionDepth" | "PropertyExpansionDepth" => "it is nested too deeply",
        "Documents" => "it holds too many documents (---)",
        "ScalarBytes" => {
            "its text values add up to more than 64 MiB (aliases count each time; the files of a --kb directory share it)"
        }
        "MergeKeys" => "it has too many merge keys (<<)",
        "InputBytes" => "it is too large",
        "SequenceUnbalanced" => "its structure is unbalanced (truncated?)",
        _ => "it exceeds a limit of the YAML reader",
    };
    format!("the YAML reader stopped: {what}")
}

/// `error: line 10 column 5: missing field` → `missing field`.
fn strip_position_prefix(s: &str) -> &str {
    let rest = s.strip_prefix("error: ").unwrap_or(s);
    if let Some((pos, message)) = rest.strip_prefix("line ").and_then(|a| a.split_once(": "))
        && pos
            .split(" column ")
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    {
        return message;
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_stops_read_as_words_not_debug_text() {
        assert_eq!(
            plain_budget("budget breached: ScalarBytes { total_scalar_bytes: 67108865 }"),
            "the YAML reader stopped: its text values add up to more than 64 MiB (aliases count \
             each time; the files of a --kb directory share it)"
        );
        assert_eq!(
            plain_budget("budget breached: SomethingNew { x: 1 }"),
            "the YAML reader stopped: it exceeds a limit of the YAML reader"
        );
        assert_eq!(plain_budget("missing field `x`"), "missing field `x`");
        // A real alias bomb through the parser: no `{`, no Rust type name in the message.
        let big = "x".repeat(1 << 20);
        let mut doc = format!("a: &a \"{big}\"\nb: [");
        doc.push_str(&vec!["*a"; 80].join(", "));
        doc.push_str("]\n");
        let e =
            serde_saphyr::from_str::<std::collections::BTreeMap<String, serde_json::Value>>(&doc)
                .expect_err("bomb");
        let (_, _, m) = error_parts(&e);
        assert!(m.starts_with("the YAML reader stopped: "), "{m}");
        assert!(!m.contains('{'), "{m}");
    }

    #[test]
    fn strips_the_repeated_position() {
        assert_eq!(
            strip_position_prefix("error: line 10 column 5: missing field `yes`"),
            "missing field `yes`"
        );
        assert_eq!(
            strip_position_prefix("error: something else"),
            "something else"
        );
        assert_eq!(strip_position_prefix("plain"), "plain");
    }
}
