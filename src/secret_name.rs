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
pub fn is_secret_name(name: &str) -> bool {
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
