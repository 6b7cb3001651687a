//! Copy to the clipboard with OSC 52: the terminal (or tmux, with `set-clipboard on`) takes
//! the text from an escape sequence, so it works over ssh with nothing installed. A terminal
//! that ignores the sequence cannot say so; where the tool can tell it will be ignored (tmux
//! with `set-clipboard` off or `external`, GNU screen, the Linux console) it says why instead
//! of claiming a copy.

/// The OSC 52 sequence that sets the clipboard ("c") to `text`.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

/// Why the sequence would not reach a clipboard, when that can be told from the environment
/// (`var`) and tmux's `set-clipboard` option (`tmux_option`, asked only inside tmux).
pub fn refusal(
    var: &dyn Fn(&str) -> Option<String>,
    tmux_option: &dyn Fn() -> Option<String>,
) -> Option<String> {
    if var("TMUX").is_some_and(|v| !v.is_empty()) {
        return match tmux_option().as_deref().map(str::trim) {
            Some("on") | None => None,
            Some(other) => Some(format!(
                "tmux has set-clipboard {other}, so programs cannot set the clipboard (tmux set -g set-clipboard on allows it)"
            )),
        };
    }
    if var("STY").is_some_and(|v| !v.is_empty()) {
        return Some("GNU screen does not pass clipboard escapes on".into());
    }
    if var("TERM").as_deref() == Some("linux") {
        return Some("the Linux console has no clipboard".into());
    }
    None
}

/// tmux's global `set-clipboard` value, from the tmux this process runs in. Run like every
/// child of the tool (`collect::run`: under a supervisor, killed with the tool), at most 5 s.
pub(crate) fn tmux_set_clipboard() -> Option<String> {
    use crate::collect::run::{Ending, run_with_timeout};
    let mut cmd = std::process::Command::new("tmux");
    cmd.args(["show-options", "-gv", "set-clipboard"]);
    let out = run_with_timeout(cmd, std::time::Duration::from_secs(5));
    (out.ending == Ending::Exited(Some(0))).then(|| out.stdout.trim().to_string())
}

/// Standard base64 (RFC 4648, with padding), for the OSC 52 clipboard sequence.
pub(crate) fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(A[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_carries_the_text_in_base64() {
        assert_eq!(osc52("hi\n"), "\x1b]52;c;aGkK\x07");
    }

    #[test]
    fn refusals_name_the_reason() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let on = || Some("on".to_string());
        let external = || Some("external".to_string());
        assert_eq!(refusal(&env(&[("TERM", "xterm-256color")]), &on), None);
        assert_eq!(refusal(&env(&[("TMUX", "/tmp/t,1,0")]), &on), None);
        let why = refusal(&env(&[("TMUX", "/tmp/t,1,0")]), &external).expect("refused");
        assert!(why.contains("set-clipboard external"), "{why}");
        assert!(refusal(&env(&[("STY", "1.pts")]), &on).is_some());
        assert!(refusal(&env(&[("TERM", "linux")]), &on).is_some());
    }

    #[test]
    fn base64_as_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
