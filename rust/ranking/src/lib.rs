//! Ranking engine of the LLM council (pure Rust, no Python):
//!
//! * [`parse`]: a reviewer's "FINAL RANKING" text to a ballot of labels;
//! * [`aggregate`]: ballots to one ranking (mean rank, Borda, Copeland, votes, first places),
//!   optionally with weighted ballots;
//! * [`agreement`]: Kendall's W for incomplete rankings, and Kendall's tau of one ballot against a reference;
//! * [`leaderboard`]: Bradley-Terry ratings over many ballots with bootstrap intervals;
//! * [`scores`]: rubric scores from a reviewer's text, each answer's means and the consensus;
//! * [`composition`]: which of the council's texts support each sentence of the synthesis, and shares;
//! * [`disagreement`]: the chairman's "WHERE THEY DIFFER" section as data, and its measured stand-in;
//! * [`verdict`]: a judge's AGREE / DISAGREE verdict on two answers (auto mode).
//!
//! Nothing here panics on any input: invalid input is a [`RankingError`].

pub mod aggregate;
pub mod agreement;
pub mod composition;
pub mod disagreement;
pub mod leaderboard;
pub mod parse;
pub mod scores;
pub mod verdict;

pub use aggregate::{aggregate, aggregate_indices, with_names, CandidateScore, Candidates, Options, Score};
pub use agreement::{kendall_tau, kendall_w, kendall_w_indices, kendall_w_shown};
pub use composition::{composition, Composition, SentenceSupport};
pub use disagreement::{measure_disagreement, parse_disagreement, MeasuredDisagreement, WrittenDisagreement};
pub use leaderboard::{leaderboard, leaderboard_counted, Rating};
pub use parse::{parse_ranking, validate_labels, ParseStatus, ParsedRanking};
pub use scores::{parse_scores, rubric_summary, Rubric, RubricSummary, ScoreSheet};
pub use verdict::{parse_verdict, Verdict};

/// Invalid input (surfaces in Python as `ValueError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankingError {
    Value(String),
}

impl RankingError {
    pub fn value(message: impl Into<String>) -> Self {
        RankingError::Value(message.into())
    }

    pub fn message(&self) -> &str {
        match self {
            RankingError::Value(m) => m,
        }
    }
}

impl std::fmt::Display for RankingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for RankingError {}
