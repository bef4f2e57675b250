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
//! * **Counted ballots.** [`leaderboard_counted`] takes distinct ballots with how often each was
//!   cast (what storage keeps as running totals, so a large history is never read ballot by
//!   ballot). The point fit is the same as for the expanded list. Its bootstrap draws, per round,
//!   how many times each distinct ballot is drawn among `total` draws (the multinomial the
//!   per-ballot draws above amount to) by conditional binomials in ballot order; a binomial with
//!   mean below 200 (or above n - 200) is drawn exactly by inversion, a larger one by its normal
//!   approximation rounded to the nearest count (variance >= ~200: skew below 0.07, far under the
//!   bootstrap's own noise). Each round costs O(distinct ballots), not O(ballots); the intervals
//!   are statistically equivalent to the per-ballot bootstrap, not bit-identical.
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
    /// shape of each informative ballot (>= 2 models); empty for counted ballots
    ballot_shape: Vec<u32>,
    /// how many informative ballots have each shape
    shape_counts: Vec<u64>,
}

fn prepare<B: AsRef<[S]>, S: AsRef<str>>(ballots: &[B]) -> Result<Data, RankingError> {
    prepare_counted(ballots, None)
}

/// Distinct shapes of `ballots`, each cast `weights[k]` times (once each without weights).
fn prepare_counted<B: AsRef<[S]>, S: AsRef<str>>(ballots: &[B], weights: Option<&[u64]>) -> Result<Data, RankingError> {
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
    let mut shape_counts: Vec<u64> = Vec::new();
    let mut start = 0;
    for (k, &end) in ends.iter().enumerate() {
        let ids = &flat[start..end];
        start = end;
        for (a, id) in ids.iter().enumerate() {
            if ids[a + 1..].contains(id) {
                return Err(RankingError::value(format!("ballot {k} names model {:?} twice", models[*id as usize])));
            }
        }
        let weight = weights.map_or(1, |w| w[k]);
        if ids.len() < 2 || weight == 0 {
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
                shape_counts.push(0);
                let shape = (shapes.len() - 1) as u32;
                shape_of.insert(ids.to_vec(), shape);
                shape
            }
        };
        shape_counts[shape as usize] += weight;
        if weights.is_none() {
            ballot_shape.push(shape);
        }
    }
    Ok(Data { models, shapes, ballot_shape, shape_counts })
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
    let total: u64 = data.shape_counts.iter().sum();
    let counted = data.ballot_shape.is_empty();
    let mut counts = vec![0u64; data.shapes.len()];
    let mut wins = vec![0f64; n * n];
    let mut p = vec![1f64; n];
    for (slot, r) in rounds.enumerate() {
        counts.iter_mut().for_each(|c| *c = 0);
        let mut rng = Xoshiro256pp::for_round(seed, r as u64);
        if data.shapes.len() == 1 {
            counts[0] = total;
        } else if counted {
            multinomial(&mut rng, total, &data.shape_counts, &mut counts);
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

/// Below this mean (on the smaller side) a binomial is drawn exactly by inversion.
const EXACT_BINOMIAL_MEAN: f64 = 200.0;

/// `out[k]` = how often category k (weight `weights[k]`) is drawn in `total` draws with
/// replacement: conditional binomials, category by category.
fn multinomial(rng: &mut Xoshiro256pp, total: u64, weights: &[u64], out: &mut [u64]) {
    let mut left = total;
    let mut mass: u64 = weights.iter().sum();
    for (k, &w) in weights.iter().enumerate() {
        if left == 0 || mass == 0 {
            out[k] = 0;
            continue;
        }
        let x = if w >= mass { left } else { binomial(rng, left, w as f64 / mass as f64) };
        out[k] = x;
        left -= x;
        mass -= w;
    }
}

/// Uniform in (0, 1) from the top 53 bits.
#[inline]
fn unit(rng: &mut Xoshiro256pp) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// Binomial(n, p): inversion when the mean on the smaller side is small, else the rounded
/// normal approximation (see the module notes).
fn binomial(rng: &mut Xoshiro256pp, n: u64, p: f64) -> u64 {
    if p <= 0.0 || n == 0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    if p > 0.5 {
        return n - binomial(rng, n, 1.0 - p);
    }
    let mean = n as f64 * p;
    if mean < EXACT_BINOMIAL_MEAN {
        // Inversion: walk the pmf from 0 with its ratio recurrence; (1-p)^n >= e^-400 here.
        let q = 1.0 - p;
        let ratio = p / q;
        let mut pmf = (n as f64 * q.ln()).exp();
        let mut u = unit(rng);
        let mut x = 0u64;
        while u > pmf && x < n {
            u -= pmf;
            pmf *= ratio * (n - x) as f64 / (x + 1) as f64;
            x += 1;
            if pmf <= 0.0 {
                break;
            }
        }
        return x;
    }
    // Box-Muller (one of the pair is enough here).
    let z = (-2.0 * unit(rng).ln()).sqrt() * (std::f64::consts::TAU * unit(rng)).cos();
    let x = (mean + z * (mean * (1.0 - p)).sqrt()).round();
    x.clamp(0.0, n as f64) as u64
}

/// Ratings of every model in `ballots` (model ids, best first), best first.
pub fn leaderboard<B: AsRef<[S]> + Sync, S: AsRef<str> + Sync>(
    ballots: &[B],
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
) -> Result<Vec<Rating>, RankingError> {
    check_arguments(rounds, confidence)?;
    fit_and_bootstrap(prepare(ballots)?, rounds, seed, confidence, threads)
}

/// Ratings of the distinct `ballots`, ballot k cast `counts[k]` times, best first (see the
/// module notes on how its bootstrap draws).
pub fn leaderboard_counted<B: AsRef<[S]> + Sync, S: AsRef<str> + Sync>(
    ballots: &[B],
    counts: &[u64],
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
) -> Result<Vec<Rating>, RankingError> {
    check_arguments(rounds, confidence)?;
    if counts.len() != ballots.len() {
        return Err(RankingError::value(format!("{} ballots but {} counts", ballots.len(), counts.len())));
    }
    fit_and_bootstrap(prepare_counted(ballots, Some(counts))?, rounds, seed, confidence, threads)
}

fn check_arguments(rounds: usize, confidence: f64) -> Result<(), RankingError> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(RankingError::value(format!("confidence must be strictly between 0 and 1, got {confidence}")));
    }
    if rounds > MAX_ROUNDS {
        return Err(RankingError::value(format!("rounds must be at most {MAX_ROUNDS}, got {rounds}")));
    }
    Ok(())
}

fn fit_and_bootstrap(
    data: Data,
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
) -> Result<Vec<Rating>, RankingError> {
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
    let mut wins = vec![0f64; n * n];
    win_matrix(&data, &data.shape_counts, &mut wins);
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
    fn counted_ballots_fit_like_the_expanded_list() {
        let distinct = [vec!["a", "b", "c"], vec!["b", "a", "c"], vec!["c", "a"], vec!["solo"]];
        let counts = [600u64, 200, 100, 7];
        let mut expanded = Vec::new();
        for (b, &c) in distinct.iter().zip(&counts) {
            expanded.extend(std::iter::repeat_n(b.clone(), c as usize));
        }
        let full = leaderboard(&expanded, 400, 1, 0.95, 2).unwrap();
        let counted = leaderboard_counted(&distinct, &counts, 400, 1, 0.95, 2).unwrap();
        for (f, c) in full.iter().zip(&counted) {
            assert_eq!((&f.model, f.rating, f.wins, f.comparisons), (&c.model, c.rating, c.wins, c.comparisons));
            // Same bootstrap distribution, other draws: the interval widths agree closely.
            let (wf, wc) = (f.high - f.low, c.high - c.low);
            assert!((wf - wc).abs() < 0.2 * wf, "{f:?} vs {c:?}");
        }
        assert!(leaderboard_counted(&distinct, &counts[..2], 10, 0, 0.95, 1).is_err());
    }

    #[test]
    fn binomial_draws_have_the_right_mean_and_variance() {
        let mut rng = Xoshiro256pp::from_seed(11);
        for &(n, p) in &[(50u64, 0.3), (100_000u64, 0.25), (1_000u64, 0.9), (7u64, 0.5)] {
            let draws: Vec<f64> = (0..20_000).map(|_| binomial(&mut rng, n, p) as f64).collect();
            let mean = draws.iter().sum::<f64>() / draws.len() as f64;
            let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
            let (m, v) = (n as f64 * p, n as f64 * p * (1.0 - p));
            assert!((mean - m).abs() < 5.0 * (v / 20_000.0).sqrt() + 1e-9, "n={n} p={p} mean {mean}");
            assert!((var / v - 1.0).abs() < 0.06, "n={n} p={p} var {var} vs {v}");
            assert!(draws.iter().all(|&x| x >= 0.0 && x <= n as f64));
        }
        let mut out = [0u64; 3];
        multinomial(&mut rng, 1000, &[1, 0, 3], &mut out);
        assert_eq!(out.iter().sum::<u64>(), 1000);
        assert_eq!(out[1], 0);
    }

    #[test]
    fn rng_reference_values() {
        // splitmix64 from 0: published first outputs.
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }
}
