"""pisa_vk.dask: kernels on the chunks of Dask arrays, in two worker processes of a local
``dask.distributed`` cluster (each with its own context and modules), against NumPy."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'pisa-vk[dask]')")
distributed = pytest.importorskip("dask.distributed")

import pisa_vk  # noqa: E402
import pisa_vk.dask  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dask_stencil.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("dask_stencil_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def test_laplace_numpy_reference_by_hand(example):
    # The reference itself, on a 3x4 image worked out by hand: one inner row.
    a = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 13]], np.float32)
    want = a.copy()
    want[1, 1] = 4 * 6 - 2 - 10 - 5 - 7
    want[1, 2] = 4 * 7 - 3 - 11 - 6 - 8
    assert np.array_equal(example.laplace_numpy(a), want)


def test_stencil_and_sum_on_two_worker_processes(example, client):
    # Each worker pinned to a device of this machine by UUID (round robin: here the one).
    pinned = pisa_vk.dask.pin_devices(client)
    assert sorted(pinned) == sorted(client.scheduler_info()["workers"])
    assert set(pinned.values()) <= {d["name"] for d in pisa_vk.devices()}
    uuids = client.run(lambda: pisa_vk.dask.worker_context().device["uuid"])
    assert set(uuids.values()) <= {d["uuid"] for d in pisa_vk.devices()}
    times = example.run(client, 4096, 1024)  # asserts equality with NumPy
    assert set(times) == {"stencil_s", "sum_s"}
    # Two processes did the work, each with its own context; the validation layer (on in CI)
    # reported nothing in either.
    contexts = client.run(lambda: pisa_vk.dask._context is not None)
    assert list(contexts.values()) == [True, True]
    messages = client.run(lambda: pisa_vk.dask.worker_context().validation_messages())
    assert all(m == [] for m in messages.values()), messages
    # One module per source in each worker, loaded once for all its chunks.
    modules = client.run(lambda: len(pisa_vk.dask._modules))
    assert list(modules.values()) == [2, 2]


def test_uneven_chunks_and_a_periodic_boundary(example):
    # The synchronous scheduler (this process): chunks of 3 and 2 rows, a wrapped halo.
    a = np.arange(7 * 5, dtype=np.float32).reshape(7, 5) ** 2 % 17
    image = da.from_array(a, chunks=(3, 2))
    lap = pisa_vk.dask.map_overlap(
        example.LAPLACE, "laplace", image, depth=1, boundary="periodic", block=(4, 4),
        width=lambda s: s[1], height=lambda s: s[0],
    )
    got = lap.compute(scheduler="synchronous")
    padded = np.pad(a, 1, mode="wrap")
    assert np.array_equal(got, example.laplace_numpy(padded)[1:-1, 1:-1])


def test_binding_by_name_and_errors(example):
    image = da.from_array(np.ones((4, 4), np.float32), chunks=2)
    # `out` names the output; the rest bind in order.
    ok = pisa_vk.dask.map_blocks(
        example.LAPLACE, "laplace", image, out="dst", block=(2, 2), width=2, height=2
    ).compute(scheduler="synchronous")
    assert np.array_equal(ok, np.ones((4, 4), np.float32))  # 2x2 chunks: all border
    too_many = pisa_vk.dask.map_blocks(example.LAPLACE, "laplace", image, image, width=2, height=2)
    with pytest.raises(pisa_vk.ArgumentError, match="2 array"):
        too_many.compute(scheduler="synchronous")
    not_free = pisa_vk.dask.map_blocks(example.LAPLACE, "laplace", image, out="width", width=2, height=2)
    with pytest.raises(pisa_vk.ArgumentError, match="output parameter 'width'"):
        not_free.compute(scheduler="synchronous")
