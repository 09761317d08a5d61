//! `Module`: a loaded PISA program (the host API's `Module`): its kernels' parameter layouts,
//! its `.host_access` symbols as bytes, and dispatch with the GIL released.

use crate::bytes::Bytes;
use crate::errors::to_py;
use pisa_vk::{Arg, Dim3, Launch};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

/// A PISA program loaded on a device.
#[pyclass(frozen, module = "pisa_vk._native")]
pub struct Module {
    pub(crate) inner: pisa_vk::Module,
}

/// `(name, [(param, offset, size, align, kind), ...], reqd_work_group_size)` of one kernel;
/// `kind` is the parameter's argument kind as a dict (`crate::kinds::kind_dict`).
pub(crate) type KernelRow<'py> = (
    String,
    Vec<(String, u32, u32, u32, Bound<'py, PyDict>)>,
    Option<[u32; 3]>,
);

/// `(name, host_access, exported, space, size)` of one module variable.
type GlobalRow = (String, Option<String>, bool, String, u64);

#[pymethods]
impl Module {
    /// Every kernel with its `.param` layout, in declaration order.
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Vec<KernelRow<'py>>> {
        let r = self.inner.reflection();
        r.kernels
            .iter()
            .map(|k| {
                let params = k
                    .params
                    .iter()
                    .map(|p| {
                        let kind = crate::kinds::kind_dict(py, p)?;
                        Ok((p.name.clone(), p.offset, p.size, p.align, kind))
                    })
                    .collect::<PyResult<_>>()?;
                Ok((k.name.clone(), params, k.reqd_work_group_size))
            })
            .collect()
    }

    /// Refuses (`ArgumentError`) argument `index` of `kernel` when what it is, `given`
    /// (`("raw",)`, `("int", bits, negative)`, `("float", bits)`, `("buffer", bits, class)`
    /// with `bits` 0 for an unknown element and `class` `"float"`, `"int"` or `None`),
    /// clearly contradicts how the kernel uses the parameter (spec-notes §89).
    fn check_arg(&self, kernel: &str, index: usize, given: &Bound<'_, PyTuple>) -> PyResult<()> {
        let r = self.inner.reflection();
        let Some(p) = r.kernel(kernel).and_then(|k| k.params.get(index)) else {
            return Ok(()); // the count is checked at dispatch
        };
        let given = crate::kinds::given(given)?;
        pisa_vk::check_arg_kind(kernel, index, p, given).map_err(to_py)
    }

    /// Every variable of the globals arena (`.global` and `.const` module variables).
    fn globals(&self) -> Vec<GlobalRow> {
        let r = self.inner.reflection();
        r.globals
            .iter()
            .map(|g| {
                (
                    g.name.clone(),
                    g.host_access.clone(),
                    g.exported,
                    g.space.clone(),
                    g.size,
                )
            })
            .collect()
    }

    /// `(variable name, space, size in bytes, device address)` of the symbol `name`
    /// (`.host_access` name, exported name, or the only variable of that name).
    fn symbol(&self, name: &str) -> PyResult<(String, String, u64, u64)> {
        let s = self.inner.symbol(name).map_err(to_py)?;
        let g = self
            .inner
            .reflection()
            .symbol(name)
            .map_err(|_| PyValueError::new_err("symbol lookups disagree"))?;
        Ok((g.name.clone(), g.space.clone(), s.size(), s.address()))
    }

    /// The bytes of the symbol `name`.
    fn read_symbol<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let s = self.inner.symbol(name).map_err(to_py)?;
        let bytes = s.read::<u8>().map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Overwrites the symbol `name` with the bytes of `data` (exactly its size).
    fn write_symbol(&self, name: &str, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = Bytes::get(data, false)?;
        let s = self.inner.symbol(name).map_err(to_py)?;
        s.write(data.as_slice()).map_err(to_py)
    }

    /// Builds (and caches) the pipeline of `kernel` for work-groups of `local`, reporting a
    /// bad work-group size or a missing device feature before the first dispatch.
    fn prepare(&self, py: Python<'_>, kernel: &str, local: Vec<u64>) -> PyResult<()> {
        let local = dim3(&local)?;
        py.detach(|| self.inner.prepare(kernel, local))
            .map_err(to_py)
    }

    /// Runs `kernel` over `global` work-items (1 to 3 sizes) in work-groups of `local`, with
    /// `%globaloffset` = `offset` and per `.param` its `bytes` (checked against its size) or a
    /// native `Buffer` (its address; one of another context is refused),
    /// and waits for it with the GIL released; Ctrl-C (`KeyboardInterrupt`) meanwhile
    /// cancels the launch, which stops within a second (`crate::wait`).
    fn dispatch(
        &self,
        py: Python<'_>,
        kernel: &str,
        global: Vec<u64>,
        local: Vec<u64>,
        offset: [u64; 3],
        args: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let launch = launch(&global, &local, offset)?;
        let args: Vec<Arg> = crate::buffer::kernel_args(&args)?;
        let submitted = py.detach(|| {
            let mut stream = self.inner.context().stream();
            stream.launch(&self.inner, kernel, &launch, &args[..])?;
            stream.submit()
        });
        let submission = submitted.map_err(to_py)?;
        crate::wait::wait_interruptible(py, submission)?
            .map(|_| ())
            .map_err(to_py)
    }
}

/// The launch over `global` work-items (1 to 3 sizes) in work-groups of `local`, from
/// `offset`.
pub(crate) fn launch(global: &[u64], local: &[u64], offset: [u64; 3]) -> PyResult<Launch> {
    Ok(Launch {
        global: dim3(global)?,
        local: dim3(local)?,
        offset,
    })
}

/// 1 to 3 sizes as a [`Dim3`] (missing dimensions are 1).
fn dim3(sizes: &[u64]) -> PyResult<Dim3> {
    if sizes.is_empty() || sizes.len() > 3 {
        return Err(PyValueError::new_err(format!(
            "a size has 1 to 3 dimensions, {} given",
            sizes.len()
        )));
    }
    let mut size = [1u64; 3];
    size[..sizes.len()].copy_from_slice(sizes);
    Ok(Dim3 {
        size,
        dims: sizes.len() as u32,
    })
}
