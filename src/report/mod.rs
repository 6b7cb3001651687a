//! Renderers over the engine's model. `check` prints [`check_text`] or [`check_json`]; `report`
//! builds a [`model::Report`], redacts it ([`redact::redact`]) and renders it with [`render`].
//!
//! The API for other front ends (the TUI's export dialog):
//! [`prepare`] (build + redact) and [`render`] (model → text of a [`ReportFormat`]); files are
//! written by the one writer, [`crate::write`].
//!
//! [`check_text`]: check::check_text
//! [`check_json`]: check::check_json

pub mod check;
pub mod command;
pub mod excerpt;
pub mod host;
pub mod json;
pub mod markdown;
pub mod model;
pub mod prometheus;
pub mod redact;
pub mod sanitize;
pub mod text;
pub mod textfile;

pub use model::{REPORT_SCHEMA_VERSION, Report, ReportInput};
pub use redact::RedactOptions;

/// The formats a report is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Markdown,
    Json,
    Text,
}

impl ReportFormat {
    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            ReportFormat::Markdown => "md",
            ReportFormat::Json => "json",
            ReportFormat::Text => "txt",
        }
    }
}

/// Where a log's run differs from this host, in words: "the log's run used torch 2.5.1
/// (log file run.log:3); this host has 2.9.0: the log was made elsewhere or before an upgrade,
/// and the log's value decided this finding".
pub(crate) fn run_differs_words(
    what: crate::engine::log_env::RunFact,
    in_log: &str,
    on_host: &str,
    file: &str,
    line: usize,
) -> String {
    format!(
        "the log's run used {} {in_log} ({file}:{line}); this host has {on_host}: the log was made elsewhere or before an upgrade, and the log's value decided this finding",
        crate::engine::log_env::what_words(what)
    )
}

/// A sentence as a person reads it: a `{name}={value}` pair whose name and value were both
/// unset reads "(not set)=(not set)" after filling; say "not set" instead.
pub(crate) fn plain_unset(s: &str) -> std::borrow::Cow<'_, str> {
    const PAIR: &str = "(not set)=(not set)";
    if s.contains(PAIR) {
        std::borrow::Cow::Owned(s.replace(PAIR, "not set"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Render a (redacted) report. Pure: the same model gives the same bytes.
pub fn render(report: &Report, format: ReportFormat) -> String {
    match format {
        ReportFormat::Markdown => markdown::render(report),
        ReportFormat::Json => json::render(report),
        ReportFormat::Text => text::render(report),
    }
}

/// Build the report model and redact it (unless `redact` is `None`, i.e. `--no-redact`).
/// Errors are for the user: an unknown `--remedy` id, or a model that could not be redacted.
pub fn prepare(input: &ReportInput<'_>, redact: Option<RedactOptions>) -> Result<Report, String> {
    let report = model::build(input).map_err(|e| e.to_string())?;
    match redact {
        Some(opts) => {
            // Values are learned for redaction from every variable first; then only the
            // variables that bear on the diagnosis stay listed.
            let mut r = redact::redact_with_logs(&report, input.logs, opts)?;
            let kb_vars = host::kb_env_vars(input.kb);
            if let crate::snapshot::Probed::Value(env) = &mut r.snapshot.env {
                r.env_not_listed = host::keep_listed(env, &kb_vars);
            }
            Ok(r)
        }
        None => Ok(report),
    }
}

/// Exit-code contract of `check`: 0 nothing at warning or above, 1 something, 2 input errors.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FINDINGS: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
/// A probe that tested nothing (no GPU pair, no driver, no torch): not the same as "all fine".
pub const EXIT_SKIPPED: i32 = 3;
/// `check`: nothing needs attention, but a given log does not show how the run ended (no
/// failure, no hang, no start-up completed): undetermined, not an all-clear. The same number
/// as [`EXIT_SKIPPED`]: nothing could be judged.
pub const EXIT_UNDETERMINED: i32 = 3;

/// `run`'s own statuses, where the launch's cannot be passed through (as env(1), nohup(1) and
/// `docker run` use them): the doctor itself failed (a bad option value, a log file that cannot
/// be created) before or instead of the launch.
pub const EXIT_RUN_FAILED: i32 = 125;
/// `run`: the launch's program was found but could not be executed (permission, format).
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
/// `run`: the launch's program was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

/// `--color WHEN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// The `--color` of this run (set once by the CLI before any output).
static COLOR_CHOICE: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Record `--color` for [`Style::detect`]; a second call is ignored.
pub(crate) fn set_color_choice(choice: ColorChoice) {
    let _ = COLOR_CHOICE.set(choice);
}

/// Whether to colour: `--color always|never` decide; `auto` follows the conventions CLI tools
/// share (no-color.org, bixense.com/clicolors), in the order clap's own anstream applies them:
/// a non-empty `NO_COLOR` turns colour off, then `CLICOLOR_FORCE` (not `0`) turns it on, then
/// `CLICOLOR=0` or `TERM=dumb` turn it off, else a terminal gets colour. Written out rather than
/// taken from anstyle-query because that reads the process environment, which a test cannot set
/// per case.
pub(crate) fn wants_color(
    choice: ColorChoice,
    var: &dyn Fn(&str) -> Option<String>,
    tty: bool,
) -> bool {
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set("NO_COLOR") => false,
        ColorChoice::Auto
            if set("CLICOLOR_FORCE") && var("CLICOLOR_FORCE").as_deref() != Some("0") =>
        {
            true
        }
        ColorChoice::Auto if var("CLICOLOR").as_deref() == Some("0") => false,
        ColorChoice::Auto if var("TERM").as_deref() == Some("dumb") => false,
        ColorChoice::Auto => tty,
    }
}

/// ANSI styling that honours `--color`, `NO_COLOR`, `CLICOLOR[_FORCE]`, `TERM=dumb` and plain
/// pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub(crate) fn detect() -> Self {
        use std::io::IsTerminal;
        let choice = COLOR_CHOICE.get().copied().unwrap_or_default();
        let var = |name: &str| std::env::var(name).ok();
        Style {
            color: wants_color(choice, &var, std::io::stdout().is_terminal()),
        }
    }
    pub fn plain() -> Self {
        Style { color: false }
    }
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            // A mark, not ESC: `sanitize::terminal_safe` writes the sequence (see there).
            let m = sanitize::STYLE_MARK;
            format!("{m}[{code}m{s}{m}[0m")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub(crate) fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    pub(crate) fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn blue(&self, s: &str) -> String {
        self.paint("34", s)
    }
    pub(crate) fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// A finding's version check as one line (text and Markdown reports).
pub(crate) fn version_line(f: &model::ReportFinding, v: &model::ReportVersionCheck) -> String {
    crate::engine::versions::describe(
        &f.id,
        &v.subject,
        &v.package,
        &v.range,
        v.installed.as_deref(),
        &v.verdict,
        v.change.as_ref().map(|c| c.said.as_str()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn colour_follows_the_flag_then_the_shared_conventions() {
        use ColorChoice::*;
        assert!(wants_color(Always, &env(&[("NO_COLOR", "1")]), false));
        assert!(!wants_color(Never, &env(&[("CLICOLOR_FORCE", "1")]), true));
        assert!(wants_color(Auto, &env(&[]), true));
        assert!(!wants_color(Auto, &env(&[]), false));
        assert!(!wants_color(Auto, &env(&[("NO_COLOR", "1")]), true));
        assert!(
            wants_color(Auto, &env(&[("NO_COLOR", "")]), true),
            "empty NO_COLOR is unset"
        );
        assert!(!wants_color(
            Auto,
            &env(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]),
            true
        ));
        assert!(wants_color(Auto, &env(&[("CLICOLOR_FORCE", "1")]), false));
        assert!(!wants_color(Auto, &env(&[("CLICOLOR_FORCE", "0")]), false));
        assert!(!wants_color(Auto, &env(&[("CLICOLOR", "0")]), true));
        assert!(!wants_color(Auto, &env(&[("TERM", "dumb")]), true));
        assert!(wants_color(
            Auto,
            &env(&[("CLICOLOR_FORCE", "1"), ("TERM", "dumb")]),
            false
        ));
    }
}

#[cfg(test)]
mod plain_unset_tests {
    #[test]
    fn an_unset_pair_reads_not_set_and_a_named_one_is_kept() {
        assert_eq!(
            super::plain_unset("the engine saw (not set)=(not set) (env)"),
            "the engine saw not set (env)"
        );
        let kept = "VLLM_USE_DEEP_GEMM=(not set) (default 1)";
        assert_eq!(super::plain_unset(kept), kept);
    }
}
