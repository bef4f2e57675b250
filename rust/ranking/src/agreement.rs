//! Agreement between reviewers: Kendall's coefficient of concordance W for incomplete rankings.
//!
//! A reviewer ranks only what it was shown (with `exclude_self_review` never its own answer, and
//! in a degraded council only the answers that arrived), and a ballot may stop early. Each ballot
//! is therefore an *incomplete block*: it orders the items it ranked, best first, and places them
//! above the items it was shown but left out (those are tied among themselves); items it was not
//! shown are missing, not tied last. Counting a missing item as tied last (the textbook
//! tie-corrected W over all candidates) reads self-exclusion as disagreement: three reviewers
//! whose ballots all follow alpha > beta > gamma, each without its own answer, get W = 0.11.
//!
//! The measure is Kendall's W for incomplete blocks (Durbin's statistic as a coefficient),
//! normalised for any design. With d_b(i) the centred mid-rank of item i in block b (its rank
//! minus the block's mean rank; 0 when b does not hold i), D_i = sum_b d_b(i) and S = sum_i D_i^2.
//! Written with pairs, D_i = (losses_i - wins_i) / 2 over the strict pairs of every block. S* is
//! the S the same blocks would give if every one of them followed a single reference order, every
//! strict pair of a block kept strict and every tie kept a tie:
//!
//! ```text
//! W = min(1, S / S*)
//! ```
//!
//! The reference order follows the pairwise majorities of the ballots (a topological order of the
//! "beats" relation, taking the smallest rank sum D first among the candidates no remaining one
//! beats, then the first candidate; on a cycle, the remaining candidate of smallest D).
//!
//! * Ballots that fit one order give W = 1 (that order is the reference, so S = S*); ballots that
//!   cancel out give 0.
//! * Complete ballots without ties: S* = m^2 (n^3 - n) / 12 whatever the order, the classic W.
//!   Balanced incomplete blocks (each pair compared equally often, as self-exclusion makes them):
//!   S* = lambda^2 (n^3 - n) / 12, Durbin's coefficient of concordance. Three self-excluded
//!   ballots that follow one order give 1, three that form a cycle give 0.
//! * In those designs S <= S*. In an unbalanced one (some pairs compared more often than others)
//!   contradicting ballots can make S exceed S*, hence the bound at 1.
//!
//! Sums are kept doubled as integers, so the result does not depend on the order of the ballots.
//! `None` when fewer than 2 ballots order any pair (a ballot of one item, or of nothing, says
//! nothing about agreement), fewer than 2 candidates, or S* = 0.
//!
//! One ballot against a reference order (a reviewer against the council's aggregate): Kendall's
//! tau-a over the items both rank, (concordant - discordant) / pairs, in [-1, 1]; `None` when
//! fewer than 2 items are common.

use crate::aggregate::{ballot_indices, index_names};
use crate::RankingError;

/// Pairwise votes of a set of incomplete blocks.
struct Blocks {
    n: usize,
    /// `beats[i * n + j]`: blocks that place i above j
    beats: Vec<u32>,
    /// 2 D_i: losses minus wins of item i over the strict pairs of every block
    twice_d: Vec<i64>,
    /// ballots that order at least one pair
    informative: usize,
}

impl Blocks {
    fn new(ballots: &[Vec<usize>], shown: Option<&[Vec<usize>]>, n: usize) -> Self {
        let mut b = Blocks { n, beats: vec![0; n * n], twice_d: vec![0; n], informative: 0 };
        let mut ranked = vec![false; n];
        let mut tail = Vec::with_capacity(n);
        for (k, ballot) in ballots.iter().enumerate() {
            ranked.iter_mut().for_each(|r| *r = false);
            ballot.iter().for_each(|&c| ranked[c] = true);
            tail.clear();
            match shown.and_then(|s| s.get(k)) {
                Some(seen) => tail.extend(seen.iter().copied().filter(|&c| !ranked[c])),
                None => tail.extend((0..n).filter(|&c| !ranked[c])),
            }
            let mut any = false;
            for (p, &winner) in ballot.iter().enumerate() {
                for &loser in ballot[p + 1..].iter().chain(tail.iter()) {
                    b.twice_d[winner] -= 1;
                    b.twice_d[loser] += 1;
                    b.beats[winner * n + loser] += 1;
                    any = true;
                }
            }
            b.informative += usize::from(any);
        }
        b
    }

    fn majority(&self, i: usize, j: usize) -> bool {
        self.beats[i * self.n + j] > self.beats[j * self.n + i]
    }

    /// The reference order (see the module comment): each candidate's place in it.
    fn reference_places(&self) -> Vec<usize> {
        let n = self.n;
        // remaining candidates that beat each one
        let mut beaten_by: Vec<usize> = (0..n).map(|i| (0..n).filter(|&j| self.majority(j, i)).count()).collect();
        let mut place = vec![usize::MAX; n];
        for p in 0..n {
            let key = |&i: &usize| (self.twice_d[i], i);
            let remaining = (0..n).filter(|&i| place[i] == usize::MAX);
            let next = remaining.clone().filter(|&i| beaten_by[i] == 0).min_by_key(key);
            let Some(next) = next.or_else(|| remaining.min_by_key(key)) else { break };
            place[next] = p;
            for j in 0..n {
                if place[j] == usize::MAX && self.majority(next, j) {
                    beaten_by[j] -= 1;
                }
            }
        }
        place
    }
}

/// W over ballots of candidate indices (validated: `< n`, no repeats). `shown[k]`, when given,
/// holds every candidate ballot k was shown (its ranked ones included); without it a ballot was
/// shown every candidate.
pub fn kendall_w_indices(ballots: &[Vec<usize>], shown: Option<&[Vec<usize>]>, n: usize) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let b = Blocks::new(ballots, shown, n);
    if b.informative < 2 {
        return None;
    }
    let place = b.reference_places();
    let (mut s, mut s_star) = (0i128, 0i128);
    for i in 0..n {
        let mut star = 0i64;
        for j in 0..n {
            let strict = i64::from(b.beats[i * n + j]) + i64::from(b.beats[j * n + i]);
            star += if place[j] < place[i] { strict } else { -strict };
        }
        s += i128::from(b.twice_d[i]) * i128::from(b.twice_d[i]);
        s_star += i128::from(star) * i128::from(star);
    }
    if s_star == 0 {
        return None;
    }
    Some((s as f64 / s_star as f64).clamp(0.0, 1.0))
}

/// W over ballots of candidate names. Ballot entries must be candidates, without repeats.
pub fn kendall_w<B: AsRef<[S]>, S: AsRef<str>, C: AsRef<str>>(
    ballots: &[B],
    candidates: &[C],
) -> Result<Option<f64>, RankingError> {
    kendall_w_shown::<B, S, B, C>(ballots, None, candidates)
}

/// W over ballots of candidate names, `shown[k]` being the candidates ballot k was shown (one
/// entry per ballot; a ballot's ranked candidates must be among them).
pub fn kendall_w_shown<B: AsRef<[S]>, S: AsRef<str>, V: AsRef<[S]>, C: AsRef<str>>(
    ballots: &[B],
    shown: Option<&[V]>,
    candidates: &[C],
) -> Result<Option<f64>, RankingError> {
    let index = index_names(candidates, "candidate")?;
    let mut idx = Vec::with_capacity(ballots.len());
    for (k, ballot) in ballots.iter().enumerate() {
        idx.push(ballot_indices(ballot.as_ref(), &index, "candidate", &|| format!("ballot {k}"))?);
    }
    let Some(shown) = shown else { return Ok(kendall_w_indices(&idx, None, candidates.len())) };
    if shown.len() != ballots.len() {
        return Err(RankingError::value(format!("{} shown sets for {} ballots", shown.len(), ballots.len())));
    }
    let mut seen = Vec::with_capacity(shown.len());
    for (k, set) in shown.iter().enumerate() {
        let set = ballot_indices(set.as_ref(), &index, "candidate", &|| format!("shown set {k}"))?;
        if let Some(c) = idx[k].iter().find(|c| !set.contains(c)) {
            return Err(RankingError::value(format!(
                "ballot {k} ranks {:?}, which it was not shown",
                candidates[*c].as_ref()
            )));
        }
        seen.push(set);
    }
    Ok(kendall_w_indices(&idx, Some(&seen), candidates.len()))
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
        // Top choices agree, the rest is tied: nothing contradicts, agreement is perfect.
        let b = vec![vec!["a"], vec!["a"], vec!["a"]];
        assert_eq!(kendall_w(&b, &["a", "b", "c"]).unwrap(), Some(1.0));
        let b = vec![vec!["a"], vec!["a", "b", "c"]];
        assert_eq!(kendall_w(&b, &["a", "b", "c"]).unwrap(), Some(1.0));
    }

    #[test]
    fn self_excluded_ballots_that_follow_one_order_agree() {
        // alpha > beta > gamma, each reviewer without its own answer
        let candidates = ["alpha", "beta", "gamma"];
        let ballots = [vec!["beta", "gamma"], vec!["alpha", "gamma"], vec!["alpha", "beta"]];
        let shown = ballots.clone();
        assert_eq!(kendall_w_shown(&ballots, Some(&shown), &candidates).unwrap(), Some(1.0));
        // the same ballots read as complete ones (the unseen answer tied last) disagree
        let naive = kendall_w(&ballots, &candidates).unwrap().unwrap();
        assert!(naive < 0.9, "{naive}");
        // a cycle cancels out
        let cycle = [vec!["beta", "gamma"], vec!["gamma", "alpha"], vec!["alpha", "beta"]];
        assert_eq!(kendall_w_shown(&cycle, Some(&cycle), &candidates).unwrap(), Some(0.0));
        // one reversed ballot among four reviewers of four answers
        let c4 = ["a", "b", "c", "d"];
        let b4 = [vec!["b", "c", "d"], vec!["a", "c", "d"], vec!["a", "b", "d"], vec!["c", "b", "a"]];
        let w = kendall_w_shown(&b4, Some(&b4), &c4).unwrap().unwrap();
        assert!(0.0 < w && w < 0.9, "{w}");
    }

    #[test]
    fn a_ballot_of_one_item_says_nothing() {
        // a degraded council: each reviewer was shown the one other answer
        let ballots = [vec!["b"], vec!["a"]];
        assert_eq!(kendall_w_shown(&ballots, Some(&ballots), &["a", "b"]).unwrap(), None);
    }

    #[test]
    fn shown_sets_are_checked() {
        let ballots = [vec!["a", "b"], vec!["a"]];
        assert!(kendall_w_shown(&ballots, Some(&[vec!["a", "b"]][..]), &["a", "b"]).is_err());
        assert!(kendall_w_shown(&ballots, Some(&[vec!["a", "b"], vec!["b"]][..]), &["a", "b"]).is_err());
        assert!(kendall_w_shown(&ballots, Some(&[vec!["a", "b"], vec!["q"]][..]), &["a", "b"]).is_err());
    }

    #[test]
    fn complete_ballots_give_the_classic_w() {
        let candidates = ["a", "b", "c", "d"];
        let b = [vec!["a", "b", "c", "d"], vec!["b", "a", "c", "d"], vec!["a", "c", "b", "d"]];
        // rank sums 4, 6, 8, 12 (mean 7.5): S = 12.25 + 2.25 + 0.25 + 20.25 = 35; W = 12 S / (9 * 60)
        let w = kendall_w(&b, &candidates).unwrap().unwrap();
        assert!((w - 12.0 * 35.0 / 540.0).abs() < 1e-12, "{w}");
    }
}
