//! The binding of the composition measure (`ranking::composition`): conversion only.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::{strs, value_error};

type Sentence = (usize, usize, usize, Vec<(usize, f64)>);

/// composition(synthesis, groups) -> (shares, own, sentences) with `groups` a sequence of sequences
/// of texts, `shares` one per group, `sentences` (start, end, words, [(group, containment)]) in
/// character offsets (the method: rust/ranking/src/composition.rs). The GIL is released meanwhile.
#[pyfunction]
pub fn composition(
    py: Python<'_>,
    synthesis: &str,
    groups: Vec<Vec<Bound<'_, PyString>>>,
) -> PyResult<(Vec<f64>, f64, Vec<Sentence>)> {
    let borrowed: Vec<Vec<&str>> = groups.iter().map(|g| strs(g)).collect::<PyResult<_>>()?;
    let measured = py.detach(|| ranking::composition(synthesis, &borrowed)).map_err(value_error)?;
    let sentences = measured.sentences.into_iter().map(|s| (s.start, s.end, s.words, s.support)).collect();
    Ok((measured.shares, measured.own, sentences))
}
