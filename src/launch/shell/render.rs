//! Shell words as bash reads them: a quoted value, `NAME=value`, an `export` line, a docker
//! `-e`, words appended to a command line.

/// Quote a word for bash (POSIX-safe; shlex 2 rejects NUL bytes).
pub fn quote(v: &str) -> Result<String, String> {
    shlex::try_quote(v)
        .map(|c| c.into_owned())
        .map_err(|_| format!("{v:?} holds a NUL byte and cannot be quoted"))
}

/// Quote `new` the way `raw` (the old value as written) was quoted when that is still safe.
pub(crate) fn quote_like(raw: &str, new: &str) -> Result<String, String> {
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
    quote(new)
}

/// A shell word after `prefix` (`--env=`).
pub fn word(prefix: &str, v: &str) -> Result<String, String> {
    Ok(format!("{prefix}{}", quote(v)?))
}

/// A new `NAME=value` in place of the assignment `raw`, quoted as it was.
pub(crate) fn assign(raw: &str, name: &str, value: &str) -> Result<String, String> {
    let raw_value = raw.split_once('=').map_or("", |(_, v)| v);
    Ok(format!("{name}={}", quote_like(raw_value, value)?))
}

/// A new `prefix NAME=value` word (a docker `-e` word) in place of `raw`, quoted as it was.
pub(crate) fn env_word(prefix: &str, raw: &str, name: &str, value: &str) -> Result<String, String> {
    let raw_value = raw
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix(name))
        .and_then(|r| r.strip_prefix('='));
    let q = match raw_value {
        Some(rv) => quote_like(rv, value)?,
        None => quote(value)?,
    };
    Ok(format!("{prefix}{name}={q}"))
}

/// `NAME=value ` before the program word.
pub(crate) fn prefix_assign(name: &str, value: &str) -> Result<String, String> {
    Ok(format!("{name}={} ", quote(value)?))
}

/// `env NAME=value ` before the program word (`env` is a program of its own, so a `readonly`
/// name in the script does not stop it).
pub(crate) fn env_prefix(name: &str, value: &str) -> Result<String, String> {
    Ok(format!("env {name}={} ", quote(value)?))
}

/// A new `export NAME=value` line after the insertion point, or before it when `before`.
pub(crate) fn export_line(
    indent: &str,
    before: bool,
    name: &str,
    value: &str,
) -> Result<String, String> {
    Ok(if before {
        format!("{indent}export {name}={}\n", quote(value)?)
    } else {
        format!("\n{indent}export {name}={}", quote(value)?)
    })
}

/// `-e NAME=value ` before the image word. After the command name a word is never an
/// assignment, so `NAME=` needs no quotes.
pub(crate) fn docker_env(name: &str, value: &str) -> Result<String, String> {
    Ok(format!("-e {name}={} ", quote(value)?))
}

fn joined(words: &[String]) -> Result<String, String> {
    Ok(words
        .iter()
        .map(|w| word("", w))
        .collect::<Result<Vec<_>, _>>()?
        .join(" "))
}

/// ` WORD...` on the same line.
pub(crate) fn same_line(words: &[String]) -> Result<String, String> {
    Ok(format!(" {}", joined(words)?))
}

/// ` \` + newline + indent + `WORD...`.
pub(crate) fn new_line(indent: &str, words: &[String]) -> Result<String, String> {
    Ok(format!(" \\\n{indent}{}", joined(words)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_like_keeps_the_users_quotes() {
        assert_eq!(quote_like("'a b'", "c d"), Ok("'c d'".into()));
        assert_eq!(quote_like("\"a b\"", "c d"), Ok("\"c d\"".into()));
        assert_eq!(quote_like("\"a b\"", "c $d"), Ok("'c $d'".into()));
        assert_eq!(quote_like("ab", "x"), Ok("x".into()));
    }
}
