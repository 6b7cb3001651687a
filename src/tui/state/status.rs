//! The status line's message as a type: its words and its tone, set by whoever writes it, so
//! the footer styles it without reading the words.

use std::fmt;

/// How the footer shows a status message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    /// A notice (dim).
    #[default]
    Plain,
    /// Something failed (the error colour).
    Error,
    /// Something the user asked for is done and worth a glance (copied to the clipboard).
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    pub tone: Tone,
    pub text: String,
}

impl Status {
    /// A failure: `error: WHAT`.
    pub fn error(what: impl fmt::Display) -> Status {
        Status {
            tone: Tone::Error,
            text: format!("error: {what}"),
        }
    }

    pub fn done(text: impl Into<String>) -> Status {
        Status {
            tone: Tone::Done,
            text: text.into(),
        }
    }
}

/// A plain notice.
impl From<String> for Status {
    fn from(text: String) -> Status {
        Status {
            tone: Tone::Plain,
            text,
        }
    }
}

impl From<&str> for Status {
    fn from(text: &str) -> Status {
        Status::from(text.to_string())
    }
}

/// The words, for tests and for measuring (`status.contains(…)` reads the text).
impl std::ops::Deref for Status {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tone_is_set_by_the_writer_not_read_from_the_words() {
        assert_eq!(Status::error("x").tone, Tone::Error);
        assert_eq!(Status::error("x").text, "error: x");
        // Words that begin like an error are still a plain notice.
        assert_eq!(Status::from("error: looks like one").tone, Tone::Plain);
        assert_eq!(Status::done("copied it").tone, Tone::Done);
        assert_eq!(Status::from("copied, say").tone, Tone::Plain);
    }
}
