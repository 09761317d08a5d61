//! `ReferenceModule`: a program on the CPU reference interpreter (the host API's
//! `pisa_vk::reference`, what `pisa-vk run --device reference` runs), with its sanitizers
//! (`--sanitize race|init|sync|all`). A sanitizer finding raises
//! `pisa_vk.errors.SanitizerError` carrying the structured, deduplicated reports: the facts
//! the CLI's `--json` prints.

use crate::errors::to_py;
use pisa_vk::reference::{Config, Data, Finding, Job, Program, Reference, Sanitize};
use pisa_vk::ParamInfo;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::{Arc, Mutex};

/// A linked program loaded on a reference machine of its own: module variables keep their
/// values from one call to the next, as on a device.
#[pyclass(frozen, module = "pisa_vk._native")]
pub struct ReferenceModule {
    machine: Mutex<Reference<Arc<Program>>>,
    /// `(name, params, reqd_work_group_size)` of every kernel, in declaration order.
    kernels: Vec<(String, Vec<ParamInfo>, Option<[u32; 3]>)>,
}

#[pymethods]
impl ReferenceModule {
    /// Links the modules `[(name, text), ...]` and loads them on a fresh machine with the
    /// sanitizers `sanitize` (`"race,init"`, `"all"`, `""` for none), `stack_depth` and
    /// `subgroup_size` (the reference's defaults when `None`).
    #[new]
    #[pyo3(signature = (sources, sanitize, stack_depth=None, subgroup_size=None))]
    fn new(
        py: Python<'_>,
        sources: Vec<(String, String)>,
        sanitize: &str,
        stack_depth: Option<u32>,
        subgroup_size: Option<u32>,
    ) -> PyResult<ReferenceModule> {
        let sanitize = if sanitize.is_empty() {
            Sanitize::NONE
        } else {
            Sanitize::parse(sanitize).map_err(PyValueError::new_err)?
        };
        let mut config = Config::default();
        if let Some(d) = stack_depth {
            config.stack_depth = d;
        }
        if let Some(s) = subgroup_size {
            if !(1..=128).contains(&s) || !s.is_power_of_two() {
                return Err(PyValueError::new_err(format!(
                    "subgroup_size must be a power of two from 1 to 128, not {s}"
                )));
            }
            config.subgroup_size = s;
        }
        let refs: Vec<(&str, &str)> = sources
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let program = py
            .detach(|| pisa_vk::reference::link_sources(&refs))
            .map_err(to_py)?;
        let kernels = pisa_vk::reference::kernels_of(&program);
        let mut machine = Reference::new(Arc::new(program), config).map_err(to_py)?;
        machine.set_sanitize(sanitize);
        Ok(ReferenceModule {
            machine: Mutex::new(machine),
            kernels,
        })
    }

    /// Every kernel with its `.param` layout, as `Module.kernels` gives them.
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Vec<crate::module::KernelRow<'py>>> {
        self.kernels
            .iter()
            .map(|(name, params, reqd)| {
                let params = params
                    .iter()
                    .map(|p| {
                        let kind = crate::kinds::kind_dict(py, p)?;
                        Ok((p.name.clone(), p.offset, p.size, p.align, kind))
                    })
                    .collect::<PyResult<_>>()?;
                Ok((name.clone(), params, *reqd))
            })
            .collect()
    }

    /// As `Module.check_arg`: refuses an argument whose kind contradicts the parameter's.
    fn check_arg(&self, kernel: &str, index: usize, given: &Bound<'_, PyTuple>) -> PyResult<()> {
        let Some(p) = self
            .kernels
            .iter()
            .find(|k| k.0 == kernel)
            .and_then(|k| k.1.get(index))
        else {
            return Ok(());
        };
        let given = crate::kinds::given(given)?;
        pisa_vk::check_arg_kind(kernel, index, p, given).map_err(to_py)
    }

    /// Runs `kernel` over `global` work-items in work-groups of `local` from `offset`, with
    /// per `.param` its bytes (`bytes`) or a buffer's initial contents (any other object
    /// with the buffer protocol: its own memory in the machine), with the GIL released.
    /// Returns the final bytes of each buffer, in order; raises `SanitizerError` when the
    /// sanitizers found something (the run's own error, if any, as its `error`).
    fn run<'py>(
        &self,
        py: Python<'py>,
        kernel: &str,
        global: Vec<u64>,
        local: Vec<u64>,
        offset: [u64; 3],
        args: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let launch = crate::module::launch(&global, &local, offset)?;
        let args = args
            .iter()
            .map(|a| match a.cast::<PyBytes>() {
                Ok(b) => Ok(Data::Scalar(b.as_bytes().to_vec())),
                Err(_) => Ok(Data::Buffer(
                    crate::bytes::Bytes::get(a, false)?.as_slice().to_vec(),
                )),
            })
            .collect::<PyResult<Vec<Data>>>()?;
        let job = Job {
            kernel: kernel.trim_start_matches('@').to_string(),
            global: launch.global,
            local: Some(launch.local),
            offset: launch.offset,
            args,
            sets: Vec::new(),
        };
        let (outputs, findings) = py.detach(|| {
            let mut m = self.machine.lock().unwrap_or_else(|e| e.into_inner());
            let out = m.run(&job);
            (out, m.take_findings())
        });
        if !findings.is_empty() {
            let error = outputs.err().map(to_py);
            return Err(sanitizer_error(py, &findings, error)?);
        }
        let outputs = outputs.map_err(to_py)?;
        Ok(outputs
            .buffers
            .iter()
            .map(|b| PyBytes::new(py, b))
            .collect())
    }
}

/// The `pisa_vk.errors.SanitizerError` of `findings` (each as a dict of the CLI's JSON
/// fields), with the run's own error `error`.
fn sanitizer_error(py: Python<'_>, findings: &[Finding], error: Option<PyErr>) -> PyResult<PyErr> {
    let reports = PyList::empty(py);
    for f in findings {
        reports.append(finding_dict(py, f)?)?;
    }
    let rendered: Vec<String> = findings.iter().map(Finding::render).collect();
    let message = format!(
        "{}\nthe sanitizers found {} problem(s)",
        rendered.join("\n"),
        findings.len()
    );
    let class = py.import("pisa_vk.errors")?.getattr("SanitizerError")?;
    let error = error.map(|e| e.into_value(py).into_any());
    Ok(PyErr::from_value(class.call1((message, reports, error))?))
}

/// One finding as a dict: `check`, `message`, `first`/`second` (`file`, `line`, `column`,
/// `function`, `access`, `work_item`, `local_id`, `group_id`), `space`, `address`, `what`,
/// `missing` (local ids), `count`.
fn finding_dict<'py>(py: Python<'py>, f: &Finding) -> PyResult<Bound<'py, PyDict>> {
    use pisa_vk::reference::sanitize::{Event, Target};
    let event = |e: &Event, at: &(String, usize, usize)| -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("file", &at.0)?;
        d.set_item("line", at.1)?;
        d.set_item("column", at.2)?;
        d.set_item("function", &e.function)?;
        d.set_item("access", e.access.map(|a| format!("{a:?}").to_lowercase()))?;
        d.set_item("work_item", e.work_item.global)?;
        d.set_item("local_id", e.work_item.local)?;
        d.set_item("group_id", e.work_item.group)?;
        Ok(d)
    };
    let r = &f.report;
    let d = PyDict::new(py);
    d.set_item("check", r.check.as_str())?;
    d.set_item("message", &r.message)?;
    d.set_item("first", event(&r.first, &f.first_at)?)?;
    let second = match (&r.second, &f.second_at) {
        (Some(e), Some(at)) => Some(event(e, at)?),
        _ => None,
    };
    d.set_item("second", second)?;
    let (space, address) = match &r.target {
        Target::Memory { space, address, .. } => (Some(space.as_str()), Some(*address)),
        _ => (None, None),
    };
    d.set_item("space", space)?;
    d.set_item("address", address)?;
    d.set_item("what", &f.what)?;
    let missing: Vec<[u32; 3]> = r.missing.iter().map(|w| w.local).collect();
    d.set_item("missing", missing)?;
    d.set_item("count", r.count)?;
    Ok(d)
}
