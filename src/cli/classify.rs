//! `classify`: match log files against the known failure signatures only.

use super::{ClassifyArgs, Format, emit, fail};
use crate::engine;
use crate::input::UsageError;
use crate::kb;
use crate::read;
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, Style};

pub fn run(args: &ClassifyArgs) -> i32 {
    let kb = match kb::load(args.kb.as_deref(), crate::facts::is_known_fact) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    // Stream each file: a 100 MB log is never held whole in memory. The reader refuses what is
    // not a regular file (or `-`), caps the bytes and cuts lines at `read::MAX_LINE`, so the
    // scanner's buffer stays bounded whatever the input (the cap lives here, not in the scanner).
    if args.logs.iter().filter(|p| read::is_stdin(p)).count() > 1 {
        return fail(UsageError(
            "standard input (-) can be given as --log once only".into(),
        ));
    }
    let scanner = engine::classify::Scanner::new(&kb);
    let mut matches = Vec::new();
    // With --redact, what each line teaches (an NCCL host prefix, a `DB_PASSWORD=…`) is learnt
    // as it streams past (such a line is rarely itself a match), so the matched lines lose it
    // too; and this host's user and host name, which `report` and `check` learn from the
    // snapshot, so the three redact alike.
    let mut redactor = args.redact.then(|| {
        let mut r = report::redact::for_snapshot(None, report::RedactOptions::default());
        for var in ["USER", "LOGNAME"] {
            if let Ok(v) = std::env::var(var) {
                r.learn(&v, report::redact::Kind::User);
            }
        }
        if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            r.learn(h.trim(), report::redact::Kind::Hostname);
        }
        r
    });
    for p in &args.logs {
        let name = read::shown(p);
        let stream = match read::open_log_stream(p, read::LOG_STREAM, read::Stdin::Allowed) {
            Ok(s) => s,
            Err(e) => return fail(UsageError(e.to_string())),
        };
        let scanned = match redactor.as_mut() {
            Some(r) => {
                let tap = read::LineTap::new(stream, read::MAX_LINE, |line: &[u8]| {
                    r.learn_line(&String::from_utf8_lossy(line))
                });
                scanner.scan_reader(&name, tap, &mut matches)
            }
            None => scanner.scan_reader(&name, stream, &mut matches),
        };
        if let Err(e) = scanned {
            return fail(UsageError(read::stream_error(&name, e).to_string()));
        }
    }
    let c = scanner.rank(matches);
    let text = match args.format {
        Format::Text => {
            let t = report::check::classify_text(&c, Style::detect());
            match redactor.as_mut() {
                Some(r) => r.whole_text(&t),
                None => t,
            }
        }
        Format::Json => {
            let mut v = report::check::classify_json(&c);
            match redactor.as_mut() {
                Some(r) => r.json(&mut v),
                None => super::note_unredacted_json(false, "pass --redact"),
            }
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
    };
    let rc = emit(&text);
    if rc != EXIT_OK {
        return rc;
    }
    // A log that shows a failure or a hang is a finding even when no class names it.
    if c.classes.is_empty() && !c.run.shows_failure() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    }
}
