//! Launch reader benchmarks: a 1 MB script (lexed and located), and the same shape at 256 KB and
//! 4 MB to show the time grows linearly with the size (issue 18 item 4: `line_of()` used to rescan
//! from byte 0 for every word, so 1 MB took > 20 s).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sm120_doctor::launch::{self, lex};
use std::hint::black_box;
use std::time::Duration;

/// A script of about `bytes`: many ordinary commands with comments and quotes, exports, then the
/// vLLM command.
fn script(bytes: usize) -> String {
    let mut s =
        String::from("#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
    let mut i = 0;
    while s.len() < bytes.saturating_sub(80) {
        s.push_str(&format!(
            "echo \"step {i}\" --flag-{i} 'value {i}' $HOME/x_{i} # comment {i}\n"
        ));
        i += 1;
    }
    s.push_str("vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2\n");
    s
}

fn launch_sizes(c: &mut Criterion) {
    let mut g = c.benchmark_group("launch file");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for kb in [256usize, 1024, 4096] {
        let text = script(kb * 1024);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("lex", format!("{kb} KB")),
            &text,
            |b, t| b.iter(|| black_box(lex::script(t).map(|s| s.commands.len()))),
        );
        g.bench_with_input(
            BenchmarkId::new("locate", format!("{kb} KB")),
            &text,
            |b, t| b.iter(|| black_box(launch::locate(t).map(|l| l.args.len()))),
        );
    }
    g.finish();
}

criterion_group!(benches, launch_sizes);
criterion_main!(benches);
