"""Device pinning: every device has a UUID, and a UUID (as ``Context(uuid)`` or
``PISA_VK_DEVICE``) opens that device."""

import os
import re
import subprocess
import sys

import pytest

import pisa_vk

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def test_devices_show_their_uuid(ctx):
    devices = pisa_vk.devices()
    assert devices and devices == pisa_vk.Context.devices()
    for d in devices:
        assert UUID.match(d["uuid"]), d
    assert ctx.device["uuid"] in {d["uuid"] for d in devices}


def test_devices_say_how_many_compute_queues_they_have(ctx):
    # Every usable device has a compute queue; lavapipe has exactly one.
    for d in pisa_vk.devices():
        assert d["compute_queues"] >= 1, d
        if "llvmpipe" in d["name"]:
            assert d["compute_queues"] == 1, d


def test_a_context_by_uuid_opens_that_device(ctx):
    uuid = ctx.device["uuid"]
    assert uuid != "00000000-0000-0000-0000-000000000000"
    for text in (uuid, uuid.upper(), uuid.replace("-", "")):
        assert pisa_vk.Context(text).device["uuid"] == uuid


def test_an_unknown_uuid_names_the_devices():
    with pytest.raises(pisa_vk.DeviceError, match="0123abcd-0000-0000-0000-00000000beef") as e:
        pisa_vk.Context("0123abcd-0000-0000-0000-00000000beef")
    assert pisa_vk.devices()[0]["name"] in str(e.value)


def run_with_device(value: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PISA_VK_DEVICE=value)
    code = "import pisa_vk; print(pisa_vk.Context().device['uuid'])"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_the_env_variable_pins_every_default_context(ctx):
    uuid = ctx.device["uuid"]
    done = run_with_device(uuid)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == uuid
    wrong = run_with_device("ffffffff-ffff-ffff-ffff-ffffffffffff")
    assert wrong.returncode != 0 and "DeviceError" in wrong.stderr
