//! One event enum for everything the loop waits on: terminal input, the live host as it is
//! read, GPU updates, probe results, signals.

use crate::collect::refresh::GpuUpdate;
use ratatui::crossterm::event as ct;
use std::sync::mpsc::Sender;
use std::time::Duration;

#[derive(Debug)]
pub enum Event {
    Term(ct::Event),
    Gpu(GpuUpdate),
    /// The live host without its Python stack (NVML, environment, OS, processes).
    Host(Box<crate::snapshot::HostSnapshot>),
    /// The live host's Python stack.
    Python(Box<crate::snapshot::Probed<crate::snapshot::PythonStack>>),
    /// The allocator/IPC probe finished on its background thread.
    Probe(Box<crate::snapshot::IpcProbe>),
    /// The functional P2P probe finished on its background thread.
    P2pProbe(Box<crate::snapshot::P2pProbe>),
    /// SIGTERM, SIGINT or SIGHUP arrived.
    Signal(&'static str),
}

/// Read terminal events on a thread (a blocking read while idle: idle costs nothing). Events
/// are read a burst at a time ([`next_burst`]) so that a paste the terminal did not bracket
/// arrives as one paste, never as keys.
pub(crate) fn spawn_input(tx: Sender<Event>) {
    std::thread::spawn(move || {
        let mut next = |wait: Option<Duration>| -> std::io::Result<Option<ct::Event>> {
            match wait {
                None => ct::read().map(Some),
                Some(d) if ct::poll(d)? => ct::read().map(Some),
                Some(_) => Ok(None),
            }
        };
        while let Ok(burst) = next_burst(&mut next) {
            for ev in burst {
                if tx.send(Event::Term(ev)).is_err() {
                    return;
                }
            }
        }
    });
}

/// Events closer together than this belong to one burst. A person's keys are tens of
/// milliseconds apart (a fast typist's are about 60 ms; two keys rolled over, 10–20 ms); a
/// terminal writes a paste in one go, its events microseconds apart.
pub const BURST_GAP: Duration = Duration::from_millis(8);

/// Once a burst is a paste, whatever comes within this quiet time is the same paste: the
/// terminal (or tmux) writes a long paste in pieces as the program reads, and a busy machine
/// can delay a piece; its tail never acts as keys. Shorter than a person's reaction, so the
/// Enter pressed after pasting a path into a prompt stays a key.
pub const PASTE_TAIL: Duration = Duration::from_millis(50);

/// A burst is a paste when it holds at least this many text keys ...
pub const PASTE_MIN_KEYS: usize = 3;
/// ... and a line break, or at least this many characters.
pub const PASTE_MIN_CHARS: usize = 8;

/// Read the next burst of terminal events with `next` (`None`: wait for one; `Some(d)`: wait
/// at most `d`, `Ok(None)` when nothing came). A burst that looks like a paste (see
/// [`paste_of`]) comes back as one [`ct::Event::Paste`] followed by any non-key events it held
/// (a resize, a click); any other burst comes back as read.
pub(crate) fn next_burst(
    next: &mut dyn FnMut(Option<Duration>) -> std::io::Result<Option<ct::Event>>,
) -> std::io::Result<Vec<ct::Event>> {
    let mut burst = Vec::new();
    if let Some(first) = next(None)? {
        burst.push(first);
    }
    while let Some(ev) = next(Some(BURST_GAP))? {
        burst.push(ev);
    }
    if paste_of(&burst).is_none() {
        return Ok(burst);
    }
    while let Some(ev) = next(Some(PASTE_TAIL))? {
        burst.push(ev);
    }
    Ok(match paste_of(&burst) {
        Some((text, others)) => std::iter::once(ct::Event::Paste(text))
            .chain(others)
            .collect(),
        None => burst,
    })
}

/// The text a key stands for inside a paste: a printable character (Shift allowed), a line
/// break (Enter, or Ctrl-J: a bare LF in raw mode), a tab. `None` for other keys.
fn text_of(key: &ct::KeyEvent) -> Option<char> {
    use ct::{KeyCode, KeyEventKind, KeyModifiers};
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let plain = (key.modifiers - KeyModifiers::SHIFT).is_empty();
    match key.code {
        KeyCode::Char(c) if plain && !c.is_control() => Some(c),
        KeyCode::Enter if plain => Some('\n'),
        KeyCode::Char('j') if key.modifiers == KeyModifiers::CONTROL => Some('\n'),
        KeyCode::Tab if plain => Some('\t'),
        _ => None,
    }
}

/// Is this burst of events a paste the terminal did not bracket? It is when it holds at least
/// [`PASTE_MIN_KEYS`] text keys and a line break or [`PASTE_MIN_CHARS`] characters: more than
/// a person types within [`BURST_GAP`]. Then: the pasted text, and the burst's events that are
/// not keys (kept, in order; a bracketed paste among them too). Other keys in a paste (an
/// escape sequence's pieces) are bytes of the paste, not a person's keys, and are dropped.
pub(crate) fn paste_of(burst: &[ct::Event]) -> Option<(String, Vec<ct::Event>)> {
    let mut text = String::new();
    let mut keys = 0;
    let mut others = Vec::new();
    for ev in burst {
        match ev {
            ct::Event::Key(k) => {
                if let Some(c) = text_of(k) {
                    text.push(c);
                    keys += 1;
                }
            }
            // A bracketed paste is marked already, and the keys after it are a person's.
            other => others.push(other.clone()),
        }
    }
    let chars = text.chars().filter(|c| *c != '\n').count();
    let paste = keys >= PASTE_MIN_KEYS && (text.contains('\n') || chars >= PASTE_MIN_CHARS);
    paste.then_some((text, others))
}

/// Turn SIGTERM/SIGINT/SIGHUP into an event so the loop ends and the terminal is restored.
/// signal-hook (already in the tree through crossterm) registers the handlers; its iterator
/// thread turns the first signal into the event.
pub(crate) fn spawn_signals(tx: Sender<Event>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // Registered before returning, so a signal sent right after start-up is not missed.
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let _ = tx.send(Event::Signal(signal_name(sig)));
        }
    });
    Ok(())
}

/// The name the loop reports for a signal it listens to.
fn signal_name(sig: i32) -> &'static str {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    match sig {
        SIGTERM => "SIGTERM",
        SIGINT => "SIGINT",
        SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ct::{KeyCode, KeyEvent, KeyModifiers};
    use std::collections::VecDeque;

    fn key(code: KeyCode, m: KeyModifiers) -> ct::Event {
        ct::Event::Key(KeyEvent::new(code, m))
    }

    fn chars(text: &str) -> Vec<ct::Event> {
        text.chars()
            .map(|c| match c {
                '\r' => key(KeyCode::Enter, KeyModifiers::NONE),
                '\n' => key(KeyCode::Char('j'), KeyModifiers::CONTROL),
                '\t' => key(KeyCode::Tab, KeyModifiers::NONE),
                c if c.is_uppercase() => key(KeyCode::Char(c), KeyModifiers::SHIFT),
                c => key(KeyCode::Char(c), KeyModifiers::NONE),
            })
            .collect()
    }

    /// A fake terminal: each event comes `gap` after the one before it.
    fn bursts(events: Vec<(Duration, ct::Event)>) -> Vec<Vec<ct::Event>> {
        let queue = std::cell::RefCell::new(VecDeque::from(events));
        let mut next = |wait: Option<Duration>| -> std::io::Result<Option<ct::Event>> {
            let mut q = queue.borrow_mut();
            let Some((gap, _)) = q.front_mut() else {
                return Ok(None);
            };
            match wait {
                Some(d) if *gap > d => {
                    *gap -= d;
                    Ok(None)
                }
                _ => Ok(q.pop_front().map(|(_, e)| e)),
            }
        };
        let mut out = Vec::new();
        while !queue.borrow().is_empty() {
            out.push(next_burst(&mut next).expect("fake source"));
        }
        out
    }

    const US: Duration = Duration::from_micros(20);
    const HUMAN: Duration = Duration::from_millis(90);

    #[test]
    fn a_persons_keys_stay_keys() {
        for typed in ["q", "D", "x", "\r", " "] {
            assert_eq!(paste_of(&chars(typed)), None, "{typed:?}");
        }
        // Even two keys read together (a busy machine) are keys, not a paste.
        assert_eq!(paste_of(&chars("4i")), None);
        assert_eq!(paste_of(&chars("y\r")), None);
        assert_eq!(
            paste_of(&chars("abcdefg")),
            None,
            "7 characters, no line break"
        );
        assert_eq!(
            paste_of(&[
                key(KeyCode::Down, KeyModifiers::NONE),
                key(KeyCode::Down, KeyModifiers::NONE),
                key(KeyCode::Enter, KeyModifiers::NONE),
                key(KeyCode::Esc, KeyModifiers::NONE),
            ]),
            None,
            "arrows, Enter and Esc are no text"
        );
    }

    #[test]
    fn a_burst_of_text_and_line_breaks_is_a_paste_with_its_text() {
        let log = "(Worker_TP1 pid=2951) Failed: Cuda error\rDone.\tok\nX";
        let (text, others) = paste_of(&chars(log)).expect("a paste");
        assert_eq!(
            text,
            "(Worker_TP1 pid=2951) Failed: Cuda error\nDone.\tok\nX"
        );
        assert!(others.is_empty());
        assert!(
            paste_of(&chars("abc\r")).is_some(),
            "3 keys and a line break"
        );
        assert!(paste_of(&chars("abcdefgh")).is_some(), "8 characters");
        // Pieces of an escape sequence (a coloured log) are dropped; a resize is kept.
        let mut burst = chars("INFO x\r");
        burst.insert(2, key(KeyCode::Esc, KeyModifiers::NONE));
        burst.insert(3, key(KeyCode::Char('['), KeyModifiers::ALT));
        burst.push(ct::Event::Resize(80, 24));
        let (text, others) = paste_of(&burst).expect("a paste");
        assert_eq!(text, "INFO x\n");
        assert_eq!(others, vec![ct::Event::Resize(80, 24)]);
    }

    #[test]
    fn next_burst_turns_a_fast_burst_into_one_paste_and_leaves_typing_alone() {
        // Typed: each key its own burst, as read.
        let typed: Vec<_> = chars("Dx\r").into_iter().map(|e| (HUMAN, e)).collect();
        let got = bursts(typed.clone());
        let want: Vec<Vec<ct::Event>> = typed.into_iter().map(|(_, e)| vec![e]).collect();
        assert_eq!(got, want);

        // Pasted: 200 lines in pieces, one piece late (a busy tmux): one paste, no keys.
        let line = "(EngineCore pid=2817) ERROR d: Cuda error 'invalid argument'\r";
        let mut events: Vec<(Duration, ct::Event)> = Vec::new();
        for i in 0..200 {
            for (j, e) in chars(line).into_iter().enumerate() {
                let late = i == 150 && j == 0;
                events.push((if late { Duration::from_millis(30) } else { US }, e));
            }
        }
        // Then the person presses q.
        events.push((HUMAN, key(KeyCode::Char('q'), KeyModifiers::NONE)));
        let got = bursts(events);
        assert_eq!(
            got.len(),
            2,
            "{:?}",
            got.iter().map(Vec::len).collect::<Vec<_>>()
        );
        let [ct::Event::Paste(text)] = got[0].as_slice() else {
            panic!("not one paste: {:?}", &got[0][..3]);
        };
        assert_eq!(text.lines().count(), 200);
        assert_eq!(text, &line.replace('\r', "\n").repeat(200));
        assert_eq!(got[1], vec![key(KeyCode::Char('q'), KeyModifiers::NONE)]);
    }

    #[test]
    fn a_bracketed_paste_passes_through_as_it_came() {
        let ev = ct::Event::Paste("a\nb".into());
        assert_eq!(bursts(vec![(US, ev.clone())]), vec![vec![ev.clone()]]);
        // A key right behind it (tmux paste-buffer -p, then send-keys) stays a key.
        let one = key(KeyCode::Char('1'), KeyModifiers::NONE);
        assert_eq!(
            bursts(vec![(US, ev.clone()), (US, one.clone())]),
            vec![vec![ev, one]]
        );
    }

    #[test]
    fn each_signal_listened_to_has_its_name() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        assert_eq!(signal_name(SIGTERM), "SIGTERM");
        assert_eq!(signal_name(SIGINT), "SIGINT");
        assert_eq!(signal_name(SIGHUP), "SIGHUP");
    }
}
