"""Issue 16's measurement: the NumPy gradients of conv1d and exp_smoothing against a vectorized forward.

Not a test (no ``test_`` prefix): a tool, and speed is never asserted.  At n = 1e5 it times, interleaved,
the vectorized forward (``np.correlate`` for conv1d, the kernel's own doubling scan for exp_smoothing),
the gradient this checkout generates (through ``f.grad`` and the generated function alone), the
hand-written gradient, and optionally a baseline: generated sources saved from another checkout.
Every gradient is checked against the hand-written one before timing; medians of wall and CPU time
(a process descheduled on a loaded machine is charged wall time, not CPU time).  Say the load
(``uptime``) with the figures; ``OPENBLAS_NUM_THREADS=1`` keeps BLAS's threads from waiting for cores.

    python tests/lower/window_scan_timing.py --save /tmp/base          # in the baseline checkout
    python tests/lower/window_scan_timing.py --baseline /tmp/base      # in this one
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(os.path.dirname(_HERE))]

import coarsen_nb as cn  # noqa: E402
from coarsen_nb.kernels import conv1d, exp_smoothing  # noqa: E402


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--save", help="write this checkout's generated modules into this folder and stop")
    ap.add_argument("--baseline", help="a folder of generated modules written by --save")
    opt = ap.parse_args()
    n = int(opt.n)
    xc, w, y = conv1d.make_inputs(n)
    xe, al = exp_smoothing.make_inputs(n)
    fc = cn.coarsen(conv1d.conv1d, wrt=("x", "w"), backend="numpy")
    fe = cn.coarsen(exp_smoothing.exp_smoothing, wrt=("x", "alpha"), backend="numpy")
    fc.grad(xc, w, y)
    fe.grad(xe, al)
    if opt.save:
        os.makedirs(opt.save, exist_ok=True)
        for f in (fc, fe):
            with open(os.path.join(opt.save, f"{f.name}.py"), "w") as fh:
                fh.write(f.source)
        return

    def conv_fwd():
        return np.sum((np.correlate(xc, w, "valid") - y) ** 2)

    def exp_fwd():
        s = np.concatenate([[0.0], exp_smoothing._scan(1.0 - al, al * xe)])[:n]
        return np.sum((xe - s) ** 2) / n

    gc, ge = fc._compiled().grad, fe._compiled().grad
    cases = {
        "conv1d": dict(fwd=conv_fwd, new=lambda: fc.grad(xc, w, y), newfn=lambda: gc(xc, w, y),
                       hand=lambda: conv1d.grad(xc, w, y)),
        "exp_smoothing": dict(fwd=exp_fwd, new=lambda: fe.grad(xe, al), newfn=lambda: ge(xe, al),
                              hand=lambda: exp_smoothing.grad(xe, al)),
    }
    if opt.baseline:
        bc = _load(os.path.join(opt.baseline, "conv1d.py"), "base_conv1d")
        be = _load(os.path.join(opt.baseline, "exp_smoothing.py"), "base_exp_smoothing")
        cases["conv1d"]["base"] = lambda: bc.conv1d_grad(xc, w, y)
        cases["exp_smoothing"]["base"] = lambda: be.exp_smoothing_grad(xe, al)
    for name, c in cases.items():
        ref = c["hand"]()
        for k in c:
            if k not in ("fwd", "hand"):
                for a, b in zip(c[k](), ref, strict=True):
                    assert np.allclose(a, b, rtol=1e-9, atol=1e-12), (name, k)
    wall = {(nm, k): [] for nm, c in cases.items() for k in c}
    cpu = {key: [] for key in wall}
    for _ in range(opt.repeats):
        for nm, c in cases.items():
            for k, fn in c.items():
                fn()
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(5):
                    fn()
                wall[(nm, k)].append((time.perf_counter() - t0) / 5)
                cpu[(nm, k)].append((time.process_time() - c0) / 5)
    print(f"load: {os.getloadavg()}")
    for label, tab in (("wall", wall), ("cpu", cpu)):
        for nm, c in cases.items():
            med = {k: float(np.median(tab[(nm, k)])) * 1e3 for k in c}
            ratios = "  ".join(f"{k}/fwd {med[k] / med['fwd']:.1f}x" for k in c if k != "fwd")
            print(f"{label:4s} {nm:14s} n={n}: " + "  ".join(f"{k} {v:.3f}" for k, v in med.items())
                  + f" ms | {ratios}")


if __name__ == "__main__":
    main()
