//! Footer: the status message and the keys valid on this screen (from the keymap itself).
//! When the keys do not fit, hints lose their labels first (`e export` → `e`), least
//! important first, then the least important vanish; the essential ones (priority 0) stay.
//! Only an essential is ever shown without its label: a shortened hint of another tier goes,
//! and the room is given back to whole hints, most important first.

use crate::kb::schema::Severity;
use crate::tui::state::Overlay;
use crate::tui::state::app::App;
use crate::tui::state::keymap::{Binding, bindings};
use crate::tui::state::status::Tone;
use crate::tui::view::text;
use crate::tui::view::theme::Theme;
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
pub(crate) fn fit(binds: &[Binding], width: usize) -> Vec<Hint> {
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
    // A key without its label says nothing unless it is one of the essentials everyone knows
    // (`q ? e w`): a shortened hint of another tier goes, and the room that leaves is given
    // back, most important first, to hints whole (label included) or to an essential's label.
    let mut order: Vec<usize> = (0..shown.len()).collect();
    order.sort_by_key(|&i| shown[i].prio);
    for &i in &order {
        if shown[i].prio > 0 && hints[i].as_ref().is_some_and(|h| h.label.is_none()) {
            hints[i] = None;
        }
    }
    for &i in &order {
        let whole = Hint {
            key: shown[i].shown,
            label: Some(shown[i].label.clone()),
        };
        let now = hints[i].as_ref().map_or(0, Hint::width);
        let bare = hints[i].as_ref().is_none_or(|h| h.label.is_none());
        if bare && total(&hints) - now + whole.width() <= width {
            hints[i] = Some(whole);
        }
    }
    hints.into_iter().flatten().collect()
}

pub(crate) fn hint_spans<'a>(app: &App, theme: Theme, width: usize) -> Vec<Span<'a>> {
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
        Some(Overlay::Search { input }) => text::safe_line(Line::from(vec![
            Span::styled("search the logs: /", theme.title()),
            Span::styled(format!("{input}▏"), theme.accent()),
        ])),
        _ => {
            let style = match app.status.tone {
                Tone::Error => theme.severity(Severity::Error),
                Tone::Done => theme.severity(Severity::Ok),
                Tone::Plain => theme.dim(),
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
    use crate::tui::state::Pane;
    use crate::tui::state::action::Action;

    /// Only an essential key is shown without its label, and only when the label does not fit,
    /// at every width, on every pane (review D12: the Log and Remedy panes showed a bare `i`).
    #[test]
    fn no_key_is_bare_when_its_label_fits() {
        let mut app = App::demo();
        for pane in [Pane::Walk, Pane::Log, Pane::Remedy] {
            app.update(Action::ShowPane(pane));
            let binds = bindings(&app);
            for w in 10..240 {
                let hints = fit(&binds, w);
                let total: usize = hints.iter().map(Hint::width).sum();
                for h in hints.iter().filter(|h| h.label.is_none()) {
                    let b = binds.iter().find(|b| b.shown == h.key);
                    assert!(
                        b.is_some_and(|b| b.prio == 0),
                        "{pane:?} at {w}: {} bare, {hints:?}",
                        h.key
                    );
                    let label = b.map(|b| b.label.clone()).unwrap_or_default();
                    assert!(
                        total + text::width(&label) + 2 > w,
                        "{pane:?} at {w}: {} bare though its label fits, {hints:?}",
                        h.key
                    );
                }
            }
        }
    }

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
        // The least important hint is whole or gone, never a bare key.
        let widths: Vec<usize> = (20..400).collect();
        let d_at = |w: usize| fit(&binds, w).into_iter().find(|x| x.key == "D");
        assert!(
            widths
                .iter()
                .all(|&w| d_at(w).is_none_or(|d| d.label.is_some()))
        );
        assert!(widths.iter().any(|&w| d_at(w).is_some()));
        assert!(widths.iter().any(|&w| d_at(w).is_none()));
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
