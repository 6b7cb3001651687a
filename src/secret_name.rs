//! The one rule for "this variable, flag or key holds a secret", used where the environment is
//! collected (values are redacted before anything else sees them) and where reports are
//! redacted (launch text, JSON keys, `--api-key` flags). Two copies of it once disagreed
//! (`SESSION` was a secret to one, `PASSPHRASE` to the other); this is the only one.
//!
//! The name is split into words (`--hf-token`, `env.HF_TOKEN`, `db_password` all read as
//! upper-case words joined by `_`), because a substring match calls `TOKENIZERS_PARALLELISM`
//! and `KEYBOARD` secrets.

/// Words that make a name secret wherever they appear, even inside a word (`DBPASSWORD`).
const SECRET_SUBSTRINGS: &[&str] = &[
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
];

/// Whole words that make a name secret (`AWS_SESSION_TOKEN`, `X_AUTH`, `MY_COOKIE`).
const SECRET_WORDS: &[&str] = &[
    "AUTH",
    "AUTHORIZATION",
    "BEARER",
    "COOKIE",
    "COOKIES",
    "PASS",
    "SESSION",
    "KEY",
];

/// Last words that name where a secret is kept, not the secret (`TIKTOKEN_CACHE_DIR`,
/// `SSH_KEY_PATH`, `GNUPG_HOME`): their values are paths a diagnosis may need.
const LOCATION_WORDS: &[&str] = &["DIR", "PATH", "HOME"];

/// Does a variable, flag or key with this name hold a secret? (`HF_TOKEN`, `OPENAI_API_KEY`,
/// `AWS_SECRET_ACCESS_KEY`, `--api-key`, `db_password`, `AWS_SESSION_TOKEN`; not
/// `TOKENIZERS_PARALLELISM`, `--max-num-batched-tokens`, `--tokenizer` or `TIKTOKEN_CACHE_DIR`.)
pub(crate) fn is_secret_name(name: &str) -> bool {
    let n = name
        .trim_start_matches('-')
        .to_ascii_uppercase()
        .replace(['-', '.'], "_");
    let words: Vec<&str> = n.split('_').filter(|p| !p.is_empty()).collect();
    if words.last().is_some_and(|w| LOCATION_WORDS.contains(w)) {
        return false;
    }
    SECRET_SUBSTRINGS.iter().any(|s| n.contains(s))
        || words
            .iter()
            .any(|w| (w.ends_with("TOKEN") && *w != "TOKENS") || SECRET_WORDS.contains(w))
}

/// Values that look like credentials whatever they are called: the token shapes of the common
/// services. Whole values are judged by [`is_secret_value`]; the report's redactor also finds
/// them inside text.
pub static TOKEN_VALUE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    // A constant pattern, exercised by the tests here and in report/redact.rs.
    regex::Regex::new(concat!(
        // `_` may come percent-encoded (`hf%5F…` in a URL's query).
        r"\b(?:hf(?:_|%5[Ff])[A-Za-z0-9]{16,}",
        r"|sk-[A-Za-z0-9_-]{16,}",
        r"|gh[pousr](?:_|%5[Ff])[A-Za-z0-9]{20,}",
        r"|github(?:_|%5[Ff])pat(?:_|%5[Ff])[A-Za-z0-9_]{20,}",
        r"|glpat-[A-Za-z0-9_-]{20,}",
        r"|xox[abprs]-[A-Za-z0-9-]{10,}",
        r"|AKIA[0-9A-Z]{16}",
        r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    ))
    .unwrap_or_else(|e| panic!("bad built-in token pattern: {e}"))
});

/// `GPU-`/`MIG-` UUIDs and plain UUIDs: identifiers, not credentials.
static UUID: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^(?:GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    )
    .unwrap_or_else(|e| panic!("bad built-in UUID pattern: {e}"))
});

/// Does this value look like a credential whatever its name? The one rule, shared by the
/// collector (`NOTES=ghp_…` in the environment) and the report's redactor.
pub(crate) fn is_secret_value(value: &str) -> bool {
    let v = value.trim();
    // The whole value is a token (tokens inside longer text are found by the redactor).
    if TOKEN_VALUE
        .find(v)
        .is_some_and(|m| m.start() == 0 && m.end() == v.len())
    {
        return true;
    }
    // Long random-looking words: letters of both cases and digits, no spaces. UUIDs (GPU ones
    // have their own option) are identifiers, not credentials.
    v.len() >= 32
        && !UUID.is_match(v)
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=_-".contains(c))
        && v.split(['_', '-']).any(mixes_like_a_token)
}

/// A run of at least 16 characters between `_`/`-` that mixes lower case, upper case and
/// digits: random text does, an identifier made of words and numbers joined by `_`
/// (`NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition`) does not.
fn mixes_like_a_token(part: &str) -> bool {
    part.len() >= 16
        && part.chars().any(|c| c.is_ascii_lowercase())
        && part.chars().any(|c| c.is_ascii_uppercase())
        && part.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for n in [
            "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN",
            "OPENAI_API_KEY",
            "WANDB_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "--api-key",
            "--hf-token",
            "db_password",
            "DB_PASSWORD",
            "DBPASSWORD",
            "GITHUB_TOKEN",
            "env.HF_TOKEN",
            "WANDB_KEY",
            "MY_CREDENTIALS",
            "GPG_PASSPHRASE",
            "FLASK_SESSION",
            "X_AUTH",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
    }

    #[test]
    fn names_that_only_look_secret() {
        for n in [
            "TOKENIZERS_PARALLELISM",
            "--max-num-batched-tokens",
            "--tokenizer",
            "PYTORCH_CUDA_ALLOC_CONF",
            "VLLM_USE_DEEP_GEMM",
            "CUDA_VISIBLE_DEVICES",
            "PWD",
            "KEYBOARD",
            "AUTHOR",
            "TIKTOKEN_CACHE_DIR",
            "SSH_KEY_PATH",
            "HF_HOME",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
    }
}
