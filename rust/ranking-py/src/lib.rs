//! `core._ranking`: the PyO3 binding of the `ranking` crate. Conversion only: every rule lives in
//! the pure crate. Invalid values raise `ValueError`; wrong types raise `TypeError` (PyO3's
//! argument extraction). The public, typed face is `core/ranking.py`.
//!
//! Results are tuples, or instances of the class passed as `cls` (core/ranking.py passes its
//! dataclasses), built exactly as `obj = cls.__new__(cls)` then `object.__setattr__(obj, field,
//! value)` would build them: what a frozen dataclass's `__init__` does, without the cost of
//! running `__init__` from Python. Both steps go through the type's own slots and CPython's own
//! checks, so any class is safe to pass: one that cannot be made this way raises (TypeError,
//! AttributeError, ...) and never crashes the interpreter. Strings of the arguments are borrowed
//! (no copies) and returned names are the caller's own string objects.

use std::cell::RefCell;
use std::collections::HashMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use ranking::{RankingError, Score};

mod composition;
mod disagreement;
mod scores;

pub(crate) fn value_error(e: RankingError) -> PyErr {
    PyValueError::new_err(e.message().to_string())
}

/// Borrow the UTF-8 of Python strings (valid while the objects live).
pub(crate) fn strs<'a>(objs: &'a [Bound<'_, PyString>]) -> PyResult<Vec<&'a str>> {
    objs.iter().map(|s| s.to_str()).collect()
}

/// How results are built: tuples, or instances of the caller's class (see the module comment).
enum Output<'py> {
    Tuples,
    Instances {
        cls: Bound<'py, PyType>,
        /// `object.__setattr__`: it refuses objects whose type overrides `__setattr__` in C.
        setattr: &'py Bound<'py, PyAny>,
        /// A type whose instances `object.__setattr__` has accepted once in this call; the check it
        /// makes depends only on the type, so further fields of its instances are set directly.
        checked: RefCell<Option<Bound<'py, PyType>>>,
    },
}

impl<'py> Output<'py> {
    fn new(py: Python<'py>, cls: Option<&Bound<'py, PyType>>) -> PyResult<Self> {
        let Some(cls) = cls else { return Ok(Output::Tuples) };
        static OBJECT_SETATTR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let setattr = OBJECT_SETATTR
            .get_or_try_init(py, || py.get_type::<PyAny>().getattr(intern!(py, "__setattr__")).map(Bound::unbind))?
            .bind(py);
        Ok(Output::Instances { cls: cls.clone(), setattr, checked: RefCell::new(None) })
    }

    /// One record: a tuple of `values`, or a `cls` instance with `names` set to them.
    fn make(
        &self,
        py: Python<'py>,
        names: &[&Bound<'py, PyString>],
        values: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Output::Instances { cls, setattr, checked } = self else {
            return Ok(PyTuple::new(py, values)?.into_any());
        };
        let obj = new_instance(py, cls)?;
        // SAFETY: `obj` is a live object.
        let tp = unsafe { ffi::Py_TYPE(obj.as_ptr()) };
        let mut direct = checked.borrow().as_ref().is_some_and(|t| t.as_type_ptr() == tp);
        for (name, value) in names.iter().zip(values) {
            if direct {
                // SAFETY: three live objects; `object.__setattr__` accepted this exact type above,
                // and this is the function it calls after its check.
                if unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) } != 0 {
                    return Err(PyErr::fetch(py));
                }
            } else {
                setattr.call1((&obj, name, value))?;
                *checked.borrow_mut() = Some(obj.get_type());
                direct = true;
            }
        }
        Ok(obj)
    }
}

/// `cls.__new__(cls)` through the type's own `tp_new` slot (what `cls()` runs before `__init__`).
fn new_instance<'py>(py: Python<'py>, cls: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    let tp = cls.as_type_ptr();
    // SAFETY: `tp` is a live type object (held by `cls`).
    let Some(tp_new) = (unsafe { (*tp).tp_new }) else {
        return Err(PyTypeError::new_err(format!("cannot create '{}' instances", cls.qualname()?)));
    };
    let args = PyTuple::empty(py);
    // SAFETY: the slot's contract: a live type, an argument tuple, NULL keywords; it returns a new
    // reference or NULL with an exception set.
    let raw = unsafe { tp_new(tp, args.as_ptr(), std::ptr::null_mut()) };
    if raw.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `raw` is a new, non-null reference that we own.
    Ok(unsafe { Bound::from_owned_ptr(py, raw) })
}

fn score<'py>(
    py: Python<'py>,
    out: &Output<'py>,
    candidate: &Bound<'py, PyString>,
    s: &Score,
) -> PyResult<Bound<'py, PyAny>> {
    let names = [
        intern!(py, "candidate"),
        intern!(py, "position"),
        intern!(py, "average_rank"),
        intern!(py, "rankings_count"),
        intern!(py, "borda"),
        intern!(py, "copeland"),
        intern!(py, "first_place_votes"),
    ];
    let values = vec![
        candidate.clone().into_any(),
        s.position.into_pyobject(py)?.into_any(),
        s.average_rank.into_pyobject(py)?.into_any(),
        s.rankings_count.into_pyobject(py)?.into_any(),
        s.borda.into_pyobject(py)?.into_any(),
        s.copeland.into_pyobject(py)?.into_any(),
        s.first_place_votes.into_pyobject(py)?.into_any(),
    ];
    out.make(py, &names, values)
}

fn score_list<'py>(
    py: Python<'py>,
    out: &Output<'py>,
    candidates: &[&Bound<'py, PyString>],
    scores: &[Score],
) -> PyResult<Bound<'py, PyList>> {
    let items = scores.iter().map(|s| score(py, out, candidates[s.candidate], s)).collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// parse_ranking(text, labels, cls=None) -> ParsedRanking-like (order, status)
#[pyfunction]
#[pyo3(signature = (text, labels, cls = None))]
fn parse_ranking<'py>(
    py: Python<'py>,
    text: &str,
    labels: Vec<Bound<'py, PyString>>,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyAny>> {
    let letters = ranking::validate_labels(&strs(&labels)?).map_err(value_error)?;
    let parsed = ranking::parse::parse_with_letters(text, &letters);
    parsed_out(py, &Output::new(py, cls)?, &labels, &letters, &parsed)
}

fn parsed_out<'py>(
    py: Python<'py>,
    out: &Output<'py>,
    labels: &[Bound<'py, PyString>],
    letters: &[char],
    parsed: &ranking::ParsedRanking,
) -> PyResult<Bound<'py, PyAny>> {
    // the order is made of the caller's label objects
    let order: Vec<&Bound<'py, PyString>> =
        parsed.order.iter().filter_map(|c| letters.iter().position(|l| l == c).map(|i| &labels[i])).collect();
    let values = vec![PyList::new(py, order)?.into_any(), PyString::new(py, parsed.status.as_str()).into_any()];
    out.make(py, &[intern!(py, "order"), intern!(py, "status")], values)
}

/// parse_many(texts, labels, cls=None) -> one result of `parse_ranking` per text (GIL released).
#[pyfunction]
#[pyo3(signature = (texts, labels, cls = None))]
fn parse_many<'py>(
    py: Python<'py>,
    texts: Vec<Bound<'py, PyString>>,
    labels: Vec<Bound<'py, PyString>>,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyList>> {
    let letters = ranking::validate_labels(&strs(&labels)?).map_err(value_error)?;
    let borrowed = strs(&texts)?;
    let parsed =
        py.detach(|| borrowed.iter().map(|t| ranking::parse::parse_with_letters(t, &letters)).collect::<Vec<_>>());
    let out = Output::new(py, cls)?;
    let items = parsed.iter().map(|p| parsed_out(py, &out, &labels, &letters, p)).collect::<PyResult<Vec<_>>>()?;
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
    ballots: Vec<(&'a str, Vec<&'a str>)>,
    label_to_model: Vec<(&'a str, &'a str)>,
}

fn council<'a>(ballots: &'a PyBallots<'_>, label_to_model: &'a PyMap<'_>) -> PyResult<Council<'a>> {
    Ok(Council {
        ballots: ballots.iter().map(|(r, b)| Ok((r.to_str()?, strs(b)?))).collect::<PyResult<_>>()?,
        label_to_model: label_to_model.iter().map(|(l, m)| Ok((l.to_str()?, m.to_str()?))).collect::<PyResult<_>>()?,
    })
}

/// aggregate(ballots, label_to_model, exclude_self, cls=None, weights=None) with ballots as
/// {reviewer: labels} (or [(reviewer, labels)]), the mapping as {label: model} (or [(label, model)])
/// and weights as {reviewer: weight} (reviewers it leaves out weigh 1) -> CandidateScore-like
/// records, best first.
#[pyfunction]
#[pyo3(signature = (ballots, label_to_model, exclude_self, cls = None, weights = None))]
fn aggregate<'py>(
    py: Python<'py>,
    ballots: &Bound<'py, PyAny>,
    label_to_model: &Bound<'py, PyAny>,
    exclude_self: bool,
    cls: Option<&Bound<'py, PyType>>,
    weights: Option<HashMap<String, f64>>,
) -> PyResult<Bound<'py, PyList>> {
    let (ballots, label_to_model) = (py_ballots(ballots)?, py_map(label_to_model)?);
    let c = council(&ballots, &label_to_model)?;
    let per_ballot: Option<Vec<f64>> =
        weights.map(|w| c.ballots.iter().map(|(r, _)| w.get(*r).copied().unwrap_or(1.0)).collect());
    let scores =
        ranking::aggregate_labels_weighted_indexed(&c.ballots, &c.label_to_model, exclude_self, per_ballot.as_deref())
            .map_err(value_error)?;
    let models: Vec<&Bound<'py, PyString>> = label_to_model.iter().map(|(_, m)| m).collect();
    score_list(py, &Output::new(py, cls)?, &models, &scores)
}

/// kendall_tau(ballot, reference) -> float | None: tau-a over the items both rank.
#[pyfunction]
fn kendall_tau(ballot: Vec<Bound<'_, PyString>>, reference: Vec<Bound<'_, PyString>>) -> PyResult<Option<f64>> {
    ranking::kendall_tau(&strs(&ballot)?, &strs(&reference)?).map_err(value_error)
}

/// aggregate_batch([(ballots, label_to_model)], exclude_self, cls=None) -> one `aggregate` result
/// per council (computed with the GIL released).
#[pyfunction]
#[pyo3(signature = (councils, exclude_self, cls = None))]
fn aggregate_batch<'py>(
    py: Python<'py>,
    councils: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    exclude_self: bool,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyList>> {
    let councils = councils.iter().map(|(b, m)| Ok((py_ballots(b)?, py_map(m)?))).collect::<PyResult<Vec<_>>>()?;
    let borrowed = councils.iter().map(|(b, m)| council(b, m)).collect::<PyResult<Vec<_>>>()?;
    let results = py
        .detach(|| {
            borrowed
                .iter()
                .map(|c| ranking::aggregate_labels_indexed(&c.ballots, &c.label_to_model, exclude_self))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(value_error)?;
    let out = Output::new(py, cls)?;
    let lists = councils
        .iter()
        .zip(&results)
        .map(|((_, m), scores)| {
            let models: Vec<&Bound<'py, PyString>> = m.iter().map(|(_, model)| model).collect();
            score_list(py, &out, &models, scores)
        })
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, lists)
}

/// aggregate_models(ballots, candidates, cls=None) -> same records as `aggregate`.
#[pyfunction]
#[pyo3(signature = (ballots, candidates, cls = None))]
fn aggregate_models<'py>(
    py: Python<'py>,
    ballots: Vec<Vec<Bound<'py, PyString>>>,
    candidates: Vec<Bound<'py, PyString>>,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyList>> {
    let b = ballots.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()?;
    let scores = ranking::aggregate_models_indexed(&b, &strs(&candidates)?).map_err(value_error)?;
    let names: Vec<&Bound<'py, PyString>> = candidates.iter().collect();
    score_list(py, &Output::new(py, cls)?, &names, &scores)
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

/// leaderboard(ballots, rounds, seed, confidence, threads=0, cls=None) -> Rating-like records
/// (model, rating, low, high, wins, comparisons), best first. threads=0: the machine's cores (at
/// most 8). The GIL is released while it computes.
#[pyfunction]
#[pyo3(signature = (ballots, rounds, seed, confidence, threads = 0, cls = None))]
fn leaderboard<'py>(
    py: Python<'py>,
    ballots: &Bound<'py, PyAny>,
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyList>> {
    let ballots = str_seqs(ballots)?;
    let b = ballots.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()?;
    let threads = thread_count(threads);
    let ratings = py.detach(|| ranking::leaderboard(&b, rounds, seed, confidence, threads)).map_err(value_error)?;
    rating_records(py, cls, ratings)
}

/// leaderboard_counted(ballots, counts, rounds, seed, confidence, threads=0, cls=None): as
/// `leaderboard`, over distinct ballots each cast `counts[k]` times (its bootstrap draws how often
/// each distinct ballot is drawn: see the crate's notes).
#[pyfunction]
#[pyo3(signature = (ballots, counts, rounds, seed, confidence, threads = 0, cls = None))]
#[allow(clippy::too_many_arguments)]
fn leaderboard_counted<'py>(
    py: Python<'py>,
    ballots: &Bound<'py, PyAny>,
    counts: Vec<u64>,
    rounds: usize,
    seed: u64,
    confidence: f64,
    threads: usize,
    cls: Option<&Bound<'py, PyType>>,
) -> PyResult<Bound<'py, PyList>> {
    let ballots = str_seqs(ballots)?;
    let b = ballots.iter().map(|x| strs(x)).collect::<PyResult<Vec<_>>>()?;
    let threads = thread_count(threads);
    let ratings = py
        .detach(|| ranking::leaderboard_counted(&b, &counts, rounds, seed, confidence, threads))
        .map_err(value_error)?;
    rating_records(py, cls, ratings)
}

fn rating_records<'py>(
    py: Python<'py>,
    cls: Option<&Bound<'py, PyType>>,
    ratings: Vec<ranking::Rating>,
) -> PyResult<Bound<'py, PyList>> {
    let names = [
        intern!(py, "model"),
        intern!(py, "rating"),
        intern!(py, "low"),
        intern!(py, "high"),
        intern!(py, "wins"),
        intern!(py, "comparisons"),
    ];
    let out = Output::new(py, cls)?;
    let items = ratings
        .into_iter()
        .map(|r| {
            let values = vec![
                PyString::new(py, &r.model).into_any(),
                r.rating.into_pyobject(py)?.into_any(),
                r.low.into_pyobject(py)?.into_any(),
                r.high.into_pyobject(py)?.into_any(),
                r.wins.into_pyobject(py)?.into_any(),
                r.comparisons.into_pyobject(py)?.into_any(),
            ];
            out.make(py, &names, values)
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
    m.add_function(wrap_pyfunction!(aggregate_models, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_tau, m)?)?;
    m.add_function(wrap_pyfunction!(kendall_w, m)?)?;
    m.add_function(wrap_pyfunction!(leaderboard, m)?)?;
    m.add_function(wrap_pyfunction!(leaderboard_counted, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
