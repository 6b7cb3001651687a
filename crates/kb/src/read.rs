//! The one way this program reads a file the user names (`--snapshot`, `--collect-env`,
//! `--launch-file`, `--log`, `--answers`, the files of `--kb DIR`, the TUI's "open log").
//!
//! The rules:
//! - **Only regular files** (a symbolic link to one is fine). A FIFO, socket, device node or
//!   directory is refused by name before it is opened, so a FIFO with no writer or `/dev/zero`
//!   cannot hang or flood the tool. The file is then opened non-blocking and checked again
//!   (`fstat`), so a FIFO swapped in after the check is still refused.
//! - **`-` is standard input** where the caller allows it ([`Stdin::Allowed`]).
//! - **Every input has a size cap** ([`Limit`]); more is refused with the cap in the message.
//!   The caps are listed in the README's "Limits" section.
//! - **Logs have a maximum line length** ([`MAX_LINE`]): a longer line is cut there and a note
//!   says how many bytes were skipped ([`LineCapped`]). So a newline-free stream costs bounded
//!   memory in every scanner fed from here.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// A size cap for one kind of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// What the input is, for the message: "a snapshot or JSON report".
    pub what: &'static str,
}

const MIB: u64 = 1 << 20;

/// `--snapshot FILE`: a snapshot (YAML or JSON) or a JSON report.
pub const SNAPSHOT: Limit = Limit {
    bytes: 32 * MIB,
    what: "a snapshot or JSON report",
};
/// `--collect-env FILE`: `vllm collect-env` output (real ones are 10–50 KB).
pub const COLLECT_ENV: Limit = Limit {
    bytes: 4 * MIB,
    what: "collect-env output",
};
/// `--launch-file FILE`: a launch command, script or compose file.
pub const LAUNCH: Limit = Limit {
    bytes: MIB,
    what: "a launch file",
};
/// `--answers FILE`.
pub const ANSWERS: Limit = Limit {
    bytes: MIB,
    what: "an answers file",
};
/// One file of a `--kb DIR`.
pub const KB_FILE: Limit = Limit {
    bytes: 4 * MIB,
    what: "a knowledge-base file",
};
/// All files of a `--kb DIR` together.
pub const KB_TOTAL: Limit = Limit {
    bytes: 32 * MIB,
    what: "a knowledge-base directory (all files together)",
};
/// Most `*.yaml` files read from a `--kb DIR`.
pub const KB_MAX_FILES: usize = 256;
/// `--log FILE` for `check`, `report` and the TUI, which keep its ends in memory
/// ([`read_log`]: memory stays bounded; this bounds the time).
pub const LOG: Limit = Limit {
    bytes: 4096 * MIB,
    what: "a log (check, report, TUI)",
};
/// `classify --log FILE`, which streams the log (memory stays bounded; this bounds the time).
pub const LOG_STREAM: Limit = Limit {
    bytes: 4096 * MIB,
    what: "a streamed log (classify)",
};
/// Longest log line scanned; the rest of a longer line is skipped with a note.
pub const MAX_LINE: usize = 64 * 1024;

/// Whether `-` means standard input here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    Allowed,
    Refused,
}

/// Why an input was not read. Each message starts with the name of the input.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: is {what}; only a regular file is read{}", stdin_hint(*.stdin))]
    NotRegular {
        path: String,
        what: &'static str,
        stdin: Stdin,
    },
    #[error("{path}: larger than {} ({}), the limit for {}; nothing was read from it", size(.limit.bytes), .limit.bytes, .limit.what)]
    TooLarge { path: String, limit: Limit },
    #[error("{path}: cannot read: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{path}:{line}:{column}: not UTF-8 text (is this a binary file?)")]
    NotUtf8 {
        path: String,
        line: usize,
        column: usize,
    },
}

impl ReadError {
    /// The input's name as messages show it.
    pub fn path(&self) -> &str {
        match self {
            ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::Io { path, .. }
            | ReadError::NotUtf8 { path, .. } => path,
        }
    }
}

fn stdin_hint(s: Stdin) -> &'static str {
    match s {
        Stdin::Allowed => " (use - to read standard input)",
        Stdin::Refused => "",
    }
}

/// `33554432` → `32 MiB`.
pub fn size(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// What kind of file system object a file type is, for an error message.
pub fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// How an input is named in messages: `-` is `stdin`.
pub fn shown(path: &Path) -> String {
    if is_stdin(path) {
        "stdin".to_string()
    } else {
        path.display().to_string()
    }
}

/// Is this path `-`?
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Open a regular file for reading without ever blocking on the open (see the module comment).
pub(crate) fn open_regular(path: &Path, stdin: Stdin) -> Result<File, ReadError> {
    let name = path.display().to_string();
    let io = |source| ReadError::Io {
        path: name.clone(),
        source,
    };
    let refuse = |t: std::fs::FileType| ReadError::NotRegular {
        path: name.clone(),
        what: describe(t),
        stdin,
    };
    // `stat` first: a device node is never even opened (opening some has side effects).
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(refuse(meta.file_type()));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(refuse(meta.file_type()));
    }
    Ok(file)
}

/// An open input: a regular file or standard input.
pub enum Input {
    File(File),
    Stdin(io::Stdin),
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::File(f) => read_file(f, buf),
            Input::Stdin(s) => s.read(buf),
        }
    }
}

/// A read from a file opened `O_NONBLOCK`. A file on disk never answers `WouldBlock`; one that
/// does is a kernel interface that looks like a file (`/proc/kmsg`) and may never have an end,
/// so it is an error here, where a pipe on standard input is waited for.
fn read_file(f: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    match f.read(buf) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(io::Error::other(
            "it has no data to read yet and may never end (a kernel interface such as \
             /proc/kmsg, not a file with an end)",
        )),
        r => r,
    }
}

/// Open `path` (or standard input for `-` where allowed).
pub fn open(path: &Path, stdin: Stdin) -> Result<Input, ReadError> {
    if is_stdin(path) && stdin == Stdin::Allowed {
        return Ok(Input::Stdin(io::stdin()));
    }
    open_regular(path, stdin).map(Input::File)
}

/// Read at most `limit` bytes of `path`; more is [`ReadError::TooLarge`].
pub(crate) fn read_bytes(path: &Path, limit: Limit, stdin: Stdin) -> Result<Vec<u8>, ReadError> {
    let name = shown(path);
    let input = open(path, stdin)?;
    if let Input::File(f) = &input
        && let Ok(m) = f.metadata()
        && m.len() > limit.bytes
    {
        return Err(ReadError::TooLarge { path: name, limit });
    }
    let mut buf = Vec::new();
    let mut capped = input.take(limit.bytes + 1);
    read_to_end(&mut capped, &mut buf).map_err(|source| ReadError::Io {
        path: name.clone(),
        source,
    })?;
    if buf.len() as u64 > limit.bytes {
        return Err(ReadError::TooLarge { path: name, limit });
    }
    Ok(buf)
}

/// `read_to_end` that retries on `Interrupted` and on a non-blocking descriptor's `WouldBlock`
/// (standard input may be a pipe left non-blocking by another program).
fn read_to_end(r: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<()> {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(e) => return Err(e),
        }
    }
}

/// Read `path` as UTF-8 text; a bad byte is reported with its line and column.
pub fn read_text(path: &Path, limit: Limit, stdin: Stdin) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit, stdin)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..valid];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = valid
            - before
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        ReadError::NotUtf8 {
            path: shown(path),
            line,
            column,
        }
    })
}

/// Bytes of a log's start that [`read_log`] keeps (whole lines).
pub const LOG_HEAD: usize = 24 << 20;
/// Bytes of a log's end that [`read_log`] keeps (whole lines).
pub const LOG_TAIL: usize = 24 << 20;

/// Read a log for a reader that holds it in memory (`check`, `report`, the TUI), streamed:
/// lines longer than [`MAX_LINE`] are cut with a note, stray bytes are replaced (logs hold
/// progress bars and the like), at most `limit` bytes are read, and at most [`LOG_HEAD`] +
/// [`LOG_TAIL`] bytes of it are kept ([`keep_ends`]: the middle of a longer log becomes empty
/// lines, so line numbers stay the file's), whatever its size. `classify` streams all of it.
pub fn read_log(path: &Path, limit: Limit, stdin: Stdin) -> Result<String, ReadError> {
    let name = shown(path);
    let input = open(path, stdin)?;
    if let Input::File(f) = &input
        && let Ok(m) = f.metadata()
        && m.len() > limit.bytes
    {
        return Err(ReadError::TooLarge { path: name, limit });
    }
    let mut r = LineCapped::new(Capped::new(input, limit, &name), MAX_LINE);
    let kept = keep_ends(&mut r, LOG_HEAD, LOG_TAIL).map_err(|e| stream_error(&name, e))?;
    Ok(String::from_utf8(kept)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The note on the first line [`keep_ends`] empties.
pub(crate) fn ends_note(lines: u64, bytes: u64, head: usize, tail: usize) -> String {
    format!(
        "[sm120-doctor: {lines} lines ({}) left out here; a log held in memory keeps its first {} \
         and last {}, `classify` reads all of it]",
        size(bytes),
        size(head as u64),
        size(tail as u64)
    )
}

/// Read `r` to its end keeping the whole lines of its first `head` bytes and of its last
/// `tail` bytes; each line between becomes an empty line (the first of them a note,
/// [`ends_note`]), so a line keeps its number and memory stays about `head + tail` plus a
/// byte per line left out. Retries `Interrupted` and `WouldBlock` as [`read_to_end`] does.
pub(crate) fn keep_ends(r: &mut impl Read, head: usize, tail: usize) -> io::Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::new();
    let mut head_full = false;
    let mut ring: std::collections::VecDeque<Vec<u8>> = std::collections::VecDeque::new();
    let mut ring_bytes = 0usize;
    let (mut left_lines, mut left_bytes) = (0u64, 0u64);
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut take = |line: &mut Vec<u8>, out: &mut Vec<u8>| {
        if !head_full && out.len() + line.len() <= head {
            out.extend_from_slice(line);
            line.clear();
            return;
        }
        head_full = true;
        ring_bytes += line.len();
        ring.push_back(std::mem::take(line));
        while ring_bytes > tail {
            let Some(old) = ring.pop_front() else { break };
            ring_bytes -= old.len();
            left_lines += 1;
            left_bytes += old.len() as u64;
        }
    };
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(5));
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut rest = &chunk[..n];
        while let Some(nl) = rest.iter().position(|b| *b == b'\n') {
            line.extend_from_slice(&rest[..=nl]);
            take(&mut line, &mut out);
            rest = &rest[nl + 1..];
        }
        line.extend_from_slice(rest);
    }
    if !line.is_empty() {
        take(&mut line, &mut out);
    }
    if left_lines > 0 {
        let note = ends_note(left_lines, left_bytes, head, tail);
        let len = usize::try_from(left_lines).unwrap_or(usize::MAX);
        out.reserve(note.len() + len + ring_bytes);
        out.extend_from_slice(note.as_bytes());
        out.resize(out.len() + len, b'\n');
    }
    for l in ring {
        out.extend_from_slice(&l);
    }
    Ok(out)
}

/// A log as a stream for a chunked scanner: capped at `limit` bytes, lines at [`MAX_LINE`].
/// A read error from it is turned into a message by [`stream_error`].
pub fn open_log_stream(
    path: &Path,
    limit: Limit,
    stdin: Stdin,
) -> Result<LineCapped<Capped<Input>>, ReadError> {
    let name = shown(path);
    let input = open(path, stdin)?;
    if let Input::File(f) = &input
        && let Ok(m) = f.metadata()
        && m.len() > limit.bytes
    {
        return Err(ReadError::TooLarge { path: name, limit });
    }
    Ok(LineCapped::new(Capped::new(input, limit, &name), MAX_LINE))
}

/// The message for an error that came out of a stream from [`open_log_stream`].
pub fn stream_error(name: &str, e: io::Error) -> ReadError {
    if e.get_ref().is_some_and(|i| i.is::<ReadError>()) {
        match e.into_inner().map(|i| i.downcast::<ReadError>()) {
            Some(Ok(r)) => return *r,
            Some(Err(other)) => {
                return ReadError::Io {
                    path: name.to_string(),
                    source: io::Error::other(other),
                };
            }
            None => {}
        }
        return ReadError::Io {
            path: name.to_string(),
            source: io::Error::other("read failed"),
        };
    }
    ReadError::Io {
        path: name.to_string(),
        source: e,
    }
}

/// A reader that fails with [`ReadError::TooLarge`] once more than the limit has been read.
pub struct Capped<R> {
    inner: R,
    limit: Limit,
    read: u64,
    name: String,
}

impl<R: Read> Capped<R> {
    pub fn new(inner: R, limit: Limit, name: &str) -> Self {
        Capped {
            inner,
            limit,
            read: 0,
            name: name.to_string(),
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.limit.bytes {
            return Err(io::Error::other(ReadError::TooLarge {
                path: self.name.clone(),
                limit: self.limit,
            }));
        }
        Ok(n)
    }
}

/// A reader that cuts every line at `max` bytes: the rest of the line is skipped and, where the
/// line ends, a note says how many bytes were skipped. Memory: one 64 KiB buffer.
pub struct LineCapped<R> {
    inner: R,
    max: usize,
    /// Bytes of the current line passed on so far.
    col: usize,
    /// Bytes of the current line skipped so far.
    skipped: u64,
    /// Lines cut so far.
    pub lines_cut: u64,
    buf: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    eof: bool,
    /// The skipped part's last progress redraw (the text after its last `\r`, at most `max`
    /// bytes): what a terminal shows last, so an error printed over a progress bar survives.
    redraw: Vec<u8>,
    redraw_state: Redraw,
}

/// Where the skipped part of a line stands on `\r` redraws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Redraw {
    /// No `\r` in the skipped part yet.
    None,
    /// A `\r` ended the bytes seen so far: a new redraw starts with the next byte, unless the
    /// line ends first (CRLF), which keeps the redraw before it.
    Pending,
    /// `redraw` holds the start of the current redraw.
    Open,
}

/// The note that ends a cut line. (No GPU or tool name in it: the classifier reads it too.)
pub fn cut_note(max: usize, skipped: u64) -> String {
    format!(" [line cut at {max} bytes; {skipped} more bytes skipped]")
}

impl<R: Read> LineCapped<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineCapped {
            inner,
            max: max.max(1),
            col: 0,
            skipped: 0,
            lines_cut: 0,
            buf: vec![0u8; 64 * 1024],
            out: Vec::with_capacity(64 * 1024 + 128),
            pos: 0,
            eof: false,
            redraw: Vec::new(),
            redraw_state: Redraw::None,
        }
    }

    fn end_cut_line(&mut self) {
        if self.skipped > 0 {
            self.out
                .extend_from_slice(cut_note(self.max, self.skipped).as_bytes());
            self.skipped = 0;
            self.lines_cut += 1;
            // The last redraw goes after a `\r`, as the terminal showed it: the normaliser
            // makes it a line of its own.
            if !self.redraw.is_empty() {
                self.out.push(b'\r');
                self.out.extend_from_slice(&self.redraw);
            }
        }
        self.redraw.clear();
        self.redraw_state = Redraw::None;
    }

    /// Follow `\r` redraws in the skipped bytes of a line (no `\n` among them, possibly a
    /// piece of the line: the state carries over between pieces).
    fn track_redraws(&mut self, skipped: &[u8]) {
        // Trailing `\r`s start nothing yet: a CRLF ending keeps the redraw before it.
        let end = skipped
            .iter()
            .rposition(|&b| b != b'\r')
            .map_or(0, |i| i + 1);
        let body = &skipped[..end];
        if !body.is_empty() {
            let rest = match memchr::memrchr(b'\r', body) {
                Some(i) => {
                    self.redraw.clear();
                    self.redraw_state = Redraw::Open;
                    &body[i + 1..]
                }
                None => match self.redraw_state {
                    Redraw::None => &[][..],
                    Redraw::Pending => {
                        self.redraw.clear();
                        self.redraw_state = Redraw::Open;
                        body
                    }
                    Redraw::Open => body,
                },
            };
            let room = self.max.saturating_sub(self.redraw.len());
            self.redraw.extend_from_slice(&rest[..rest.len().min(room)]);
        }
        if end < skipped.len() {
            self.redraw_state = Redraw::Pending;
        }
    }

    /// Pass `input` on, cutting overlong lines. Lines that fit are copied in bulk (a stream of
    /// short lines costs one memchr per line and one copy per chunk).
    fn take_in(&mut self, input: &[u8]) {
        // input[from..pos] is verbatim output not yet copied.
        let mut from = 0;
        let mut pos = 0;
        while pos < input.len() {
            let nl = memchr::memchr(b'\n', &input[pos..]).map(|p| pos + p);
            let seg_end = nl.unwrap_or(input.len());
            let seg_len = seg_end - pos;
            let room = self.max - self.col;
            if self.skipped == 0 && seg_len <= room {
                match nl {
                    Some(n) => {
                        self.col = 0;
                        pos = n + 1;
                    }
                    None => {
                        self.col += seg_len;
                        pos = seg_end;
                    }
                }
                continue;
            }
            // This line is too long (or already being skipped): keep what fits, skip the rest.
            let keep = if self.skipped == 0 { room } else { 0 };
            self.out.extend_from_slice(&input[from..pos + keep]);
            self.col += keep;
            self.skipped += (seg_len - keep) as u64;
            self.track_redraws(&input[pos + keep..seg_end]);
            pos = seg_end;
            if let Some(n) = nl {
                self.end_cut_line();
                self.out.push(b'\n');
                self.col = 0;
                pos = n + 1;
            }
            from = pos;
        }
        self.out.extend_from_slice(&input[from..]);
    }
}

impl<R: Read> Read for LineCapped<R> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos < self.out.len() {
                let n = dst.len().min(self.out.len() - self.pos);
                dst[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.eof || dst.is_empty() {
                return Ok(0);
            }
            self.out.clear();
            self.pos = 0;
            let n = match self.inner.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.eof = true;
                self.end_cut_line();
                continue;
            }
            let buf = std::mem::take(&mut self.buf);
            self.take_in(&buf[..n]);
            self.buf = buf;
        }
    }
}

/// A reader that shows every complete line passing through it to `f` (at most `max` bytes of a
/// line are held; a longer one is shown cut). For learning from a stream while it is scanned.
pub struct LineTap<R, F: FnMut(&[u8])> {
    inner: R,
    f: F,
    line: Vec<u8>,
    max: usize,
}

impl<R: Read, F: FnMut(&[u8])> LineTap<R, F> {
    pub fn new(inner: R, max: usize, f: F) -> Self {
        LineTap {
            inner,
            f,
            line: Vec::new(),
            max,
        }
    }
}

impl<R: Read, F: FnMut(&[u8])> Read for LineTap<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            if !self.line.is_empty() {
                (self.f)(&self.line);
                self.line.clear();
            }
            return Ok(0);
        }
        let mut rest = &buf[..n];
        while let Some(p) = memchr::memchr(b'\n', rest) {
            let room = self.max.saturating_sub(self.line.len()).min(p);
            self.line.extend_from_slice(&rest[..room]);
            (self.f)(&self.line);
            self.line.clear();
            rest = &rest[p + 1..];
        }
        let room = self.max.saturating_sub(self.line.len()).min(rest.len());
        self.line.extend_from_slice(&rest[..room]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Just;

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("cstring");
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
        assert_eq!(rc, 0, "mkfifo: {}", io::Error::last_os_error());
    }

    const SMALL: Limit = Limit {
        bytes: 10,
        what: "a test input",
    };

    #[test]
    fn fifos_devices_and_directories_are_refused_by_name_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("a.yaml");
        mkfifo(&fifo);
        let e = read_text(&fifo, SNAPSHOT, Stdin::Allowed).expect_err("fifo");
        let msg = e.to_string();
        assert!(
            msg.contains("a.yaml") && msg.contains("FIFO") && msg.contains("use -"),
            "{msg}"
        );
        let e = read_log(Path::new("/dev/zero"), LOG, Stdin::Refused).expect_err("dev");
        assert_eq!(
            e.to_string(),
            "/dev/zero: is a character device; only a regular file is read"
        );
        let e = read_bytes(dir.path(), SNAPSHOT, Stdin::Refused).expect_err("dir");
        assert!(e.to_string().contains("is a directory"), "{e}");
        // A symbolic link to a FIFO is refused the same way.
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&fifo, &link).expect("symlink");
        let e = open_log_stream(&link, LOG_STREAM, Stdin::Refused)
            .err()
            .expect("link");
        assert!(e.to_string().contains("FIFO"), "{e}");
    }

    #[test]
    fn the_cap_is_enforced_and_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"0123456789").expect("write");
        assert_eq!(
            read_bytes(&p, SMALL, Stdin::Refused).expect("fits").len(),
            10
        );
        std::fs::write(&p, b"0123456789x").expect("write");
        let e = read_bytes(&p, SMALL, Stdin::Refused).expect_err("too big");
        assert_eq!(
            e.to_string(),
            format!(
                "{}: larger than 10 bytes (10), the limit for a test input; nothing was read from it",
                p.display()
            )
        );
        // Through the streaming cap too (a file that grows after the check, or stdin).
        let mut r = Capped::new(&b"0123456789x"[..], SMALL, "s");
        let mut out = Vec::new();
        let e = read_to_end(&mut r, &mut out).expect_err("capped");
        assert!(
            stream_error("s", e)
                .to_string()
                .starts_with("s: larger than"),
            "capped"
        );
        assert_eq!(size(32 * MIB), "32 MiB");
        assert_eq!(size(64 * 1024), "64 KiB");
    }

    #[test]
    fn utf8_errors_name_line_and_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("t");
        std::fs::write(&p, b"ok\nab\xffc\n").expect("write");
        let e = read_text(&p, SNAPSHOT, Stdin::Refused).expect_err("bad");
        assert!(
            e.to_string()
                .ends_with(":2:3: not UTF-8 text (is this a binary file?)"),
            "{e}"
        );
        assert_eq!(
            read_log(&p, LOG, Stdin::Refused).expect("lossy"),
            "ok\nab\u{fffd}c\n"
        );
    }

    fn capped(input: &[u8], max: usize, chunk: usize) -> (String, u64) {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(b.len());
                b[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut r = LineCapped::new(Chunks(input, chunk), max);
        let mut out = Vec::new();
        read_to_end(&mut r, &mut out).expect("read");
        (String::from_utf8_lossy(&out).into_owned(), r.lines_cut)
    }

    #[test]
    fn a_file_that_would_block_is_an_error_not_a_wait() {
        struct Eagain(bool);
        impl Read for Eagain {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                if std::mem::replace(&mut self.0, false) {
                    b[0] = b'x';
                    return Ok(1);
                }
                Err(io::ErrorKind::WouldBlock.into())
            }
        }
        let mut f = Eagain(true);
        let mut buf = [0u8; 8];
        assert_eq!(read_file(&mut f, &mut buf).expect("first byte"), 1);
        let e = read_file(&mut f, &mut buf).expect_err("would block");
        assert_ne!(e.kind(), io::ErrorKind::WouldBlock);
        assert!(e.to_string().contains("/proc/kmsg"), "{e}");
    }

    #[test]
    fn the_tap_sees_every_line_and_passes_the_bytes_on() {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        {
            let mut r = LineTap::new(&b"ab\ncd\nlast"[..], 10, |l: &[u8]| {
                seen.push(String::from_utf8_lossy(l).into_owned())
            });
            read_to_end(&mut r, &mut out).expect("read");
        }
        assert_eq!(out, b"ab\ncd\nlast");
        assert_eq!(seen, ["ab", "cd", "last"]);
    }

    /// The reference: split at newlines, cut each line, rejoin.
    fn cut_reference(input: &[u8], max: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let parts: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
        for (i, line) in parts.iter().enumerate() {
            if line.len() > max {
                out.extend_from_slice(&line[..max]);
                out.extend_from_slice(cut_note(max, (line.len() - max) as u64).as_bytes());
                // The skipped part's last redraw: after its last `\r`, trailing `\r`s aside.
                let rest = &line[max..];
                let end = rest.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
                if let Some(i) = rest[..end].iter().rposition(|&b| b == b'\r') {
                    let redraw = &rest[i + 1..end];
                    out.push(b'\r');
                    out.extend_from_slice(&redraw[..redraw.len().min(max)]);
                }
            } else {
                out.extend_from_slice(line);
            }
            if i + 1 < parts.len() {
                out.push(b'\n');
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn line_capping_matches_the_reference(
            input in proptest::collection::vec(proptest::prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(b'b')], 0..400),
            max in 1usize..20,
            chunk in 1usize..50,
        ) {
            let (out, _) = capped(&input, max, chunk);
            let want = String::from_utf8_lossy(&cut_reference(&input, max)).into_owned();
            proptest::prop_assert_eq!(out, want);
        }
    }

    #[test]
    fn an_error_printed_over_a_long_progress_bar_survives_the_cut() {
        // 2,000 redraws of a progress bar, then the crash over the last one, on one line.
        let mut line = Vec::new();
        for i in 0..2000 {
            line.extend_from_slice(format!("\rLoading: {i:>4}/2000 [####      ]").as_bytes());
        }
        line.extend_from_slice(
            b"\rFailed: Cuda error custom_all_reduce.cuh:455 'invalid argument'\r\nnext\n",
        );
        for chunk in [1, 7, 4096, 1 << 20] {
            let (out, cut) = capped(&line, 1000, chunk);
            assert_eq!(cut, 1, "chunk {chunk}");
            let (first, after) = out.split_once('\n').expect("two lines");
            assert!(
                first
                    .ends_with("\rFailed: Cuda error custom_all_reduce.cuh:455 'invalid argument'"),
                "chunk {chunk}: {}",
                &first[first.len().saturating_sub(200)..]
            );
            assert_eq!(after, "next\n");
        }
    }

    #[test]
    fn long_lines_are_cut_with_a_note_and_short_ones_pass_unchanged() {
        for chunk in [1, 3, 7, 1000] {
            let (out, cut) = capped(b"abc\nabcdefgh\nxy\nabcdefghij", 5, chunk);
            assert_eq!(
                out,
                format!("abc\nabcde{}\nxy\nabcde{}", cut_note(5, 3), cut_note(5, 5)),
                "chunk {chunk}"
            );
            assert_eq!(cut, 2);
            let (out, cut) = capped(b"12345\n\n", 5, chunk);
            assert_eq!((out.as_str(), cut), ("12345\n\n", 0), "chunk {chunk}");
        }
    }

    /// A reader that hands out at most `step` bytes a call (lines split across reads).
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_log_within_its_ends_is_kept_whole() {
        for text in ["", "a\n", "a\nb", "one\ntwo\nthree\n"] {
            for step in [1, 3, 1 << 16] {
                let out = keep_ends(&mut Trickle(text.as_bytes(), step), 8, 8).expect("read");
                assert_eq!(out, text.as_bytes(), "{text:?} step {step}");
            }
        }
    }

    #[test]
    fn the_middle_of_a_long_log_becomes_empty_lines_with_a_note() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        for step in [1, 7, 1 << 16] {
            let out = keep_ends(&mut Trickle(text.as_bytes(), step), 30, 20).expect("read");
            let out = String::from_utf8(out).expect("utf8");
            let lines: Vec<&str> = out.lines().collect();
            // Every line keeps its number: the kept ones are the file's at the same place.
            assert_eq!(lines.len(), 100, "step {step}");
            assert_eq!(&lines[..4], ["line 1", "line 2", "line 3", "line 4"]);
            // 20 bytes of tail: `line 99\n` and `line 100\n` (17); `line 98\n` would make 25.
            assert_eq!(&lines[98..], ["line 99", "line 100"]);
            let left = 100 - 4 - 2;
            assert_eq!(
                lines[4],
                ends_note(
                    left,
                    (5..=98).map(|i| format!("line {i}\n").len() as u64).sum(),
                    30,
                    20
                )
            );
            assert!(lines[5..98].iter().all(|l| l.is_empty()), "step {step}");
            assert!(out.len() < 30 + 20 + 200 + 100, "{} bytes kept", out.len());
        }
    }

    #[test]
    fn a_long_log_costs_its_ends_and_a_byte_a_line() {
        let line = b"RuntimeError: CUDA error: out of memory\n";
        let text = line.repeat(200_000);
        let out = keep_ends(&mut Trickle(&text, 1 << 16), 4096, 4096).expect("read");
        assert!(out.len() < 8192 + 200_000 + 200, "{} bytes kept", out.len());
        assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 200_000);
        assert!(out.ends_with(line));
    }
}
