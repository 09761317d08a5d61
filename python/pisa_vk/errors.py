"""The exceptions of pisa_vk.

Every error the package raises on purpose is a :class:`PisaError`; each kind also derives from
the built-in exception a Python user would catch for it (``TypeError`` for a wrong argument,
``LookupError`` for an unknown kernel or symbol, ...). The Rust host API's errors become these
classes in the native module (``python/src/errors.rs``).
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Sequence, Tuple


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


class StreamError(PisaError, RuntimeError):
    """A stream or submission used out of order: recording into a stream already submitted,
    reading a result before the submission was waited for, two threads waiting for one
    submission."""


class DeviceError(PisaError, RuntimeError):
    """The Vulkan device or runtime failed (missing feature, out of memory, lost device)."""


class KernelTimeout(DeviceError, TimeoutError):
    """A dispatch ran longer than ``PISA_VK_TIMEOUT`` seconds (default 60). The context may
    stay busy until the kernel ends; see docs/python.md."""


class StackOverflow(PisaError, RuntimeError):
    """A work-item's call would have nested more activations of a call cycle (recursion)
    than the module's stack depth (``Context.load(..., stack_depth=N)``, default 64). The
    work-item stopped there; the launch's outputs are not to be used.

    ``str(e)`` says it in one line; the attributes give the facts: ``kernel``, the
    ``function`` making the call, its ``file``, ``line``, ``column`` and text (``call``),
    the first overflowing ``work_item`` (global id), its ``local_id`` and ``group_id``, the
    ``depth`` and how many ``further`` work-items overflowed too.
    """

    def __init__(self, message: str, *, kernel: str = "", function: str = "",
                 file: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, call: Optional[str] = None,
                 work_item: Tuple[int, int, int] = (0, 0, 0),
                 local_id: Tuple[int, int, int] = (0, 0, 0),
                 group_id: Tuple[int, int, int] = (0, 0, 0),
                 depth: int = 0, further: int = 0):
        super().__init__(message)
        self.kernel = kernel
        self.function = function
        self.file = file
        self.line = line
        self.column = column
        self.call = call
        self.work_item = tuple(work_item)
        self.local_id = tuple(local_id)
        self.group_id = tuple(group_id)
        self.depth = depth
        self.further = further


class ScratchError(DeviceError):
    """A kernel whose ``.private`` memory lives in a per-launch device scratch buffer (more
    than 64 KiB per work-item, or a deep recursion stack) needs more of it for one
    work-group than the device can allocate in one buffer. Nothing ran; smaller work-groups
    or less ``.private`` memory fix it.

    ``str(e)`` says it in one line; the attributes give the facts: ``kernel``, ``size``
    (bytes one work-group needs, ``2**64 - 1`` past that), ``stride`` (bytes per
    invocation), ``invocations`` (per work-group on the device) and ``limit`` (the device's
    largest allocation, ``Context.device["max_allocation_size"]``).
    """

    def __init__(self, message: str, *, kernel: str = "", size: int = 0, stride: int = 0,
                 invocations: int = 0, limit: int = 0):
        super().__init__(message)
        self.kernel = kernel
        self.size = size
        self.stride = stride
        self.invocations = invocations
        self.limit = limit


class MemoryViolation(PisaError, RuntimeError):
    """A checked kernel (``PISA_VK_CHECKED=1``) made a bad memory access: the message names
    the PISA line, instruction, work-item and the allocation it missed."""


class SanitizerEvent(NamedTuple):
    """One instruction of a sanitizer finding, as one work-item executed it: where
    (``file``, ``line``, ``column``, ``function``), what it did to memory (``access``:
    ``"load"``, ``"store"``, ``"atomic"`` or ``None`` for a barrier or sub-group operation)
    and who (``work_item``: the global id, ``local_id``, ``group_id``)."""

    file: str
    line: int
    column: int
    function: str
    access: Optional[str]
    work_item: Tuple[int, int, int]
    local_id: Tuple[int, int, int]
    group_id: Tuple[int, int, int]

    def __str__(self) -> str:
        did = self.access or "executed"
        return f"{self.file}:{self.line}:{self.column}: {did} by work-item {self.work_item} in @{self.function}"


class SanitizerReport(NamedTuple):
    """One deduplicated finding of the reference interpreter's sanitizers (one per pair of
    lines, with a ``count``): the same facts as ``pisa-vk run --sanitize ... --json``.

    ``check`` is ``"race"``, ``"init"`` or ``"sync"``; ``message`` says what happened;
    ``first`` is the earlier access of a race, the read of unwritten bytes, or the barrier or
    sub-group instruction, ``second`` the later access of a race (or the other barrier;
    ``None`` otherwise); ``space`` (``"global"``, ``"shared"``, ``"private"``) and ``address``
    the bytes concerned (``None`` for a register or a barrier), ``what`` the variable, buffer
    argument or register (``"tile in @k"``, ``"argument 0 (%in)"``, ``"register %y"``);
    ``missing`` the local ids of the work-items a barrier or sub-group operation missed."""

    check: str
    message: str
    first: SanitizerEvent
    second: Optional[SanitizerEvent]
    space: Optional[str]
    address: Optional[int]
    what: Optional[str]
    missing: List[Tuple[int, int, int]]
    count: int


def _event(d: Optional[dict]) -> Optional[SanitizerEvent]:
    if d is None:
        return None
    return SanitizerEvent(
        d["file"], d["line"], d["column"], d["function"], d["access"],
        tuple(d["work_item"]), tuple(d["local_id"]), tuple(d["group_id"]),
    )


class SanitizerError(PisaError, RuntimeError):
    """The sanitizers of a reference context (``Context("reference", sanitize=...)``)
    found problems in a kernel call. ``str(e)`` is the rendered report (each finding at its
    ``file:line:col`` with its work-items, as the CLI prints it); ``e.reports`` lists them
    as :class:`SanitizerReport`; ``e.error`` is the run's own error when it also failed
    (``None`` otherwise). Nothing is copied back into the arrays."""

    def __init__(self, message: str, reports: Sequence[dict] = (), error: Optional[BaseException] = None):
        super().__init__(message)
        self.reports = [
            SanitizerReport(
                r["check"], r["message"], _event(r["first"]), _event(r.get("second")),
                r.get("space"), r.get("address"), r.get("what"),
                [tuple(m) for m in r.get("missing", ())], r["count"],
            )
            for r in reports
        ]
        self.error = error


class DeviceBusy(DeviceError):
    """The context still runs a dispatch that timed out earlier (``KernelTimeout``): nothing
    was done. Once that kernel ends on the device, the context works again."""


__all__ = [
    "PisaError",
    "Diagnostic",
    "CompileError",
    "ArgumentError",
    "LaunchError",
    "NotFoundError",
    "SizeError",
    "StreamError",
    "DeviceError",
    "KernelTimeout",
    "DeviceBusy",
    "MemoryViolation",
    "StackOverflow",
    "ScratchError",
    "SanitizerError",
    "SanitizerReport",
    "SanitizerEvent",
]
