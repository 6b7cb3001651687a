//! Engine benchmarks: knowledge-base load (the embedded built form, and the full loader with
//! validation), and `classify` throughput on a 100 MB log.
//! Compare with grep using benches/compare_grep.sh (same patterns, same file).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sm120_doctor::engine::classify::{LogText, Scanner};
use sm120_doctor::engine::{self, Answers, Mode};
use std::hint::black_box;
use std::time::Duration;

#[path = "support/log_gen.rs"]
#[allow(dead_code)] // to_ere is for the grep comparison example
mod log_gen;

fn kb_load(c: &mut Criterion) {
    // What a start pays: the form build.rs validated and stored, read back.
    c.bench_function("kb load (embedded, built form)", |b| {
        b.iter(|| {
            black_box(sm120_doctor::kb::load_embedded(
                sm120_doctor::facts::is_known_fact,
            ))
        })
    });
    // What build.rs and `--kb DIR` pay: YAML, validation, every regex compiled.
    c.bench_function("kb load+validate (full loader, embedded YAML)", |b| {
        b.iter(|| {
            black_box(sm120_doctor::kb::load_embedded_yaml(
                sm120_doctor::facts::is_known_fact,
            ))
        })
    });
}

fn diagnose_demo(c: &mut Criterion) {
    let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb");
    let snap = sm120_doctor::import::demo_snapshot();
    let log = LogText {
        name: "demo".into(),
        text: sm120_doctor::import::demo::LOG.into(),
    };
    c.bench_function("diagnose demo", |b| {
        b.iter(|| {
            black_box(engine::diagnose(
                &kb,
                &snap,
                &Answers::new(),
                std::slice::from_ref(&log),
                Mode::All,
            ))
        })
    });
}

/// The streamed path the CLI uses (`classify --log FILE`): the log is read in blocks through
/// `Scanner::scan_reader` (normalisation, one combined regex, wrapped-line joins), then ranked.
/// The scanner is built once outside the loop, as the CLI builds it once per run.
fn classify_100mb(c: &mut Criterion) {
    let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact).expect("kb");
    let text = log_gen::generate(100 * 1024 * 1024, 5000);
    let scanner = Scanner::new(&kb);
    let mut g = c.benchmark_group("classify");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("100 MB log, streamed (scan_reader + rank)", |b| {
        b.iter(|| {
            let mut matches = Vec::new();
            scanner
                .scan_reader("bench.log", text.as_bytes(), &mut matches)
                .expect("reading a slice");
            black_box(scanner.rank(matches))
        })
    });
    g.finish();
}

criterion_group!(benches, kb_load, diagnose_demo, classify_100mb);
criterion_main!(benches);
