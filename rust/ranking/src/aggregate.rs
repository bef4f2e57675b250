//! Aggregation of ballots into one council ranking.
//!
//! For each candidate, over the ballots (best first) that rank it:
//! * `average_rank`: mean 1-based position (None when no ballot ranks it);
//! * `rankings_count`: number of ballots ranking it ("votes");
//! * `borda`: partial-ballot Borda, the sum over ballots of `m - p` for a candidate at 1-based
//!   position `p` on a ballot of length `m` (the last ranked gets 0, unranked candidates get 0);
//! * `copeland`: over every pair of candidates that at least one ballot ranks together, the
//!   candidate ranked above the other on more of those ballots gets 1 point, a tie gives each
//!   0.5; pairs no ballot ranks together give nothing;
//! * `first_place_votes`: ballots that put it first.
//!
//! Weighted votes: each ballot may carry a weight (finite, > 0; 1 when unweighted). Then
//! `average_rank` is the weighted mean position (sum of w * p over the sum of w), `borda` sums
//! w * (m - p), and Copeland's pairwise majorities compare the summed weights of the ballots
//! ranking one above the other. `rankings_count` and `first_place_votes` stay plain ballot counts.
//! With every weight 1 the results are exactly the unweighted ones.
//!
//! Final order (and 1-based `position`): average_rank ascending (None last), then borda
//! descending, copeland descending, first_place_votes descending, candidate name ascending
//! (byte order). Every tie is therefore broken deterministically and positions are 1..n.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::RankingError;

/// One candidate's scores; `candidate` indexes the candidate list given to [`aggregate_indices`].
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    pub candidate: usize,
    pub position: usize,
    pub average_rank: Option<f64>,
    pub rankings_count: u32,
    pub borda: f64,
    pub copeland: f64,
    pub first_place_votes: u32,
}

/// One candidate's scores by name.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateScore {
    pub candidate: String,
    pub position: usize,
    pub average_rank: Option<f64>,
    pub rankings_count: u32,
    pub borda: f64,
    pub copeland: f64,
    pub first_place_votes: u32,
}

/// Aggregate ballots of candidate indices (each `< names.len()`, no repeats: callers validate).
/// `names` only breaks the last ties.
pub fn aggregate_indices<B: AsRef<[usize]>, S: AsRef<str>>(ballots: &[B], names: &[S]) -> Vec<Score> {
    tally(ballots, |_| 1.0, names)
}

/// Weights must be one per ballot, finite and positive.
pub fn check_weights(weights: &[f64], ballots: usize) -> Result<(), RankingError> {
    if weights.len() != ballots {
        return Err(RankingError::value(format!("{} weights given for {ballots} ballots", weights.len())));
    }
    if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
        return Err(RankingError::value(format!("weight {w} is not a finite positive number")));
    }
    Ok(())
}

fn tally<B: AsRef<[usize]>, S: AsRef<str>>(ballots: &[B], weight: impl Fn(usize) -> f64, names: &[S]) -> Vec<Score> {
    let n = names.len();
    // one allocation for every counter: pos_sum, weight_sum, borda, then above[a * n + b]
    // (weight of the ballots ranking both a and b with a above b); counts in another
    let mut counters = vec![0f64; 3 * n + n * n];
    let (pos_sum, rest) = counters.split_at_mut(n);
    let (weight_sum, rest) = rest.split_at_mut(n);
    let (borda, above) = rest.split_at_mut(n);
    let mut counts = vec![0u32; 2 * n];
    let (count, first) = counts.split_at_mut(n);
    for (k, ballot) in ballots.iter().enumerate() {
        let ballot = ballot.as_ref();
        let w = weight(k);
        let m = ballot.len();
        for (p, &c) in ballot.iter().enumerate() {
            pos_sum[c] += w * (p + 1) as f64;
            weight_sum[c] += w;
            count[c] += 1;
            borda[c] += w * (m - 1 - p) as f64;
            if p == 0 {
                first[c] += 1;
            }
            for &d in &ballot[p + 1..] {
                above[c * n + d] += w;
            }
        }
    }
    let mut copeland = vec![0f64; n];
    for a in 0..n {
        for b in a + 1..n {
            let (ab, ba) = (above[a * n + b], above[b * n + a]);
            if ab + ba == 0.0 {
                continue;
            }
            match ab.total_cmp(&ba) {
                Ordering::Greater => copeland[a] += 1.0,
                Ordering::Less => copeland[b] += 1.0,
                Ordering::Equal => {
                    copeland[a] += 0.5;
                    copeland[b] += 0.5;
                }
            }
        }
    }
    let mut scores: Vec<Score> = (0..n)
        .map(|c| Score {
            candidate: c,
            position: 0,
            average_rank: (count[c] > 0).then(|| pos_sum[c] / weight_sum[c]),
            rankings_count: count[c],
            borda: borda[c],
            copeland: copeland[c],
            first_place_votes: first[c],
        })
        .collect();
    scores.sort_by(|x, y| {
        let mean = match (x.average_rank, y.average_rank) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        mean.then_with(|| y.borda.total_cmp(&x.borda))
            .then_with(|| y.copeland.total_cmp(&x.copeland))
            .then_with(|| y.first_place_votes.cmp(&x.first_place_votes))
            .then_with(|| names[x.candidate].as_ref().cmp(names[y.candidate].as_ref()))
    });
    for (i, s) in scores.iter_mut().enumerate() {
        s.position = i + 1;
    }
    scores
}

/// Scores by name: each `Score::candidate` replaced by its name in `names`.
pub fn with_names<S: AsRef<str>>(scores: Vec<Score>, names: &[S]) -> Vec<CandidateScore> {
    scores
        .into_iter()
        .map(|s| CandidateScore {
            candidate: names[s.candidate].as_ref().to_string(),
            position: s.position,
            average_rank: s.average_rank,
            rankings_count: s.rankings_count,
            borda: s.borda,
            copeland: s.copeland,
            first_place_votes: s.first_place_votes,
        })
        .collect()
}

/// Name -> index; a linear scan for the few names of a council, a hash map beyond.
pub(crate) enum NameIndex<'a> {
    Small(Vec<&'a str>),
    Large(HashMap<&'a str, usize>),
}

impl NameIndex<'_> {
    pub(crate) fn get(&self, name: &str) -> Option<usize> {
        match self {
            NameIndex::Small(names) => names.iter().position(|n| *n == name),
            NameIndex::Large(map) => map.get(name).copied(),
        }
    }
}

/// Candidates an aggregation accepts (it holds an n x n matrix of pairwise counts).
pub const MAX_CANDIDATES: usize = 4_096;

/// Index of each distinct name; an error names the duplicate.
pub(crate) fn index_names<'a, S: AsRef<str>>(names: &'a [S], what: &str) -> Result<NameIndex<'a>, RankingError> {
    if names.len() > MAX_CANDIDATES {
        return Err(RankingError::value(format!(
            "{} {what}s given; at most {MAX_CANDIDATES} are accepted",
            names.len()
        )));
    }
    let duplicate = |name: &str| RankingError::value(format!("{what} {name:?} is given twice"));
    if names.len() <= 16 {
        let mut small: Vec<&str> = Vec::with_capacity(names.len());
        for name in names {
            if small.contains(&name.as_ref()) {
                return Err(duplicate(name.as_ref()));
            }
            small.push(name.as_ref());
        }
        return Ok(NameIndex::Small(small));
    }
    let mut index = HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if index.insert(name.as_ref(), i).is_some() {
            return Err(duplicate(name.as_ref()));
        }
    }
    Ok(NameIndex::Large(index))
}

/// Map one ballot of names to indices; unknown names and repeats are errors.
pub(crate) fn ballot_indices<S: AsRef<str>>(
    ballot: &[S],
    index: &NameIndex,
    what: &str,
    whose: &dyn Fn() -> String,
) -> Result<Vec<usize>, RankingError> {
    let mut out = Vec::with_capacity(ballot.len());
    for item in ballot {
        let item = item.as_ref();
        let Some(i) = index.get(item) else {
            return Err(RankingError::value(format!("{} names unknown {what} {item:?}", whose())));
        };
        if out.contains(&i) {
            return Err(RankingError::value(format!("{} names {what} {item:?} twice", whose())));
        }
        out.push(i);
    }
    Ok(out)
}

/// What the names on the ballots stand for, and so who the candidates are.
#[derive(Debug, Clone, Copy)]
pub enum Candidates<'a> {
    /// Labels ("A", "B", ...) of the models in `(label, model)` pairs: the candidates are the
    /// models, in the order given (a council's ballots, which name anonymous answers).
    Labels(&'a [(&'a str, &'a str)]),
    /// The candidates' own names (ballots of model ids: the leaderboard's, Self-MoA's).
    Names(&'a [&'a str]),
}

/// How ballots are counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// A reviewer's own model (the candidate whose model id is the reviewer's) is removed from its
    /// own ballot before counting.
    pub exclude_self: bool,
    /// Ballot `k` weighs `weights[k]` (see the module comment); None: every ballot weighs 1.
    pub weights: Option<&'a [f64]>,
}

/// Ballots (best first), each with who cast it (None: no one in particular; errors then name a
/// ballot by its position), to one ranking. Each `Score::candidate` indexes the candidates (the
/// models of [`Candidates::Labels`], or [`Candidates::Names`]); [`with_names`] names them. A
/// ballot's names must be labels (or candidates) without repeats; labels and models must be distinct.
pub fn aggregate<B: AsRef<[S]>, S: AsRef<str>>(
    ballots: &[(Option<&str>, B)],
    candidates: Candidates<'_>,
    options: Options<'_>,
) -> Result<Vec<Score>, RankingError> {
    if let Some(weights) = options.weights {
        check_weights(weights, ballots.len())?;
    }
    let (what, names, models): (&str, Vec<&str>, Vec<&str>) = match candidates {
        Candidates::Labels(pairs) => {
            let models: Vec<&str> = pairs.iter().map(|(_, m)| *m).collect();
            index_names(&models, "model")?;
            ("label", pairs.iter().map(|(l, _)| *l).collect(), models)
        }
        Candidates::Names(names) => ("candidate", names.to_vec(), names.to_vec()),
    };
    let index = index_names(&names, what)?;
    // every ballot's indices in one buffer
    let mut flat: Vec<usize> = Vec::with_capacity(ballots.iter().map(|(_, b)| b.as_ref().len()).sum());
    let mut ends: Vec<usize> = Vec::with_capacity(ballots.len());
    for (k, (reviewer, ballot)) in ballots.iter().enumerate() {
        let start = flat.len();
        for item in ballot.as_ref() {
            let item = item.as_ref();
            let whose = || reviewer.map_or_else(|| format!("ballot {k}"), |r| format!("the ballot of {r:?}"));
            let Some(i) = index.get(item) else {
                return Err(RankingError::value(format!("{} names unknown {what} {item:?}", whose())));
            };
            if flat[start..].contains(&i) {
                return Err(RankingError::value(format!("{} names {what} {item:?} twice", whose())));
            }
            flat.push(i);
        }
        if let (true, Some(reviewer)) = (options.exclude_self, reviewer) {
            let mut keep = start;
            for k in start..flat.len() {
                if models[flat[k]] != *reviewer {
                    flat[keep] = flat[k];
                    keep += 1;
                }
            }
            flat.truncate(keep);
        }
        ends.push(flat.len());
    }
    let mut slices: Vec<&[usize]> = Vec::with_capacity(ends.len());
    let mut start = 0;
    for &end in &ends {
        slices.push(&flat[start..end]);
        start = end;
    }
    Ok(match options.weights {
        Some(weights) => tally(&slices, |k| weights[k], &models),
        None => aggregate_indices(&slices, &models),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by<'a>(ballots: &'a [(&'a str, Vec<&'a str>)]) -> Vec<(Option<&'a str>, &'a [&'a str])> {
        ballots.iter().map(|(r, b)| (Some(*r), b.as_slice())).collect()
    }

    fn unnamed<'a>(ballots: &'a [Vec<&'a str>]) -> Vec<(Option<&'a str>, &'a [&'a str])> {
        ballots.iter().map(|b| (None, b.as_slice())).collect()
    }

    #[test]
    fn classic_mean_rank() {
        // 4 judges rank the other 3; true order W > X > Y > Z.
        let ballots = vec![
            ("W", vec!["X", "Y", "Z"]),
            ("X", vec!["W", "Y", "Z"]),
            ("Y", vec!["W", "X", "Z"]),
            ("Z", vec!["W", "X", "Y"]),
        ];
        let l2m = vec![("W", "W"), ("X", "X"), ("Y", "Y"), ("Z", "Z")];
        let scores = aggregate(&by(&ballots), Candidates::Labels(&l2m), Options::default()).unwrap();
        let s = with_names(scores, &["W", "X", "Y", "Z"]);
        let names: Vec<&str> = s.iter().map(|c| c.candidate.as_str()).collect();
        assert_eq!(names, ["W", "X", "Y", "Z"]);
        let means: Vec<f64> = s.iter().map(|c| (c.average_rank.unwrap() * 100.0).round() / 100.0).collect();
        assert_eq!(means, [1.0, 1.67, 2.33, 3.0]);
        assert_eq!(s[0].first_place_votes, 3);
        assert_eq!(s[0].copeland, 3.0);
        assert_eq!(s[3].copeland, 0.0);
    }

    #[test]
    fn unranked_last_and_ties_by_name() {
        let candidates = ["c", "a", "b"];
        let scores = aggregate(&unnamed(&[vec!["b", "a"]]), Candidates::Names(&candidates), Options::default());
        let s = with_names(scores.unwrap(), &candidates);
        let names: Vec<&str> = s.iter().map(|c| c.candidate.as_str()).collect();
        assert_eq!(names, ["b", "a", "c"]);
        assert_eq!(s[2].average_rank, None);
        let s = aggregate(&unnamed(&[]), Candidates::Names(&["z", "y"]), Options::default()).unwrap();
        assert_eq!(s[0].candidate, 1);
    }

    #[test]
    fn exclude_self_drops_the_reviewers_own_model() {
        let ballots = vec![("a", vec!["A", "B"]), ("b", vec!["A", "B"])];
        let l2m = vec![("A", "a"), ("B", "b")];
        let options = Options { exclude_self: true, ..Options::default() };
        let s = aggregate(&by(&ballots), Candidates::Labels(&l2m), options).unwrap();
        assert_eq!((s[0].candidate, s[0].rankings_count, s[1].rankings_count), (0, 1, 1));
        // by name too, and a ballot of no one keeps every name
        let named = vec![(Some("a"), vec!["a", "b"]), (None, vec!["a", "b"])];
        let s = aggregate(&named, Candidates::Names(&["a", "b"]), options).unwrap();
        assert_eq!((s[0].rankings_count, s[1].rankings_count), (1, 2));
    }

    #[test]
    fn weights_move_the_mean_and_borda() {
        let ballots = vec![("r1", vec!["A", "B"]), ("r2", vec!["B", "A"]), ("r3", vec!["B", "A"])];
        let l2m = vec![("A", "a"), ("B", "b")];
        let weighted = |w: Option<&[f64]>| {
            aggregate(&by(&ballots), Candidates::Labels(&l2m), Options { weights: w, ..Options::default() }).unwrap()
        };
        // unweighted: b wins 2 to 1; r1 weighing 3 turns it
        let plain = weighted(None);
        assert_eq!(plain[0].candidate, 1);
        let s = weighted(Some(&[3.0, 1.0, 1.0]));
        assert_eq!(s[0].candidate, 0);
        assert_eq!(s[0].average_rank, Some((3.0 * 1.0 + 2.0 + 2.0) / 5.0));
        assert_eq!(s[0].borda, 3.0);
        assert_eq!(s[0].copeland, 1.0);
        assert_eq!(s[0].rankings_count, 3);
        assert_eq!(s[0].first_place_votes, 1);
        // unit weights give exactly the unweighted scores
        assert_eq!(weighted(Some(&[1.0, 1.0, 1.0])), plain);
    }

    #[test]
    fn bad_weights_are_errors() {
        let ballots = vec![("r1", vec!["A", "B"])];
        let l2m = vec![("A", "a"), ("B", "b")];
        let with = |w: &[f64]| {
            aggregate(&by(&ballots), Candidates::Labels(&l2m), Options { weights: Some(w), ..Options::default() })
        };
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(with(&[w]).is_err());
        }
        assert!(with(&[1.0, 1.0]).is_err());
    }

    #[test]
    fn errors() {
        let names = |ballots: &[Vec<&str>], candidates: &[&str]| {
            aggregate(&unnamed(ballots), Candidates::Names(candidates), Options::default())
        };
        assert!(names(&[vec!["a", "a"]], &["a", "b"]).is_err());
        assert!(names(&[vec!["q"]], &["a", "b"]).unwrap_err().message().contains("ballot 0 names unknown candidate"));
        assert!(names(&[], &["a", "a"]).is_err());
        let ballots = vec![("r", vec!["Z"])];
        let labels = aggregate(&by(&ballots), Candidates::Labels(&[("A", "a")]), Options::default());
        assert!(labels.unwrap_err().message().contains("the ballot of \"r\" names unknown label"));
        assert!(aggregate(&by(&[]), Candidates::Labels(&[("A", "a"), ("B", "a")]), Options::default()).is_err());
    }
}
