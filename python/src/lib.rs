//! The Python package `nodemaint`, built from the root crate's public API
//! with PyO3: the pure authority model (`model`) and the operations on a
//! database (`ops`), with the library's errors raised as the exceptions of
//! `nodemaint.errors` (`errors`). It adds no rules of its own: every
//! decision is the root crate's, so Python and `nodemaint serve` cannot
//! disagree.

mod errors;
mod model;
mod ops;

use pyo3::prelude::*;

/// The native half of `nodemaint`; import from `nodemaint`.
#[pymodule]
mod _native {
    #[pymodule_export]
    use crate::model::{
        _bench_decide, _bench_extract, PyCaller, PyDecision, PyEntry, PyEvent, PyNode, PyPolicy, bulk_release_decision,
        derive_scope, entry_types, mask, release_decision, release_decisions, synthesised_reason,
    };
    #[pymodule_export]
    use crate::ops::PyMaintenance;

    use pyo3::prelude::*;

    /// Panics, for the tests of the boundary: a Rust panic must reach
    /// Python as `nodemaint.InternalError`, never abort or unwind into it.
    #[pyfunction]
    fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
        let outcome = std::panic::catch_unwind(|| -> () { panic!("deliberately, for the tests") });
        outcome.map_err(|payload| crate::errors::panicked(py, payload))
    }
}
