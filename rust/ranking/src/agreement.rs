//! Kendall's coefficient of concordance W, with the correction for ties.
//!
//! Candidates missing from a ballot share the mean of the remaining positions (a tie at the
//! bottom). W = 12 S / (m² (n³ − n) − m Σ T), with S the sum of squared deviations of the rank
//! sums and T = Σ (t³ − t) over each ballot's tie groups. 1 means identical ballots, values near
//! 0 mean no agreement. `None` when fewer than two ballots or candidates, or when every ballot
//! ties everything.

pub fn kendall_w(ballots: &[Vec<usize>], n: usize) -> Option<f64> {
    let m = ballots.len();
    if m < 2 || n < 2 {
        return None;
    }
    let mut rank_sums = vec![0.0f64; n];
    let mut tie_sum = 0.0f64;
    let mut ranked = vec![false; n];
    for ballot in ballots {
        ranked.iter_mut().for_each(|r| *r = false);
        for (p, &c) in ballot.iter().enumerate() {
            rank_sums[c] += (p + 1) as f64;
            ranked[c] = true;
        }
        let k = ballot.len();
        let missing = n - k;
        if missing > 0 {
            let shared = (k + 1 + n) as f64 / 2.0;
            for c in 0..n {
                if !ranked[c] {
                    rank_sums[c] += shared;
                }
            }
            let t = missing as f64;
            tie_sum += t * t * t - t;
        }
    }
    let (mf, nf) = (m as f64, n as f64);
    let mean = rank_sums.iter().sum::<f64>() / nf;
    let s: f64 = rank_sums.iter().map(|r| (r - mean).powi(2)).sum();
    let denominator = mf * mf * (nf * nf * nf - nf) - mf * tie_sum;
    if denominator <= 1e-12 {
        return None;
    }
    Some((12.0 * s / denominator).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_ballots_agree_fully() {
        let w = kendall_w(&[vec![0, 1, 2], vec![0, 1, 2], vec![0, 1, 2]], 3).unwrap();
        assert!((w - 1.0).abs() < 1e-12);
    }

    #[test]
    fn opposite_ballots_do_not_agree() {
        let w = kendall_w(&[vec![0, 1, 2], vec![2, 1, 0]], 3).unwrap();
        assert!(w.abs() < 1e-12);
    }

    #[test]
    fn too_few_ballots() {
        assert_eq!(kendall_w(&[vec![0, 1]], 2), None);
    }
}
