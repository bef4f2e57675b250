//! The binding of the disagreement section and its measure (`ranking::disagreement`): conversion only.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::{strs, value_error};

type Side = (Vec<String>, String);
type Measured = (Vec<String>, Vec<(usize, String)>);
type Written = (Vec<String>, Vec<(String, Vec<Side>)>, Vec<(String, String)>, Vec<String>);

/// parse_disagreement(text, labels) -> (agreed, contested, unique, open) | None with `contested`
/// [(point, [(labels, position)])] and `unique` [(label, claim)] (the format:
/// rust/ranking/src/disagreement.rs).
#[pyfunction]
pub fn parse_disagreement(text: &str, labels: Vec<Bound<'_, PyString>>) -> PyResult<Option<Written>> {
    let letters = ranking::validate_labels(&strs(&labels)?).map_err(value_error)?;
    let Some(d) = ranking::disagreement::parse_with_letters(text, &letters) else { return Ok(None) };
    let label = |c: &char| c.to_string();
    let contested = d
        .contested
        .into_iter()
        .map(|p| (p.point, p.sides.into_iter().map(|s| (s.members.iter().map(label).collect(), s.position)).collect()))
        .collect();
    let unique = d.unique.into_iter().map(|(c, claim)| (label(&c), claim)).collect();
    Ok(Some((d.agreed, contested, unique, d.open)))
}

/// measure_disagreement(answers) -> (agreed, [(answer index, claim)]) (the GIL is released).
#[pyfunction]
pub fn measure_disagreement(py: Python<'_>, answers: Vec<Bound<'_, PyString>>) -> PyResult<Measured> {
    let borrowed = strs(&answers)?;
    let measured = py.detach(|| ranking::measure_disagreement(&borrowed));
    Ok((measured.agreed, measured.unique))
}

/// is_disagreement_header(line) -> bool: whether a line opens the section.
#[pyfunction]
pub fn is_disagreement_header(line: &str) -> bool {
    ranking::disagreement::is_header(line)
}
