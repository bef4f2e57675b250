//! Time of `aggregate` (by label, unweighted) alone, on councils shaped like bench/bench_ranking.py's
//! (4 members, 4 labels, one partial ballot): the share of the binding's per-call cost that is
//! the computation itself.   cargo run --release --example aggregate_timing
use std::time::Instant;

fn main() {
    let labels = ["A", "B", "C", "D"];
    let models = ["meta/llama-4", "openai/gpt-5.1", "anthropic/claude-sonnet-4.5", "x-ai/grok-4"];
    let map: Vec<(&str, &str)> = labels.iter().copied().zip(models.iter().copied()).collect();
    let mut seed = 7u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let councils: Vec<Vec<(Option<&str>, Vec<&str>)>> = (0..100_000)
        .map(|_| {
            models
                .iter()
                .enumerate()
                .map(|(k, &reviewer)| {
                    let mut ballot: Vec<&str> = labels.to_vec();
                    for i in (1..ballot.len()).rev() {
                        ballot.swap(i, (next() % (i as u64 + 1)) as usize);
                    }
                    if k == 3 {
                        ballot.truncate(1);
                    }
                    (Some(reviewer), ballot)
                })
                .collect()
        })
        .collect();
    let started = Instant::now();
    let mut checksum = 0usize;
    for council in &councils {
        let scores =
            ranking::aggregate(council, ranking::Candidates::Labels(&map), ranking::Options::default()).unwrap();
        checksum += scores[0].candidate;
    }
    let elapsed = started.elapsed();
    println!(
        "{} councils: {:.3} s, {:.2} us each (checksum {checksum})",
        councils.len(),
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / councils.len() as f64
    );
}
