"""Known driver bugs (docs/driver-bugs.md) from Python: the masked-merge regression programs
(tests/regressions/) give the values their files work out by hand with the default
environment, and without pisa-vk's cap an affected lavapipe warns with a RuntimeWarning.

The cap is decided once per process, when the module is imported, so the cases that need
another environment run in a child interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pisa_vk

REGRESSIONS = Path(__file__).resolve().parents[2] / "tests" / "regressions"

# Run in a child interpreter: every regression program, results as JSON on stdout, and the
# RuntimeWarnings the calls raised.
CHILD = r"""
import json, sys, warnings
from pathlib import Path
import numpy as np
import pisa_vk

def words(source, key):
    line = next(l for l in source.splitlines() if l.startswith(key))
    return [int(w, 0) for w in line[len(key):].split(",")]

ctx = pisa_vk.Context()
out = {"results": {}, "warnings": []}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for path in sorted(Path(sys.argv[1]).glob("*.pisa")):
        source = path.read_text()
        k = ctx.load(path).kernel("k")
        result = np.zeros(16 * 20, dtype=np.uint64)
        inputs = np.array(words(source, "// input: "), dtype=np.uint64)
        k(16, 8, result, pisa_vk.In(inputs))
        out["results"][path.name] = {
            "got": [int(v) for v in result],
            "want": words(source, "// want: "),
        }
    out["warnings"] = [str(w.message) for w in caught if w.category is RuntimeWarning]
out["driver_bugs"] = ctx.driver_bugs()
print(json.dumps(out))
"""


def run_child(env_changes):
    env = dict(os.environ)
    env.pop("GALLIUM_OVERRIDE_CPU_CAPS", None)
    env.update(env_changes)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(REGRESSIONS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_results(results):
    assert len(results) == 3, sorted(results)
    for name, r in results.items():
        for item in range(16):
            got = r["got"][20 * item : 20 * item + 20]
            assert got == r["want"], f"{name}: work-item {item}"


def test_regressions_give_the_spec_values_with_the_default_environment():
    out = run_child({})
    check_results(out["results"])
    assert out["warnings"] == []
    assert out["driver_bugs"] == {"masked_merge": False}


def test_without_the_cap_an_affected_lavapipe_warns_once():
    devices = pisa_vk.Context.devices()
    affected = any("llvmpipe (LLVM 15." in d["name"] for d in devices)
    if not pisa_vk.cpu_has_avx512() or not affected:
        pytest.skip("needs lavapipe with LLVM 15 on an AVX-512 CPU")
    out = run_child({"GALLIUM_OVERRIDE_CPU_CAPS": ""})
    assert out["driver_bugs"] == {"masked_merge": True}
    assert len(out["warnings"]) == 1, out["warnings"]
    assert "miscompiles masked merges" in out["warnings"][0]
    assert "GALLIUM_OVERRIDE_CPU_CAPS" in out["warnings"][0]


def test_the_decision_is_reported(ctx):
    caps = pisa_vk.cpu_caps()
    if "GALLIUM_OVERRIDE_CPU_CAPS" in os.environ:  # as the interpreter started
        assert caps == "set by user"
    elif pisa_vk.cpu_has_avx512():
        assert caps == "capped"
        assert ctx.driver_bugs() == {"masked_merge": False}
    else:
        assert caps == "not needed"
