#!/usr/bin/env python3
"""Minimax polynomial coefficients, rounded to binary32, for the `.f`/`.hf`/`.bf`
transcendentals of translator/src/back/spirv/ops_float/ (trig.rs, exp_log.rs).

Method: the Remez exchange algorithm for a weighted minimax polynomial (E. Ya. Remez, 1934;
as presented in J.-M. Muller, "Elementary Functions: Algorithms and Implementation", 3rd ed.,
2016, §3.5), followed by the iterative rounding of the coefficients to binary32 described
in the same book (§3.7, after Brisebarre, Muller and Tisserand, "Computing machine-efficient
polynomial approximations", ACM TOMS 32(2), 2006): the lowest-degree free coefficient is
rounded to nearest binary32 and fixed, and the remaining ones are re-optimized by Remez
against the new residual, until all are fixed.

Each approximation is written `g(v) ~ sum_j c_j v^j` on an interval of `v`, with a weight
`w(v)` chosen so that `w * (g - p)` is the relative error of the final function value.
mpmath (50 digits) does all the arithmetic. Usage: `python3 scripts/remez.py` prints the
coefficients as Rust `f32` bit patterns with their decimal values and the minimax error.
"""

import os

import mpmath as mp

mp.mp.dps = 50


def f32(x):
    """x rounded to nearest binary32 (normal range), as an mpf."""
    x = mp.mpf(x)
    if x == 0:
        return x
    e = int(mp.floor(mp.log(abs(x), 2)))
    q = mp.mpf(2) ** (e - 23)
    r = mp.nint(x / q) * q
    return r


def f32_bits(x):
    import struct

    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def remez(g, w, a, b, free, fixed, iters=30, grid=2000):
    """Weighted minimax: coefficients of `v^j`, j in `free`, minimizing
    max |w(v) (g(v) - fixed(v) - sum c_j v^j)| on [a, b]. Returns (coeffs, error)."""
    n = len(free)
    w0 = w
    w = lambda v: abs(w0(v))  # noqa: E731 (a weight changing sign at 0 is the same weight)
    # Chebyshev nodes as the initial reference (n + 1 points).
    # (Shifted a little so that no point falls where the weight vanishes, at v = 0.)
    pts = [
        (a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf(0.1)) / (n + mp.mpf(0.2)))
        for i in range(n + 1)
    ]
    coeffs, err = None, None
    xs = [a + (b - a) * i / grid for i in range(grid + 1)]
    xs = [v for v in xs if w(v) != 0]
    for _ in range(iters):
        # Solve sum c_j v_i^j + (-1)^i E / w(v_i) = g(v_i) - fixed(v_i).
        m = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, v in enumerate(pts):
            for k, j in enumerate(free):
                m[i, k] = v**j
            m[i, n] = (-1) ** i / w(v)
            rhs[i] = g(v) - fixed(v)
        sol = mp.lu_solve(m, rhs)
        coeffs = [sol[k] for k in range(n)]

        def e(v):
            return w(v) * (g(v) - fixed(v) - sum(c * v**j for c, j in zip(coeffs, free)))

        ev = [e(v) for v in xs]
        # New reference: the extremum of each run of equal sign.
        runs = []
        start = 0
        for i in range(1, len(xs) + 1):
            if i == len(xs) or mp.sign(ev[i]) != mp.sign(ev[start]):
                k = max(range(start, i), key=lambda t: abs(ev[t]))
                runs.append(k)
                start = i
        # Keep n + 1 alternating extrema with the largest errors, in order.
        while len(runs) > n + 1:
            i = min(range(len(runs)), key=lambda t: abs(ev[runs[t]]))
            if i == 0 or i == len(runs) - 1 or len(runs) == n + 2:
                runs.pop(i if i in (0, len(runs) - 1) else (0 if abs(ev[runs[0]]) < abs(ev[runs[-1]]) else -1))
            else:
                j = i - 1 if abs(ev[runs[i - 1]]) < abs(ev[runs[i + 1]]) else i + 1
                for k in sorted((i, j), reverse=True):
                    runs.pop(k)
        err = max(abs(x) for x in ev)
        if len(runs) < n + 1:
            break
        new = [xs[k] for k in runs]
        if all(abs(p - q) < (b - a) * mp.mpf(10) ** -30 for p, q in zip(new, pts)):
            break
        pts = new
    if os.environ.get("REMEZ_DEBUG"):
        print("  remez", free, mp.nstr(err, 5))
    return coeffs, err


def rounded_minimax(name, g, w, a, b, degrees, fixed0=None):
    """Remez, then iterative rounding to binary32 from the lowest degree up."""
    import sys

    if len(sys.argv) > 1 and not any(name.startswith(a) for a in sys.argv[1:]):
        return None
    fixed = dict(fixed0 or {})
    free = list(degrees)
    while free:
        coeffs, err = remez(
            g, w, a, b, free, lambda v: sum(c * v**j for j, c in fixed.items())
        )
        fixed[free[0]] = f32(coeffs[0])
        free = free[1:]
    # Final error with every coefficient rounded.
    xs = [a + (b - a) * i / 20000 for i in range(20001)]
    err = max(
        abs(w(v) * (g(v) - sum(c * v**j for j, c in fixed.items())))
        for v in xs
        if w(v) != 0
    )
    print(f"// {name}: max relative error {mp.nstr(err, 5)} = 2^{mp.nstr(mp.log(err, 2), 4)}")
    for j in sorted(fixed):
        if fixed0 and j in fixed0:
            continue
        c = fixed[j]
        print(f"//   c{j} = {mp.nstr(c, 12)}")
    print(
        "    "
        + ", ".join(
            f"{f32_bits(fixed[j]):#010x}" for j in sorted(fixed) if not (fixed0 and j in fixed0)
        )
        + ","
    )
    return fixed


def series_safe(f, series, eps=mp.mpf("1e-8")):
    """f(v) with a series near 0 where f has a removable singularity."""
    return lambda v: series(v) if abs(v) < eps else f(v)


def main():
    # sin(r) = r + r^3 P(z), z = r^2, |r| <= pi/4 + 2^-10 (k = RN(x 2/pi) in binary32 may
    # miss the nearest multiple by a little). Relative error of sin.
    rmax = mp.pi / 4 + mp.mpf(2) ** -10
    zmax = rmax**2
    gs = series_safe(
        lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
        lambda z: -mp.mpf(1) / 6 + z / 120 - z * z / 5040,
    )
    ws = series_safe(
        lambda z: z * mp.sqrt(z) / mp.sin(mp.sqrt(z)), lambda z: z * (1 + z / 6)
    )
    rounded_minimax("sin: P(z)", gs, ws, mp.mpf(0), zmax, range(4))
    # cos(r) = 1 + z Q(z). Relative error of cos.
    gc = series_safe(
        lambda z: (mp.cos(mp.sqrt(z)) - 1) / z,
        lambda z: -mp.mpf(1) / 2 + z / 24 - z * z / 720,
    )
    wc = lambda z: z / mp.cos(mp.sqrt(z))
    rounded_minimax("cos: Q(z)", gc, wc, mp.mpf(0), zmax, range(4))
    # 2^f = 1 + f E(f), |f| <= 1/2. Relative error of 2^f.
    ln2 = mp.log(2)
    ge = series_safe(
        lambda f: (mp.power(2, f) - 1) / f,
        lambda f: ln2 + ln2**2 * f / 2 + ln2**3 * f * f / 6,
    )
    we = lambda f: f / mp.power(2, f)
    rounded_minimax("exp2: E(f)", ge, we, mp.mpf(-0.5), mp.mpf(0.5), range(6))
    # log2(1+t) = t L + t^2 V(t), t in [sqrt(1/2) - 1, sqrt(2) - 1], L = 1/ln 2 split in
    # the code. Relative error of log2(1+t).
    L = 1 / ln2
    gl = series_safe(
        lambda t: (mp.log(1 + t) / ln2 - t * L) / (t * t),
        lambda t: L * (-mp.mpf(1) / 2 + t / 3 - t * t / 4),
    )
    wl = series_safe(lambda t: t * t / (mp.log(1 + t) / ln2), lambda t: t / L)
    rounded_minimax(
        "log2: V(t)", gl, wl, mp.sqrt(mp.mpf(0.5)) - 1, mp.sqrt(2) - 1, range(9)
    )
    # tanh(x) = x + x z T(z), z = x^2, |x| <= 0.875. Relative error of tanh.
    xt = mp.mpf("0.875")
    gt = series_safe(
        lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)),
        lambda z: -mp.mpf(1) / 3 + 2 * z / 15 - 17 * z * z / 315,
    )
    wt = series_safe(lambda z: z * mp.sqrt(z) / mp.tanh(mp.sqrt(z)), lambda z: z)
    rounded_minimax("tanh: T(z)", gt, wt, mp.mpf(0), xt * xt, range(6))


if __name__ == "__main__":
    main()
