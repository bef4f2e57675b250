//! Agreement between reviewers: Kendall's coefficient of concordance W with tie correction.
//!
//! Each non-empty ballot ranks `n` candidates: the k ranked ones get positions 1..k, the n-k it
//! leaves out share the mean of the remaining positions, (k+1+n)/2 (a tie). With m such ballots,
//! R_i the sum of candidate i's ranks, S = sum_i (R_i - m(n+1)/2)^2 and T_j = sum over the tie
//! groups of ballot j of (t^3 - t):
//!
//! ```text
//! W = 12 S / (m^2 (n^3 - n) - m sum_j T_j)
//! ```
//!
//! W is 1 when all ballots agree and near 0 for unrelated ballots; it lies in [0, 1] (by
//! Cauchy-Schwarz) and is clamped there against rounding. Empty ballots carry no information and
//! are left out. `None` when fewer than 2 non-empty ballots or fewer than 2 candidates remain, or
//! when every ballot ties everything (zero denominator).
//!
//! One ballot against a reference order (a reviewer against the council's aggregate): Kendall's
//! tau-a over the items both rank, (concordant - discordant) / pairs, in [-1, 1]; `None` when
//! fewer than 2 items are common.

use crate::aggregate::{ballot_indices, index_names};
use crate::RankingError;

/// W over ballots of candidate indices (validated: `< n`, no repeats).
pub fn kendall_w_indices(ballots: &[Vec<usize>], n: usize) -> Option<f64> {
    let used: Vec<&Vec<usize>> = ballots.iter().filter(|b| !b.is_empty()).collect();
    let m = used.len();
    if m < 2 || n < 2 {
        return None;
    }
    let nf = n as f64;
    let mut sums = vec![0f64; n];
    let mut ties = 0f64;
    let mut ranked = vec![false; n];
    for ballot in &used {
        ranked.iter_mut().for_each(|r| *r = false);
        for (p, &c) in ballot.iter().enumerate() {
            sums[c] += (p + 1) as f64;
            ranked[c] = true;
        }
        let k = ballot.len();
        let t = (n - k) as f64;
        if n - k > 0 {
            let shared = (k as f64 + 1.0 + nf) / 2.0;
            for (c, r) in ranked.iter().enumerate() {
                if !r {
                    sums[c] += shared;
                }
            }
        }
        if n - k > 1 {
            ties += t * t * t - t;
        }
    }
    let mf = m as f64;
    let mean = mf * (nf + 1.0) / 2.0;
    let s: f64 = sums.iter().map(|r| (r - mean) * (r - mean)).sum();
    let denom = mf * mf * (nf * nf * nf - nf) - mf * ties;
    if denom <= 0.0 {
        return None;
    }
    Some((12.0 * s / denom).clamp(0.0, 1.0))
}

/// W over ballots of candidate names. Ballot entries must be candidates, without repeats.
pub fn kendall_w<B: AsRef<[S]>, S: AsRef<str>, C: AsRef<str>>(
    ballots: &[B],
    candidates: &[C],
) -> Result<Option<f64>, RankingError> {
    let index = index_names(candidates, "candidate")?;
    let mut idx = Vec::with_capacity(ballots.len());
    for (k, ballot) in ballots.iter().enumerate() {
        idx.push(ballot_indices(ballot.as_ref(), &index, "candidate", &|| format!("ballot {k}"))?);
    }
    Ok(kendall_w_indices(&idx, candidates.len()))
}

/// Kendall's tau-a of `ballot` against `reference` (both best first, no repeats) over their
/// common items.
pub fn kendall_tau<S: AsRef<str>, R: AsRef<str>>(ballot: &[S], reference: &[R]) -> Result<Option<f64>, RankingError> {
    let index = index_names(reference, "reference item")?;
    let mut places = Vec::with_capacity(ballot.len());
    for item in ballot {
        let item = item.as_ref();
        if let Some(i) = index.get(item) {
            if places.contains(&i) {
                return Err(RankingError::value(format!("the ballot names {item:?} twice")));
            }
            places.push(i);
        }
    }
    if places.len() < 2 {
        return Ok(None);
    }
    let (mut concordant, mut discordant) = (0i64, 0i64);
    for (k, &a) in places.iter().enumerate() {
        for &b in &places[k + 1..] {
            if a < b {
                concordant += 1;
            } else {
                discordant += 1;
            }
        }
    }
    Ok(Some((concordant - discordant) as f64 / (concordant + discordant) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_is_one() {
        let b = vec![vec!["a", "b", "c"]; 4];
        assert_eq!(kendall_w(&b, &["a", "b", "c"]).unwrap(), Some(1.0));
    }

    #[test]
    fn reversed_pair_is_zero() {
        let b = vec![vec!["a", "b", "c"], vec!["c", "b", "a"]];
        assert_eq!(kendall_w(&b, &["a", "b", "c"]).unwrap(), Some(0.0));
    }

    #[test]
    fn none_cases() {
        assert_eq!(kendall_w(&[vec!["a", "b"]], &["a", "b"]).unwrap(), None);
        assert_eq!(kendall_w(&[vec!["a"], vec!["a"]], &["a"]).unwrap(), None);
        let empty: Vec<Vec<&str>> = vec![vec![], vec![], vec!["a"]];
        assert_eq!(kendall_w(&empty, &["a", "b"]).unwrap(), None);
    }

    #[test]
    fn tau_against_a_reference() {
        let reference = ["a", "b", "c"];
        assert_eq!(kendall_tau(&["a", "b", "c"], &reference).unwrap(), Some(1.0));
        assert_eq!(kendall_tau(&["c", "b", "a"], &reference).unwrap(), Some(-1.0));
        assert_eq!(kendall_tau(&["b", "a", "c"], &reference).unwrap(), Some(1.0 / 3.0));
        // items the reference does not hold are ignored; fewer than 2 in common: None
        assert_eq!(kendall_tau(&["x", "c", "a"], &reference).unwrap(), Some(-1.0));
        assert_eq!(kendall_tau(&["a"], &reference).unwrap(), None);
        assert!(kendall_tau(&["a", "a"], &reference).is_err());
    }

    #[test]
    fn partial_ballots_agree() {
        // Top choices agree, the rest is tied: agreement is still perfect under tie correction.
        let b = vec![vec!["a"], vec!["a"], vec!["a"]];
        assert_eq!(kendall_w(&b, &["a", "b", "c"]).unwrap(), Some(1.0));
    }
}
