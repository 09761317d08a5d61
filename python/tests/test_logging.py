"""pisa-vk's tracing spans reach Python's logging (logger ``pisa_vk``) at DEBUG, and nothing
is recorded when the logger is above it."""

import logging

import numpy as np

from pisa_vk import _native

SOURCE = """\
.version 0.1;
.target 100;
// out[0] = 0x600d (a different body per test, so neither load is served by a cache)
.kernel @k(.param[8] %out) {
  .reg .64b %p;
  .reg .32b %v;
  ld.param.64b %p, [%out];
  mov.32b %v, 0x600d;
  st.global.32b [%p], %v;
}
"""


def test_spans_reach_python_logging_at_debug(ctx, caplog):
    caplog.set_level(logging.DEBUG, logger="pisa_vk")
    module = ctx.load(SOURCE, name="logged.pisa")
    out = np.zeros(1, np.uint32)
    module.kernel("k")(1, 1, out)
    assert out[0] == 0x600D
    messages = [r.getMessage() for r in caplog.records if r.name == "pisa_vk"]
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "pisa_vk")
    # Loading: checking and translating the file, each a line with its duration.
    assert any(m.startswith("translate") and m.endswith(" ms") for m in messages), messages
    assert any(m.startswith("check") and "logged.pisa" in m for m in messages), messages
    # The call: its pipeline and its submission.
    assert any(m.startswith("create_pipeline") and "k" in m for m in messages), messages
    assert any(m.startswith("submit") for m in messages), messages


def test_nothing_is_recorded_above_debug(ctx, caplog):
    caplog.set_level(logging.INFO, logger="pisa_vk")
    module = ctx.load(SOURCE.replace("0x600d", "0x600e"), name="quiet.pisa")
    out = np.zeros(1, np.uint32)
    module.kernel("k")(1, 1, out)
    assert out[0] == 0x600E
    assert not [r for r in caplog.records if r.name == "pisa_vk"]
    # Nothing was queued either.
    assert _native.take() == ([], 0)
