//! Keyword options of `lamina.open(...)` / `lamina.Db(...)`, turned into
//! engine `Options`. An unknown name is a `TypeError`, a bad value a
//! `ValueError`, as for any Python function.

use lamina::{Compression, Durability, Options};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The option names `Db(...)` accepts, for messages and the stubs.
pub const NAMES: &[&str] = &[
    "create_if_missing",
    "error_if_exists",
    "read_only",
    "durability",
    "cache_size",
    "memtable_size",
    "block_size",
    "compression",
    "bottom_compression",
    "bloom_bits_per_key",
    "max_open_tables",
    "l0_compaction_trigger",
    "l0_slowdown_trigger",
    "l0_stop_trigger",
    "level_base_size",
    "level_multiplier",
    "target_table_size",
    "blob_threshold",
    "blob_gc_ratio",
    "memory_budget",
];

/// `'sync'`, `'os'` or `'none'`.
pub fn durability(v: &Bound<'_, PyAny>) -> PyResult<Durability> {
    let s: String = v.extract()?;
    match s.as_str() {
        "sync" => Ok(Durability::Sync),
        "os" => Ok(Durability::Os),
        "none" => Ok(Durability::None),
        _ => Err(PyValueError::new_err(format!(
            "durability must be 'sync', 'os' or 'none', not {s:?}"
        ))),
    }
}

fn compression(v: &Bound<'_, PyAny>) -> PyResult<Compression> {
    if v.is_none() {
        return Ok(Compression::None);
    }
    let s: String = v.extract()?;
    match s.as_str() {
        "none" => Ok(Compression::None),
        "lz4" => Ok(Compression::Lz4),
        "zstd" => Ok(Compression::Zstd),
        _ => Err(PyValueError::new_err(format!(
            "compression must be 'none', 'lz4' or 'zstd', not {s:?}"
        ))),
    }
}

/// A size or count: an int greater than zero (or equal, when `zero_ok`).
fn count<T: TryFrom<u64>>(name: &str, v: &Bound<'_, PyAny>, zero_ok: bool) -> PyResult<T> {
    let n: u64 = v
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a non-negative int")))?;
    if n == 0 && !zero_ok {
        return Err(PyValueError::new_err(format!("{name} must be positive")));
    }
    T::try_from(n).map_err(|_| PyValueError::new_err(format!("{name} is too large")))
}

/// A share: a number from 0 to 1.
fn ratio(name: &str, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    let r: f64 = v
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a number")))?;
    if !(0.0..=1.0).contains(&r) {
        return Err(PyValueError::new_err(format!(
            "{name} must be between 0 and 1, not {r}"
        )));
    }
    Ok(r)
}

/// Engine options from keyword arguments, starting from the defaults.
pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let mut o = Options::default();
    let Some(kwargs) = kwargs else { return Ok(o) };
    for (name, v) in kwargs.iter() {
        let name: String = name.extract()?;
        match name.as_str() {
            "create_if_missing" => o.create_if_missing = v.is_truthy()?,
            "error_if_exists" => o.error_if_exists = v.is_truthy()?,
            "read_only" => o.read_only = v.is_truthy()?,
            "durability" => o.durability = durability(&v)?,
            "cache_size" => o.cache_size = count(&name, &v, false)?,
            "memtable_size" => o.memtable_size = count(&name, &v, false)?,
            "block_size" => o.block_size = count(&name, &v, false)?,
            "compression" => o.compression = compression(&v)?,
            "bottom_compression" => o.bottom_compression = compression(&v)?,
            "bloom_bits_per_key" => o.bloom_bits_per_key = count(&name, &v, true)?,
            "max_open_tables" => o.max_open_tables = count(&name, &v, false)?,
            "l0_compaction_trigger" => o.l0_compaction_trigger = count(&name, &v, false)?,
            "l0_slowdown_trigger" => o.l0_slowdown_trigger = count(&name, &v, false)?,
            "l0_stop_trigger" => o.l0_stop_trigger = count(&name, &v, false)?,
            "level_base_size" => o.level_base_size = count(&name, &v, false)?,
            "level_multiplier" => o.level_multiplier = count(&name, &v, false)?,
            "target_table_size" => o.target_table_size = count(&name, &v, false)?,
            "blob_threshold" => o.blob_threshold = count(&name, &v, false)?,
            "blob_gc_ratio" => o.blob_gc_ratio = ratio(&name, &v)?,
            "memory_budget" => o.memory_budget = count(&name, &v, false)?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "unknown lamina option {name:?} (known: {})",
                    NAMES.join(", ")
                )))
            }
        }
    }
    Ok(o)
}
