//! Bradley-Terry ratings from the pairwise outcomes implied by ballots, with bootstrap intervals.
//!
//! Every ballot (best first) says its i-th candidate beat each later one. Strengths p are fitted
//! by the minorization-maximization iteration p_i ← W_i / Σ_j n_ij / (p_i + p_j), with a prior of
//! half a win each way between every pair (keeps undefeated or disconnected models finite). The
//! rating is 1000 + 400·log10(p_i) with the strengths' geometric mean fixed at 1, so ratings
//! average 1000 and 400 points mean 10:1 odds, as in Elo. Intervals resample ballots with
//! replacement (`rounds` times, seeded) and take percentiles. Identical ballots are grouped
//! first, so a round costs one random draw per ballot plus work per *distinct* ballot.

use std::collections::HashMap;

use crate::aggregate::pairwise_wins;

const PRIOR: f64 = 0.5;
const MAX_ITERATIONS: usize = 500;
const TOLERANCE: f64 = 1e-10;

#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    pub candidate: usize,
    pub rating: f64,
    pub low: f64,
    pub high: f64,
    pub wins: f64,
    pub comparisons: usize,
}

/// SplitMix64: tiny, fast and good enough for resampling.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (Lemire's multiply-shift; the bias is negligible for n ≪ 2^64).
    fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Ratings from a pairwise win matrix (`wins[a * n + b]` = times a beat b).
pub fn bradley_terry(wins: &[f64], n: usize) -> Vec<f64> {
    let mut p = vec![1.0f64; n];
    if n < 2 {
        return vec![1000.0; n];
    }
    let total_wins: Vec<f64> = (0..n)
        .map(|i| (0..n).filter(|&j| j != i).map(|j| wins[i * n + j] + PRIOR).sum())
        .collect();
    for _ in 0..MAX_ITERATIONS {
        let mut next = vec![0.0f64; n];
        for i in 0..n {
            let mut denominator = 0.0;
            for j in 0..n {
                if i != j {
                    let games = wins[i * n + j] + wins[j * n + i] + 2.0 * PRIOR;
                    denominator += games / (p[i] + p[j]);
                }
            }
            next[i] = total_wins[i] / denominator;
        }
        let log_mean = next.iter().map(|x| x.ln()).sum::<f64>() / n as f64;
        let scale = (-log_mean).exp();
        let mut change = 0.0f64;
        for i in 0..n {
            let value = next[i] * scale;
            change = change.max((value - p[i]).abs() / p[i]);
            p[i] = value;
        }
        if change < TOLERANCE {
            break;
        }
    }
    p.iter().map(|x| 1000.0 + 400.0 * x.log10()).collect()
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let position = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (position.floor() as usize, position.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (position - lo as f64)
}

pub fn leaderboard(ballots: &[Vec<usize>], n: usize, rounds: usize, seed: u64, confidence: f64) -> Vec<Rating> {
    let wins = pairwise_wins(ballots, n);
    let point = bradley_terry(&wins, n);

    // Group identical ballots: resampling then touches each distinct ballot once per round.
    let mut distinct: HashMap<&[usize], usize> = HashMap::new();
    let mut kinds: Vec<&[usize]> = Vec::new();
    let ballot_kind: Vec<usize> = ballots
        .iter()
        .map(|b| {
            *distinct.entry(b.as_slice()).or_insert_with(|| {
                kinds.push(b.as_slice());
                kinds.len() - 1
            })
        })
        .collect();
    let kind_pairs: Vec<Vec<(usize, usize)>> = kinds
        .iter()
        .map(|b| {
            let mut pairs = Vec::new();
            for (i, &a) in b.iter().enumerate() {
                for &c in &b[i + 1..] {
                    pairs.push((a, c));
                }
            }
            pairs
        })
        .collect();

    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); n];
    let mut rng = Rng(seed ^ 0x5EED_C0DE_1234_5678);
    let mut counts = vec![0u32; kinds.len()];
    let mut resampled = vec![0.0f64; n * n];
    if !ballots.is_empty() {
        for _ in 0..rounds {
            counts.iter_mut().for_each(|c| *c = 0);
            for _ in 0..ballots.len() {
                counts[ballot_kind[rng.below(ballots.len())]] += 1;
            }
            resampled.iter_mut().for_each(|w| *w = 0.0);
            for (kind, &count) in counts.iter().enumerate() {
                if count > 0 {
                    for &(a, b) in &kind_pairs[kind] {
                        resampled[a * n + b] += count as f64;
                    }
                }
            }
            for (i, rating) in bradley_terry(&resampled, n).into_iter().enumerate() {
                samples[i].push(rating);
            }
        }
    }
    let tail = (1.0 - confidence) / 2.0;
    let mut ratings: Vec<Rating> = (0..n)
        .map(|i| {
            let mut s = std::mem::take(&mut samples[i]);
            s.sort_by(|a, b| a.total_cmp(b));
            let (low, high) = if s.is_empty() { (point[i], point[i]) } else { (percentile(&s, tail), percentile(&s, 1.0 - tail)) };
            let won: f64 = (0..n).filter(|&j| j != i).map(|j| wins[i * n + j]).sum();
            let lost: f64 = (0..n).filter(|&j| j != i).map(|j| wins[j * n + i]).sum();
            Rating { candidate: i, rating: point[i], low: low.min(point[i]), high: high.max(point[i]), wins: won, comparisons: (won + lost) as usize }
        })
        .collect();
    ratings.sort_by(|a, b| b.rating.total_cmp(&a.rating).then(a.candidate.cmp(&b.candidate)));
    ratings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stronger_models_rate_higher() {
        let mut ballots = Vec::new();
        for _ in 0..50 {
            ballots.push(vec![0, 1, 2]);
            ballots.push(vec![1, 0, 2]);
            ballots.push(vec![0, 2, 1]);
        }
        let ratings = leaderboard(&ballots, 3, 200, 1, 0.95);
        assert_eq!(ratings.iter().map(|r| r.candidate).collect::<Vec<_>>(), vec![0, 1, 2]);
        for r in &ratings {
            assert!(r.low <= r.rating && r.rating <= r.high);
        }
        let mean: f64 = ratings.iter().map(|r| r.rating).sum::<f64>() / 3.0;
        assert!((mean - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn same_seed_same_intervals() {
        let ballots = vec![vec![0, 1], vec![1, 0], vec![0, 1]];
        assert_eq!(leaderboard(&ballots, 2, 100, 7, 0.95), leaderboard(&ballots, 2, 100, 7, 0.95));
    }
}
