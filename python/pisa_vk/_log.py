"""pisa-vk's ``tracing`` spans in Python's ``logging``, on the logger ``pisa_vk``.

The translator and runtime time their steps as DEBUG spans: ``check``, ``link`` and
``translate`` (loading a program), ``create_pipeline`` (a kernel's first call for a block
size), ``submit`` (every dispatch and stream). With the logger at DEBUG each span becomes
one record when it ends, e.g. ``check file=saxpy.pisa: 0.132 ms``::

    logging.basicConfig()
    logging.getLogger("pisa_vk").setLevel(logging.DEBUG)

The native side queues the records (it may not take the GIL where spans end); the calls that
reach the device (loading, kernel calls, stream waits, opening a context) tell it the
logger's level before and log what was queued after, in the calling thread. A span of another
thread is logged by the next such call.
"""

from __future__ import annotations

import logging

from . import _native

#: The logger every record goes to.
logger = logging.getLogger("pisa_vk")

_last_level = None


def sync() -> None:
    """Tells the native side the least level the logger handles now (nothing is recorded
    below it)."""
    global _last_level
    level = logger.getEffectiveLevel() if not logger.disabled else logging.CRITICAL + 1
    if level != _last_level:
        _native.set_level(level)
        _last_level = level


def flush() -> None:
    """Logs the records the native side queued."""
    if _last_level is None or _last_level > logging.CRITICAL:
        return
    records, dropped = _native.take()
    if dropped:
        logger.warning("%d pisa-vk log records were dropped (more than the queue holds)", dropped)
    for level, message in records:
        logger.log(level, "%s", message)
