//! Footer: the status message and the keys valid on this screen (from the keymap itself).
//! When the keys do not fit, hints lose their labels first (`e export` → `e`), least
//! important first, then the least important vanish; the essential ones (priority 0) stay.

use super::app::App;
use super::keymap::{Binding, bindings};
use super::state::Overlay;
use super::text;
use super::theme::Theme;
use crate::kb::schema::Severity;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// One hint as drawn: the key and, unless shortened, its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub key: &'static str,
    pub label: Option<String>,
}

impl Hint {
    fn width(&self) -> usize {
        // " k " then " label  " (or one space when shortened).
        text::width(self.key) + 2 + self.label.as_ref().map_or(1, |l| text::width(l) + 3)
    }
}

/// The hints that fit in `width` cells, in footer order. Tier by tier from the least
/// important: a tier's hints lose their labels, and if that is not enough, they go; then the
/// next tier. Priority 0 (`q ? e w` on the main screen) keeps its key whatever the width.
pub fn fit(binds: &[Binding], width: usize) -> Vec<Hint> {
    let shown: Vec<&Binding> = binds.iter().filter(|b| !b.shown.is_empty()).collect();
    let mut hints: Vec<Option<Hint>> = shown
        .iter()
        .map(|b| {
            Some(Hint {
                key: b.shown,
                label: Some(b.label.clone()),
            })
        })
        .collect();
    let total = |h: &[Option<Hint>]| h.iter().flatten().map(Hint::width).sum::<usize>();
    let mut tiers: Vec<u8> = shown.iter().map(|b| b.prio).collect();
    tiers.sort_unstable_by(|a, b| b.cmp(a));
    tiers.dedup();
    'tiers: for tier in tiers {
        let members: Vec<usize> = (0..shown.len())
            .rev()
            .filter(|&i| shown[i].prio == tier)
            .collect();
        for &i in &members {
            if total(&hints) <= width {
                break 'tiers;
            }
            if let Some(h) = &mut hints[i] {
                h.label = None;
            }
        }
        if tier == 0 {
            break;
        }
        for &i in &members {
            if total(&hints) <= width {
                break 'tiers;
            }
            hints[i] = None;
        }
    }
    hints.into_iter().flatten().collect()
}

pub fn hint_spans<'a>(app: &App, theme: Theme, width: usize) -> Vec<Span<'a>> {
    let mut spans = Vec::new();
    for h in fit(&bindings(app), width) {
        spans.push(Span::styled(format!(" {} ", h.key), theme.selected()));
        match h.label {
            Some(l) => spans.push(Span::raw(format!(" {l}  "))),
            None => spans.push(Span::raw(" ")),
        }
    }
    spans
}

pub fn render(frame: &mut Frame, status: Rect, keys: Rect, app: &App, theme: Theme) {
    let width = usize::from(status.width);
    let line = match &app.overlay {
        Some(Overlay::Search { input }) => Line::from(vec![
            Span::styled("search the logs: /", theme.title()),
            Span::styled(format!("{input}▏"), theme.accent()),
        ]),
        _ => {
            let style = if app.status.starts_with("error") {
                theme.severity(Severity::Error)
            } else if app.status.starts_with("copied") {
                theme.severity(Severity::Ok)
            } else {
                theme.dim()
            };
            Line::from(Span::styled(text::ellipsize(&app.status, width), style))
        }
    };
    frame.render_widget(Paragraph::new(line), status);
    frame.render_widget(
        Paragraph::new(Line::from(hint_spans(app, theme, usize::from(keys.width)))),
        keys,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::Action;
    use crate::tui::state::Pane;

    #[test]
    fn hints_shorten_before_they_vanish_and_essentials_stay() {
        let mut app = App::demo();
        app.update(Action::ShowPane(Pane::Walk));
        let binds = bindings(&app);
        let wide = fit(&binds, 400);
        assert!(wide.iter().all(|h| h.label.is_some()), "{wide:?}");
        let mid = fit(&binds, 80);
        assert!(mid.iter().map(Hint::width).sum::<usize>() <= 80, "{mid:?}");
        for k in ["q", "?", "e", "w"] {
            assert!(mid.iter().any(|h| h.key == k), "{k} in {mid:?}");
        }
        // The least important hint was shortened before it went.
        let all = binds.iter().filter(|b| !b.shown.is_empty()).count();
        let widths: Vec<usize> = (20..400).collect();
        let short_d = widths.iter().any(|&w| {
            let h = fit(&binds, w);
            h.len() == all && h.iter().any(|x| x.key == "D" && x.label.is_none())
        });
        assert!(short_d, "D is shortened at some width before it is dropped");
        assert!(
            mid.iter().any(|h| h.key == "e" && h.label.is_some()),
            "{mid:?}"
        );
        let tiny = fit(&binds, 20);
        for k in ["q", "?", "e", "w"] {
            assert!(tiny.iter().any(|h| h.key == k), "{k} in {tiny:?}");
        }
        assert!(tiny.len() < mid.len());
    }
}
