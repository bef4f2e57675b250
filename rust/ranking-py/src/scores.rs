//! The binding of rubric scores (`ranking::scores`): conversion only, the rules live in the crate.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::{strs, value_error};

fn rubric(criteria: &[Bound<'_, PyString>], low: f64, high: f64) -> PyResult<ranking::Rubric> {
    ranking::Rubric::new(&strs(criteria)?, low, high).map_err(value_error)
}

/// parse_scores(text, labels, criteria, low, high) -> {label: {criterion: value}} with the caller's
/// label and criterion strings, only labels that received a score (format: rust/ranking/src/scores.rs)
#[pyfunction]
pub fn parse_scores<'py>(
    py: Python<'py>,
    text: &str,
    labels: Vec<Bound<'py, PyString>>,
    criteria: Vec<Bound<'py, PyString>>,
    low: f64,
    high: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let letters = ranking::validate_labels(&strs(&labels)?).map_err(value_error)?;
    let rubric = rubric(&criteria, low, high)?;
    let sheet = ranking::scores::scores_with_letters(text, &letters, &rubric);
    let out = PyDict::new(py);
    for (letter, values) in sheet {
        let Some(i) = letters.iter().position(|&l| l == letter) else { continue };
        out.set_item(&labels[i], values_dict(py, &criteria, &values)?)?;
    }
    Ok(out)
}

fn values_dict<'py>(
    py: Python<'py>,
    criteria: &[Bound<'py, PyString>],
    values: &[Option<f64>],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (criterion, value) in criteria.iter().zip(values) {
        if let Some(v) = value {
            out.set_item(criterion, v)?;
        }
    }
    Ok(out)
}

/// rubric_summary(sheets, criteria, low, high) -> ({candidate: {criterion: mean}}, consensus | None)
/// with `sheets` a sequence of {candidate: {criterion: score}} (one per reviewer)
#[pyfunction]
pub fn rubric_summary<'py>(
    py: Python<'py>,
    sheets: Vec<HashMap<String, HashMap<String, f64>>>,
    criteria: Vec<Bound<'py, PyString>>,
    low: f64,
    high: f64,
) -> PyResult<(Bound<'py, PyDict>, Option<f64>)> {
    let rubric = rubric(&criteria, low, high)?;
    let names = strs(&criteria)?;
    let mut candidates: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut converted = Vec::with_capacity(sheets.len());
    for sheet in &sheets {
        let mut rows = Vec::with_capacity(sheet.len());
        for (candidate, scores) in sheet {
            let i = *index.entry(candidate.as_str()).or_insert_with(|| {
                candidates.push(candidate.as_str());
                candidates.len() - 1
            });
            let mut values = vec![None; names.len()];
            for (criterion, value) in scores {
                let j = names
                    .iter()
                    .position(|n| n == criterion)
                    .ok_or_else(|| PyValueError::new_err(format!("criterion {criterion:?} is not in the rubric")))?;
                values[j] = Some(*value);
            }
            rows.push((i, values));
        }
        converted.push(rows);
    }
    let summary = ranking::rubric_summary(&converted, candidates.len(), &rubric).map_err(value_error)?;
    let means = PyDict::new(py);
    for (candidate, values) in candidates.iter().zip(&summary.means) {
        means.set_item(candidate, values_dict(py, &criteria, values)?)?;
    }
    Ok((means, summary.consensus))
}
