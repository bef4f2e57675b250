//! Leaderboard over stored ballots: Bradley-Terry strengths with bootstrap intervals.
//!
//! * **Comparisons.** A ballot (model ids, best first) of length k gives k(k-1)/2 pairwise wins:
//!   each model beats every model below it. Ballots with fewer than 2 models give none. The
//!   models are every id that appears in a ballot.
//! * **Fit.** Bradley-Terry, P(i beats j) = p_i / (p_i + p_j), fitted by Hunter's MM iterations
//!   `p_i <- W_i / sum_j N_ij / (p_i + p_j)` (Jacobi updates, then rescaled to geometric mean 1)
//!   until the largest relative change is below 1e-9 (at most 10,000 iterations). A weak prior,
//!   one virtual comparison split 0.5/0.5 between every pair of models, keeps every strength
//!   finite (a model that never lost or never won) and makes a disconnected comparison graph
//!   well defined; it is negligible once real comparisons number in the dozens.
//! * **Scale.** rating_i = 1000 + 400 log10(p_i) - mean over models of 400 log10(p) (Elo-like,
//!   mean 1000).
//! * **Bootstrap.** `rounds` resamples, each draws as many ballots as there are ballots with at
//!   least 2 models, uniformly with replacement, and refits (warm-started from the full fit). Round
//!   r uses its own xoshiro256++ generator seeded with splitmix64 from `seed ^ r * 0xD1B54A32D192ED03`;
//!   an index below n is `(next_u64() * n) >> 64` (128-bit product). Rounds are independent, so
//!   results do not depend on how many threads ran them. The interval is the percentile interval:
//!   quantiles (1-c)/2 and (1+c)/2 of each model's bootstrap ratings, linear interpolation
//!   between order statistics (h = q ). With `rounds == 0`, low = high = rating.
//! * **Output.** Best first: rating descending, then model id ascending. `wins` counts the
//!   model's real pairwise wins, `comparisons` the real pairwise comparisons it took part in.

use std::collections::HashMap;

use crate::RankingError;

pub const PRIOR: f64 = 0.5;
pub const TOLERANCE: f64 = 1e-9;
pub const MAX_ITERATIONS: usize = 10_000;
pub const MAX_ROUNDS: usize = 1_000_000;
/// Distinct models a leaderboard accepts (the fit holds an n x n matrix per thread).
pub const MAX_MODELS: usize = 2_000;
/// Bootstrap ratings kept in memory (rounds x models), 160 MB of f64.
pub const MAX_SAMPLES: usize = 20_000_000;
const ROUND_MIX: u64 = 0xD1B5_4A32_D192_ED03;

#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    pub model: String,
    pub rating: f64,
    pub low: f64,
    pub high: f64,
    pub wins: f64,
    pub comparisons: u64,
}

/// splitmix64 step.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256++ (Blackman & Vigna).
pub struct Xoshiro256pp {
    s: [u64; 4],
}

impl Xoshiro256pp {
    pub fn from_seed(seed: u64) -> Self {
        let mut sm = seed;
        Xoshiro256pp { s: [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)] }
    }

    /// The generator of bootstrap round `round`.
    pub fn for_round(seed: u64, round: u64) -> Self {
        Self::from_seed(seed ^ round.wrapping_mul(ROUND_MIX))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform-enough index below `n` (multiply-shift; bias below n / 2^64).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Ballots reduced to distinct shapes: the fit only needs how often each shape was drawn.
struct Data {
    models: Vec<String>,
    /// pairwise (winner, loser) of each distinct ballot shape
    shapes: Vec<Vec<(u32, u32)>>,
    /// shape of each informative ballot (>= 2 models)
    ballot_shape: Vec<u32>,
}

fn prepare<B: AsRef<[S]>, S: AsRef<str>>(ballots: &[B]) -> Result<Data, RankingError> {
    // Provisional ids in order of first appearance: a linear scan while there are few models
    // (the usual case), a hash map beyond.
    let mut seen: Vec<&str> = Vec::new();
    let mut map: HashMap<&str, u32> = HashMap::new();
    let mut flat: Vec<u32> = Vec::with_capacity(ballots.len() * 4);
    let mut ends: Vec<usize> = Vec::with_capacity(ballots.len());
    for ballot in ballots {
        for m in ballot.as_ref() {
            let m = m.as_ref();
            let id = if seen.len() <= 16 {
                seen.iter().position(|x| *x == m).map(|i| i as u32)
            } else {
                map.get(m).copied()
            };
            let id = id.unwrap_or_else(|| {
                seen.push(m);
                let id = (seen.len() - 1) as u32;
                if seen.len() == 17 {
                    map.extend(seen.iter().enumerate().map(|(i, x)| (*x, i as u32)));
                } else if seen.len() > 17 {
                    map.insert(m, id);
                }
                id
            });
            flat.push(id);
        }
        ends.push(flat.len());
    }
    // Final ids in name order, so that every later step is independent of ballot order.
    let mut order: Vec<u32> = (0..seen.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| seen[a as usize].cmp(seen[b as usize]));
    let mut remap = vec![0u32; seen.len()];
    for (rank, &prov) in order.iter().enumerate() {
        remap[prov as usize] = rank as u32;
    }
    flat.iter_mut().for_each(|id| *id = remap[*id as usize]);
    let models: Vec<String> = order.iter().map(|&i| seen[i as usize].to_string()).collect();

    let mut shape_of: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut shapes: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut ballot_shape = Vec::new();
    let mut start = 0;
    for (k, &end) in ends.iter().enumerate() {
        let ids = &flat[start..end];
        start = end;
        for (a, id) in ids.iter().enumerate() {
            if ids[a + 1..].contains(id) {
                return Err(RankingError::value(format!("ballot {k} names model {:?} twice", models[*id as usize])));
            }
        }
        if ids.len() < 2 {
            continue;
        }
        let shape = match shape_of.get(ids) {
            Some(&shape) => shape,
            None => {
                let mut pairs = Vec::with_capacity(ids.len() * (ids.len() - 1) / 2);
                for (a, &w) in ids.iter().enumerate() {
                    for &l in &ids[a + 1..] {
                        pairs.push((w, l));
                    }
                }
                shapes.push(pairs);
                let shape = (shapes.len() - 1) as u32;
                shape_of.insert(ids.to_vec(), shape);
                shape
            }
        };
        ballot_shape.push(shape);
    }
    Ok(Data { models, shapes, ballot_shape })
}

/// Win matrix (row-major, wins[w * n + l]) of shapes drawn `counts` times.
fn win_matrix(data: &Data, counts: &[u64], wins: &mut [f64]) {
    let n = data.models.len();
    wins.iter_mut().for_each(|w| *w = 0.0);
    for (shape, &c) in data.shapes.iter().zip(counts) {
        if c == 0 {
            continue;
        }
        let c = c as f64;
        for &(w, l) in shape {
            wins[w as usize * n + l as usize] += c;
        }
    }
}

/// Bradley-Terry MM fit with the prior; `p` holds the start and receives the result.
pub fn fit_bradley_terry(wins: &[f64], n: usize, p: &mut [f64]) {
    if n < 2 {
        p.iter_mut().for_each(|x| *x = 1.0);
        return;
    }
    let mut total = vec![0f64; n];
    let mut games = vec![0f64; n * n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                total[i] += wins[i * n + j] + PRIOR;
                games[i * n + j] = wins[i * n + j] + wins[j * n + i] + 2.0 * PRIOR;
            }
        }
    }
    let mut next = vec![0f64; n];
    for _ in 0..MAX_ITERATIONS {
        for i in 0..n {
            let mut d = 0.0;
            for j in 0..n {
                if i != j {
                    d += games[i * n + j] / (p[i] + p[j]);
                }
            }
            next[i] = total[i] / d;
        }
        let log_mean = next.iter().map(|x| x.ln()).sum::<f64>() / n as f64;
        let scale = (-log_mean).exp();
        let mut change = 0f64;
        for i in 0..n {
            let v = next[i] * scale;
            change = change.max((v / p[i] - 1.0).abs());
            p[i] = v;
        }
        if change < TOLERANCE {
            break;
        }
    }
}

/// Elo-like ratings of strengths, mean 1000.
pub fn ratings_of(p: &[f64]) -> Vec<f64> {
    let logs: Vec<f64> = p.iter().map(|x| 400.0 * x.log10()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len().max(1) as f64;
    logs.iter().map(|l| 1000.0 + l - mean).collect()
}

/// Quantile of sorted values, linear interpolation (h = q (len-1)).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = q * (sorted.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn bootstrap_rounds(data: &Data, start: &[f64], seed: u64, rounds: std::ops::Range<usize>, out: &mut [f64]) {
    let n = data.models.len();
    let total = data.ballot_shape.len() as u64;
    let mut counts = vec![0u64; data.shapes.len()];
    let mut wins = vec![0f64; n * n];
    let mut p = vec![1f64; n];
    for (slot, r) in rounds.enumerate() {
        counts.iter_mut().for_each(|c| *c = 0);
        let mut rng = Xoshiro256pp::for_round(seed, r as u64);
        if data.shapes.len() == 1 {
            counts[0] = total;
        } else {
            for _ in 0..total {
                counts[data.ballot_shape[rng.below(total) as usize] as usize] += 1;
            }
        }
        win_matrix(data, &counts, &mut wins);
        p.copy_from_slice(start);
        fit_bradley_terry(&wins, n, &mut p);
        out[slot * n..(slot + 1) * n].copy_from_slice(&ratings_of(&p));
    }
}

/// Ratings of every model in `ballots` (model ids, best first), best first.
pub fn leaderboard<B: AsRef<[S]> + Sync, S: AsRef<str> + Sync>(
    ballots: &[B],
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
) -> Result<Vec<Rating>, RankingError> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(RankingError::value(format!("confidence must be strictly between 0 and 1, got {confidence}")));
    }
    if rounds > MAX_ROUNDS {
        return Err(RankingError::value(format!("rounds must be at most {MAX_ROUNDS}, got {rounds}")));
    }
    let data = prepare(ballots)?;
    let n = data.models.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    if n > MAX_MODELS {
        return Err(RankingError::value(format!(
            "the ballots name {n} models; a leaderboard takes at most {MAX_MODELS}"
        )));
    }
    if rounds.saturating_mul(n) > MAX_SAMPLES {
        return Err(RankingError::value(format!(
            "rounds x models = {rounds} x {n} exceeds {MAX_SAMPLES}: use fewer bootstrap rounds"
        )));
    }
    let mut counts = vec![0u64; data.shapes.len()];
    for &s in &data.ballot_shape {
        counts[s as usize] += 1;
    }
    let mut wins = vec![0f64; n * n];
    win_matrix(&data, &counts, &mut wins);
    let mut p = vec![1f64; n];
    fit_bradley_terry(&wins, n, &mut p);
    let point = ratings_of(&p);

    let mut samples = vec![0f64; rounds * n];
    if rounds > 0 {
        let threads = threads.clamp(1, 64).min(rounds.div_ceil(8)).max(1);
        if threads == 1 {
            bootstrap_rounds(&data, &p, seed, 0..rounds, &mut samples);
        } else {
            let per = rounds.div_ceil(threads);
            std::thread::scope(|scope| {
                for (t, chunk) in samples.chunks_mut(per * n).enumerate() {
                    let (data, p) = (&data, &p);
                    let start = t * per;
                    let end = start + chunk.len() / n;
                    scope.spawn(move || bootstrap_rounds(data, p, seed, start..end, chunk));
                }
            });
        }
    }
    let lo_q = (1.0 - confidence) / 2.0;
    let hi_q = (1.0 + confidence) / 2.0;
    let mut out = Vec::with_capacity(n);
    let mut column = vec![0f64; rounds];
    for i in 0..n {
        let (low, high) = if rounds == 0 {
            (point[i], point[i])
        } else {
            for r in 0..rounds {
                column[r] = samples[r * n + i];
            }
            column.sort_by(f64::total_cmp);
            (quantile(&column, lo_q), quantile(&column, hi_q))
        };
        let won: f64 = (0..n).map(|j| wins[i * n + j]).sum();
        let played: f64 = (0..n).map(|j| wins[i * n + j] + wins[j * n + i]).sum();
        out.push(Rating {
            model: data.models[i].clone(),
            rating: point[i],
            low,
            high,
            wins: won,
            comparisons: played as u64,
        });
    }
    out.sort_by(|a, b| b.rating.total_cmp(&a.rating).then_with(|| a.model.cmp(&b.model)));
    Ok(out)
}

/// Threads worth using on this machine.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stronger_model_rates_higher() {
        let mut ballots = Vec::new();
        for i in 0..300 {
            ballots.push(if i % 4 == 0 { vec!["b", "a", "c"] } else { vec!["a", "b", "c"] });
        }
        let r = leaderboard(&ballots, 200, 7, 0.95, 2).unwrap();
        let names: Vec<&str> = r.iter().map(|x| x.model.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        for x in &r {
            assert!(x.low <= x.rating + 1e-9 && x.rating <= x.high + 1e-9, "{x:?}");
        }
        let mean = r.iter().map(|x| x.rating).sum::<f64>() / 3.0;
        assert!((mean - 1000.0).abs() < 1e-9);
        assert_eq!(r[0].comparisons, 600);
    }

    #[test]
    fn threads_do_not_change_results() {
        let ballots: Vec<Vec<String>> = (0..200)
            .map(|i| {
                let mut b = vec!["x".to_string(), "y".to_string(), "z".to_string(), "w".to_string()];
                b.rotate_left(i % 3);
                b
            })
            .collect();
        let a = leaderboard(&ballots, 64, 3, 0.9, 1).unwrap();
        let b = leaderboard(&ballots, 64, 3, 0.9, 4).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(leaderboard::<Vec<&str>, &str>(&[], 10, 0, 0.95, 1).unwrap().is_empty());
        let r = leaderboard(&[vec!["solo"]], 10, 0, 0.95, 1).unwrap();
        assert_eq!(r[0].rating, 1000.0);
        assert!(leaderboard(&[vec!["a", "a"]], 10, 0, 0.95, 1).is_err());
        assert!(leaderboard(&[vec!["a", "b"]], 10, 0, 1.0, 1).is_err());
        let r = leaderboard(&[vec!["a", "b"]], 0, 0, 0.95, 1).unwrap();
        assert_eq!((r[0].low, r[0].high), (r[0].rating, r[0].rating));
    }

    #[test]
    fn rng_reference_values() {
        // splitmix64 from 0: published first outputs.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }
}
