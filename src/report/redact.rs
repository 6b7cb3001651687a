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
use crate::snapshot::HostSnapshot;
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

/// Token shapes (`hf_…`, `ghp_…`, `sk-…`): the one table, shared with the collector.
use crate::secret_name::TOKEN_VALUE;
/// `scheme://user:pass@host` or `scheme://token@host`. The credentials run to the *last* `@`
/// of the word, so a password holding `@` or `/` goes whole; [`url_cred`] then decides whether
/// what precedes the `@` is credentials (`medium.com/@user` is a path).
static URL_CREDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<cred>[^\s'\x22<>]*)@(?P<host>[A-Za-z0-9\[][^\s'\x22<>/@]*)",
    )
});
/// `user:pass@host:port` without a scheme (`HTTPS_PROXY=user:pw@proxy.corp:3128`, pip's
/// `--proxy`): a host with a dot or a port after the `@`, so `a:b@c` in prose stays.
static BARE_CREDS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?:^|[\s'"=,;(<])(?P<cred>[A-Za-z0-9._~%+-]+:[^\s'"<>@/:\[\]]+)@(?:[A-Za-z0-9-]+\.[A-Za-z0-9.-]*[A-Za-z0-9]|[A-Za-z0-9.-]+:\d+)"#,
    )
});
/// The host of a `tcp://HOST:PORT` rendezvous (torch.distributed's init method).
static TCP_HOST: LazyLock<Regex> =
    LazyLock::new(|| re(r"\btcp://(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d+"));
/// Flags and variables whose value is this host's (or a peer's) name or address.
const HOST_NAMES: &[&str] = &[
    "--host",
    "--master-addr",
    "--master_addr",
    "--data-parallel-address",
    "--dist-init-addr",
    "HOSTNAME",
    "MASTER_ADDR",
    "VLLM_HOST_IP",
    "HOST_IP",
];
/// Addresses every host has: not personal.
const NOT_A_HOST: &[&str] = &["0.0.0.0", "127.0.0.1", "::", "::1", "[::]", "[::1]"];
/// Lines worth the full learning pass (most log lines hold none of these); see
/// [`Redactor::learn_line`]. Each alternative is a necessary condition of some rule in
/// [`Redactor::learn_from_text`]: a bare `=` is not one (every vLLM line has `pid=`, and
/// taking it sent every line through the full pass: `classify --redact` 5.8× `classify`), only
/// `=` before a value long enough for [`value_looks_secret`] is; a name it learns from
/// carries one of the words (`USER`, `MASTER_ADDR`, `HOSTNAME`, `…_TOKEN`, but not `tokens`).
static LEARN_PREFILTER: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)@|=["']?[ \t]*[A-Za-z0-9+/=_-]{32}|(?:gpu|mig)-[0-9a-f]{8}-|NCCL|--|://|bearer|basic|hf_|hf%5f|sk-|gh[pousr](?:_|%5f)"#,
        r"|github|glpat|xox|akia|eyj|/home/|/users/|\\users\\|pass|secret|token(?:[^s]|$)|key",
        r"|auth|cookie|session|credential|host|user|logname|addr|mysql|mariadb|sshpass"
    ))
});
/// At most this many values are learnt in one run: a log of a million distinct secrets would
/// otherwise grow the table (and the time each replacement takes) without end. Values past it
/// are still hidden where a rule sees them.
const MAX_LEARNT: usize = 4096;

/// `Name: value` (HTTP headers, YAML, comments): `Authorization: Token X`, `X-Api-Key: X`,
/// `# password: X`. A scheme word (`Bearer`, `Token`, …) before the value is kept.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?P<name>\b[A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:[ \t]*(?P<scheme>(?i:bearer|basic|token|digest|apikey)[ \t]+)?(?P<val>"[^"\n]*"|'[^'\n]*'|[^\s'",;]+)"#,
    )
});
/// A password glued to `-p` (`mysql -pX`, `mysqldump -u u -pX`) or after `sshpass -p`.
static DASH_P: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?P<pre>\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?[ \t]-p|\bsshpass[ \t]+-p[ \t]*)(?P<val>[^\s'"]+)"#,
    )
});
/// A URL, for secret path segments (webhooks).
static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r#"\b(?:https?|wss?)://(?P<host>[A-Za-z0-9.-]+)(?P<path>/[^\s'"<>?#]*)?"#));
/// Where a webhook URL's path *is* the secret: everything after the prefix.
const WEBHOOK_PREFIXES: &[(&str, &str)] = &[
    ("hooks.slack.com", "/services/"),
    ("hooks.slack.com", "/workflows/"),
    ("hooks.slack.com", "/triggers/"),
    ("discord.com", "/api/webhooks/"),
    ("discordapp.com", "/api/webhooks/"),
    ("api.telegram.org", "/bot"),
    ("outlook.office.com", "/webhook/"),
    ("webhook.office.com", "/webhookb2/"),
    ("maker.ifttt.com", "/trigger/"),
];
/// NCCL's line prefix `host:pid:tid [rank] NCCL …` (vLLM may put `(Worker pid=…)` first).
static NCCL_HOST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?m)^[ \t]*(?:\([^)\n]*\)[ \t]*)?(?P<host>[A-Za-z][A-Za-z0-9.-]*):\d+:\d+[ \t]+\[\d+\][ \t]+NCCL\b",
    )
});
/// A shell prompt pasted with a command: `user@host:~/dir$`, `[user@host dir]#`.
static PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?P<user>\b[a-z_][a-z0-9_.-]*)@(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*)(?::[~/][^\s]*[#$%>]|[ \t][^\]\n]*\][#$%>])",
    )
});
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
static GPU_UUID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    )
});

/// Does a variable, flag or key with this name hold a secret? The one rule, shared with the
/// collector.
use crate::secret_name::is_secret_name as name_looks_secret;

/// Does this value look like a credential whatever its name? The collector's rule
/// ([`crate::secret_name::is_secret_value`]); a placeholder is not one.
pub(crate) fn value_looks_secret(value: &str) -> bool {
    !value.contains(MARK) && crate::secret_name::is_secret_value(value)
}

/// Names that are not personal even where a user name would be.
const NOT_PERSONAL: &[&str] = &[
    "root",
    "user",
    "users",
    "ubuntu",
    "admin",
    "vllm",
    "nvidia",
    "cuda",
    "docker",
    "app",
    "home",
    "runner",
    "shared",
    "yes",
    "no",
    "unsure",
    "error",
    "warning",
    "info",
    "ok",
    "null",
    "none",
    "localhost",
];

/// Is `cred` (what precedes the last `@` after `scheme://`) credentials? Not when it is a
/// path (`medium.com/`) or `host:port/path`.
fn url_cred(cred: &str) -> bool {
    if cred.is_empty() || cred.contains(MARK) {
        return false;
    }
    match cred.find(['/', '?', '#']) {
        None => true,
        Some(slash) => match cred[..slash].find(':') {
            Some(colon) => {
                let port = &cred[colon + 1..slash];
                !(port.is_empty() || port.bytes().all(|b| b.is_ascii_digit()))
            }
            None => false,
        },
    }
}

/// A URL path segment that looks like a token: 24+ characters of `[A-Za-z0-9_-]` with upper-
/// and lower-case letters and digits (commit ids are hex, one case, and stay).
fn segment_looks_secret(seg: &str) -> bool {
    seg.len() >= 24
        && seg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && seg.bytes().any(|b| b.is_ascii_lowercase())
        && seg.bytes().any(|b| b.is_ascii_uppercase())
        && seg.bytes().any(|b| b.is_ascii_digit())
}

/// The secret parts of a URL's path: whole tails after a webhook prefix, and token-like
/// segments anywhere. Byte ranges inside `path`.
fn secret_path_parts(host: &str, path: &str) -> Vec<(usize, usize)> {
    let host = host.to_ascii_lowercase();
    for (h, prefix) in WEBHOOK_PREFIXES {
        if (host == *h || host.ends_with(&format!(".{h}"))) && path.starts_with(prefix) {
            let start = prefix.len();
            // Telegram's token is one segment (`/bot123:AbC/getMe`); the others own the rest.
            let end = if *prefix == "/bot" {
                path[start..].find('/').map_or(path.len(), |e| start + e)
            } else {
                path.len()
            };
            return if end > start {
                vec![(start, end)]
            } else {
                Vec::new()
            };
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    for seg in path.split('/') {
        if segment_looks_secret(seg) {
            out.push((at, at + seg.len()));
        }
        at += seg.len() + 1;
    }
    out
}

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
    learnt: std::collections::HashSet<String>,
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
    pub(crate) fn learn(&mut self, value: &str, kind: Kind) {
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
        if kind == Kind::Hostname && NOT_A_HOST.contains(&v) {
            return;
        }
        if self.learnt.len() >= MAX_LEARNT || !self.learnt.insert(v.to_string()) {
            return;
        }
        self.literals.push((v.to_string(), kind));
        // `gpu-node-17.corp.example.com` is often `gpu-node-17` in logs (not an address's
        // first number).
        if kind == Kind::Hostname
            && let Some((short, _)) = v.split_once('.')
            && !short.bytes().all(|b| b.is_ascii_digit())
        {
            self.learn(short, Kind::Hostname);
        }
    }

    fn count(&mut self, kind: Kind, n: usize) {
        if n > 0 {
            *self.counts.entry(kind).or_default() += n;
        }
    }

    /// Pass 1 over a free-text string: learn values that its patterns reveal.
    pub(crate) fn learn_from_text(&mut self, s: &str) {
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
            if HOST_NAMES.contains(&name) {
                found.push((val.to_string(), Kind::Hostname));
            }
        }
        for re in [&*JSON_PAIR, &*FLAG] {
            for c in re.captures_iter(s) {
                if name_looks_secret(&c["name"]) && !c["val"].starts_with('-') {
                    found.push((c["val"].to_string(), Kind::Secret));
                }
                if HOST_NAMES.contains(&&c["name"]) && !c["val"].starts_with('-') {
                    found.push((c["val"].to_string(), Kind::Hostname));
                }
            }
        }
        for c in TCP_HOST.captures_iter(s) {
            found.push((c["host"].to_string(), Kind::Hostname));
        }
        for c in BARE_CREDS.captures_iter(s) {
            let cred = &c["cred"];
            if !cred.starts_with("redacted:") {
                found.push((cred.to_string(), Kind::CredentialsInUrl));
                if let Some((_, pass)) = cred.split_once(':') {
                    found.push((pass.to_string(), Kind::CredentialsInUrl));
                }
            }
        }
        for c in HEADER.captures_iter(s) {
            let name = &c["name"];
            if name_looks_secret(name) && !c["val"].starts_with('-') {
                found.push((c["val"].to_string(), Kind::Secret));
            }
            if name.eq_ignore_ascii_case("hostname") || name.eq_ignore_ascii_case("host_name") {
                found.push((c["val"].to_string(), Kind::Hostname));
            }
        }
        for c in DASH_P.captures_iter(s) {
            found.push((c["val"].to_string(), Kind::Secret));
        }
        for c in URL.captures_iter(s) {
            let path = c.name("path").map_or("", |m| m.as_str());
            for (a, b) in secret_path_parts(&c["host"], path) {
                found.push((path[a..b].to_string(), Kind::Secret));
            }
        }
        for c in NCCL_HOST.captures_iter(s) {
            found.push((c["host"].to_string(), Kind::Hostname));
        }
        for c in PROMPT.captures_iter(s) {
            found.push((c["host"].to_string(), Kind::Hostname));
            found.push((c["user"].to_string(), Kind::User));
        }
        for c in BEARER.captures_iter(s) {
            found.push((c["val"].to_string(), Kind::Secret));
        }
        for m in TOKEN_VALUE.find_iter(s) {
            found.push((m.as_str().to_string(), Kind::Secret));
        }
        for c in URL_CREDS.captures_iter(s) {
            let cred = &c["cred"];
            if url_cred(cred) {
                found.push((cred.to_string(), Kind::CredentialsInUrl));
                // The password alone, wherever else it shows.
                if let Some((_, pass)) = cred.split_once(':') {
                    found.push((pass.to_string(), Kind::CredentialsInUrl));
                }
            }
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

    /// Learn from one log line all that [`Redactor::learn_from_text`] would: a `DB_PASSWORD=…`
    /// or an NCCL host prefix is rarely on a line the output keeps, yet its value may be on one
    /// that is. `check`, `classify` and `report` learn from every line of their logs this way,
    /// so the three hide the same values. A cheap prefilter skips lines that hold no name,
    /// address or token shape at all (most of a log).
    pub(crate) fn learn_line(&mut self, line: &str) {
        if LEARN_PREFILTER.is_match(line) {
            self.learn_from_text(line);
        }
    }

    /// Pass 2: replace everything learnt, and every pattern, in one string.
    pub fn text(&mut self, s: &str) -> String {
        self.text_with(s, true)
    }

    /// Learn from `s`, then redact it: for a whole rendered output (`check`, `classify`).
    pub(crate) fn whole_text(&mut self, s: &str) -> String {
        self.learn_from_text(s);
        self.text(s)
    }

    /// Learn from a JSON value, then redact it in place (`check --format json`, `classify`).
    pub fn json(&mut self, v: &mut Value) {
        learn_value(self, v, None);
        redact_value(self, v, None);
    }

    /// [`Redactor::text`]; `structural`: also hide, in place, the values of names that look
    /// secret (`password=x`, `--api-key x`, `X-Api-Key: x`, `mysql -px`) however short. Off
    /// for knowledge-base prose, where `--api-key because` is a sentence.
    fn text_with(&mut self, s: &str, structural: bool) -> String {
        let mut out = s.to_string();
        // Patterns that keep their context first, so the context stays readable.
        let mut n = 0;
        out = URL_CREDS
            .replace_all(&out, |c: &Captures| {
                if !url_cred(&c["cred"]) {
                    c[0].to_string()
                } else {
                    n += 1;
                    format!(
                        "{}{}@{}",
                        &c["scheme"],
                        Kind::CredentialsInUrl.placeholder(),
                        &c["host"]
                    )
                }
            })
            .into_owned();
        self.count(Kind::CredentialsInUrl, n);
        if structural {
            out = self.structural(&out);
        }
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

    /// Values of secret-looking names, replaced where they stand, and secret URL paths.
    fn structural(&mut self, s: &str) -> String {
        let secret = Kind::Secret.placeholder();
        let mut n = 0;
        let keep = |v: &str| v.is_empty() || v.contains(MARK) || v.starts_with('-');
        let mut out = ASSIGN
            .replace_all(s, |c: &Captures| {
                if name_looks_secret(&c["name"]) && !keep(strip_quotes(&c["val"])) {
                    n += 1;
                    format!("{}={secret}", &c["name"])
                } else {
                    c[0].to_string()
                }
            })
            .into_owned();
        out = FLAG
            .replace_all(&out, |c: &Captures| {
                if name_looks_secret(&c["name"]) && !keep(strip_quotes(&c["val"])) {
                    n += 1;
                    format!("{}{}{secret}", &c["name"], &c["sep"])
                } else {
                    c[0].to_string()
                }
            })
            .into_owned();
        out = HEADER
            .replace_all(&out, |c: &Captures| {
                if name_looks_secret(&c["name"]) && !keep(strip_quotes(&c["val"])) {
                    n += 1;
                    let whole = &c[0];
                    let val = c.name("val").map_or(0..0, |m| m.range());
                    let start = c.get(0).map_or(0, |m| m.start());
                    format!(
                        "{}{secret}{}",
                        &whole[..val.start - start],
                        &whole[val.end - start..]
                    )
                } else {
                    c[0].to_string()
                }
            })
            .into_owned();
        out = DASH_P
            .replace_all(&out, |c: &Captures| {
                if keep(&c["val"]) {
                    c[0].to_string()
                } else {
                    n += 1;
                    format!("{}{secret}", &c["pre"])
                }
            })
            .into_owned();
        out = URL
            .replace_all(&out, |c: &Captures| {
                let path = c.name("path").map_or("", |m| m.as_str());
                let parts = secret_path_parts(&c["host"], path);
                if parts.is_empty() {
                    return c[0].to_string();
                }
                let mut p = String::new();
                let mut at = 0;
                for (a, b) in parts {
                    p.push_str(&path[at..a]);
                    p.push_str(&secret);
                    at = b;
                    n += 1;
                }
                p.push_str(&path[at..]);
                let prefix_len = c[0].len() - path.len();
                format!("{}{p}", &c[0][..prefix_len])
            })
            .into_owned();
        self.count(Kind::Secret, n);
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
/// bound a word), so `ada` does not eat `cuda`; secrets wherever they occur; host names in any
/// case.
fn replace_literal(s: &str, lit: &str, with: &str, kind: Kind) -> (String, usize) {
    let whole_word = matches!(kind, Kind::Hostname | Kind::User);
    // Host names are the same name in any case (`GPU-NODE-17.CORP.EXAMPLE.COM`). ASCII case
    // folding keeps every byte where it was, so positions found in the folded text hold.
    let fold = kind == Kind::Hostname;
    let folded_s;
    let folded_lit;
    let (hay, needle) = if fold {
        folded_s = s.to_ascii_lowercase();
        folded_lit = lit.to_ascii_lowercase();
        (folded_s.as_str(), folded_lit.as_str())
    } else {
        (s, lit)
    };
    let mut out = String::with_capacity(s.len());
    let mut n = 0;
    let mut rest = s;
    let mut consumed = 0usize;
    while let Some(pos) = hay[consumed..].find(needle) {
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
            out.push_str(&rest[pos..pos + lit.len()]);
        }
        rest = &rest[pos + lit.len()..];
        consumed = end;
    }
    out.push_str(rest);
    (out, n)
}

/// Keys whose string values are enum tags of the model, never user data. A test checks this
/// list against the committed schema (schema/report.schema.json): every key is a field there,
/// and every field that is an enum wherever it occurs is here.
const TAG_KEYS: &[&str] = &[
    "severity",
    "confidence",
    "answer",
    "kind",
    "by",
    "chosen_by",
    "mode",
    "schema_version",
    "basis",
    "code",
    "engine_env",
    "match",
    "milestone",
    "missing",
    "package",
    "state",
    "verdict",
    "what",
    "whose",
];

/// Keys whose strings are knowledge-base prose, not user data: nothing is learnt from them
/// (so `--api-key because` in a sentence does not make `because` a secret); what was learnt
/// elsewhere is still replaced in them.
/// Each is a field of the committed schema (tested).
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
            let prose = key.is_some_and(|k| KB_PROSE.contains(&k));
            *s = r.text_with(s, !prose);
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

/// A redactor that already knows what a snapshot reveals: its hostname and GPU UUIDs (when
/// asked), and every value its fields and launch teach (for `check` and `classify`, which
/// redact their own output).
pub(crate) fn for_snapshot(snapshot: Option<&HostSnapshot>, opts: RedactOptions) -> Redactor {
    let mut r = Redactor::new(opts);
    if let Some(s) = snapshot {
        learn_snapshot(&mut r, s, opts);
        if let Ok(v) = serde_json::to_value(s) {
            learn_value(&mut r, &v, None);
        }
    }
    r
}

/// What every line of these logs teaches ([`Redactor::learn_line`]).
pub(crate) fn learn_logs(r: &mut Redactor, logs: &[crate::engine::classify::LogText]) {
    for l in logs {
        for line in l.text.lines() {
            r.learn_line(line);
        }
    }
}

/// The hostname and GPU UUIDs as the snapshot records them.
fn learn_snapshot(r: &mut Redactor, snapshot: &HostSnapshot, opts: RedactOptions) {
    if let Some(os) = snapshot.os.value()
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
        && let Some(gpus) = snapshot.gpus.value()
    {
        for g in gpus {
            if let Some(u) = g.uuid.value() {
                r.learn(u, Kind::GpuUuid);
            }
        }
    }
}

/// The report with everything sensitive replaced and `redactions` filled in.
pub fn redact(report: &Report, opts: RedactOptions) -> Result<Report, String> {
    redact_with_logs(report, &[], opts)
}

/// [`redact`], also learning hostnames from every line of the logs the report was made from
/// (an NCCL line naming the host is rarely one of the matched lines the report keeps).
pub(crate) fn redact_with_logs(
    report: &Report,
    logs: &[crate::engine::classify::LogText],
    opts: RedactOptions,
) -> Result<Report, String> {
    let mut r = Redactor::new(opts);
    learn_snapshot(&mut r, &report.snapshot, opts);
    learn_logs(&mut r, logs);
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

    /// The committed report schema's fields: name → whether every occurrence is an enum
    /// (a string `enum`/`const`, a `$ref` to one, or an array of them).
    fn schema_fields() -> BTreeMap<String, bool> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/report.schema.json");
        let text = std::fs::read_to_string(path).expect("the committed schema");
        let schema: Value = serde_json::from_str(&text).expect("the committed schema is JSON");
        let defs = schema
            .get("$defs")
            .and_then(Value::as_object)
            .expect("$defs");
        fn is_enum(s: &Value) -> bool {
            s.get("enum").is_some()
                || s.get("const").is_some()
                || s.get("oneOf")
                    .and_then(Value::as_array)
                    .is_some_and(|alts| {
                        alts.iter()
                            .all(|a| a.get("enum").is_some() || a.get("const").is_some())
                    })
        }
        let enumish = |v: &Value| -> bool {
            let item = match v.get("type").and_then(Value::as_str) {
                Some("array") => v.get("items").unwrap_or(v),
                _ => v,
            };
            let refs = std::iter::once(item).chain(
                ["anyOf", "allOf", "oneOf"]
                    .iter()
                    .filter_map(|k| item.get(*k).and_then(Value::as_array))
                    .flatten(),
            );
            is_enum(item)
                || refs
                    .filter_map(|x| x.get("$ref").and_then(Value::as_str))
                    .any(|r| {
                        r.rsplit('/')
                            .next()
                            .and_then(|name| defs.get(name))
                            .is_some_and(is_enum)
                    })
        };
        fn walk(v: &Value, out: &mut BTreeMap<String, bool>, enumish: &dyn Fn(&Value) -> bool) {
            match v {
                Value::Object(m) => {
                    if let Some(Value::Object(props)) = m.get("properties") {
                        for (k, p) in props {
                            let e = enumish(p);
                            out.entry(k.clone())
                                .and_modify(|all| *all &= e)
                                .or_insert(e);
                        }
                    }
                    m.values().for_each(|x| walk(x, out, enumish));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, out, enumish)),
                _ => {}
            }
        }
        let mut out = BTreeMap::new();
        walk(&schema, &mut out, &enumish);
        out
    }

    #[test]
    fn the_key_lists_match_the_committed_schema() {
        let fields = schema_fields();
        for k in TAG_KEYS.iter().chain(KB_PROSE) {
            assert!(
                fields.contains_key(*k),
                "{k}: not a field of the report schema"
            );
        }
        let untagged: Vec<&String> = fields
            .iter()
            .filter(|(k, all_enum)| **all_enum && !TAG_KEYS.contains(&k.as_str()))
            .map(|(k, _)| k)
            .collect();
        assert!(
            untagged.is_empty(),
            "enum fields of the report schema missing from TAG_KEYS: {untagged:?}"
        );
    }

    fn run(texts: &[&str]) -> (Vec<String>, Vec<Redaction>) {
        let mut r = Redactor::new(RedactOptions { gpu_uuids: true });
        for t in texts {
            r.learn_from_text(t);
        }
        let out = texts.iter().map(|t| r.text(t)).collect();
        (out, r.summary())
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
        assert!(value_looks_secret("hf%5FAbCdEfGhIjKlMnOpQrStUv"));
        assert!(value_looks_secret("ghp%5fAbCdEfGhIjKlMnOpQrStUv1234"));
        let mut r = for_snapshot(None, RedactOptions::default());
        let line = r.whole_text("GET /resolve?token=hf%5FAbCdEfGhIjKlMnOpQrStUv HTTP/1.1");
        assert!(!line.contains("AbCdEfGh"), "{line}");
        // Words and numbers joined by `_`: a device name, not a token.
        for name in [
            "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition",
            "NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition",
        ] {
            assert!(!value_looks_secret(name), "{name}");
        }
        // Random text with `_`/`-` in it still is one.
        assert!(value_looks_secret("xK9_aQ3mZ7pL2vB8nR4tY6wE1sD5fG0h-Jk"));
        assert!(value_looks_secret(
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY1"
        ));
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
    fn url_passwords_with_at_and_slash_go_whole() {
        let (out, _) = run(&[
            "git clone https://bob:p@ssW0rd@host.example/x.git",
            "pip install --index-url https://ci:pa/ss@pypi.example/simple pkg",
            "see https://medium.com/@author/post and http://host:8080/a@b and https://tok123@h/z",
            "the password p@ssW0rd again",
        ]);
        let joined = out.join("\n");
        for leak in ["ssW0rd", "pa/ss", "tok123", "p@ss"] {
            assert!(!joined.contains(leak), "{leak} leaked: {joined}");
        }
        assert!(
            joined.contains("https://[redacted:credentials_in_url]@host.example/x.git"),
            "{joined}"
        );
        assert!(
            joined.contains("https://medium.com/@author/post"),
            "{joined}"
        );
        assert!(joined.contains("http://host:8080/a@b"), "{joined}");
    }

    #[test]
    fn header_style_secrets_short_or_long() {
        let (out, sum) = run(&[
            "curl -H 'Authorization: Token abc123' -H \"X-Api-Key: k9\" https://api.example/v1",
            "api_key: shortie",
            "# password: hunter2",
            "mysql -u root -pS3cr3t -h db && mysqldump -uroot -pAn0ther db",
            "sshpass -p letmein ssh host",
            "password=abc",
            "vllm serve m --api-key xyz --max-num-batched-tokens 8192",
        ]);
        let joined = out.join("\n");
        for leak in [
            "abc123", "k9\"", "shortie", "hunter2", "S3cr3t", "An0ther", "letmein", "=abc", "xyz",
        ] {
            assert!(!joined.contains(leak), "{leak} leaked: {joined}");
        }
        for kept in [
            "Authorization: Token [redacted:secret]",
            "X-Api-Key: [redacted:secret]",
            "api_key: [redacted:secret]",
            "# password: [redacted:secret]",
            "mysql -u root -p[redacted:secret] -h db",
            "--max-num-batched-tokens 8192",
        ] {
            assert!(joined.contains(kept), "{kept} missing: {joined}");
        }
        assert!(
            sum.iter().any(|r| r.kind == "secret" && r.count >= 9),
            "{sum:?}"
        );
    }

    #[test]
    fn webhook_and_token_paths() {
        let (out, _) = run(&[
            "notify https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/XyZ123abcDEF456ghiJKL789",
            "and https://discord.com/api/webhooks/1234567890/aBcDeF-GhIjK_lMnOp",
            "and https://api.telegram.org/bot123456:AAE-xYz/sendMessage",
            "and https://example.com/hook/Zm9vQmFyQmF6cXV4MTIzNDU2Nzg5 ok",
            "keep https://github.com/vllm-project/vllm/commit/8c1f6e2a7d8c1f6e2a7d8c1f6e2a7d8c1f6e2a7d",
            "keep https://huggingface.co/Qwen/Qwen3.6-27B-FP8/resolve/main/config.json",
        ]);
        let joined = out.join("\n");
        for leak in ["XyZ123", "T0AAAAAAA", "aBcDeF", "123456:AAE", "Zm9vQmFy"] {
            assert!(!joined.contains(leak), "{leak} leaked: {joined}");
        }
        assert!(joined.contains("/sendMessage"), "{joined}");
        assert!(
            joined.contains("commit/8c1f6e2a7d8c1f6e2a7d8c1f6e2a7d8c1f6e2a7d"),
            "{joined}"
        );
        assert!(
            joined.contains("Qwen3.6-27B-FP8/resolve/main/config.json"),
            "{joined}"
        );
    }

    #[test]
    fn hostnames_from_nccl_lines_and_prompts() {
        let (out, sum) = run(&[
            "(VllmWorker rank=0 pid=77) gpu-node-17:77:77 [0] NCCL INFO Bootstrap : Using eth0",
            "# alice@dgx-a100-3:~/vllm$ vllm serve m -tp 2",
            "[bob@lab-box-9 work]$ ls",
            "later gpu-node-17 and dgx-a100-3 and lab-box-9 show again",
        ]);
        let joined = out.join("\n");
        for leak in ["gpu-node-17", "dgx-a100-3", "lab-box-9", "alice", "bob@"] {
            assert!(!joined.contains(leak), "{leak} leaked: {joined}");
        }
        assert!(
            sum.iter().any(|r| r.kind == "hostname" && r.count >= 6),
            "{sum:?}"
        );
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

    #[test]
    fn a_host_name_goes_short_long_and_in_any_case() {
        let (out, _) = run(&[
            "vllm serve m --host gpu-node-17.corp.example.com",
            "on gpu-node-17 and GPU-NODE-17.CORP.EXAMPLE.COM; cuda gpu-node-170 stays",
        ]);
        assert_eq!(out[0], "vllm serve m --host [redacted:hostname]");
        assert_eq!(
            out[1],
            "on [redacted:hostname] and [redacted:hostname]; cuda gpu-node-170 stays"
        );
        // Every host's addresses are not one host's.
        let (out, _) = run(&["vllm serve m --host 0.0.0.0 --port 8000"]);
        assert_eq!(out[0], "vllm serve m --host 0.0.0.0 --port 8000");
    }

    #[test]
    fn a_rendezvous_address_and_bare_proxy_credentials_are_hidden() {
        let (out, _) = run(&[
            "init_process_group tcp://10.20.30.40:43211 backend=nccl",
            "gpu-node-17:2817:2817 [0] NCCL INFO Bootstrap : Using eth0:10.20.30.40<0>",
            "HTTPS_PROXY=user:pw0rd@proxy.corp:3128 then pw0rd alone; a:b@c stays",
        ]);
        assert_eq!(
            out[0],
            "init_process_group tcp://[redacted:hostname]:43211 backend=nccl"
        );
        assert!(
            out[1].ends_with("eth0:[redacted:hostname]<0>"),
            "{}",
            out[1]
        );
        assert!(!out[2].contains("pw0rd"), "{}", out[2]);
        assert!(out[2].contains("@proxy.corp:3128"), "{}", out[2]);
        assert!(out[2].ends_with("a:b@c stays"), "{}", out[2]);
        // A redacted URL is not bare credentials the second time round.
        let once = "https://[redacted:credentials_in_url]@pypi.corp.example/";
        assert_eq!(run(&[once]).0[0], once);
    }

    #[test]
    fn a_short_learnt_secret_is_hidden_in_a_quoted_line() {
        // 6 to 11 characters: under every token shape, found only because it was learnt.
        for secret in ["pw9xyz", "s3cr3tpw9", "s3cr3tpw9ab"] {
            let mut r = Redactor::new(RedactOptions::default());
            r.learn_line(&format!("ERROR: bad login DB_PASSWORD={secret}"));
            let out = r.text(&format!("RuntimeError: 'connecting with {secret}' failed"));
            assert_eq!(
                out, "RuntimeError: 'connecting with [redacted:secret]' failed",
                "{secret}"
            );
        }
        // Five characters is too short to search for in free text (it stays where it stands
        // hidden by the structural rule only).
        let mut r = Redactor::new(RedactOptions::default());
        r.learn_line("DB_PASSWORD=pw9xy");
        assert_eq!(r.text("'pw9xy'"), "'pw9xy'");
        assert_eq!(r.text("DB_PASSWORD=pw9xy"), "DB_PASSWORD=[redacted:secret]");
    }

    /// The prefilter of `learn_line` drops no line `learn_from_text` learns from: one line
    /// for each of its rules, and vLLM lines (`pid=`, `tokens/s`) that teach nothing.
    #[test]
    fn the_learning_prefilter_keeps_every_line_that_teaches() {
        let teaching = [
            "DB_PASSWORD=s3cr3tpw9",
            "NOTES=AbCdEfGh1234567890AbCdEfGh12345678",
            "NOTES=\" AbCdEfGh1234567890AbCdEfGh12345678\"",
            "USER=alice",
            "LOGNAME=alice",
            "MASTER_ADDR=gpu-node-17.corp.example.com",
            "VLLM_HOST_IP=10.20.30.40",
            "\"api_key\": \"abcdef123456\"",
            "--hf-token abcdef123456",
            "--master-addr gpu-node-17",
            "init tcp://10.20.30.40:43211",
            "HTTPS_PROXY user:pw0rd@proxy.corp:3128",
            "X-Api-Key: abcdef123456",
            "hostname: gpu-node-17",
            "mysql -u root -ps3cr3tpw9 db",
            "sshpass -p s3cr3tpw9 ssh x",
            "POST https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX",
            "gpu-node-17:2951:3001 [0] NCCL INFO Bootstrap",
            "alice@gpu-node-17:~/vllm$ vllm serve",
            "Authorization: Bearer abcdefgh12345678",
            "loading hf_AbCdEfGhIjKlMnOpQrSt",
            "loading hf%5FAbCdEfGhIjKlMnOpQrSt",
            "fetch https://alice:pw0rd@example.com/x",
            "open /home/alice/models/x",
            "C:\\Users\\alice\\x",
            "GPU 0 (UUID: GPU-12345678-1234-1234-1234-123456789abc)",
        ];
        let vllm = [
            "(EngineCore pid=2817) INFO 11-30 00:13:30 [kv_cache_utils.py:1087] GPU KV cache size: 412,608 tokens",
            "(APIServer pid=2817) INFO 11-30 00:20:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1843.2 tokens/s",
            "(EngineCore pid=2817) INFO 11-30 00:12:03 [core.py:94] config: model='Qwen/Qwen3.6-27B-FP8', tensor_parallel_size=2",
        ];
        let opts = RedactOptions { gpu_uuids: true };
        for line in teaching.iter().chain(&vllm) {
            let mut full = Redactor::new(opts);
            full.learn_from_text(line);
            let mut filtered = Redactor::new(opts);
            filtered.learn_line(line);
            assert_eq!(filtered.literals, full.literals, "{line}");
        }
        for line in teaching {
            assert!(LEARN_PREFILTER.is_match(line), "{line}");
            let mut r = Redactor::new(opts);
            r.learn_from_text(line);
            assert!(!r.literals.is_empty(), "teaches nothing: {line}");
        }
        for line in vllm {
            assert!(!LEARN_PREFILTER.is_match(line), "{line}");
        }
    }

    #[test]
    fn what_is_learnt_is_bounded() {
        let mut r = Redactor::new(RedactOptions::default());
        for i in 0..(MAX_LEARNT + 500) {
            r.learn_line(&format!("PASSWORD=value{i:08}"));
        }
        assert_eq!(r.literals.len(), MAX_LEARNT);
        // Past the table, the structural rule still hides a value where it stands.
        let last = format!("PASSWORD=value{:08}", MAX_LEARNT + 499);
        assert_eq!(r.text(&last), "PASSWORD=[redacted:secret]");
    }
}
