//! The binding's result types: frozen Python classes with read-only attributes, described in
//! core/_ranking.pyi (as pydantic-core describes its own). Each compares equal to another of its
//! class with equal fields, and prints like a dataclass. Names are the caller's own string objects.

use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyString, PyTuple};

/// A reviewer's ballot: labels best first (a subset of the labels, no repeats), and whether it
/// ranked every label ("complete"), some ("partial") or none ("none").
#[pyclass(frozen, get_all, module = "core._ranking")]
pub(crate) struct ParsedRanking {
    pub(crate) order: Py<PyList>,
    pub(crate) status: Py<PyString>,
}

#[pymethods]
impl ParsedRanking {
    #[new]
    fn new(order: Py<PyList>, status: Py<PyString>) -> Self {
        ParsedRanking { order, status }
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Self>() else { return Ok(py.NotImplemented()) };
        let other = other.get();
        let same = || -> PyResult<bool> {
            Ok(equal(self.order.bind(py), other.order.bind(py))? && equal(self.status.bind(py), other.status.bind(py))?)
        };
        compare(py, op, same)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("ParsedRanking(order={}, status={})", self.order.bind(py).repr()?, self.status.bind(py).repr()?))
    }
}

/// One candidate's place and scores in a council's ranking (the rules: rust/ranking/src/aggregate.rs).
#[pyclass(frozen, get_all, module = "core._ranking")]
pub(crate) struct CandidateScore {
    pub(crate) candidate: Py<PyString>,
    pub(crate) position: usize,
    pub(crate) average_rank: Option<f64>,
    pub(crate) rankings_count: u32,
    pub(crate) borda: f64,
    pub(crate) copeland: f64,
    pub(crate) first_place_votes: u32,
}

#[pymethods]
impl CandidateScore {
    #[new]
    fn new(
        candidate: Py<PyString>,
        position: usize,
        average_rank: Option<f64>,
        rankings_count: u32,
        borda: f64,
        copeland: f64,
        first_place_votes: u32,
    ) -> Self {
        CandidateScore { candidate, position, average_rank, rankings_count, borda, copeland, first_place_votes }
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Self>() else { return Ok(py.NotImplemented()) };
        let o = other.get();
        compare(py, op, || {
            Ok(equal(self.candidate.bind(py), o.candidate.bind(py))?
                && (self.position, self.average_rank, self.rankings_count, self.borda, self.copeland)
                    == (o.position, o.average_rank, o.rankings_count, o.borda, o.copeland)
                && self.first_place_votes == o.first_place_votes)
        })
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        let fields =
            (&self.candidate, self.position, self.average_rank, self.rankings_count, self.borda, self.copeland);
        PyTuple::new(py, [fields.into_pyobject(py)?.into_any(), self.first_place_votes.into_pyobject(py)?.into_any()])?
            .hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "CandidateScore(candidate={}, position={}, average_rank={}, rankings_count={}, borda={}, copeland={}, \
             first_place_votes={})",
            self.candidate.bind(py).repr()?,
            self.position,
            float_repr(py, self.average_rank)?,
            self.rankings_count,
            float_repr(py, Some(self.borda))?,
            float_repr(py, Some(self.copeland))?,
            self.first_place_votes
        ))
    }
}

/// One model's leaderboard rating (Elo-like, mean 1000) with its bootstrap interval, pairwise wins
/// and comparisons (rust/ranking/src/leaderboard.rs).
#[pyclass(frozen, get_all, module = "core._ranking")]
pub(crate) struct Rating {
    pub(crate) model: Py<PyString>,
    pub(crate) rating: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
    pub(crate) wins: f64,
    pub(crate) comparisons: u64,
}

#[pymethods]
impl Rating {
    #[new]
    fn new(model: Py<PyString>, rating: f64, low: f64, high: f64, wins: f64, comparisons: u64) -> Self {
        Rating { model, rating, low, high, wins, comparisons }
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Self>() else { return Ok(py.NotImplemented()) };
        let o = other.get();
        compare(py, op, || {
            Ok(equal(self.model.bind(py), o.model.bind(py))?
                && (self.rating, self.low, self.high, self.wins, self.comparisons)
                    == (o.rating, o.low, o.high, o.wins, o.comparisons))
        })
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        (&self.model, self.rating, self.low, self.high, self.wins, self.comparisons).into_pyobject(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Rating(model={}, rating={}, low={}, high={}, wins={}, comparisons={})",
            self.model.bind(py).repr()?,
            float_repr(py, Some(self.rating))?,
            float_repr(py, Some(self.low))?,
            float_repr(py, Some(self.high))?,
            float_repr(py, Some(self.wins))?,
            self.comparisons
        ))
    }
}

/// `==` and `!=` by fields; other comparisons are not defined (as for a dataclass).
fn compare(py: Python<'_>, op: CompareOp, same: impl FnOnce() -> PyResult<bool>) -> PyResult<Py<PyAny>> {
    let answer = match op {
        CompareOp::Eq => same()?,
        CompareOp::Ne => !same()?,
        _ => return Ok(py.NotImplemented()),
    };
    Ok(PyBool::new(py, answer).to_owned().into_any().unbind())
}

/// Python's `==` of two objects.
fn equal<T>(a: &Bound<'_, T>, b: &Bound<'_, T>) -> PyResult<bool> {
    a.as_any().eq(b)
}

/// A float as Python prints it (`1.0`, `None`).
fn float_repr(py: Python<'_>, value: Option<f64>) -> PyResult<String> {
    Ok(value.into_pyobject(py)?.repr()?.to_string())
}
