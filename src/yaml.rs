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
    let message = strip_position_prefix(first).to_string();
    (line, column, message)
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
