"""One measurement — one method on one kernel at one size — inside a worker process.

Order matters and is the point of this module:

1. build the method (adapter call; for coarsen_nb this is ``coarsen()``, for
   tangent the source transformation) — timed as ``build_s``;
2. one gradient call, timed as ``first_grad_s`` (compile + first call for
   JIT-style methods), then **checked against the hand-written gradient**;
   the forward value is checked against the plain function.  A mismatch ends
   the measurement with status ``wrong``: a wrong gradient is never timed as
   if it were fine;
3. steady-state gradient and forward times: timeit-style autorange, then the
   median over an adaptive, capped number of repeats;
4. where the kernel has a vectorized NumPy forward (``kernels.vectorized``):
   its value checked against the plain function, then its time interleaved
   with this method's gradient, round by round, so that the ratio
   gradient ÷ vectorized forward is measured under one load;
5. for NumPy-based methods, peak traced memory and NumPy buffer allocations
   of one gradient call (separate, untimed calls, since both hooks slow it).

``report(kind, payload)`` sends progress to the parent: ``("phase", (name,
allowance_s))`` before anything that may be slow, so the parent's watchdog can
kill a stuck call, and ``("partial", record)`` once timings exist, so a
timeout during the memory phase does not lose them.
"""

from __future__ import annotations

import importlib
import inspect
import math
import signal
import statistics
import threading
import time
import traceback
from dataclasses import dataclass

import numpy as np

from coarsen_nb.benchmarks import memory
from coarsen_nb.benchmarks.peers import BASELINE, Method, Unsupported, hand_written, subscript_writes


@dataclass(frozen=True)
class Config:
    """How hard to measure: per-call limit, timing budget per figure, repeat caps."""

    timeout_s: float = 60.0
    budget_s: float = 1.0          # wall time aimed at per timed figure (gradient, forward)
    target_repeat_s: float = 0.01  # one repeat runs `number` calls lasting at least this long
    min_repeats: int = 5
    max_repeats: int = 30
    memory_max_call_s: float = float("inf")  # skip the memory phase when one call is slower
    rtol: float = 1e-6


def short_error(exc: BaseException, limit: int = 160) -> str:
    """``Class: first informative line of the message`` — what a table note can hold.

    Some peers start their messages with banners (rows of ``=``, a title); the
    first line with a word of more than one letter that is not the banner title
    is taken.
    """
    lines = [ln.strip() for ln in str(exc).splitlines() if any(c.isalnum() for c in ln)]
    body = [ln for ln in lines if not ln.lower().endswith("error")] or lines
    msg = body[0] if body else ""
    text = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def load(spec: str):
    """Import ``"module:attr"``."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def kernel_function(mod):
    return getattr(mod, mod.META["name"])


def wrt_indices(fn, wrt) -> list[int]:
    params = list(inspect.signature(fn).parameters)
    return [params.index(w) for w in wrt]


def compare(got, ref, rtol):
    """(ok, normwise relative error, detail) for gradient tuples; shapes and finiteness must match."""
    worst = 0.0
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        g, r = np.asarray(g, dtype=np.float64), np.asarray(r, dtype=np.float64)
        if g.shape != r.shape:
            return False, float("inf"), f"component {k}: shape {g.shape}, expected {r.shape}"
        if not np.array_equal(np.isfinite(g), np.isfinite(r)):
            return False, float("inf"), f"component {k}: non-finite values where the reference has none"
        fin = np.isfinite(r)
        scale = float(np.max(np.abs(r[fin]), initial=0.0))
        err = float(np.max(np.abs(g[fin] - r[fin]), initial=0.0))
        rel = err / scale if scale > 0 else err
        worst = max(worst, rel)
        if not np.allclose(g[fin], r[fin], rtol=rtol, atol=1e-9 * scale):
            return False, rel, f"component {k}: max |error| {err:.3g} (normwise relative {rel:.3g})"
    return True, worst, ""


def _warm_call_s(call, sync) -> float:
    """The seconds of one call after the first (which compiled and checked)."""
    t0 = time.perf_counter()
    sync(call())
    return time.perf_counter() - t0


def autorange(call, sync, cfg: Config, first_s: float):
    """Median seconds per call and the number of calls made.

    timeit's autorange (calls per repeat 1, 2, 5, 10, 20, … until a repeat
    lasts ``target_repeat_s``), skipped when the first call alone was that
    long; then as many repeats as fit the budget, between ``min_repeats`` and
    ``max_repeats`` — but a single one when even one call exceeds the budget,
    so a slow peer costs two calls here (after its first and a warm one), not ``min_repeats``.
    """
    clock = time.perf_counter
    number, per = 1, first_s
    if first_s < cfg.target_repeat_s:
        while True:
            t0 = clock()
            for _ in range(number):
                sync(call())
            t = clock() - t0
            per = t / number
            if t >= cfg.target_repeat_s or number >= 100_000:
                break
            number = number * 5 // 2 if str(number)[0] == "2" else number * 2
    fit = int(cfg.budget_s / max(per * number, 1e-12))
    repeats = min(cfg.max_repeats, max(cfg.min_repeats, fit)) if fit >= 1 else 1
    samples = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(number):
            sync(call())
        samples.append((clock() - t0) / number)
    return statistics.median(samples), repeats * number


def interleaved(grad, vec, sync, cfg: Config, grad_s: float, vec_s: float):
    """(median gradient seconds, median vectorized-forward seconds, median of their paired ratios).

    The two calls alternate, one repeat of each per round, so a change of the machine's load during
    the measurement hits both sides of the ratio alike; each repeat makes enough calls to last
    ``target_repeat_s`` (from the single-call times ``grad_s`` and ``vec_s``), and as many rounds
    as fit the budget, between ``min_repeats`` and ``max_repeats``.
    """
    clock = time.perf_counter
    n_g = max(1, math.ceil(cfg.target_repeat_s / max(grad_s, 1e-9)))
    n_v = max(1, math.ceil(cfg.target_repeat_s / max(vec_s, 1e-9)))
    fit = int(cfg.budget_s / max(n_g * grad_s + n_v * vec_s, 1e-12))
    rounds = min(cfg.max_repeats, max(cfg.min_repeats, fit))
    gs, vs = [], []
    for _ in range(rounds):
        t0 = clock()
        for _ in range(n_g):
            sync(grad())
        gs.append((clock() - t0) / n_g)
        t0 = clock()
        for _ in range(n_v):
            vec()
        vs.append((clock() - t0) / n_v)
    return statistics.median(gs), statistics.median(vs), statistics.median(g / v for g, v in zip(gs, vs,
                                                                                                strict=True))


class StepTimeout(BaseException):
    """Raised by the watchdog alarm inside a step that overran its allowance.

    A BaseException, like KeyboardInterrupt, so that a peer's own
    ``except Exception`` cannot swallow it.
    """


class _Watchdog:
    """Per-step allowances: tell the parent (which kills as a backstop) and arm SIGALRM here.

    The in-process alarm stops a step that keeps returning to Python (eager AD
    loops) without losing the worker and its imports; a step stuck in C (an
    XLA compile) is left to the parent's kill.
    """

    def __init__(self, report):
        self.report = report
        self.step, self.allowance = "start-up", 0.0
        self.armed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
        if self.armed:
            signal.signal(signal.SIGALRM, self._fire)

    def _fire(self, signum, frame):
        raise StepTimeout(self.step)

    def phase(self, step, allowance):
        self.step, self.allowance = step, allowance
        self.report("phase", (step, allowance))
        if self.armed:
            # Re-fires every 0.5 s: an exception raised where the interpreter only prints it
            # (a gc callback, a ctypes callback) must not make the step unstoppable.
            signal.setitimer(signal.ITIMER_REAL, allowance, 0.5)

    def disarm(self):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def measure(kernel_module: str, size, method: Method, cfg: Config, report) -> dict:
    """Measure ``method`` on ``kernel_module`` at ``size``; always returns a record, never raises."""
    rec = dict(kernel=None, size=size, method=method.name, status="error", message="",
               build_s=None, first_grad_s=None, grad_s=None, grad_calls=None, fwd_s=None, fwd_calls=None,
               compile_s=None, max_rel_err=None, peak_bytes=None, allocs=None, memory_note="",
               vec_fwd_s=None, grad_vec_ratio=None)
    dog = _Watchdog(report)
    fn = None
    try:
        _measure(kernel_module, size, method, cfg, rec, dog)
    except StepTimeout:
        dog.disarm()
        limit = f"{dog.step} exceeded its {dog.allowance:g} s limit"
        if rec["status"] == "ok":       # timings done; only the memory step overran
            rec["memory_note"] = f"timeout: {limit}"
        else:
            rec.update(status="timeout", message=limit)
    except Exception as exc:
        dog.disarm()
        fn = rec.pop("_fn", None)
        if rec["status"] == "ok":       # timings done; a memory hook failed (or was interrupted in C)
            rec["memory_note"] = f"failed: {short_error(exc)}"
            return rec
        write = _failing_write(exc, fn) if fn is not None and method.name != BASELINE else None
        if write is not None:
            rec.update(status="unsupported", message=f"in-place write {write[0]} = … (line {write[1]}): "
                                                     f"{short_error(exc)}")
        else:
            rec.update(status="error", message=short_error(exc))
        rec["error_text"] = str(exc)
        rec["detail"] = traceback.format_exc(limit=-6)
    finally:
        dog.disarm()
    rec.pop("_fn", None)
    return rec


def _measure(kernel_module, size, method, cfg, rec, dog):
    mod = importlib.import_module(kernel_module)
    rec["kernel"] = mod.META["name"]
    fn = rec["_fn"] = kernel_function(mod)
    widx = wrt_indices(fn, mod.META["wrt"])
    for req in method.requires:
        try:
            importlib.import_module(req)
        except ImportError as exc:
            rec.update(status="unavailable", message=f"not installed: {short_error(exc)}")
            return
    for pre in method.preload:
        try:
            importlib.import_module(pre)
        except ImportError:
            pass  # the build will fail on it and say so
    args = mod.make_inputs(size, seed=0)
    ref = hand_written(fn, mod, args, widx)
    ref_grad = ref.grads_to_numpy(ref.grad())
    ref_value = float(fn(*args))

    dog.phase("build", cfg.timeout_s)
    t0 = time.perf_counter()
    try:
        bound = load(method.adapter)(fn, mod, args, widx)
    except Unsupported as exc:
        rec.update(status="unsupported", message=str(exc))
        return
    rec["build_s"] = time.perf_counter() - t0

    dog.phase("first gradient call", cfg.timeout_s)
    t0 = time.perf_counter()
    g = bound.sync(bound.grad())
    rec["first_grad_s"] = time.perf_counter() - t0
    ok, rel, detail = compare(bound.grads_to_numpy(g), ref_grad, cfg.rtol)
    rec["max_rel_err"] = rel
    if not ok:
        rec.update(status="wrong", message=f"gradient differs from hand-written: {detail}")
        return
    dog.phase("first forward call", cfg.timeout_s)
    value = bound.value_to_float(bound.sync(bound.forward()))
    if not np.isclose(value, ref_value, rtol=cfg.rtol, atol=1e-12 * abs(ref_value)):
        rec.update(status="wrong", message=f"forward value {value!r} differs from the plain function's "
                                           f"{ref_value!r}")
        return

    timing_allowance = 3 * cfg.timeout_s + 4 * cfg.budget_s
    dog.phase("gradient timing", timing_allowance)
    # (autorange sizes its repeats from one call's time: a warm one, since a compiled method's first call
    # holds its compilation and would leave a 30 µs gradient five single-call samples)
    rec["grad_s"], rec["grad_calls"] = autorange(bound.grad, bound.sync, cfg, _warm_call_s(bound.grad, bound.sync))
    dog.phase("forward timing", timing_allowance)
    rec["fwd_s"], rec["fwd_calls"] = autorange(bound.forward, bound.sync, cfg, _warm_call_s(bound.forward, bound.sync))
    dog.disarm()
    if method.compiled:
        rec["compile_s"] = max(0.0, rec["first_grad_s"] - rec["grad_s"])
    rec["status"] = "ok"
    _vectorized_forward(mod, args, ref_value, bound, cfg, rec, dog, timing_allowance)
    dog.report("partial", {k: v for k, v in rec.items() if k != "_fn"})

    if method.numpy_based:
        if rec["grad_s"] > cfg.memory_max_call_s:
            rec["memory_note"] = f"skipped: one call takes over {cfg.memory_max_call_s:g} s"
            return
        # tracemalloc slows allocation-heavy Python loops by tens of times: allow for it.
        allowance = 3 * cfg.timeout_s + 100 * rec["grad_s"]
        dog.phase("peak memory", allowance)
        rec["peak_bytes"] = memory.peak_bytes(lambda: bound.sync(bound.grad()))
        dog.phase("allocation count", allowance)
        rec["allocs"] = memory.count_numpy_allocations(lambda: bound.sync(bound.grad()))
        dog.disarm()
        if rec["allocs"] is None:
            rec["memory_note"] = memory.UNAVAILABLE_REASON or ""


def _vectorized_forward(mod, args, ref_value, bound, cfg, rec, dog, allowance):
    """Time the kernel's vectorized NumPy forward (``kernels.vectorized``) interleaved with this method's
    gradient: ``vec_fwd_s`` and ``grad_vec_ratio`` (gradient ÷ vectorized forward, issue 16).

    Its value is checked against the plain function first; a vectorized forward that computes something
    else is a bug in the kernel, recorded in ``vec_note`` with no figure rather than timed.
    """
    from coarsen_nb.kernels import vectorized

    vec = vectorized(mod)
    if vec is None:
        return
    dog.phase("vectorized forward timing", allowance)
    t0 = time.perf_counter()
    value = vec(*args)
    first_s = time.perf_counter() - t0
    if not np.isclose(value, ref_value, rtol=cfg.rtol, atol=1e-12 * abs(ref_value)):
        rec["vec_note"] = f"vectorized forward {value!r} differs from the plain function's {ref_value!r}"
        return
    _, rec["vec_fwd_s"], rec["grad_vec_ratio"] = interleaved(bound.grad, lambda: vec(*args), bound.sync, cfg,
                                                             rec["grad_s"], first_s)


def _failing_write(exc, fn):
    """The ``a[i] = …`` statement of ``fn`` the exception was raised at, if it was one."""
    writes = {line: target for target, line in subscript_writes(fn)}
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is fn.__code__ and tb.tb_lineno in writes:
            return writes[tb.tb_lineno], tb.tb_lineno
        tb = tb.tb_next
    return None
