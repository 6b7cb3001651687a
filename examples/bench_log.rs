//! Write the benchmark log, or print the KB's signature patterns for `grep -E`.
//!
//! `cargo run --release --example bench_log -- FILE [MEGABYTES]` or `... -- --ere`.

#[path = "../benches/support/log_gen.rs"]
mod log_gen;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--ere") => {
            let kb = sm120_doctor::kb::load_embedded(sm120_doctor::facts::is_known_fact)?;
            for s in &kb.signatures {
                println!("{}", log_gen::to_ere(s.regex.as_str()));
            }
        }
        Some(path) => {
            let mb: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(100);
            std::fs::write(path, log_gen::generate(mb * 1024 * 1024, 5000))?;
        }
        None => return Err("usage: bench_log FILE [MEGABYTES] | --ere".into()),
    }
    Ok(())
}
