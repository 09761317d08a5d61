"""PISA kernels on every chunk of Dask arrays: :func:`map_blocks`, :func:`map_overlap`.

``pip install 'pisa-vk[dask]'`` (dask is not a dependency of ``pisa_vk`` itself)::

    import dask.array as da, pisa_vk.dask

    a = da.random.random((4096, 4096), chunks=1024).astype("f4")
    lap = pisa_vk.dask.map_overlap(STENCIL, "laplace", a, depth=1,
                                   width=lambda s: s[1], height=lambda s: s[0], block=(16, 16))
    lap.compute()                      # on the threads, processes or cluster of the scheduler

Every task runs the kernel once on one chunk (with :func:`map_overlap`, on the chunk and a
halo of its neighbours), as a :class:`~pisa_vk.Kernel` call would: the input chunks are
uploaded (``In``), the output chunk is a fresh array copied back (``Out``). What runs in a
worker process is cached there: one :class:`~pisa_vk.Context` (the default device, so
``PISA_VK_DEVICE`` pins a worker to a device; :func:`pin_devices` sets it per worker) and one
loaded :class:`~pisa_vk.Module` per kernel source (a Module cannot be pickled, so each worker
translates the source once; the driver's on-disk pipeline cache makes the pipelines cheap).

Binding chunks and values to the kernel's ``.param`` s, in declaration order: a parameter
named in ``params`` (keyword arguments) gets that value, or ``value(shape)`` when it is
callable (``shape``: the shape of the first input block as the kernel sees it, halo included);
the output parameter (``out=``, by name; by default the last parameter not named) gets the
output block; the remaining parameters get the input arrays, in order.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np

import pisa_vk

try:
    import dask.array as _da
except ImportError as error:  # pragma: no cover - exercised only without dask
    raise ImportError(
        "pisa_vk.dask needs dask: pip install 'pisa-vk[dask]' (or dask[array])"
    ) from error

__all__ = ["map_blocks", "map_overlap", "worker_context", "pin_devices"]

# The worker's context and modules (per process), made at the first chunk.
_lock = threading.Lock()
_context: Optional[pisa_vk.Context] = None
_modules: Dict[str, pisa_vk.Module] = {}


def worker_context() -> pisa_vk.Context:
    """This process's :class:`~pisa_vk.Context` for chunk kernels (the default device, made at
    the first call)."""
    global _context
    with _lock:
        if _context is None:
            _context = pisa_vk.Context()
        return _context


def _module(source: str) -> pisa_vk.Module:
    """The loaded module of ``source`` in this process (translated at the first use)."""
    key = hashlib.sha256(source.encode()).hexdigest()
    module = _modules.get(key)
    if module is None:
        ctx = worker_context()
        with _lock:
            module = _modules.get(key)
            if module is None:
                module = ctx.load(source, name=f"<dask kernel {key[:12]}>")
                _modules[key] = module
    return module


def _use_device(device: str) -> str:
    """On a worker: makes ``device`` (a UUID, index or name fragment) the device of the
    chunk kernels from now on (dropping a context made before); returns the device's name."""
    global _context
    os.environ["PISA_VK_DEVICE"] = device
    with _lock:
        _context = None
        _modules.clear()
    return worker_context().device["name"]


def pin_devices(client) -> Dict[str, str]:
    """Gives each worker of the ``dask.distributed`` ``client`` a device of its machine, by
    UUID (``PISA_VK_DEVICE``): the workers of one host take its devices in turn (worker k gets
    device k mod count). Returns ``{worker address: device name}``. Run it before the first
    computation, or a worker's chunks move to its new device from then on. With one worker
    process per device on each machine, every device of the cluster is used once."""
    workers = client.scheduler_info()["workers"]
    by_host: Dict[str, list] = {}
    for address in sorted(workers):
        by_host.setdefault(workers[address]["host"], []).append(address)
    chosen = {}
    for addresses in by_host.values():
        devices = client.run(lambda: [d["uuid"] for d in pisa_vk.devices()], workers=addresses[:1])
        uuids = next(iter(devices.values()))
        if not uuids:
            raise pisa_vk.DeviceError(f"the workers of {addresses[0]}'s host see no Vulkan device")
        for k, address in enumerate(addresses):
            result = client.run(_use_device, uuids[k % len(uuids)], workers=[address])
            chosen.update(result)
    return chosen


class _ChunkKernel:
    """The task function: runs the kernel on one set of blocks (picklable: source text and
    settings, no device object)."""

    def __init__(self, source: str, kernel: str, grid, block, out: Optional[str], dtype,
                 out_shape, params: Dict[str, Any]):
        self.source = source
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.out = out
        self.dtype = np.dtype(dtype)
        self.out_shape = out_shape
        self.params = params

    def __call__(self, *blocks: np.ndarray) -> np.ndarray:
        kernel = _module(self.source).kernel(self.kernel)
        shape = blocks[0].shape
        out_shape = tuple(self.out_shape(shape)) if self.out_shape else shape
        result = np.empty(out_shape, self.dtype)
        names = [p.name for p in kernel.params]
        free = [n for n in names if n not in self.params]
        out = self.out if self.out is not None else (free[-1] if free else None)
        if out not in names or out in self.params:
            raise pisa_vk.ArgumentError(
                f"kernel `{self.kernel}`: the output parameter {out!r} is not one of its "
                f"free parameters ({', '.join(free)})"
            )
        inputs = [n for n in free if n != out]
        if len(inputs) != len(blocks):
            raise pisa_vk.ArgumentError(
                f"kernel `{self.kernel}` has {len(inputs)} input parameter(s) left "
                f"({', '.join(inputs)}) for {len(blocks)} array(s)"
            )
        given = dict(zip(inputs, blocks))
        args = []
        for name in names:
            if name == out:
                args.append(pisa_vk.Out(result))
            elif name in given:
                args.append(pisa_vk.In(np.ascontiguousarray(given[name])))
            else:
                value = self.params[name]
                args.append(value(shape) if callable(value) else value)
        grid = self.grid(out_shape) if callable(self.grid) else self.grid
        if grid is None:
            grid = tuple(reversed(out_shape)) if out_shape else 1
        kernel(grid, self.block, *args)
        return result


def _dtype(dtype, arrays) -> np.dtype:
    if not arrays:
        raise TypeError("a chunk kernel needs at least one Dask array")
    return np.dtype(arrays[0].dtype if dtype is None else dtype)


def map_blocks(source: str, kernel: str, *arrays, block=64, grid=None, out: Optional[str] = None,
               dtype=None, out_shape: Optional[Callable[[Tuple[int, ...]], Sequence[int]]] = None,
               chunks=None, dask_kwargs: Optional[dict] = None, **params):
    """A Dask array whose every block is the output of ``kernel`` (of the PISA program
    ``source``, text) run on the corresponding blocks of ``arrays``.

    * ``block``: the work-group size; ``grid``: the global size in work-items, or a function
      of the output block's shape giving it (default: the shape reversed, so that x runs
      along the last axis, one work-item per element).
    * ``out``: the name of the output ``.param`` (default: the last one not in ``params``);
      ``dtype`` its element type (default: the first array's); ``out_shape`` a function from
      the input block's shape to the output block's (default: the same) and then ``chunks``
      the output's chunks, as ``dask.array.map_blocks`` takes them.
    * ``params``: the other parameters by name: values, or functions of the block's shape.
    * ``dask_kwargs``: more keywords for ``dask.array.map_blocks`` (``drop_axis``, ``name``...).
    """
    dtype = _dtype(dtype, arrays)
    fn = _ChunkKernel(source, kernel, grid, block, out, dtype, out_shape, params)
    extra = dict(dask_kwargs or {})
    if chunks is not None:
        extra["chunks"] = chunks
    elif out_shape is not None:
        raise TypeError("map_blocks with out_shape needs chunks= (the output's chunks)")
    meta = np.empty((0,) * arrays[0].ndim, dtype)
    return _da.map_blocks(fn, *arrays, dtype=dtype, meta=meta, **extra)


def map_overlap(source: str, kernel: str, *arrays, depth, boundary="none", block=64, grid=None,
                out: Optional[str] = None, dtype=None, dask_kwargs: Optional[dict] = None,
                **params):
    """Like :func:`map_blocks` for stencils: each block is extended by ``depth`` elements of
    its neighbours on every side (``depth`` an int or one per axis), the kernel runs on the
    extended block (``grid`` and callable ``params`` see its shape), and the halo is cut off
    its output. ``boundary`` is what lies beyond the array's edges, as in
    ``dask.array.map_overlap``: ``"none"`` (the default) extends nothing there, so the kernel
    sees the array's true edges; ``"reflect"``, ``"periodic"``, ``"nearest"`` or a constant
    pad them."""
    dtype = _dtype(dtype, arrays)
    fn = _ChunkKernel(source, kernel, grid, block, out, dtype, None, params)
    return _da.map_overlap(fn, *arrays, depth=depth, boundary=boundary, dtype=dtype, trim=True,
                           meta=np.empty((0,) * arrays[0].ndim, dtype), **(dask_kwargs or {}))
