//! Rubric scores: each reviewer scores each response it was shown on a few criteria (default:
//! accuracy, insight, completeness, 1 to 10), and the council reports each answer's mean per
//! criterion and a consensus figure from the scores' spread.
//!
//! This comment is the one statement of the score format. `core/ranking.py` (the Python face),
//! `tests/ranking_reference.py` (an independent re-implementation the tests compare against) and
//! `core/engine/prompts.py` (the reviewers' instructions) refer to it.
//!
//! **Criteria.** Names of ASCII letters and digits, words separated by spaces, `_` or `-` (all three
//! are one separator, and a run of them in the text matches one); matched ASCII case-insensitively,
//! not glued to a letter or digit on either side. The scale is `low..=high` (finite, `low < high`).
//!
//! **Reading a text** (after the ballot's normalisation, parse.rs rule 1, and line by line):
//!
//! 1. **The current response.** A `Response X` token anywhere in a line (as in a ballot), a bare
//!    capital letter starting a line (after spaces, list markers `- * + > #`, a number marker
//!    `1.`/`1)` and opening marks) followed by `:`, `.`, `-`, `=`, `|` or a closing `)`, or a bare
//!    capital letter anywhere followed (after closing marks) by `:` makes that response the current
//!    one, until the next such token. A label not among the labels given makes no response current
//!    (scores after it are dropped until the next token).
//! 2. **A score** is a criterion name followed by: closing marks and spaces, optionally the word
//!    `score`, optionally one separator `:`, `=`, `-` or `(`, spaces and marks, then a number
//!    (`8`, `7.5`), optionally followed by a denominator `/ N` or `out of N`. It belongs to the
//!    current response. `Response A: Accuracy=8, Insight=7, Completeness=9`,
//!    `**Accuracy:** 8/10`, `- insight (7)`, `Completeness score: 9 out of 10` all read.
//! 3. **Tables.** A line starting with `|` is a table row. A row with a cell that is a criterion
//!    name (optionally followed by `(…)` or `/N`, e.g. `Accuracy (1-10)`) is a header: it gives the
//!    criterion of each column. In the rows after a header (until a line that is not a row), the
//!    first cell that is only a label (`Response X` or a bare capital letter) names the response and
//!    each criterion column's cell holds its number (denominator as in rule 2). Separator rows
//!    (`|---|:--:|`) are skipped; a row without a header before it is read as prose.
//! 4. A value is dropped when it lies outside the scale, or when its denominator is not `high`.
//!    The **last** value read for a (response, criterion) wins (a reviewer that corrects itself).
//!
//! **Summary over reviewers** ([`rubric_summary`]): each answer's mean per criterion over the
//! reviewers that scored it; the **consensus** is `100 × (1 − d)`, where `d` is the mean, over
//! every (answer, criterion) scored by at least two reviewers, of the scores' population standard
//! deviation divided by its largest possible value on the scale, `(high − low) / 2`. 100: every
//! reviewer gave every answer the same score on every criterion; 0: they split between the two
//! ends of the scale. None when no (answer, criterion) has two scores.

use crate::parse::{
    is_alnum, is_closer, is_opener, is_ws, normalize, response_token, skip, validate_labels, word_at, RESPONSE,
};
use crate::RankingError;

/// Criteria (normalised: lower case, words joined by one space) and the scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Rubric {
    criteria: Vec<Vec<char>>,
    pub low: f64,
    pub high: f64,
}

impl Rubric {
    pub fn new<S: AsRef<str>>(criteria: &[S], low: f64, high: f64) -> Result<Self, RankingError> {
        if !(low.is_finite() && high.is_finite() && low < high) {
            return Err(RankingError::value(format!("the scale {low}..{high} is not a finite range with low < high")));
        }
        let mut out: Vec<Vec<char>> = Vec::with_capacity(criteria.len());
        for criterion in criteria {
            let s = criterion.as_ref();
            let words: Vec<&str> = s.split([' ', '_', '-']).filter(|w| !w.is_empty()).collect();
            if words.is_empty() || words.iter().any(|w| !w.chars().all(|c| c.is_ascii_alphanumeric())) {
                return Err(RankingError::value(format!(
                    "criterion {s:?} must be ASCII letters and digits, words separated by spaces"
                )));
            }
            let name: Vec<char> = words.join(" ").to_ascii_lowercase().chars().collect();
            if out.contains(&name) {
                return Err(RankingError::value(format!("criterion {s:?} is given twice")));
            }
            out.push(name);
        }
        if out.is_empty() {
            return Err(RankingError::value("a rubric needs at least one criterion"));
        }
        Ok(Rubric { criteria: out, low, high })
    }

    pub fn len(&self) -> usize {
        self.criteria.len()
    }

    pub fn is_empty(&self) -> bool {
        self.criteria.is_empty()
    }

    fn admits(&self, v: f64) -> bool {
        v >= self.low && v <= self.high
    }

    /// The longest criterion whose name starts at `p` (word boundaries both sides): (index, end).
    fn criterion_at(&self, line: &[char], p: usize) -> Option<(usize, usize)> {
        if p > 0 && is_alnum(line[p - 1]) {
            return None;
        }
        let mut best: Option<(usize, usize)> = None;
        for (i, name) in self.criteria.iter().enumerate() {
            if let Some(end) = name_at(line, p, name) {
                let longer = match best {
                    Some((_, e)) => end > e,
                    None => true,
                };
                if longer {
                    best = Some((i, end));
                }
            }
        }
        best
    }
}

fn is_joiner(c: char) -> bool {
    is_ws(c) || c == '_' || c == '-'
}

/// End of `name` matched at `p` (a space in the name matches a run of joiners), not glued to a
/// further letter or digit.
fn name_at(line: &[char], p: usize, name: &[char]) -> Option<usize> {
    let mut q = p;
    for &n in name {
        if n == ' ' {
            let r = skip(line, q, is_joiner);
            if r == q {
                return None;
            }
            q = r;
        } else if q < line.len() && line[q].to_ascii_lowercase() == n {
            q += 1;
        } else {
            return None;
        }
    }
    if q < line.len() && is_alnum(line[q]) {
        return None;
    }
    Some(q)
}

/// One reviewer's scores: (label, one value per criterion), in the order of the labels given,
/// only labels with at least one score.
pub type ScoreSheet = Vec<(char, Vec<Option<f64>>)>;

/// Read the scores of `text` for `labels` (validated as ballot labels) on `rubric`.
pub fn parse_scores<S: AsRef<str>>(text: &str, labels: &[S], rubric: &Rubric) -> Result<ScoreSheet, RankingError> {
    let labels = validate_labels(labels)?;
    Ok(scores_with_letters(text, &labels, rubric))
}

pub fn scores_with_letters(text: &str, labels: &[char], rubric: &Rubric) -> ScoreSheet {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let normalized = normalize(text);
    let mut scanner =
        Scanner { labels, rubric, sheet: vec![vec![None; rubric.len()]; labels.len()], current: None, columns: None };
    for line in normalized.split(|&c| c == '\n') {
        scanner.line(line);
    }
    labels
        .iter()
        .zip(scanner.sheet)
        .filter(|(_, values)| values.iter().any(Option::is_some))
        .map(|(&label, values)| (label, values))
        .collect()
}

struct Scanner<'a> {
    labels: &'a [char],
    rubric: &'a Rubric,
    sheet: Vec<Vec<Option<f64>>>,
    /// index in `labels` of the current response (rule 1)
    current: Option<usize>,
    /// in a table after its header: the criterion of each column (rule 3)
    columns: Option<Vec<Option<usize>>>,
}

impl Scanner<'_> {
    fn line(&mut self, line: &[char]) {
        let start = skip(line, 0, is_ws);
        if line.get(start) == Some(&'|') {
            self.table_row(&line[start..]);
        } else {
            self.columns = None;
            self.prose(line);
        }
    }

    fn label_index(&self, c: char) -> Option<usize> {
        self.labels.iter().position(|&l| l == c)
    }

    fn record(&mut self, label: Option<usize>, criterion: usize, value: f64) {
        if let Some(i) = label {
            if self.rubric.admits(value) {
                self.sheet[i][criterion] = Some(value);
            }
        }
    }

    fn prose(&mut self, line: &[char]) {
        if let Some(c) = line_start_label(line) {
            self.current = self.label_index(c);
        }
        let mut p = 0;
        while p < line.len() {
            if p > 0 && is_alnum(line[p - 1]) {
                p += 1;
                continue;
            }
            if word_at(line, p, RESPONSE) {
                if let Some((c, end)) = response_token(line, p) {
                    self.current = self.label_index(c);
                    p = end;
                    continue;
                }
            }
            if let Some((c, end)) = colon_label(line, p) {
                self.current = self.label_index(c);
                p = end;
                continue;
            }
            if let Some((criterion, end)) = self.rubric.criterion_at(line, p) {
                match value_after(line, end, self.rubric.high) {
                    Some((value, q)) => {
                        self.record(self.current, criterion, value);
                        p = q;
                    }
                    None => p = end,
                }
                continue;
            }
            p += 1;
        }
    }

    fn table_row(&mut self, line: &[char]) {
        let mut cells: Vec<&[char]> = line[1..].split(|&c| c == '|').collect();
        if cells.last().is_some_and(|c| c.iter().all(|&x| is_ws(x))) {
            cells.pop();
        }
        if cells.iter().all(|cell| cell.iter().all(|&c| is_ws(c) || c == '-' || c == ':')) {
            return; // separator row
        }
        let header: Vec<Option<usize>> = cells.iter().map(|cell| self.header_cell(cell)).collect();
        if header.iter().any(Option::is_some) {
            self.columns = Some(header);
            return;
        }
        let Some(columns) = self.columns.take() else {
            self.prose(line);
            return;
        };
        let label = cells.iter().find_map(|cell| cell_label(cell)).and_then(|c| self.label_index(c));
        for (cell, column) in cells.iter().zip(&columns) {
            if let Some(criterion) = *column {
                let p = skip(cell, 0, |c| is_ws(c) || is_opener(c));
                if let Some((value, _)) = number_with_denominator(cell, p, self.rubric.high) {
                    self.record(label, criterion, value);
                }
            }
        }
        self.columns = Some(columns);
    }

    /// The criterion a header cell names (rule 3).
    fn header_cell(&self, cell: &[char]) -> Option<usize> {
        let p = skip(cell, 0, |c| is_ws(c) || is_opener(c));
        let (criterion, end) = self.rubric.criterion_at(cell, p)?;
        let q = skip(cell, end, |c| is_ws(c) || is_closer(c));
        (q == cell.len() || cell[q] == '(' || cell[q] == '/').then_some(criterion)
    }
}

/// A bare capital letter starting a line, followed by `:` `.` `-` `=` `|` or a closing `)` (rule 1).
fn line_start_label(line: &[char]) -> Option<char> {
    let mut p = skip(line, 0, |c| is_ws(c) || matches!(c, '-' | '*' | '+' | '>' | '#'));
    let digits = skip(line, p, |c| c.is_ascii_digit());
    if digits > p && matches!(line.get(digits), Some('.' | ')')) {
        p = skip(line, digits + 1, is_ws);
    }
    p = skip(line, p, is_opener);
    let c = *line.get(p)?;
    if !c.is_ascii_uppercase() || line.get(p + 1).is_some_and(|&n| is_alnum(n)) {
        return None;
    }
    let closers = skip(line, p + 1, is_closer);
    if line[p + 1..closers].contains(&')') {
        return Some(c);
    }
    let q = skip(line, closers, is_ws);
    matches!(line.get(q), Some(':' | '.' | '-' | '=' | '|')).then_some(c)
}

/// A bare capital letter at `p` (word boundary) followed, after closing marks, by `:` (rule 1).
fn colon_label(line: &[char], p: usize) -> Option<(char, usize)> {
    let c = *line.get(p)?;
    if !c.is_ascii_uppercase() || line.get(p + 1).is_some_and(|&n| is_alnum(n)) {
        return None;
    }
    let q = skip(line, p + 1, is_closer);
    (line.get(q) == Some(&':')).then_some((c, q + 1))
}

/// The label a table cell holds alone: `Response X` or a bare capital letter (rule 3).
fn cell_label(cell: &[char]) -> Option<char> {
    let p = skip(cell, 0, |c| is_ws(c) || is_opener(c));
    let (c, end) = if word_at(cell, p, RESPONSE) {
        response_token(cell, p)?
    } else {
        let c = *cell.get(p)?;
        if !c.is_ascii_uppercase() {
            return None;
        }
        (c, p + 1)
    };
    (skip(cell, end, |x| is_ws(x) || is_closer(x)) == cell.len()).then_some(c)
}

// Words around a value, lowercase (matched case-insensitively by `word_at`); a match is skipped by its length.
const SCORE: &str = "score";
const OUT_OF: &str = "out of";

/// The value after a criterion name ending at `end` (rule 2): (value, index after it). A value
/// whose denominator is not `high` comes back as NaN (read, then dropped by the scale check).
fn value_after(line: &[char], end: usize, high: f64) -> Option<(f64, usize)> {
    let mut q = skip(line, end, |c| is_ws(c) || is_closer(c));
    if word_at(line, q, SCORE) && !line.get(q + SCORE.len()).is_some_and(|&c| is_alnum(c)) {
        q = skip(line, q + SCORE.len(), |c| is_ws(c) || is_closer(c));
    }
    if matches!(line.get(q), Some(':' | '=' | '-' | '(')) {
        q += 1;
    }
    q = skip(line, q, |c| is_ws(c) || is_opener(c) || is_closer(c));
    number_with_denominator(line, q, high)
}

fn number_with_denominator(line: &[char], p: usize, high: f64) -> Option<(f64, usize)> {
    let (value, end) = number_at(line, p)?;
    let q = skip(line, end, |c| is_ws(c) || is_closer(c));
    let denominator = if line.get(q) == Some(&'/') {
        Some(skip(line, q + 1, is_ws))
    } else if word_at(line, q, OUT_OF) {
        Some(skip(line, q + OUT_OF.len(), is_ws))
    } else {
        None
    };
    match denominator.and_then(|d| number_at(line, d)) {
        Some((d, after)) => Some((if d == high { value } else { f64::NAN }, after)),
        None => Some((value, end)),
    }
}

/// `8`, `7.5` at `p`, not glued to a further letter or digit: (value, index after it).
fn number_at(line: &[char], p: usize) -> Option<(f64, usize)> {
    let int_end = skip(line, p, |c| c.is_ascii_digit());
    if int_end == p || int_end - p > 6 {
        return None;
    }
    let mut end = int_end;
    if line.get(end) == Some(&'.') && line.get(end + 1).is_some_and(|c| c.is_ascii_digit()) {
        end = skip(line, end + 1, |c| c.is_ascii_digit());
    }
    if line.get(end).is_some_and(|&c| is_alnum(c)) {
        return None;
    }
    let text: String = line[p..end].iter().collect();
    text.parse().ok().map(|v| (v, end))
}

/// Each answer's mean per criterion and the consensus (see the module comment).
#[derive(Debug, Clone, PartialEq)]
pub struct RubricSummary {
    /// candidate -> criterion -> mean (None: nobody scored it on that criterion)
    pub means: Vec<Vec<Option<f64>>>,
    pub consensus: Option<f64>,
}

/// One reviewer's scores by candidate index: (candidate, one value per criterion).
pub type CandidateSheet = Vec<(usize, Vec<Option<f64>>)>;

/// `sheets`: each reviewer's scores as (candidate index < `candidates`, one value per criterion of
/// `rubric`, on its scale); a candidate at most once per sheet.
pub fn rubric_summary(
    sheets: &[CandidateSheet],
    candidates: usize,
    rubric: &Rubric,
) -> Result<RubricSummary, RankingError> {
    let k = rubric.len();
    let mut cells: Vec<Vec<f64>> = vec![Vec::new(); candidates * k];
    for sheet in sheets {
        let mut seen = vec![false; candidates];
        for (candidate, values) in sheet {
            if *candidate >= candidates || std::mem::replace(&mut seen[*candidate], true) {
                return Err(RankingError::value(format!(
                    "candidate {candidate} is out of range or scored twice by one reviewer"
                )));
            }
            if values.len() != k {
                return Err(RankingError::value(format!("{} values for {k} criteria", values.len())));
            }
            for (j, value) in values.iter().enumerate() {
                if let Some(v) = *value {
                    if !rubric.admits(v) {
                        return Err(RankingError::value(format!(
                            "score {v} is outside the scale {}..{}",
                            rubric.low, rubric.high
                        )));
                    }
                    cells[candidate * k + j].push(v);
                }
            }
        }
    }
    let half_range = (rubric.high - rubric.low) / 2.0;
    let (mut spread, mut counted) = (0.0, 0usize);
    let mut means = vec![vec![None; k]; candidates];
    for (i, values) in cells.iter().enumerate() {
        if values.is_empty() {
            continue;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        means[i / k][i % k] = Some(mean);
        if values.len() >= 2 {
            let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
            spread += variance.sqrt() / half_range;
            counted += 1;
        }
    }
    let consensus = (counted > 0).then(|| (100.0 * (1.0 - spread / counted as f64)).clamp(0.0, 100.0));
    Ok(RubricSummary { means, consensus })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rubric() -> Rubric {
        Rubric::new(&["accuracy", "insight", "completeness"], 1.0, 10.0).unwrap()
    }

    fn read(text: &str) -> ScoreSheet {
        parse_scores(text, &["A", "B", "C"], &rubric()).unwrap()
    }

    #[test]
    fn the_classic_line() {
        let sheet = read(
            "Response A: Accuracy=8, Insight=7, Completeness=9\nResponse B: Accuracy=5, Insight=6, Completeness=4",
        );
        assert_eq!(
            sheet,
            vec![('A', vec![Some(8.0), Some(7.0), Some(9.0)]), ('B', vec![Some(5.0), Some(6.0), Some(4.0)])]
        );
    }

    #[test]
    fn spellings() {
        let text = "### Response A\n- **Accuracy:** 8/10\n- insight (7)\n- Completeness score: 9 out of 10\n\n\
                    **B**: accuracy - 6.5; INSIGHT = 5\nC) Accuracy 3";
        assert_eq!(
            read(text),
            vec![
                ('A', vec![Some(8.0), Some(7.0), Some(9.0)]),
                ('B', vec![Some(6.5), Some(5.0), None]),
                ('C', vec![Some(3.0), None, None])
            ]
        );
    }

    #[test]
    fn several_responses_on_one_line() {
        let sheet = read("Scores: A: accuracy 8, insight 7 | B: accuracy 4");
        assert_eq!(sheet, vec![('A', vec![Some(8.0), Some(7.0), None]), ('B', vec![Some(4.0), None, None])]);
    }

    #[test]
    fn tables() {
        let text = "| Response | Accuracy (1-10) | Insight | Completeness |\n|---|:-:|---|---|\n\
                    | A | 8 | 7 | 9/10 |\n| **Response B** | 5 | 11 | 4/5 |\nafter";
        assert_eq!(read(text), vec![('A', vec![Some(8.0), Some(7.0), Some(9.0)]), ('B', vec![Some(5.0), None, None])]);
    }

    #[test]
    fn out_of_scale_unknown_labels_and_placeholders_are_dropped() {
        let text = "Response A: Accuracy=0, Insight=X, Completeness=12\nResponse Z: accuracy 9\naccuracy 9";
        assert_eq!(read(text), vec![]);
        assert_eq!(read("Response A: accuracy 8/100"), vec![]);
    }

    #[test]
    fn last_value_wins_and_prose_does_not_score() {
        let text = "Response A: accuracy 4\nOn reflection, Response A: accuracy 6\nA good answer with 9 insights";
        assert_eq!(read(text), vec![('A', vec![Some(6.0), None, None])]);
        assert_eq!(read("Response A. Accuracy matters: 8 people agree"), vec![]);
        assert_eq!(read("Response A: accuracy8 = 9, inaccuracy: 7"), vec![]);
    }

    #[test]
    fn multi_word_criteria() {
        let r = Rubric::new(&["factual accuracy", "clarity"], 1.0, 5.0).unwrap();
        let sheet = parse_scores("Response A: Factual_Accuracy=4, factual-accuracy score: 5, clarity 2", &["A"], &r);
        assert_eq!(sheet.unwrap(), vec![('A', vec![Some(5.0), Some(2.0)])]);
    }

    #[test]
    fn rubric_validation() {
        assert!(Rubric::new(&["accuracy", "Accuracy"], 1.0, 10.0).is_err());
        assert!(Rubric::new::<&str>(&[], 1.0, 10.0).is_err());
        assert!(Rubric::new(&["a+b"], 1.0, 10.0).is_err());
        assert!(Rubric::new(&["a"], 5.0, 5.0).is_err());
        assert!(Rubric::new(&["a"], f64::NAN, 5.0).is_err());
    }

    #[test]
    fn summary_means_and_consensus() {
        let r = Rubric::new(&["accuracy", "insight"], 1.0, 10.0).unwrap();
        let same = vec![vec![(0, vec![Some(8.0), Some(6.0)])], vec![(0, vec![Some(8.0), Some(6.0)])]];
        let s = rubric_summary(&same, 2, &r).unwrap();
        assert_eq!(s.means, vec![vec![Some(8.0), Some(6.0)], vec![None, None]]);
        assert_eq!(s.consensus, Some(100.0));
        let split = vec![vec![(0, vec![Some(1.0), None])], vec![(0, vec![Some(10.0), None])]];
        let s = rubric_summary(&split, 1, &r).unwrap();
        assert_eq!(s.means, vec![vec![Some(5.5), None]]);
        assert_eq!(s.consensus, Some(0.0));
        let lone = vec![vec![(0, vec![Some(3.0), None])]];
        assert_eq!(rubric_summary(&lone, 1, &r).unwrap().consensus, None);
        // sd 1 on a half-range of 4.5: 100 * (1 - 1/4.5)
        let near = vec![vec![(0, vec![Some(7.0), None])], vec![(0, vec![Some(9.0), None])]];
        let c = rubric_summary(&near, 1, &r).unwrap().consensus.unwrap();
        assert!((c - 100.0 * (1.0 - 1.0 / 4.5)).abs() < 1e-9);
    }

    #[test]
    fn summary_rejects_bad_input() {
        let r = Rubric::new(&["accuracy"], 1.0, 10.0).unwrap();
        assert!(rubric_summary(&[vec![(2, vec![Some(5.0)])]], 2, &r).is_err());
        assert!(rubric_summary(&[vec![(0, vec![Some(5.0)]), (0, vec![Some(5.0)])]], 1, &r).is_err());
        assert!(rubric_summary(&[vec![(0, vec![Some(11.0)])]], 1, &r).is_err());
        assert!(rubric_summary(&[vec![(0, vec![Some(5.0), None])]], 1, &r).is_err());
    }
}
