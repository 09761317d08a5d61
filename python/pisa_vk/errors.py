"""The exceptions of pisa_vk.

Every error the package raises on purpose is a :class:`PisaError`; each kind also derives from
the built-in exception a Python user would catch for it (``TypeError`` for a wrong argument,
``LookupError`` for an unknown kernel or symbol, ...). The Rust host API's errors become these
classes in the native module (``python/src/errors.rs``).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence


class PisaError(Exception):
    """Base class of every pisa_vk error."""


class Diagnostic(NamedTuple):
    """One error of an invalid PISA program: where it is and what is wrong."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: error: {self.message}"


class CompileError(PisaError):
    """The PISA program is invalid, or cannot be translated or linked.

    ``str(e)`` (and ``e.diagnostics``) is the rendered report: every error as
    ``file:line:col: error: message`` with its source line and a caret, plus related notes;
    ``e.errors`` lists them as :class:`Diagnostic` tuples.
    """

    def __init__(self, diagnostics: str, errors: Sequence[tuple] = ()):
        super().__init__(diagnostics)
        self.diagnostics = diagnostics
        self.errors = [Diagnostic(*e) for e in errors]


class ArgumentError(PisaError, TypeError):
    """A kernel call has the wrong number of arguments, or one that does not fit its
    ``.param`` (size, type, range)."""


class LaunchError(PisaError, ValueError):
    """A launch configuration (grid, block, offset) that the kernel or the device cannot run."""


class NotFoundError(PisaError, LookupError):
    """No kernel or symbol of that name (or the name is ambiguous in a linked program)."""


class SizeError(PisaError, ValueError):
    """Data of the wrong size for a symbol or buffer."""


class DeviceError(PisaError, RuntimeError):
    """The Vulkan device or runtime failed (missing feature, out of memory, lost device)."""


class KernelTimeout(DeviceError, TimeoutError):
    """A dispatch ran longer than ``PISA_VK_TIMEOUT`` seconds (default 60). The context may
    stay busy until the kernel ends; see docs/python.md."""


__all__ = [
    "PisaError",
    "Diagnostic",
    "CompileError",
    "ArgumentError",
    "LaunchError",
    "NotFoundError",
    "SizeError",
    "DeviceError",
    "KernelTimeout",
]
