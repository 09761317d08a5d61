//! `Context`: one Vulkan device (the host API's `Context`), the maker of modules and buffers.

use crate::buffer::Buffer;
use crate::errors::to_py;
use crate::module::Module;
use crate::stream::Stream;
use pisa_vk::{DeviceInfo, DeviceSelector};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A device to run PISA kernels on.
#[pyclass(frozen, module = "pisa_vk._native")]
pub struct Context {
    pub(crate) inner: pisa_vk::Context,
}

#[pymethods]
impl Context {
    /// Opens `device`: `None` for the default (`PISA_VK_DEVICE`, else the best device), an
    /// `int` for an index of `Context.devices()`, a `str` for a device UUID or a name
    /// substring.
    #[new]
    #[pyo3(signature = (device=None, checked=None))]
    fn new(
        py: Python<'_>,
        device: Option<&Bound<'_, PyAny>>,
        checked: Option<bool>,
    ) -> PyResult<Context> {
        let selector = match device {
            None => DeviceSelector::Default,
            Some(d) if d.is_instance_of::<pyo3::types::PyBool>() => {
                return Err(PyTypeError::new_err("device must be None, an int or a str"))
            }
            Some(d) => match (d.extract::<usize>(), d.extract::<String>()) {
                (Ok(i), _) => DeviceSelector::Index(i),
                (_, Ok(s)) => DeviceSelector::NameContains(s),
                _ => {
                    return Err(PyTypeError::new_err(
                        "device must be None, an int (index) or a str (UUID or name substring)",
                    ))
                }
            },
        };
        let inner = py
            .detach(|| pisa_vk::Context::with_device(selector))
            .map_err(to_py)?;
        let inner = match checked {
            Some(on) => inner.with_checking(on),
            None => inner,
        };
        Ok(Context { inner })
    }

    /// Every Vulkan device of the machine, as dicts (see `device`).
    #[staticmethod]
    fn devices<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let infos = py.detach(pisa_vk::Context::devices).map_err(to_py)?;
        infos.iter().map(|i| device_dict(py, i)).collect()
    }

    /// The device in use: name, type, driver, Vulkan version and compute limits.
    #[getter]
    fn device<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        device_dict(py, self.inner.info())
    }

    /// Translates the modules `[(name, text), ...]`, links them into one program and loads
    /// it (GIL released meanwhile). `name` is what diagnostics call the file; `stack_depth`
    /// bounds the nested activations of a call cycle (`Options::stack_depth`, default 64).
    #[pyo3(signature = (sources, stack_depth=None))]
    fn load(
        &self,
        py: Python<'_>,
        sources: Vec<(String, String)>,
        stack_depth: Option<u32>,
    ) -> PyResult<Module> {
        let refs: Vec<(&str, &str)> = sources
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let mut options = pisa_vk::Options::default();
        if let Some(depth) = stack_depth {
            options.stack_depth = depth;
        }
        let inner = py
            .detach(|| pisa_vk::Module::from_sources_with(&self.inner, &refs, &options))
            .map_err(to_py)?;
        Ok(Module { inner })
    }

    /// A new stream: commands recorded for one submission (`timed`: with the GPU time of
    /// each command).
    fn stream(slf: &Bound<'_, Self>, timed: bool) -> PyResult<Stream> {
        Stream::new(slf.clone().unbind(), timed)
    }

    /// A zero-initialized device buffer of `nbytes` bytes.
    fn buffer(&self, nbytes: usize) -> PyResult<Buffer> {
        let inner = self.inner.zeroed::<u8>(nbytes).map_err(to_py)?;
        Ok(Buffer::new(inner))
    }

    /// The memory of `array` (a writable, C-contiguous buffer export: a NumPy array) as a
    /// buffer without a copy (`VK_EXT_external_memory_host`): `(Buffer, None)`, or `(None,
    /// reason)` when it cannot be imported here (the caller copies). The buffer holds a
    /// reference to `array` until the device memory is freed (a deferred decref when that
    /// happens without the GIL, so no native lock ever waits for it).
    fn import_host(&self, array: &Bound<'_, PyAny>) -> PyResult<(Option<Buffer>, Option<String>)> {
        let view = pyo3::buffer::PyUntypedBuffer::get(array)?;
        if !view.is_c_contiguous() {
            return Ok((None, Some("the array is not C-contiguous".into())));
        }
        if view.readonly() {
            return Ok((None, Some("the array is read-only".into())));
        }
        let (ptr, len) = (view.buf_ptr().cast::<u8>(), view.len_bytes());
        let keep: pisa_vk::KeepAlive = Box::new(array.clone().unbind());
        // SAFETY: the export is C-contiguous, writable and `len` bytes long; `keep` holds a
        // reference to its owner, which keeps the memory allocated (NumPy frees an array's
        // data only with the array, and refuses to resize an array that is referenced).
        let imported = unsafe { self.inner.import_host::<u8>(ptr, len, keep) }.map_err(to_py)?;
        drop(view);
        Ok(match imported {
            Ok(b) => (Some(Buffer::new(b)), None),
            Err(refused) => (None, Some(refused.0)),
        })
    }

    /// `minImportedHostPointerAlignment` of the device, or `None` without host imports.
    fn host_import_alignment(&self) -> Option<u64> {
        self.inner.runtime().host_import_alignment()
    }

    /// The known driver bugs the context's probes found, as a dict (`masked_merge`).
    fn driver_bugs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("masked_merge", self.inner.driver_bugs().masked_merge)?;
        Ok(d)
    }

    /// The warnings those bugs call for, one line each (empty when none was found).
    fn driver_warnings(&self) -> Vec<&'static str> {
        self.inner.driver_bugs().warnings()
    }

    /// Takes the validation-layer messages reported since the last call (empty unless
    /// `PISA_VK_VALIDATION=1`).
    fn validation_messages(&self) -> Vec<String> {
        self.inner.validation_messages()
    }
}

/// A device's description as a dict.
fn device_dict<'py>(py: Python<'py>, i: &DeviceInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("index", i.index)?;
    d.set_item("name", &i.name)?;
    d.set_item("uuid", i.uuid_text())?;
    d.set_item("type", format!("{:?}", i.device_type).to_lowercase())?;
    d.set_item("driver", &i.driver_name)?;
    d.set_item("driver_info", &i.driver_info)?;
    d.set_item("api_version", i.api_version)?;
    d.set_item("subgroup_size", i.subgroup_size)?;
    d.set_item("max_workgroup_size", i.max_workgroup_size)?;
    d.set_item("max_workgroup_invocations", i.max_workgroup_invocations)?;
    d.set_item("max_workgroup_count", i.max_workgroup_count)?;
    d.set_item("max_shared_memory", i.max_shared_memory)?;
    d.set_item("max_allocation_size", i.max_allocation_size)?;
    d.set_item("compute_queues", i.compute_queues)?;
    Ok(d)
}
