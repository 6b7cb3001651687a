//! Print the corpus table (confusion matrix, per-class precision/recall, constraint violations,
//! misses) for any directory of logs.
//!
//! ```sh
//! cargo run --release --example corpus_eval -- tests/corpus/cases
//! cargo run --release --example corpus_eval -- --kb knowledge/ my-logs/
//! ```
//!
//! Files that start with the corpus header (see tests/corpus/README.md) are scored against their
//! label; files without one are classified and listed. Exit status: 0 after printing, 2 on a
//! usage, read or header error.

#[path = "../tests/corpus/eval.rs"]
mod eval;

use std::path::PathBuf;

fn usage() -> ! {
    eprintln!("usage: corpus_eval [--kb KB_DIR] LOG_DIR");
    std::process::exit(2);
}

fn main() {
    let mut kb_dir: Option<PathBuf> = None;
    let mut dir: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--kb" {
            match args.next() {
                Some(v) => kb_dir = Some(PathBuf::from(v)),
                None => usage(),
            }
        } else if arg == "-h" || arg == "--help" {
            usage();
        } else if dir.is_none() {
            dir = Some(PathBuf::from(arg));
        } else {
            usage();
        }
    }
    let Some(dir) = dir else { usage() };
    let kb = match sm120_doctor::kb::load(kb_dir.as_deref(), sm120_doctor::facts::is_known_fact) {
        Ok(kb) => kb,
        Err(e) => {
            eprintln!("corpus_eval: knowledge base: {e}");
            std::process::exit(2);
        }
    };
    let result = eval::load_dir(&dir).and_then(|cases| eval::evaluate(&kb, &cases));
    match result {
        Ok(report) => print!(
            "{}",
            eval::render(&report, &format!("{} (KB: {})", dir.display(), kb.origin))
        ),
        Err(e) => {
            eprintln!("corpus_eval: {e}");
            std::process::exit(2);
        }
    }
}
