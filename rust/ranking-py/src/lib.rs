//! `core._ranking`: the PyO3 binding of the `ranking` crate. Conversion only: every rule lives in
//! the pure crate. Invalid values raise `ValueError`; wrong types raise `TypeError` (PyO3's
//! argument extraction). The public, typed face is `core/ranking.py`.
//!
//! Results are the frozen classes of `results.rs` (`ParsedRanking`, `CandidateScore`, `Rating`),
//! described in core/_ranking.pyi. Strings of the arguments are borrowed (no copies) and returned
//! names are the caller's own string objects.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use ranking::{Candidates, Options, RankingError, Score};

use crate::results::{CandidateScore, ParsedRanking, Rating};

mod composition;
mod disagreement;
mod results;
mod scores;

pub(crate) fn value_error(e: RankingError) -> PyErr {
    PyValueError::new_err(e.message().to_string())
}

/// Borrow the UTF-8 of Python strings (valid while the objects live).
pub(crate) fn strs<'a>(objs: &'a [Bound<'_, PyString>]) -> PyResult<Vec<&'a str>> {
    objs.iter().map(|s| s.to_str()).collect()
}

fn score_list<'py>(
    py: Python<'py>,
    candidates: &[&Bound<'py, PyString>],
    scores: &[Score],
) -> PyResult<Bound<'py, PyList>> {
    let items = scores
        .iter()
        .map(|s| {
            let score = CandidateScore {
                candidate: candidates[s.candidate].clone().unbind(),
                position: s.position,
                average_rank: s.average_rank,
                rankings_count: s.rankings_count,
                borda: s.borda,
                copeland: s.copeland,
                first_place_votes: s.first_place_votes,
            };
            Bound::new(py, score)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// parse_ranking(text, labels) -> ParsedRanking
#[pyfunction]
fn parse_ranking<'py>(
    py: Python<'py>,
    text: &str,
    labels: Vec<Bound<'py, PyString>>,
) -> PyResult<Bound<'py, ParsedRanking>> {
    let letters = ranking::validate_labels(&strs(&labels)?).map_err(value_error)?;
    let parsed = ranking::parse::parse_with_letters(text, &letters);
    parsed_out(py, &labels, &letters, &parsed)
}

fn parsed_out<'py>(
    py: Python<'py>,
    labels: &[Bound<'py, PyString>],
    letters: &[char],
    parsed: &ranking::ParsedRanking,
) -> PyResult<Bound<'py, ParsedRanking>> {
    // the order is made of the caller's label objects
    let order: Vec<&Bound<'py, PyString>> =
        parsed.order.iter().filter_map(|c| letters.iter().position(|l| l == c).map(|i| &labels[i])).collect();
    let status = match parsed.status {
        ranking::ParseStatus::Complete => intern!(py, "complete"),
        ranking::ParseStatus::Partial => intern!(py, "partial"),
        ranking::ParseStatus::None => intern!(py, "none"),
    };
    Bound::new(py, ParsedRanking { order: PyList::new(py, order)?.unbind(), status: status.clone().unbind() })
}

/// parse_many(texts, labels) -> one `parse_ranking` result per text (GIL released while parsing).
#[pyfunction]
fn parse_many<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyString>>,
    labels: Vec<Bound<'py, PyString>>,
) -> PyResult<Bound<'py, PyList>> {
    let letters = ranking::validate_labels(&strs(&labels)?).map_err(value_error)?;
    let borrowed = strs(&texts)?;
    let parsed =
        py.detach(|| borrowed.iter().map(|t| ranking::parse::parse_with_letters(t, &letters)).collect::<Vec<_>>());
    let items = parsed.iter().map(|p| parsed_out(py, &labels, &letters, p)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// parse_verdict(text) -> "agree" | "disagree" | "none" (the format: rust/ranking/src/verdict.rs)
#[pyfunction]
fn parse_verdict(text: &str) -> &'static str {
    ranking::parse_verdict(text).as_str()
}

type PyBallots<'py> = Vec<(Bound<'py, PyString>, Vec<Bound<'py, PyString>>)>;
type PyMap<'py> = Vec<(Bound<'py, PyString>, Bound<'py, PyString>)>;

/// The strings of a list or tuple (fast path) or of any other sequence (a `str` is refused).
fn str_seq<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    if let Ok(list) = obj.cast::<PyList>() {
        return list.iter().map(|x| x.cast_into::<PyString>().map_err(PyErr::from)).collect();
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return tuple.iter().map(|x| x.cast_into::<PyString>().map_err(PyErr::from)).collect();
    }
    obj.extract()
}

/// A list/tuple (fast path) or other sequence of sequences of strings.
fn str_seqs<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<Vec<Bound<'py, PyString>>>> {
    if let Ok(list) = obj.cast::<PyList>() {
        return list.iter().map(|x| str_seq(&x)).collect();
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return tuple.iter().map(|x| str_seq(&x)).collect();
    }
    obj.extract::<Vec<Bound<'py, PyAny>>>()?.iter().map(str_seq).collect()
}

/// `{reviewer: labels}` dict, or a sequence of `(reviewer, labels)` pairs.
fn py_ballots<'py>(obj: &Bound<'py, PyAny>) -> PyResult<PyBallots<'py>> {
    if let Ok(dict) = obj.cast::<PyDict>() {
        return dict.iter().map(|(k, v)| Ok((k.cast_into::<PyString>()?, str_seq(&v)?))).collect();
    }
    obj.extract::<Vec<(Bound<'py, PyString>, Bound<'py, PyAny>)>>()?
        .into_iter()
        .map(|(k, v)| Ok((k, str_seq(&v)?)))
        .collect()
}

/// `{label: model}` dict, or a sequence of `(label, model)` pairs.
fn py_map<'py>(obj: &Bound<'py, PyAny>) -> PyResult<PyMap<'py>> {
    if let Ok(dict) = obj.cast::<PyDict>() {
        return dict.iter().map(|(k, v)| Ok((k.cast_into::<PyString>()?, v.cast_into::<PyString>()?))).collect();
    }
    obj.extract()
}

struct Council<'a> {
    ballots: Vec<(Option<&'a str>, Vec<&'a str>)>,
    label_to_model: Vec<(&'a str, &'a str)>,
}

fn council<'a>(ballots: &'a PyBallots<'_>, label_to_model: &'a PyMap<'_>) -> PyResult<Council<'a>> {
    Ok(Council {
        ballots: ballots.iter().map(|(r, b)| Ok((Some(r.to_str()?), strs(b)?))).collect::<PyResult<_>>()?,
        label_to_model: label_to_model.iter().map(|(l, m)| Ok((l.to_str()?, m.to_str()?))).collect::<PyResult<_>>()?,
    })
}

/// Ballots by reviewer, or ballots of no one in particular (`None` reviewers).
type PyCast<'py> = Vec<(Option<Bound<'py, PyString>>, Vec<Bound<'py, PyString>>)>;

/// aggregate(ballots, *, label_to_model=None, candidates=None, exclude_self=False, weights=None)
/// -> [CandidateScore], best first. One of:
/// * `label_to_model` ({label: model} or [(label, model)]): ballots of labels by reviewer,
///   {reviewer: labels} or [(reviewer, labels)]; the candidates are the models;
/// * `candidates` (names): ballots of candidates, by reviewer ({reviewer: names}) or of no one in
///   particular (a sequence of name sequences).
///
/// `exclude_self`: a reviewer's own model leaves its own ballot; `weights` ({reviewer: weight},
/// reviewers it leaves out weigh 1). Both need ballots by reviewer.
#[pyfunction]
#[pyo3(signature = (ballots, *, label_to_model = None, candidates = None, exclude_self = false, weights = None))]
fn aggregate<'py>(
    py: Python<'py>,
    ballots: &Bound<'py, PyAny>,
    label_to_model: Option<&Bound<'py, PyAny>>,
    candidates: Option<&Bound<'py, PyAny>>,
    exclude_self: bool,
    weights: Option<HashMap<String, f64>>,
) -> PyResult<Bound<'py, PyList>> {
    let (cast, names): (PyCast<'py>, Vec<Bound<'py, PyString>>) = match (label_to_model, candidates) {
        (Some(map), None) => {
            let pairs = py_map(map)?;
            let cast = py_ballots(ballots)?.into_iter().map(|(r, b)| (Some(r), b)).collect();
            (cast, pairs.into_iter().flat_map(|(l, m)| [l, m]).collect())
        }
        (None, Some(candidates)) => (py_cast(ballots)?, str_seq(candidates)?),
        _ => return Err(PyValueError::new_err("give either label_to_model or candidates")),
    };
    let unnamed = cast.iter().any(|(r, _)| r.is_none());
    if unnamed && (exclude_self || weights.is_some()) {
        return Err(PyValueError::new_err("exclude_self and weights need ballots by reviewer"));
    }
    let borrowed = cast
        .iter()
        .map(|(r, b)| Ok((r.as_ref().map(|r| r.to_str()).transpose()?, strs(b)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let per_ballot: Option<Vec<f64>> =
        weights.map(|w| borrowed.iter().map(|(r, _)| r.and_then(|r| w.get(r).copied()).unwrap_or(1.0)).collect());
    let options = Options { exclude_self, weights: per_ballot.as_deref() };
    let name_strs = strs(&names)?;
    let (scores, shown): (Vec<Score>, Vec<&Bound<'py, PyString>>) = if label_to_model.is_some() {
        let pairs: Vec<(&str, &str)> = name_strs.chunks(2).map(|p| (p[0], p[1])).collect();
        let scores = ranking::aggregate(&borrowed, Candidates::Labels(&pairs), options).map_err(value_error)?;
        (scores, names.iter().skip(1).step_by(2).collect())
    } else {
        let scores = ranking::aggregate(&borrowed, Candidates::Names(&name_strs), options).map_err(value_error)?;
        (scores, names.iter().collect())
    };
    score_list(py, &shown, &scores)
}

/// Ballots as {reviewer: names}, or as a sequence of name sequences (of no one in particular).
fn py_cast<'py>(obj: &Bound<'py, PyAny>) -> PyResult<PyCast<'py>> {
    if let Ok(dict) = obj.cast::<PyDict>() {
        return dict.iter().map(|(k, v)| Ok((Some(k.cast_into::<PyString>()?), str_seq(&v)?))).collect();
    }
    Ok(str_seqs(obj)?.into_iter().map(|b| (None, b)).collect())
}

/// kendall_tau(ballot, reference) -> float | None: tau-a over the items both rank.
#[pyfunction]
fn kendall_tau(ballot: Vec<Bound<'_, PyString>>, reference: Vec<Bound<'_, PyString>>) -> PyResult<Option<f64>> {
    ranking::kendall_tau(&strs(&ballot)?, &strs(&reference)?).map_err(value_error)
}

/// aggregate_batch([(ballots, label_to_model)], exclude_self) -> one `aggregate` result (by
/// label) per council, computed with the GIL released.
#[pyfunction]
fn aggregate_batch<'py>(
    py: Python<'py>,
    councils: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    exclude_self: bool,
) -> PyResult<Bound<'py, PyList>> {
    let councils = councils.iter().map(|(b, m)| Ok((py_ballots(b)?, py_map(m)?))).collect::<PyResult<Vec<_>>>()?;
    let borrowed = councils.iter().map(|(b, m)| council(b, m)).collect::<PyResult<Vec<_>>>()?;
    let options = Options { exclude_self, weights: None };
    let results = py
        .detach(|| {
            borrowed
                .iter()
                .map(|c| ranking::aggregate(&c.ballots, Candidates::Labels(&c.label_to_model), options))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(value_error)?;
    let lists = councils
        .iter()
        .zip(&results)
        .map(|((_, m), scores)| {
            let models: Vec<&Bound<'py, PyString>> = m.iter().map(|(_, model)| model).collect();
            score_list(py, &models, scores)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, lists)
}

/// kendall_w(ballots, candidates, shown=None) -> float | None, `shown[k]` the candidates ballot k
/// was shown (default: all of them).
#[pyfunction]
#[pyo3(signature = (ballots, candidates, shown = None))]
fn kendall_w(
    ballots: Vec<Vec<Bound<'_, PyString>>>,
    candidates: Vec<Bound<'_, PyString>>,
    shown: Option<Vec<Vec<Bound<'_, PyString>>>>,
) -> PyResult<Option<f64>> {
    let b = ballots.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()?;
    let seen = shown.as_ref().map(|s| s.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()).transpose()?;
    ranking::kendall_w_shown(&b, seen.as_deref(), &strs(&candidates)?).map_err(value_error)
}

/// `threads=0` in the Python signatures: the machine's cores (at most 8).
fn thread_count(threads: usize) -> usize {
    if threads == 0 {
        ranking::leaderboard::default_threads()
    } else {
        threads
    }
}

/// leaderboard(ballots, rounds, seed, confidence, threads=0) -> [Rating] (model, rating, low,
/// high, wins, comparisons), best first. threads=0: the machine's cores (at
/// most 8). The GIL is released while it computes.
#[pyfunction]
#[pyo3(signature = (ballots, rounds, seed, confidence, threads = 0))]
fn leaderboard<'py>(
    py: Python<'py>,
    ballots: &Bound<'py, PyAny>,
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let ballots = str_seqs(ballots)?;
    let b = ballots.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()?;
    let threads = thread_count(threads);
    let ratings = py.detach(|| ranking::leaderboard(&b, rounds, seed, confidence, threads)).map_err(value_error)?;
    rating_records(py, ratings)
}

/// leaderboard_counted(ballots, counts, rounds, seed, confidence, threads=0): as
/// `leaderboard`, over distinct ballots each cast `counts[k]` times (its bootstrap draws how often
/// each distinct ballot is drawn: see the crate's notes).
#[pyfunction]
#[pyo3(signature = (ballots, counts, rounds, seed, confidence, threads = 0))]
#[allow(clippy::too_many_arguments)]
fn leaderboard_counted<'py>(
    py: Python<'py>,
    ballots: &Bound<'py, PyAny>,
    counts: Vec<u64>,
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let ballots = str_seqs(ballots)?;
    let b = ballots.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()?;
    let threads = thread_count(threads);
    let ratings = py
        .detach(|| ranking::leaderboard_counted(&b, &counts, rounds, seed, confidence, threads))
        .map_err(value_error)?;
    rating_records(py, ratings)
}

fn rating_records<'py>(py: Python<'py>, ratings: Vec<ranking::Rating>) -> PyResult<Bound<'py, PyList>> {
    let items = ratings
        .into_iter()
        .map(|r| {
            let rating = Rating {
                model: PyString::new(py, &r.model).unbind(),
                rating: r.rating,
                low: r.low,
                high: r.high,
                wins: r.wins,
                comparisons: r.comparisons,
            };
            Bound::new(py, rating)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

#[pymodule]
fn _ranking(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_ranking, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    m.add_function(wrap_pyfunction!(parse_verdict, m)?)?;
    m.add_function(wrap_pyfunction!(scores::parse_scores, m)?)?;
    m.add_function(wrap_pyfunction!(composition::composition, m)?)?;
    m.add_function(wrap_pyfunction!(disagreement::parse_disagreement, m)?)?;
    m.add_function(wrap_pyfunction!(disagreement::measure_disagreement, m)?)?;
    m.add_function(wrap_pyfunction!(disagreement::is_disagreement_header, m)?)?;
    m.add_function(wrap_pyfunction!(scores::rubric_summary, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_tau, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_w, m)?)?;
    m.add_function(wrap_pyfunction!(leaderboard, m)?)?;
    m.add_function(wrap_pyfunction!(leaderboard_counted, m)?)?;
    m.add_class::<ParsedRanking>()?;
    m.add_class::<CandidateScore>()?;
    m.add_class::<Rating>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
