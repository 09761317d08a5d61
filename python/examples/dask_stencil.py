"""A 5-point stencil and a reduction on a chunked Dask array, each chunk run by a PISA kernel
on the workers of a ``dask.distributed`` cluster (``pip install 'pisa-vk[dask]'``).

``python dask_stencil.py`` starts a local cluster of worker processes (``--workers``, one
thread each), computes the discrete Laplacian of a random ``--size`` x ``--size`` float32
image in ``--chunk`` x ``--chunk`` chunks with :func:`pisa_vk.dask.map_overlap` (a halo of
one element), and the sum of an integer image with a row-sum kernel
(:func:`pisa_vk.dask.map_blocks`) and Dask's sum, checks both against NumPy and prints the
times. ``--scheduler tcp://host:8786`` uses a running cluster instead (start one worker per
device: ``PISA_VK_DEVICE=<uuid> dask worker tcp://host:8786 --nthreads 1``, the UUIDs from
``pisa-vk devices``; or call :func:`pisa_vk.dask.pin_devices`).
"""

from __future__ import annotations

import argparse
import time

import dask.array as da
import numpy as np

LAPLACE = """\
// out = 4 c - up - down - left - right, in that order (float32, each step rounded), for the
// inner elements of a row-major height x width image; the border copies the input.
// One work-item per element of a 2-D NDRange (x along a row, y across rows).
.version 0.1;
.target 100;

.kernel @laplace(.param[8] %src, .param[8] %dst, .param[4] %width, .param[4] %height) {
  .reg .64b %ps, %pd, %pc, %pn, %off, %row;
  .reg .32b %w, %h, %x, %y, %g, %s, %l, %i, %last, %c, %n, %t;
  .pred %outside, %edge;

  ld.param.64b %ps, [%src];
  ld.param.64b %pd, [%dst];
  ld.param.32b %w, [%width];
  ld.param.32b %h, [%height];
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %x, %g, %s, %l;
  mov.32b %g, %groupid.y;
  mov.32b %s, %enqueuedlocalsize.y;
  mov.32b %l, %localid.y;
  umad.32b %y, %g, %s, %l;
  ucmp.ge.32b %outside, %x, %w;
  return.cond %outside;
  ucmp.ge.32b %outside, %y, %h;
  return.cond %outside;

  umad.32b %i, %y, %w, %x;
  umul.full.32b %off, %i, 4;
  iadd.64b %pc, %ps, %off;
  iadd.64b %pd, %pd, %off;
  ld.global.32b %c, [%pc];
  mov.32b %t, %c;
  ucmp.eq.32b %edge, %x, 0;
  goto.cond %edge, store;
  ucmp.eq.32b %edge, %y, 0;
  goto.cond %edge, store;
  isub.32b %last, %w, 1;
  ucmp.eq.32b %edge, %x, %last;
  goto.cond %edge, store;
  isub.32b %last, %h, 1;
  ucmp.eq.32b %edge, %y, %last;
  goto.cond %edge, store;

  fadd.f %t, %c, %c;
  fadd.f %t, %t, %t;
  umul.full.32b %row, %w, 4;
  isub.64b %pn, %pc, %row;
  ld.global.32b %n, [%pn];
  fsub.f %t, %t, %n;
  iadd.64b %pn, %pc, %row;
  ld.global.32b %n, [%pn];
  fsub.f %t, %t, %n;
  isub.64b %pn, %pc, 4;
  ld.global.32b %n, [%pn];
  fsub.f %t, %t, %n;
  ld.global.32b %n, [%pc + 4];
  fsub.f %t, %t, %n;
store:
  st.global.32b [%pd], %t;
  return;
}
"""

ROW_SUMS = """\
// dst[y] = the sum of row y of a row-major height x width u32 image (wrapping), one
// work-item per row.
.version 0.1;
.target 100;

.kernel @row_sums(.param[8] %src, .param[8] %dst, .param[4] %width, .param[4] %height) {
  .reg .64b %p, %pd, %off;
  .reg .32b %w, %h, %y, %g, %s, %l, %k, %acc, %v;
  .pred %outside, %more;

  ld.param.64b %p, [%src];
  ld.param.64b %pd, [%dst];
  ld.param.32b %w, [%width];
  ld.param.32b %h, [%height];
  mov.32b %g, %groupid.x;
  mov.32b %s, %enqueuedlocalsize.x;
  mov.32b %l, %localid.x;
  umad.32b %y, %g, %s, %l;
  ucmp.ge.32b %outside, %y, %h;
  return.cond %outside;

  umul.full.32b %off, %y, %w;
  shl.64b %off, %off, 2;
  iadd.64b %p, %p, %off;
  mov.32b %acc, 0;
  mov.32b %k, 0;
row:
  ld.global.32b %v, [%p];
  iadd.32b %acc, %acc, %v;
  iadd.64b %p, %p, 4;
  iadd.32b %k, %k, 1;
  ucmp.lt.32b %more, %k, %w;
  goto.cond %more, row;

  umul.full.32b %off, %y, 4;
  iadd.64b %pd, %pd, %off;
  st.global.32b [%pd], %acc;
  return;
}
"""


def laplace(image):
    """The stencil on a 2-D float32 Dask array, chunk by chunk with a halo of one."""
    import pisa_vk.dask

    return pisa_vk.dask.map_overlap(
        LAPLACE, "laplace", image, depth=1, boundary="none", block=(16, 16),
        width=lambda shape: shape[1], height=lambda shape: shape[0],
    )


def total(image):
    """The sum of a 2-D uint32 Dask array (as uint64): row sums per chunk by the kernel, then
    Dask's sum of those."""
    import pisa_vk.dask

    sums = pisa_vk.dask.map_blocks(
        ROW_SUMS, "row_sums", image, block=64, grid=lambda out: out[0],
        out_shape=lambda shape: (shape[0], 1), chunks=(image.chunks[0], (1,) * len(image.chunks[1])),
        width=lambda shape: shape[1], height=lambda shape: shape[0],
    )
    return sums.sum(dtype=np.uint64)


def laplace_numpy(a: np.ndarray) -> np.ndarray:
    """What the kernel computes, in NumPy float32, operation for operation."""
    out = a.copy()
    c = a[1:-1, 1:-1]
    t = (c + c) + (c + c)
    out[1:-1, 1:-1] = (((t - a[:-2, 1:-1]) - a[2:, 1:-1]) - a[1:-1, :-2]) - a[1:-1, 2:]
    return out


def run(client, size: int, chunk: int, seed: int = 1) -> dict:
    """Makes random images on ``client``'s workers (kept there), computes the stencil and the
    sum on them, and checks both against NumPy on the images gathered here; returns the
    seconds each computation took (the results' transfer to this process included)."""
    from dask.distributed import wait

    rng = da.random.default_rng(seed)
    # Small integers: every float32 step is exact, so any order of operations agrees.
    image = rng.integers(0, 1000, (size, size), chunks=chunk).astype(np.float32)
    ints = rng.integers(0, 1000, (size, size), chunks=chunk).astype(np.uint32)
    image, ints = client.persist([image, ints])
    wait([image, ints])
    start = time.perf_counter()
    lap = client.compute(laplace(image)).result()
    stencil_s = time.perf_counter() - start
    start = time.perf_counter()
    s = int(client.compute(total(ints)).result())
    sum_s = time.perf_counter() - start
    a, u = client.gather(client.compute([image, ints]))
    assert np.array_equal(lap, laplace_numpy(a)), "the stencil differs from NumPy"
    assert s == int(u.sum(dtype=np.uint64)), "the sum differs from NumPy"
    return {"stencil_s": stencil_s, "sum_s": sum_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="local worker processes")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--chunk", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (after a warm-up)")
    parser.add_argument("--scheduler", help="address of a running scheduler")
    args = parser.parse_args()

    from dask.distributed import Client, LocalCluster

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True)
        client = Client(cluster)
    with client:
        run(client, args.size, args.chunk)  # warm-up: contexts, translation, pipelines
        times = [run(client, args.size, args.chunk, seed=k + 2) for k in range(args.repeat)]
        best = {key: min(t[key] for t in times) for key in times[0]}
        print(f"{args.size}x{args.size} in {args.chunk}x{args.chunk} chunks, "
              f"{len(client.scheduler_info()['workers'])} worker(s): equal to NumPy; "
              f"stencil {best['stencil_s']:.3f} s, sum {best['sum_s']:.3f} s (best of {args.repeat})")
    if cluster is not None:
        cluster.close()


if __name__ == "__main__":
    main()
