//! The terminal's life: enter (raw mode, alternate screen, bracketed paste, mouse), leave, and
//! restore on drop, on panic and on every error path.

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use std::io::{self, Stdout, stdout};
use std::sync::Once;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Put the terminal back as it was. Safe to call more than once.
pub(crate) fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
}

static HOOK: Once = Once::new();

/// Restore the terminal before the default panic message is printed.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// Owns the terminal while the TUI runs; dropping it restores the terminal.
pub struct Guard {
    pub terminal: Term,
}

impl Guard {
    pub fn enter() -> io::Result<Guard> {
        install_panic_hook();
        enable_raw_mode()?;
        let entered = execute!(
            stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture
        )
        .and_then(|_| Terminal::new(CrosstermBackend::new(stdout())));
        match entered {
            Ok(mut terminal) => {
                let _ = terminal.hide_cursor();
                // Not `terminal.clear()`: it asks the terminal where the cursor is and waits for
                // the answer (a round trip before the first frame; 2 s where no answer comes).
                // The new terminal's buffers are empty, so the first draw is a full one.
                let _ = execute!(stdout(), Clear(ClearType::All));
                Ok(Guard { terminal })
            }
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}
