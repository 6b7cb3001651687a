//! The one place side effects happen: writing files, reading logs, starting the refresher.
//!
//! Integration points for the lead (swap the bodies, keep the signatures):
//! - [`export_text`]: what the export dialog writes. Today the `check` text/JSON renderer
//!   (`report::check`); the report issue's renderers go here.
//! - [`remedy_preview`]: what the remedy pane shows for a picked remedy. Today the remedy's
//!   edits as the knowledge base states them; `src/remedy`'s launch rewrite and diff go here.
//! - `live::collect_live_host` / `live::poll_for`: the live host and the GPU poll.

use super::action::{Action, Effect, ExportFormat};
use super::app::App;
use super::event::Event;
use super::live;
use crate::engine::RemedyView;
use crate::engine::classify::LogText;
use crate::kb::schema::Edit;
use crate::report::{self, Style};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// What effects need from the running program.
pub struct EffectCtx {
    /// Where background sources send events; `None` in tests (no threads are started).
    pub events: Option<Sender<Event>>,
    /// Refresh period of the live panel.
    pub period: Duration,
}

/// Label the export dialog shows for what it will write.
pub const EXPORT_LABEL: &str = "check report (the full report renderers are not in this build)";

/// The exported document.
pub fn export_text(app: &App, format: ExportFormat) -> String {
    match format {
        ExportFormat::Text => {
            report::check::check_text(&app.kb, &app.snapshot, &app.diagnosis, Style::plain())
        }
        ExportFormat::Json => {
            let v = report::check::check_json(&app.snapshot, &app.diagnosis);
            let mut s = serde_json::to_string_pretty(&v)
                .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise the report: {e}\"}}"));
            s.push('\n');
            s
        }
    }
}

/// Label the remedy pane shows above the preview.
pub const PREVIEW_LABEL: &str = "Edits, as the knowledge base states them (the patched command and its diff come from src/remedy, not in this build):";

/// What choosing a remedy would change, one line per edit.
pub fn remedy_preview(r: &RemedyView) -> Vec<String> {
    r.edits
        .iter()
        .map(|e| match e {
            Edit::SetEnv { name, value } => format!("set {name}={value}"),
            Edit::UnsetEnv { name } => format!("unset {name}"),
            Edit::DropAllocOption { option } => {
                format!("remove {option} from the allocator config in effect")
            }
            Edit::AddFlag { flag, value } => match value {
                Some(v) => format!("add {flag} {v}"),
                None => format!("add {flag}"),
            },
            Edit::RemoveFlag { flag } => format!("remove {flag}"),
            Edit::SetCompilationConfig { key, value } => {
                format!("set compilation-config {key}={value}")
            }
            Edit::PatchScript { pr } => format!("apply vLLM PR #{pr} with the patch script"),
            Edit::Manual { text } => format!("by hand: {text}"),
        })
        .collect()
}

/// Result of a no-clobber write.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    Yes,
    /// The file exists and overwriting was not allowed; nothing was written.
    Exists,
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.join(format!(".{name}.sm120-doctor-{}.tmp", std::process::id()))
}

/// Write `bytes` to `path` atomically (temp file in the same folder, then rename or link).
/// Without `overwrite` an existing file is never replaced, even one created meanwhile.
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> io::Result<Written> {
    if !overwrite && path.exists() {
        return Ok(Written::Exists);
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        if overwrite {
            std::fs::rename(&tmp, path)?;
            return Ok(Written::Yes);
        }
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(Written::Yes),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Written::Exists),
            Err(_) if !path.exists() => std::fs::rename(&tmp, path).map(|_| Written::Yes),
            Err(e) => Err(e),
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

fn write_effect(effect: Effect, bytes: &[u8], what: &str) -> Action {
    let (path, overwrite) = match &effect {
        Effect::Export {
            path, overwrite, ..
        }
        | Effect::WriteLaunch {
            path, overwrite, ..
        } => (path.clone(), *overwrite),
        _ => return Action::Failed("not a file write".into()),
    };
    match write_atomic(&path, bytes, overwrite) {
        Ok(Written::Yes) => Action::Done(format!("wrote {what} to {}", path.display())),
        Ok(Written::Exists) => Action::AskOverwrite(effect),
        Err(e) => Action::Failed(format!("{}: {e}", path.display())),
    }
}

/// Perform one effect; the returned actions go back into `App::update`.
pub fn perform(effect: Effect, app: &App, ctx: &EffectCtx) -> Vec<Action> {
    match effect {
        Effect::Export { format, .. } => {
            let text = export_text(app, format);
            let what = format!("the {} check report", format.label());
            vec![write_effect(effect, text.as_bytes(), &what)]
        }
        Effect::WriteLaunch { ref text, .. } => {
            let bytes = text.clone().into_bytes();
            vec![write_effect(effect, &bytes, "the launch command")]
        }
        Effect::LoadLog { path } => match std::fs::read(&path) {
            Ok(bytes) => vec![Action::LogLoaded(LogText {
                name: path.display().to_string(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            })],
            Err(e) => vec![Action::Failed(format!(
                "{}: cannot read log: {e}",
                path.display()
            ))],
        },
        Effect::StartRefresher => match &ctx.events {
            Some(tx) => {
                let (label, poll) = live::poll_for(&app.snapshot);
                live::start(ctx.period, poll, tx.clone());
                vec![Action::LiveSource(label)]
            }
            None => Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_clobber_write_keeps_an_existing_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.txt");
        assert_eq!(
            write_atomic(&p, b"one", false).expect("write"),
            Written::Yes
        );
        assert_eq!(
            write_atomic(&p, b"two", false).expect("write"),
            Written::Exists
        );
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        assert_eq!(write_atomic(&p, b"two", true).expect("write"), Written::Yes);
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").collect();
        assert_eq!(left.len(), 1, "temp files left behind");
    }

    #[test]
    fn preview_lists_the_drop_edit() {
        let app = App::demo();
        let r = &app.current_remedies()[0];
        let p = remedy_preview(r);
        assert!(
            p.iter()
                .any(|l| l.contains("remove expandable_segments from the allocator config")),
            "{p:?}"
        );
    }
}
