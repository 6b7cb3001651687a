//! The environment panel: Python stack versions and the variables that matter, highlighted
//! when a finding used them.

use super::app::App;
use super::theme::Theme;
use crate::engine::Finding;
use crate::snapshot::{Probed, env_var_matters};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use std::collections::BTreeSet;

/// Allocator variables behind the `alloc.*` facts.
pub const ALLOC_VARS: [&str; 2] = ["PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"];

/// Variable names the findings used: `env.X` → X, `alloc.*` → the allocator variables.
pub fn used_vars(findings: &[Finding]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in findings {
        for name in &f.facts_used {
            if let Some(v) = name.strip_prefix("env.") {
                out.insert(v.to_string());
            } else if name.starts_with("alloc.") {
                out.extend(ALLOC_VARS.iter().map(|s| s.to_string()));
            }
        }
    }
    out
}

/// `width` is the inner width: a `NAME=value` longer than that puts the value on its own line.
pub fn lines<'a>(app: &App, width: usize, theme: Theme) -> Vec<Line<'a>> {
    let snap = &app.snapshot;
    let used = used_vars(&app.diagnosis.findings);
    let mut out = Vec::new();
    let mut any_hit = false;
    if let Some(p) = snap.python.value() {
        let v = |x: &Probed<String>| x.value().cloned().unwrap_or_else(|| "—".into());
        out.push(Line::from(format!(
            "vLLM {} · torch {} (CUDA {})",
            v(&p.vllm),
            v(&p.torch),
            v(&p.torch_cuda)
        )));
    }
    let mut row = |name: &str, value: &str, origin: &str| {
        let hit = used.contains(name);
        any_hit |= hit;
        let mark = if hit { "◆ " } else { "  " };
        let style = if hit {
            theme.used()
        } else {
            ratatui::style::Style::new()
        };
        let full = format!("{mark}{name}={value}");
        if full.chars().count() + origin.len() <= width {
            out.push(Line::from(vec![
                Span::styled(full, style),
                Span::styled(origin.to_string(), theme.dim()),
            ]));
        } else {
            out.push(Line::from(vec![
                Span::styled(format!("{mark}{name}="), style),
                Span::styled(origin.to_string(), theme.dim()),
            ]));
            out.push(Line::from(Span::styled(format!("    {value}"), style)));
        }
    };
    match &snap.env {
        Probed::Value(env) => {
            for (k, v) in env.vars.iter().filter(|(k, _)| env_var_matters(k)) {
                row(k, v, "");
            }
        }
        other => row(
            "(environment)",
            other.missing_reason().unwrap_or("unknown"),
            "",
        ),
    }
    if let Some(l) = snap.launch.value() {
        for (k, v) in &l.env {
            row(k, v, "  (launch)");
        }
    }
    if any_hit {
        out.push(Line::from(Span::styled("◆ used by a finding", theme.dim())));
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let source = app
        .snapshot
        .env
        .value()
        .map(|e| format!(" Environment · {} ", e.source))
        .unwrap_or_else(|| " Environment ".into());
    let block = Block::default().borders(Borders::ALL).title(source);
    frame.render_widget(
        Paragraph::new(lines(app, area.width.saturating_sub(2) as usize, theme)).block(block),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_facts_highlight_the_allocator_variables() {
        let app = App::demo();
        let used = used_vars(&app.diagnosis.findings);
        assert!(used.contains("PYTORCH_CUDA_ALLOC_CONF"), "{used:?}");
        assert!(!used.contains("CUDA_HOME"), "{used:?}");
        let text: Vec<String> = lines(&app, 200, Theme::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(
            text.iter()
                .any(|l| l.starts_with("◆ PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")),
            "{text:?}"
        );
        let narrow: Vec<String> = lines(&app, 30, Theme::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(
            narrow.contains(&"◆ PYTORCH_CUDA_ALLOC_CONF=".to_string()),
            "{narrow:?}"
        );
        assert!(
            narrow.contains(&"    expandable_segments:True".to_string()),
            "{narrow:?}"
        );
    }
}
