//! Aggregation of ballots into one ranking of candidates.
//!
//! A ballot lists candidate indices best first; it may be partial (reviewers do not rank their
//! own answer, and some ballots parse only in part). Repeats and out-of-range indices are the
//! caller's to reject (see `lib.rs`). Per candidate:
//! - `average_rank`: mean 1-based position over the ballots that rank it (the classic figure).
//! - `borda`: on a ballot of length m, position p earns m - p points; unranked earns nothing.
//! - `copeland`: over every other candidate, 1 for a pairwise majority win, 0.5 for a tie
//!   (including no ballot comparing the two), 0 for a loss. A pair counts on a ballot only when
//!   both are ranked on it.
//! - `rankings_count` (votes) and `first_place_votes`.
//! Final order: average rank ascending (never-ranked last), then Borda, Copeland and first-place
//! votes descending, then the candidate index ascending (the caller passes candidates sorted by
//! name, so ties break alphabetically and deterministically).

#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    pub candidate: usize,
    pub position: usize,
    pub average_rank: Option<f64>,
    pub rankings_count: usize,
    pub borda: f64,
    pub copeland: f64,
    pub first_place_votes: usize,
}

pub fn pairwise_wins(ballots: &[Vec<usize>], n: usize) -> Vec<f64> {
    let mut wins = vec![0.0; n * n];
    for ballot in ballots {
        for (i, &a) in ballot.iter().enumerate() {
            for &b in &ballot[i + 1..] {
                wins[a * n + b] += 1.0;
            }
        }
    }
    wins
}

pub fn aggregate(ballots: &[Vec<usize>], n: usize) -> Vec<Score> {
    let mut rank_sum = vec![0.0f64; n];
    let mut counts = vec![0usize; n];
    let mut borda = vec![0.0f64; n];
    let mut firsts = vec![0usize; n];
    for ballot in ballots {
        let m = ballot.len();
        for (p, &c) in ballot.iter().enumerate() {
            rank_sum[c] += (p + 1) as f64;
            counts[c] += 1;
            borda[c] += (m - 1 - p) as f64;
        }
        if let Some(&first) = ballot.first() {
            firsts[first] += 1;
        }
    }
    let wins = pairwise_wins(ballots, n);
    let mut scores: Vec<Score> = (0..n)
        .map(|c| {
            let copeland = (0..n)
                .filter(|&o| o != c)
                .map(|o| {
                    let (w, l) = (wins[c * n + o], wins[o * n + c]);
                    if w > l {
                        1.0
                    } else if w == l {
                        0.5
                    } else {
                        0.0
                    }
                })
                .sum();
            Score {
                candidate: c,
                position: 0,
                average_rank: if counts[c] > 0 { Some(rank_sum[c] / counts[c] as f64) } else { None },
                rankings_count: counts[c],
                borda: borda[c],
                copeland,
                first_place_votes: firsts[c],
            }
        })
        .collect();
    scores.sort_by(|a, b| {
        let rank = |s: &Score| s.average_rank.unwrap_or(f64::INFINITY);
        rank(a)
            .total_cmp(&rank(b))
            .then(b.borda.total_cmp(&a.borda))
            .then(b.copeland.total_cmp(&a.copeland))
            .then(b.first_place_votes.cmp(&a.first_place_votes))
            .then(a.candidate.cmp(&b.candidate))
    });
    for (i, score) in scores.iter_mut().enumerate() {
        score.position = i + 1;
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_four_judges_example() {
        // True order W(0) > X(1) > Y(2) > Z(3); each judge ranks the other three.
        let ballots = vec![vec![1, 2, 3], vec![0, 2, 3], vec![0, 1, 3], vec![0, 1, 2]];
        let scores = aggregate(&ballots, 4);
        let means: Vec<f64> = scores.iter().map(|s| (s.average_rank.unwrap() * 100.0).round() / 100.0).collect();
        assert_eq!(means, vec![1.0, 1.67, 2.33, 3.0]);
        assert_eq!(scores.iter().map(|s| s.candidate).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(scores[0].copeland, 3.0);
        assert_eq!(scores[0].first_place_votes, 3);
    }

    #[test]
    fn unranked_candidates_come_last() {
        let scores = aggregate(&[vec![1, 0]], 3);
        assert_eq!(scores[2].candidate, 2);
        assert_eq!(scores[2].average_rank, None);
    }
}
