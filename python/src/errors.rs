//! Host-API errors as Python exceptions of `pisa_vk.errors` (defined in Python so that they
//! can derive from both `PisaError` and the matching built-in: `TypeError`, `LookupError`...).
//!
//! The message is the host API's `Display` text: for invalid PISA the rendered diagnostics
//! (`file:line:col: error: ...`, the source line, a caret), which `CompileError` also holds
//! one by one in `errors`.

use pisa_vk::Error;
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;

/// The Python exception for `e`.
pub fn to_py(e: Error) -> PyErr {
    Python::attach(|py| exception(py, &e).unwrap_or_else(|why| why))
}

/// The `pisa_vk.errors` class that stands for `e`.
fn class_name(e: &Error) -> &'static str {
    use pisa_runtime::Error as Rt;
    #[allow(unreachable_patterns)] // a variant added to the host API falls back to PisaError
    match e {
        Error::Invalid(_) => "CompileError",
        Error::ArgumentCount { .. }
        | Error::ArgumentSize { .. }
        | Error::ArgumentKind { .. }
        | Error::ForeignBuffer { .. } => "ArgumentError",
        Error::UnknownKernel { .. } | Error::UnknownSymbol(_) | Error::AmbiguousSymbol { .. } => {
            "NotFoundError"
        }
        Error::SizeMismatch { .. }
        | Error::Length { .. }
        | Error::Range { .. }
        | Error::ElementSize { .. } => "SizeError",
        Error::Launch { .. } | Error::Runtime(Rt::InvalidArgument(_)) => "LaunchError",
        Error::Runtime(Rt::Timeout { .. }) => "KernelTimeout",
        Error::Runtime(Rt::DeviceBusy { .. }) => "DeviceBusy",
        Error::Runtime(_) | Error::SubgroupSize { .. } => "DeviceError",
        Error::MemoryViolation(_) => "MemoryViolation",
        Error::StackOverflow(_) => "StackOverflow",
        Error::Scratch { .. } => "ScratchError",
        _ => "PisaError",
    }
}

/// A `pisa_vk.errors.StreamError` saying `message`: a stream or submission used out of order.
pub fn stream_error(message: &str) -> PyErr {
    Python::attach(|py| {
        let class = py.import("pisa_vk.errors")?.getattr("StreamError")?;
        Ok::<_, PyErr>(PyErr::from_value(class.call1((message,))?))
    })
    .unwrap_or_else(|why| why)
}

fn exception(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    if let Error::Io { path, source } = e {
        let errno = source.raw_os_error().unwrap_or(0);
        return Ok(PyOSError::new_err((
            errno,
            source.to_string(),
            path.clone(),
        )));
    }
    let errors = py.import("pisa_vk.errors")?;
    let class = errors.getattr(class_name(e))?;
    let value = match e {
        Error::Invalid(d) => {
            let each: Vec<(String, usize, usize, String)> = d
                .errors
                .iter()
                .map(|x| {
                    let (file, line, col) = d.position(x.span);
                    (file.to_string(), line, col, x.message.clone())
                })
                .collect();
            class.call1((e.to_string(), each))?
        }
        Error::StackOverflow(o) => {
            let (file, line, col, call) = match &o.site.location {
                Some(l) => (
                    Some(l.file.clone()),
                    Some(l.line),
                    Some(l.col),
                    Some(l.text.clone()),
                ),
                None => (None, None, None, None),
            };
            let w = &o.work_item;
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("kernel", &o.kernel)?;
            kw.set_item("function", &o.site.function)?;
            kw.set_item("file", file)?;
            kw.set_item("line", line)?;
            kw.set_item("column", col)?;
            kw.set_item("call", call)?;
            kw.set_item("work_item", w.global)?;
            kw.set_item("local_id", w.local)?;
            kw.set_item("group_id", w.group)?;
            kw.set_item("depth", o.depth)?;
            kw.set_item("further", o.further)?;
            class.call((e.to_string(),), Some(&kw))?
        }
        Error::Scratch {
            kernel,
            size,
            stride,
            invocations,
            limit,
        } => {
            let kw = pyo3::types::PyDict::new(py);
            kw.set_item("kernel", kernel)?;
            kw.set_item("size", size)?;
            kw.set_item("stride", stride)?;
            kw.set_item("invocations", invocations)?;
            kw.set_item("limit", limit)?;
            class.call((e.to_string(),), Some(&kw))?
        }
        _ => class.call1((e.to_string(),))?,
    };
    if value.is_instance_of::<pyo3::exceptions::PyBaseException>() {
        Ok(PyErr::from_value(value))
    } else {
        Ok(PyRuntimeError::new_err(e.to_string()))
    }
}
