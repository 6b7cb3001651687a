//! Redaction: runs over the whole report model before any renderer sees it.
//!
//! Two passes over every string of the model (as JSON, so no field can be forgotten):
//! 1. learn the values to hide everywhere: values of variables, flags and keys whose *name*
//!    looks secret, values that *look* like tokens, credentials in URLs, bearer tokens, the
//!    hostname, user names (from `USER`/`LOGNAME`/home paths) and, when asked, GPU UUIDs;
//! 2. replace them, and the patterns themselves, in every string (snapshot, launch, log lines,
//!    evidence, walk facts).
//!
//! Placeholders are `[redacted:KIND]`; the report lists how many of each kind were replaced,
//! never the values. Env var names, flag names and map keys are kept.

use super::model::{Redaction, Report};
use regex::{Captures, Regex};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// What to redact beyond the defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedactOptions {
    /// Also hide GPU UUIDs (`GPU-…`, `MIG-…`).
    pub gpu_uuids: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Secret,
    CredentialsInUrl,
    Hostname,
    User,
    HomePath,
    GpuUuid,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Secret => "secret",
            Kind::CredentialsInUrl => "credentials_in_url",
            Kind::Hostname => "hostname",
            Kind::User => "user",
            Kind::HomePath => "home_path",
            Kind::GpuUuid => "gpu_uuid",
        }
    }
    pub fn placeholder(self) -> String {
        format!("[redacted:{}]", self.as_str())
    }
    /// How the report describes this kind.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Secret => "secret values (tokens, keys, passwords)",
            Kind::CredentialsInUrl => "credentials inside URLs",
            Kind::Hostname => "hostname",
            Kind::User => "user names",
            Kind::HomePath => "user names in home paths",
            Kind::GpuUuid => "GPU UUIDs",
        }
    }
    fn from_name(s: &str) -> Option<Kind> {
        [
            Kind::Secret,
            Kind::CredentialsInUrl,
            Kind::Hostname,
            Kind::User,
            Kind::HomePath,
            Kind::GpuUuid,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// Describe a redaction entry of a report for people.
pub fn describe(kind: &str) -> String {
    Kind::from_name(kind).map_or_else(|| kind.to_string(), |k| k.describe().to_string())
}

const MARK: &str = "[redacted:";

fn re(pattern: &str) -> Regex {
    // Constant patterns, each exercised by the tests below.
    Regex::new(pattern).unwrap_or_else(|e| panic!("bad built-in redaction pattern: {e}"))
}

/// Values that look like credentials whatever they are called.
static TOKEN_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\b(?:hf_[A-Za-z0-9]{16,}",
        r"|sk-[A-Za-z0-9_-]{16,}",
        r"|gh[pousr]_[A-Za-z0-9]{20,}",
        r"|github_pat_[A-Za-z0-9_]{20,}",
        r"|glpat-[A-Za-z0-9_-]{20,}",
        r"|xox[abprs]-[A-Za-z0-9-]{10,}",
        r"|AKIA[0-9A-Z]{16}",
        r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    ))
});
/// `scheme://user:pass@` or `scheme://token@`.
static URL_CREDS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<cred>[^/\s@'\x22]+)@"));
/// `Authorization: Bearer X`, `bearer X`, `Basic X`.
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?P<pre>\b(?:bearer|basic)\s+)(?P<val>[A-Za-z0-9._~+/=:-]{8,})"));
/// `NAME=value` in text (launch lines, logs).
static ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"(?P<name>\b[A-Za-z_][A-Za-z0-9_]*)=(?P<val>"[^"]*"|'[^']*'|[^\s,;'"]+)"#)
});
/// `"name": "value"` in text (JSON in logs).
static JSON_PAIR: LazyLock<Regex> =
    LazyLock::new(|| re(r#""(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)"\s*:\s*"(?P<val>[^"]*)""#));
/// `--flag value` / `--flag=value` in text.
static FLAG: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"(?P<name>--[A-Za-z0-9][A-Za-z0-9_-]*)(?P<sep>=|[ \t]+)(?P<val>"[^"]*"|'[^']*'|[^\s'"]+)"#)
});
/// The user part of a home path.
static HOME: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?P<pre>/home/|/Users/|\b[A-Za-z]:\\Users\\)(?P<name>[^/\\\s'\x22<>\[\]:;,=)(]+)")
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    )
});
static GPU_UUID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    )
});

/// Does a variable, flag or key with this name hold a secret? (`HF_TOKEN`, `OPENAI_API_KEY`,
/// `AWS_SECRET_ACCESS_KEY`, `--api-key`, `db_password`; not `TOKENIZERS_PARALLELISM`,
/// `--max-num-batched-tokens` or `--tokenizer`.)
pub fn name_looks_secret(name: &str) -> bool {
    let n = name
        .trim_start_matches('-')
        .to_ascii_uppercase()
        .replace(['-', '.'], "_");
    if n.contains("SECRET")
        || n.contains("PASSWORD")
        || n.contains("PASSWD")
        || n.contains("PASSPHRASE")
        || n.contains("CREDENTIAL")
        || n.contains("API_KEY")
        || n.contains("APIKEY")
        || n.contains("ACCESS_KEY")
        || n.contains("PRIVATE_KEY")
    {
        return true;
    }
    let parts: Vec<&str> = n.split('_').filter(|p| !p.is_empty()).collect();
    parts.iter().any(|p| {
        (p.ends_with("TOKEN") && *p != "TOKENS")
            || matches!(*p, "AUTH" | "AUTHORIZATION" | "BEARER" | "COOKIE" | "PASS")
    }) || parts.last() == Some(&"KEY")
}

/// Does this value look like a credential whatever its name?
pub fn value_looks_secret(value: &str) -> bool {
    let v = value.trim();
    // The whole value is a token (tokens inside longer text are found by the text pass).
    if TOKEN_VALUE
        .find(v)
        .is_some_and(|m| m.start() == 0 && m.end() == v.len())
    {
        return true;
    }
    // Long random-looking words: letters of both cases and digits, no spaces. UUIDs (GPU ones
    // have their own option) are identifiers, not credentials.
    v.len() >= 32
        && !v.contains(MARK)
        && !UUID.is_match(v)
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=_-".contains(c))
        && v.chars().any(|c| c.is_ascii_lowercase())
        && v.chars().any(|c| c.is_ascii_uppercase())
        && v.chars().any(|c| c.is_ascii_digit())
}

/// Names that are not personal even where a user name would be.
const NOT_PERSONAL: &[&str] = &[
    "root", "user", "users", "ubuntu", "admin", "vllm", "nvidia", "cuda", "docker", "app", "home",
    "runner", "shared", "yes", "no", "unsure", "error", "warning", "info", "ok", "null", "none",
];

fn strip_quotes(v: &str) -> &str {
    let b = v.as_bytes();
    if v.len() >= 2
        && ((b[0] == b'"' && b[v.len() - 1] == b'"') || (b[0] == b'\'' && b[v.len() - 1] == b'\''))
    {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// The state of one redaction run: what to hide, and how much was hidden.
#[derive(Debug, Default)]
pub struct Redactor {
    opts: RedactOptions,
    /// Exact values to replace everywhere, longest first when applied.
    literals: Vec<(String, Kind)>,
    counts: BTreeMap<Kind, usize>,
}

impl Redactor {
    pub fn new(opts: RedactOptions) -> Self {
        Redactor {
            opts,
            ..Default::default()
        }
    }

    /// Learn a value to hide everywhere. Values too short to be safely replaced in free text are
    /// still hidden where they stand (by the structural rules) but not searched for elsewhere.
    pub fn learn(&mut self, value: &str, kind: Kind) {
        let v = value.trim();
        let v = strip_quotes(v);
        if v.is_empty() || v.contains(MARK) {
            return;
        }
        let min = match kind {
            Kind::Secret => 6,
            _ => 3,
        };
        if v.chars().count() < min {
            return;
        }
        if matches!(kind, Kind::User | Kind::Hostname)
            && NOT_PERSONAL.contains(&v.to_ascii_lowercase().as_str())
        {
            return;
        }
        if !self.literals.iter().any(|(l, _)| l == v) {
            self.literals.push((v.to_string(), kind));
        }
    }

    fn count(&mut self, kind: Kind, n: usize) {
        if n > 0 {
            *self.counts.entry(kind).or_default() += n;
        }
    }

    /// Pass 1 over a free-text string: learn values that its patterns reveal.
    pub fn learn_from_text(&mut self, s: &str) {
        let mut found: Vec<(String, Kind)> = Vec::new();
        for c in ASSIGN.captures_iter(s) {
            let name = &c["name"];
            let val = &c["val"];
            if name_looks_secret(name) || value_looks_secret(strip_quotes(val)) {
                found.push((val.to_string(), Kind::Secret));
            }
            if matches!(name, "USER" | "LOGNAME" | "USERNAME") {
                found.push((val.to_string(), Kind::User));
            }
            if name == "HOSTNAME" {
                found.push((val.to_string(), Kind::Hostname));
            }
        }
        for re in [&*JSON_PAIR, &*FLAG] {
            for c in re.captures_iter(s) {
                if name_looks_secret(&c["name"]) && !c["val"].starts_with('-') {
                    found.push((c["val"].to_string(), Kind::Secret));
                }
            }
        }
        for c in BEARER.captures_iter(s) {
            found.push((c["val"].to_string(), Kind::Secret));
        }
        for m in TOKEN_VALUE.find_iter(s) {
            found.push((m.as_str().to_string(), Kind::Secret));
        }
        for c in URL_CREDS.captures_iter(s) {
            found.push((c["cred"].to_string(), Kind::CredentialsInUrl));
        }
        for c in HOME.captures_iter(s) {
            found.push((c["name"].to_string(), Kind::User));
        }
        if self.opts.gpu_uuids {
            for m in GPU_UUID.find_iter(s) {
                found.push((m.as_str().to_string(), Kind::GpuUuid));
            }
        }
        for (v, k) in found {
            self.learn(&v, k);
        }
    }

    /// Pass 2: replace everything learnt, and every pattern, in one string.
    pub fn text(&mut self, s: &str) -> String {
        let mut out = s.to_string();
        // Patterns that keep their context first, so the context stays readable.
        let mut n = 0;
        out = URL_CREDS
            .replace_all(&out, |c: &Captures| {
                if c["cred"].contains(MARK) {
                    c[0].to_string()
                } else {
                    n += 1;
                    format!("{}{}@", &c["scheme"], Kind::CredentialsInUrl.placeholder())
                }
            })
            .into_owned();
        self.count(Kind::CredentialsInUrl, n);
        let mut n = 0;
        out = HOME
            .replace_all(&out, |c: &Captures| {
                let name = &c["name"];
                if name.contains(MARK)
                    || name.starts_with("[redacted")
                    || NOT_PERSONAL.contains(&name.to_ascii_lowercase().as_str())
                {
                    c[0].to_string()
                } else {
                    n += 1;
                    format!("{}{}", &c["pre"], Kind::User.placeholder())
                }
            })
            .into_owned();
        self.count(Kind::HomePath, n);
        // Learnt values, longest first so a value containing another goes whole.
        let mut lits = self.literals.clone();
        lits.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        for (lit, kind) in lits {
            let (replaced, n) = replace_literal(&out, &lit, &kind.placeholder(), kind);
            out = replaced;
            self.count(kind, n);
        }
        // Anything the learning pass could not see as a whole value.
        let mut n = 0;
        out = BEARER
            .replace_all(&out, |c: &Captures| {
                if c["val"].contains("redacted") {
                    c[0].to_string()
                } else {
                    n += 1;
                    format!("{}{}", &c["pre"], Kind::Secret.placeholder())
                }
            })
            .into_owned();
        let (o, m) = replace_all_count(&TOKEN_VALUE, &out, &Kind::Secret.placeholder());
        out = o;
        n += m;
        self.count(Kind::Secret, n);
        if self.opts.gpu_uuids {
            let (o, m) = replace_all_count(&GPU_UUID, &out, &Kind::GpuUuid.placeholder());
            out = o;
            self.count(Kind::GpuUuid, m);
        }
        out
    }

    /// The counts so far, as the report lists them.
    pub fn summary(&self) -> Vec<Redaction> {
        self.counts
            .iter()
            .map(|(k, n)| Redaction {
                kind: k.as_str().into(),
                count: *n,
            })
            .collect()
    }
}

fn replace_all_count(re: &Regex, s: &str, with: &str) -> (String, usize) {
    let n = re.find_iter(s).count();
    if n == 0 {
        return (s.to_string(), 0);
    }
    (re.replace_all(s, with).into_owned(), n)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Replace `lit` in `s`. Names (hostnames, users) only as whole words (letters, digits and `_`
/// bound a word), so `ada` does not eat `cuda`; secrets wherever they occur.
fn replace_literal(s: &str, lit: &str, with: &str, kind: Kind) -> (String, usize) {
    let whole_word = matches!(kind, Kind::Hostname | Kind::User);
    let mut out = String::with_capacity(s.len());
    let mut n = 0;
    let mut rest = s;
    let mut consumed = 0usize;
    while let Some(pos) = rest.find(lit) {
        let abs = consumed + pos;
        let end = abs + lit.len();
        let ok = !whole_word
            || ((abs == 0 || !is_word_byte(s.as_bytes()[abs - 1]))
                && (end == s.len() || !is_word_byte(s.as_bytes()[end])));
        out.push_str(&rest[..pos]);
        if ok {
            out.push_str(with);
            n += 1;
        } else {
            out.push_str(lit);
        }
        rest = &rest[pos + lit.len()..];
        consumed = end;
    }
    out.push_str(rest);
    (out, n)
}

/// Keys whose string values are enum tags of the model, never user data.
const TAG_KEYS: &[&str] = &[
    "severity",
    "confidence",
    "answer",
    "kind",
    "by",
    "chosen_by",
    "mode",
    "schema_version",
];

/// Keys whose strings are knowledge-base prose, not user data: nothing is learnt from them
/// (so `--api-key because` in a sentence does not make `because` a secret); what was learnt
/// elsewhere is still replaced in them.
const KB_PROSE: &[&str] = &[
    "title",
    "question",
    "why",
    "hint",
    "limits",
    "does_not_fix",
    "contradictions",
    "sources",
    "cost",
    "verified",
];

/// Pass 1 over the model as JSON: learn from names and values.
fn learn_value(r: &mut Redactor, v: &Value, key: Option<&str>) {
    match v {
        Value::String(s) => {
            if key.is_some_and(|k| KB_PROSE.contains(&k) || TAG_KEYS.contains(&k)) {
                return;
            }
            if let Some(k) = key {
                if name_looks_secret(k) || value_looks_secret(s) {
                    r.learn(s, Kind::Secret);
                }
                match k {
                    "USER" | "LOGNAME" | "USERNAME" => r.learn(s, Kind::User),
                    "HOSTNAME" => r.learn(s, Kind::Hostname),
                    _ => {}
                }
            }
            r.learn_from_text(s);
        }
        Value::Array(a) => a.iter().for_each(|x| learn_value(r, x, key)),
        Value::Object(map) => {
            // `{name: X, value: Y}` pairs (walk facts, set_env edits).
            if let (Some(Value::String(name)), Some(Value::String(val))) =
                (map.get("name"), map.get("value"))
            {
                let bare = name
                    .strip_prefix("env.")
                    .or_else(|| name.strip_prefix("launch.flag."))
                    .unwrap_or(name);
                if name_looks_secret(bare) {
                    r.learn(val, Kind::Secret);
                }
            }
            for (k, x) in map {
                // Probed wrappers (`{value: ...}`) keep the name of the field they wrap.
                let inner_key = match k.as_str() {
                    "value" | "skipped" | "failed" => key,
                    other => Some(other),
                };
                learn_value(r, x, inner_key);
            }
        }
        _ => {}
    }
}

/// Pass 2: replace in every string, and hide values whose name is secret outright.
fn redact_value(r: &mut Redactor, v: &mut Value, key: Option<&str>) {
    match v {
        Value::String(s) => {
            if key.is_some_and(|k| TAG_KEYS.contains(&k)) {
                return;
            }
            let secret_name = key.is_some_and(name_looks_secret);
            if secret_name && !s.is_empty() && !s.contains(MARK) {
                *s = Kind::Secret.placeholder();
                r.count(Kind::Secret, 1);
                return;
            }
            *s = r.text(s);
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_value(r, x, key)),
        Value::Object(map) => {
            let secret_pair = matches!(map.get("name"), Some(Value::String(n)) if {
                let bare = n.strip_prefix("env.").or_else(|| n.strip_prefix("launch.flag.")).unwrap_or(n);
                name_looks_secret(bare)
            });
            for (k, x) in map.iter_mut() {
                if k == "answers" {
                    continue;
                }
                let inner_key = match k.as_str() {
                    "value" if secret_pair => Some("SECRET"),
                    "value" | "skipped" | "failed" => key,
                    other => Some(other),
                };
                redact_value(r, x, inner_key);
            }
        }
        _ => {}
    }
}

/// The report with everything sensitive replaced and `redactions` filled in.
pub fn redact(report: &Report, opts: RedactOptions) -> Result<Report, String> {
    let mut r = Redactor::new(opts);
    // The hostname and GPU UUIDs as the snapshot records them.
    if let Some(os) = report.snapshot.os.value()
        && let Some(h) = os.hostname.value()
    {
        r.learn(h, Kind::Hostname);
        // `box.example.org` often appears as `box` in logs.
        if let Some(short) = h.split('.').next()
            && short != h
        {
            r.learn(short, Kind::Hostname);
        }
    }
    if opts.gpu_uuids
        && let Some(gpus) = report.snapshot.gpus.value()
    {
        for g in gpus {
            if let Some(u) = g.uuid.value() {
                r.learn(u, Kind::GpuUuid);
            }
        }
    }
    let mut v = serde_json::to_value(report).map_err(|e| format!("report model: {e}"))?;
    learn_value(&mut r, &v, None);
    redact_value(&mut r, &mut v, None);
    let mut out: Report =
        serde_json::from_value(v).map_err(|e| format!("redacted report model: {e}"))?;
    out.redacted = true;
    out.redactions = r.summary();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(texts: &[&str]) -> (Vec<String>, Vec<Redaction>) {
        let mut r = Redactor::new(RedactOptions { gpu_uuids: true });
        for t in texts {
            r.learn_from_text(t);
        }
        let out = texts.iter().map(|t| r.text(t)).collect();
        (out, r.summary())
    }

    #[test]
    fn secret_names() {
        for n in [
            "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "--api-key",
            "--hf-token",
            "db_password",
            "GITHUB_TOKEN",
            "env.HF_TOKEN",
            "WANDB_KEY",
            "MY_CREDENTIALS",
        ] {
            assert!(name_looks_secret(n), "{n}");
        }
        for n in [
            "TOKENIZERS_PARALLELISM",
            "--max-num-batched-tokens",
            "--tokenizer",
            "PYTORCH_CUDA_ALLOC_CONF",
            "VLLM_USE_DEEP_GEMM",
            "CUDA_VISIBLE_DEVICES",
            "PWD",
            "KEYBOARD",
        ] {
            assert!(!name_looks_secret(n), "{n}");
        }
    }

    #[test]
    fn secret_values() {
        assert!(value_looks_secret("hf_AbCdEfGhIjKlMnOpQrStUv"));
        assert!(value_looks_secret("sk-proj-0123456789abcdefABCD"));
        assert!(value_looks_secret(
            "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdI"
        ));
        assert!(!value_looks_secret(
            "expandable_segments:True,max_split_size_mb:512"
        ));
        assert!(!value_looks_secret(
            "8c1f6e2a7d8c1f6e2a7d8c1f6e2a7d8c1f6e2a7d"
        ));
        assert!(!value_looks_secret("Qwen/Qwen3.6-27B-FP8"));
        assert!(!value_looks_secret(
            "GPU-0123abcd-4567-89ab-cdef-0123456789ab"
        ));
        assert!(!value_looks_secret(
            "export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUv"
        ));
    }

    #[test]
    fn launch_text_assignments_flags_and_bearer() {
        let (out, sum) = run(&[
            "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUv vllm serve m --api-key sk-local-secret-123 --max-num-batched-tokens 8192",
            "curl -H 'Authorization: Bearer abcdefgh12345678' http://x",
            "later the token hf_AbCdEfGhIjKlMnOpQrStUv shows again; password=hunter2hunter2",
        ]);
        let joined = out.join("\n");
        for s in [
            "hf_AbCd",
            "sk-local-secret-123",
            "abcdefgh12345678",
            "hunter2",
        ] {
            assert!(!joined.contains(s), "{s} leaked: {joined}");
        }
        assert!(joined.contains("--max-num-batched-tokens 8192"), "{joined}");
        assert!(joined.contains("HF_TOKEN=[redacted:secret]"), "{joined}");
        assert!(
            sum.iter().any(|r| r.kind == "secret" && r.count >= 4),
            "{sum:?}"
        );
    }

    #[test]
    fn url_credentials_home_paths_and_uuids() {
        let (out, sum) = run(&[
            "pip install git+https://alice:p4ss@github.com/x/y and https://tok123@host/z",
            "open /home/alice/models/m and /Users/bob/x, not /root/.cache or /home/[redacted:user]/y",
            "GPU-0123abcd-4567-89ab-cdef-0123456789ab",
            "alice ran it; bob too; cuda stays; malice stays",
        ]);
        let joined = out.join("\n");
        for s in [
            "p4ss",
            "tok123",
            "/home/alice",
            "/Users/bob",
            "0123abcd",
            " alice ",
            "bob too",
        ] {
            assert!(!joined.contains(s), "{s} leaked: {joined}");
        }
        assert!(joined.contains("/root/.cache"), "{joined}");
        assert!(joined.contains("malice"), "{joined}");
        assert!(joined.contains("cuda stays"), "{joined}");
        let kinds: Vec<&str> = sum.iter().map(|r| r.kind.as_str()).collect();
        for k in ["credentials_in_url", "user", "home_path", "gpu_uuid"] {
            assert!(kinds.contains(&k), "{k} not counted: {sum:?}");
        }
    }

    #[test]
    fn text_is_idempotent() {
        let mut r = Redactor::new(RedactOptions::default());
        let t = "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUv at /home/alice https://u:p@h/";
        r.learn_from_text(t);
        let once = r.text(t);
        let mut r2 = Redactor::new(RedactOptions::default());
        r2.learn_from_text(&once);
        assert_eq!(r2.text(&once), once);
        assert!(r2.summary().is_empty(), "{:?}", r2.summary());
    }

    #[test]
    fn prose_teaches_nothing_but_is_still_redacted() {
        let mut r = Redactor::new(RedactOptions::default());
        let mut v = serde_json::json!({
            "limits": ["Pass --api-key because the server needs one; alice's box"],
            "evidence": ["--api-key sk-planted-key-123456 on /home/alice"],
            "env": {"HF_TOKEN": "hf_AbCdEfGhIjKlMnOpQrStUv", "TOKENIZERS_PARALLELISM": "false"},
            "severity": "error",
        });
        learn_value(&mut r, &v, None);
        redact_value(&mut r, &mut v, None);
        let out = v.to_string();
        assert!(out.contains("--api-key because"), "{out}");
        assert!(
            !out.contains("alice") && !out.contains("sk-planted"),
            "{out}"
        );
        assert!(out.contains("\"HF_TOKEN\":\"[redacted:secret]\""), "{out}");
        assert!(
            out.contains("\"TOKENIZERS_PARALLELISM\":\"false\""),
            "{out}"
        );
        assert!(out.contains("\"severity\":\"error\""), "{out}");
    }

    #[test]
    fn whole_word_literals() {
        assert_eq!(
            replace_literal("ada cuda ada. x-ada adam", "ada", "X", Kind::User),
            ("X cuda X. x-X adam".to_string(), 3)
        );
        assert_eq!(
            replace_literal("abcsecret1def", "secret1", "X", Kind::Secret),
            ("abcXdef".to_string(), 1)
        );
    }
}
