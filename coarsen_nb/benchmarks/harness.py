"""Run measurements in watched worker processes and collect one record per (kernel, size, method).

Why worker processes: a peer can hang for minutes (JAX unrolling a 10⁶-trip
loop under ``jit``), exhaust memory, or crash the interpreter; none of that
may stop the run or corrupt the other figures.  Each method gets its own
long-lived worker (spawned, so no state leaks from the parent, and so JAX,
PyTorch and coarsen_nb each pay their import once); the parent watches it.
Before every potentially slow step the worker announces the step and its
allowance (:mod:`coarsen_nb.benchmarks.measure`) and arms an alarm that stops the step
in-process; if the step is stuck where the alarm cannot reach (inside C), the
parent kills the worker :data:`KILL_GRACE_S` later.  Either way the record
says ``timeout`` with the step, and the next measurement for that method
continues (in a fresh worker if one was killed).

The hand-written gradient is always measured first for each kernel and size:
it is the reference for the correctness guard and the denominator of every
ratio.

Every worker first puts the C allocator in one state (:func:`_settle_allocator`), and a worker
whose step timed out is replaced even when it reported the timeout itself: an alarm raised inside a
peer's callback (JAX's XLA) can leave its compile threads running, and they would eat the CPU and
memory of every later measurement.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from coarsen_nb.benchmarks.measure import Config, measure
from coarsen_nb.benchmarks.peers import BASELINE, METHODS, Method

_CTX = mp.get_context("spawn")
KILL_GRACE_S = 10.0


def _settle_allocator() -> None:
    """Put glibc's allocator in the state a long-running process is in, the same for every method.

    glibc serves a large block with ``mmap`` (fresh pages: a page fault per 4 KiB on first touch)
    until a freed ``mmap``-ed block raises its threshold to that block's size; blocks below the
    threshold come from the heap and are reused.  A process's history therefore decides whether a
    10⁵-element temporary costs page faults on every call: measured here, the same hand-written
    gradient took 2.06 ms in a fresh process and 1.25 ms after one large array had been freed.
    Freeing one 16 MiB block first gives every worker, and so every method, the second state.
    """
    import numpy as np

    block = np.ones(2 * 2**20)
    del block


def _worker_main(conn, sys_path, log_path):
    """Worker loop: receive (kernel module, size, method, config), send progress and the record."""
    sys.path[:] = sys_path
    _settle_allocator()
    if log_path:
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        kernel_module, size, method, cfg = task

        def report(kind, payload):
            conn.send((kind, payload))

        conn.send(("done", measure(kernel_module, size, method, cfg, report)))


@dataclass
class _Worker:
    proc: mp.Process
    conn: object

    @classmethod
    def start(cls, log_path):
        parent, child = _CTX.Pipe()
        proc = _CTX.Process(target=_worker_main, args=(child, list(sys.path), log_path), daemon=True)
        proc.start()
        child.close()
        return cls(proc, parent)

    def kill(self):
        """End this worker (only this process, by its own handle)."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


@dataclass
class Pool:
    """One worker per method, restarted after a kill or crash."""

    log_path: str | None = None
    workers: dict[str, _Worker] = field(default_factory=dict)

    def run(self, kernel_module: str, kernel: str, size, method: Method, cfg: Config) -> dict:
        worker = self.workers.get(method.name)
        if worker is None or not worker.proc.is_alive():
            worker = self.workers[method.name] = _Worker.start(self.log_path)
        started = time.perf_counter()
        worker.conn.send((kernel_module, size, method, cfg))
        # The first message may wait on the worker's imports (JAX, PyTorch, SymPy): allow for them.
        step, allowance = "start-up", cfg.timeout_s + 60.0
        deadline = time.perf_counter() + allowance
        partial = None
        while True:
            remaining = deadline - time.perf_counter()
            try:
                ready = remaining > 0 and worker.conn.poll(remaining)
                msg = worker.conn.recv() if ready else None
            except (EOFError, OSError):
                code = worker.proc.exitcode
                self._drop(method.name)
                return _failed(kernel, size, method, "error", f"worker died during {step} (exit code {code})",
                               partial)
            if msg is None:
                self._drop(method.name)
                elapsed = time.perf_counter() - started
                return _failed(kernel, size, method, "timeout",
                               f"{step} exceeded its {allowance:g} s limit (killed after {elapsed:.1f} s)",
                               partial)
            kind, payload = msg
            if kind == "phase":
                step, allowance = payload
                # The worker stops itself at `allowance` (SIGALRM); killing is the backstop for C code.
                deadline = time.perf_counter() + allowance + KILL_GRACE_S
            elif kind == "partial":
                partial = payload
            else:
                if payload.get("status") == "timeout":
                    self._drop(method.name)     # whatever the alarm interrupted may still be running
                return payload

    def _drop(self, name):
        worker = self.workers.pop(name, None)
        if worker is not None:
            worker.kill()

    def close(self):
        for name in list(self.workers):
            worker = self.workers[name]
            try:
                worker.conn.send(None)
                worker.proc.join(2)
            except OSError:
                pass
            self._drop(name)


def _failed(kernel, size, method, status, message, partial):
    """A record for a killed measurement; keep timings already reported if only the memory step was lost."""
    if partial is not None:
        rec = dict(partial)
        rec["memory_note"] = f"{status}: {message}"
        return rec
    return dict(kernel=kernel, size=size, method=method.name, status=status, message=message)


def plan(kernels: dict, methods: Iterable, quick: bool, largest: bool = False) -> list[tuple[str, str, object, Method]]:
    """Tasks ``(kernel module, kernel, size, Method)``: per kernel and size, the baseline first.

    ``methods`` holds names from :data:`METHODS` or :class:`Method` objects; ``largest`` keeps only each
    kernel's largest benchmark size.
    """
    resolved = [METHODS[m] if isinstance(m, str) else m for m in methods]
    resolved = [METHODS[BASELINE]] + [m for m in resolved if m.name != BASELINE]
    tasks = []
    for kname, mod in kernels.items():
        meta = mod.META
        sizes = tuple(meta.get("quick_sizes") or meta["sizes"])[:1] if quick else tuple(meta["sizes"])
        if largest:
            sizes = (max(meta["sizes"]),)
        for size in sizes:
            for m in resolved:
                tasks.append((mod.__name__, kname, size, m))
    return tasks


def run(tasks, cfg: Config, on_start: Callable | None = None, on_done: Callable | None = None,
        deadline_s: float | None = None, log_path: str | None = None) -> list[dict]:
    """Measure every task; with ``deadline_s``, tasks left when it passes are recorded as skipped."""
    pool = Pool(log_path=log_path or default_log_path())
    records = []
    t_start = time.perf_counter()
    try:
        for kernel_module, kernel, size, method in tasks:
            if on_start is not None:
                on_start(f"{kernel}[{size}] {method.name}")
            if deadline_s is not None and time.perf_counter() - t_start > deadline_s:
                rec = dict(kernel=kernel, size=size, method=method.name, status="skipped",
                           message=f"run time budget of {deadline_s:g} s spent")
            else:
                t0 = time.perf_counter()
                rec = pool.run(kernel_module, kernel, size, method, cfg)
                rec["wall_s"] = time.perf_counter() - t0   # what the measurement cost the run
            records.append(rec)
            if on_done is not None:
                on_done(rec)
    finally:
        pool.close()
    return records


def default_log_path() -> str:
    """Where workers' stdout/stderr go: peers print warnings that would garble the progress bar."""
    return os.path.join(tempfile.gettempdir(), "coarsen_nb_bench_workers.log")


def ratios(records: list[dict]) -> None:
    """Add ``grad_ratio`` / ``fwd_ratio``: time over the hand-written one for the same kernel and size."""
    base = {(r["kernel"], r["size"]): r for r in records if r["method"] == BASELINE and r.get("status") == "ok"}
    for r in records:
        b = base.get((r["kernel"], r["size"]))
        for key in ("grad", "fwd"):
            t = r.get(f"{key}_s")
            r[f"{key}_ratio"] = (t / b[f"{key}_s"]) if (b and t is not None and b.get(f"{key}_s")) else None
