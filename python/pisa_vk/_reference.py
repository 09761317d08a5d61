"""The CPU reference interpreter as a context: ``Context("reference", sanitize=...)``.

Kernels of a reference context run on the interpreter that defines PISA's results (crate
``pisa-reference``, what ``pisa-vk run --device reference`` runs), with the same argument
rules as on a device (kinds, ``In``/``Out``, copies back), and optionally its sanitizers:
``race`` (data races on ``.shared``/``.global`` memory), ``init`` (reads of bytes nothing
wrote), ``sync`` (barriers and sub-group operations some work-items miss), ``all``. A finding
raises :class:`~pisa_vk.errors.SanitizerError` with the reports. The bounds checks always run
(a bad access is a :class:`~pisa_vk.errors.MemoryViolation`).

The objects here stand in for the native ``Context`` and ``Module`` of a device context, so
that the public classes work unchanged; what needs device memory (Buffers, streams, symbols,
GPU time) raises :class:`~pisa_vk.errors.PisaError` saying so.
"""

from __future__ import annotations

from typing import Iterable, Optional, Union

import numpy as np

from . import _native
from .errors import ArgumentError, PisaError

#: The sanitizer names ``Context("reference", sanitize=...)`` takes.
SANITIZERS = ("race", "init", "sync", "all", "none")


def sanitize_text(sanitize: Union[None, bool, str, Iterable[str]]) -> str:
    """The comma-separated list the native side parses, from ``None``/``False`` (none),
    ``True`` (all), a string (``"race,init"``) or an iterable of names."""
    if sanitize is None or sanitize is False:
        return ""
    if sanitize is True:
        return "all"
    names = sanitize.split(",") if isinstance(sanitize, str) else list(sanitize)
    names = [str(n).strip() for n in names]
    for n in names:
        if n not in SANITIZERS:
            raise ValueError(f"unknown sanitizer {n!r} (expected race, init, sync or all)")
    return ",".join(names)


def no_device(what: str) -> PisaError:
    """The error for ``what`` on a reference context."""
    return PisaError(
        f"{what} needs a Vulkan device: Context('reference') runs kernels on NumPy arrays and "
        "scalars only"
    )


class HostBuffer:
    """The memory of one array argument on the reference machine (what a call's staging
    makes with ``buffer(nbytes)``); the machine gets a copy at the call, and the results
    come back into it."""

    mapped_address = None
    imported = False

    def __init__(self, nbytes: int):
        self.data = np.zeros(nbytes, np.uint8)
        self.nbytes = nbytes

    def write(self, data) -> None:
        self.data[:] = np.asarray(data).reshape(-1).view(np.uint8)

    def read_into(self, out) -> None:
        np.asarray(out).reshape(-1).view(np.uint8)[:] = self.data


class ReferenceNative:
    """Stands in for the native ``Context`` of a reference context."""

    def __init__(self, sanitize: str, subgroup_size: Optional[int]):
        self.sanitize = sanitize
        self.subgroup_size = subgroup_size

    @property
    def device(self) -> dict:
        return {
            "index": None,
            "uuid": None,
            "name": "PISA reference interpreter",
            "type": "reference",
            "driver": "pisa-reference",
            "sanitize": self.sanitize.split(",") if self.sanitize else [],
            "subgroup_size": self.subgroup_size,
        }

    def load(self, sources, stack_depth) -> "ReferenceModuleNative":
        return ReferenceModuleNative(
            _native.ReferenceModule(sources, self.sanitize, stack_depth, self.subgroup_size)
        )

    def buffer(self, nbytes: int) -> HostBuffer:
        return HostBuffer(nbytes)

    def import_host(self, array):
        return None, "the reference interpreter has no device memory to share"

    def host_import_alignment(self):
        return None

    def driver_warnings(self):
        return []

    def driver_bugs(self) -> dict:
        return {}

    def validation_messages(self):
        return []


class ReferenceModuleNative:
    """Stands in for the native ``Module`` of a reference context."""

    def __init__(self, native):
        self._native = native

    def kernels(self):
        return self._native.kernels()

    def check_arg(self, kernel, index, given):
        return self._native.check_arg(kernel, index, given)

    def prepare(self, kernel, local) -> None:
        """Nothing to build: the interpreter checks the launch when it runs."""

    def globals(self):
        raise no_device("module variables (symbols)")

    def symbol(self, name):
        raise no_device("module variables (symbols)")

    def dispatch(self, kernel, global_size, local_size, offsets, blobs) -> None:
        """Runs ``kernel`` with the call's arguments (bytes, or the HostBuffers of arrays)
        and writes the final bytes of every array argument back into its HostBuffer."""
        hosts, args = [], []
        for index, blob in enumerate(blobs):
            if isinstance(blob, HostBuffer):
                if any(h is blob for h in hosts):
                    raise ArgumentError(
                        f"argument {index}: the same array twice; on the reference interpreter "
                        "each array argument is its own allocation (pass a copy)"
                    )
                hosts.append(blob)
                args.append(blob.data)
            elif isinstance(blob, (bytes, bytearray)):
                args.append(bytes(blob))
            else:
                raise ArgumentError(
                    f"argument {index}: a device Buffer cannot be passed to a kernel on the "
                    "reference interpreter (pass a NumPy array)"
                )
        outputs = self._native.run(kernel, global_size, local_size, list(offsets), args)
        for host, out in zip(hosts, outputs):
            host.data[:] = np.frombuffer(out, np.uint8)
