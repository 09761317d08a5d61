//! Argument kinds between Python and the host API: a kernel parameter's kind as a dict for
//! `pisa_vk._args` (what it copies and converts), and what a Python argument is as a
//! [`Given`] for the host API's check (spec-notes §89).

use pisa_vk::{Element, ElementClass, Given, ParamInfo, ParamKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// `{"kind": "address"|"int"|"float"|"unknown", "read", "write", "bits", "signed",
/// "text", "at"}` of parameter `p` (absent keys: not known for that kind).
pub fn kind_dict<'py>(py: Python<'py>, p: &ParamInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match &p.kind {
        ParamKind::Unknown => d.set_item("kind", "unknown")?,
        ParamKind::Address {
            space,
            element,
            read,
            write,
        } => {
            d.set_item("kind", "address")?;
            d.set_item("space", space)?;
            d.set_item("read", read)?;
            d.set_item("write", write)?;
            if let Some(e) = element {
                d.set_item("bits", e.bits)?;
            }
        }
        ParamKind::Int { bits, signed } => {
            d.set_item("kind", "int")?;
            d.set_item("bits", bits)?;
            d.set_item("signed", signed)?;
        }
        ParamKind::Float { bits } => {
            d.set_item("kind", "float")?;
            d.set_item("bits", bits)?;
        }
    }
    d.set_item("text", p.kind.to_string())?;
    if let Some(l) = &p.kind_at {
        d.set_item(
            "at",
            format!("{}:{}:{}: `{}`", l.file, l.line, l.col, l.text),
        )?;
    }
    Ok(d)
}

/// The [`Given`] of a tuple `("raw",)`, `("int", bits, negative)`, `("float", bits)` or
/// `("buffer", bits, class)`.
pub fn given(t: &Bound<'_, PyTuple>) -> PyResult<Given> {
    let tag: String = t.get_item(0)?.extract()?;
    Ok(match tag.as_str() {
        "raw" => Given::Raw,
        "int" => Given::Int {
            bits: t.get_item(1)?.extract()?,
            negative: t.get_item(2)?.extract()?,
        },
        "float" => Given::Float {
            bits: t.get_item(1)?.extract()?,
        },
        "buffer" => {
            let bits: u32 = t.get_item(1)?.extract()?;
            let class: Option<String> = t.get_item(2)?.extract()?;
            let class = match class.as_deref() {
                Some("float") => Some(ElementClass::Float),
                Some("int") => Some(ElementClass::Int),
                _ => None,
            };
            Given::Buffer {
                element: (bits != 0).then_some(Element { bits, class }),
            }
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown argument tag `{other}`"
            )))
        }
    })
}
