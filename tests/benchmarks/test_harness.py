"""The benchmark harness measures what it claims and never passes off a bad figure as a time.

A tiny kernel module (with deliberately broken "methods" as adapters) is
written into a temporary directory, because workers are separate processes
that import coarsen_nb.kernels as kernels and adapters by name.  No assertion is about speed: the
machine is shared and noisy; these tests check structure, the correctness
guard, the time limits, error capture and the report files.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from coarsen_nb.benchmarks import cli, harness, measure, memory, report
from coarsen_nb.benchmarks.measure import Config, compare
from coarsen_nb.benchmarks.peers import METHODS, Method, rebind

TINY = '''
import math
import os
import signal
import time

import numpy as np

from coarsen_nb.benchmarks.peers import Bound, as_tuple

META = dict(name="tiny", wrt=("x",), sizes=(4, 6), quick_sizes=(4,), test_size=4)


def _term(v):
    return math.sin(v) * v


def tiny(x):
    s = 0.0
    for i in range(len(x)):
        s += _term(x[i])
    return s


def grad(x):
    return np.cos(x) * x + np.sin(x)


def vectorized(x):
    return float(np.sum(np.sin(x) * x))


def make_inputs(size, seed=0):
    return (np.random.default_rng(seed).standard_normal(size),)


def _bound(mod, args, g):
    return Bound(grad=g, forward=lambda: mod.tiny(*args), grads_to_numpy=lambda r: as_tuple(r, 1))


def wrong(fn, mod, args, wrt_idx):
    return _bound(mod, args, lambda: 1.01 * mod.grad(*args))


def slow(fn, mod, args, wrt_idx):
    def g():
        time.sleep(60)
    return _bound(mod, args, g)


def stuck(fn, mod, args, wrt_idx):
    # Ignores the in-process alarm, like a call stuck in C: only the parent's kill ends it.
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    return slow(fn, mod, args, wrt_idx)


def crash(fn, mod, args, wrt_idx):
    def g():
        os._exit(3)
    return _bound(mod, args, g)


def raises(fn, mod, args, wrt_idx):
    def g():
        raise ValueError("deliberate failure\\nsecond line")
    return _bound(mod, args, g)


def writer(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] * x[i]
    return np.sum(out)
'''

FAST = Config(timeout_s=5.0, budget_s=0.01, target_repeat_s=0.0005, min_repeats=1, max_repeats=3,
              memory_max_call_s=1.0)


def _import_tiny(tmp_path_factory, text):
    """Import a tiny kernel under a unique name from a temp dir on sys.path (workers inherit it)."""
    d = tmp_path_factory.mktemp("tinyk")
    name = f"tiny_{uuid.uuid4().hex[:8]}"
    (d / f"{name}.py").write_text(textwrap.dedent(text))
    sys.path.insert(0, str(d))
    return d, importlib.import_module(name)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d, mod = _import_tiny(tmp_path_factory, TINY)
    try:
        yield mod
    finally:
        sys.path.remove(str(d))


@pytest.fixture(scope="module")
def tiny_bad_vectorized(tmp_path_factory):
    """The tiny kernel whose vectorized forward computes another function (a 1 % error)."""
    d, mod = _import_tiny(tmp_path_factory, TINY.replace("return float(np.sum(np.sin(x) * x))",
                                                         "return 1.01 * float(np.sum(np.sin(x) * x))"))
    try:
        yield mod
    finally:
        sys.path.remove(str(d))


def _method(mod, fn_name, **kw):
    return Method(fn_name, f"{mod.__name__}:{fn_name}", **kw)


def _run(mod, methods, cfg=FAST, tmp_path=None):
    tasks = harness.plan({"tiny": mod}, methods, quick=True)
    log = str(tmp_path / "workers.log") if tmp_path is not None else None
    recs = harness.run(tasks, cfg, log_path=log)
    harness.ratios(recs)
    return {r["method"]: r for r in recs}


def test_hand_written_record_structure(tiny, tmp_path):
    recs = _run(tiny, [], tmp_path=tmp_path)
    r = recs["hand-written"]
    assert r["status"] == "ok", r
    assert r["kernel"] == "tiny" and r["size"] == 4
    for key in ("build_s", "first_grad_s", "grad_s", "fwd_s"):
        assert isinstance(r[key], float) and r[key] > 0
    assert r["grad_calls"] >= 1 and r["fwd_calls"] >= 1
    assert r["grad_ratio"] == pytest.approx(1.0)
    assert r["max_rel_err"] == 0.0
    assert isinstance(r["peak_bytes"], int)
    assert r["allocs"] is None or r["allocs"] >= 1


def test_vectorized_forward_is_timed_beside_each_gradient(tiny, tmp_path):
    recs = _run(tiny, [_method(tiny, "wrong", numpy_based=True)], tmp_path=tmp_path)
    r = recs["hand-written"]
    assert isinstance(r["vec_fwd_s"], float) and r["vec_fwd_s"] > 0
    assert isinstance(r["grad_vec_ratio"], float) and r["grad_vec_ratio"] > 0
    assert recs["wrong"]["grad_vec_ratio"] is None        # a wrong gradient gets no ratio either
    notes = report.Notes()
    table = report.vectorized_table(list(recs.values()), notes, 5.0)
    assert table.splitlines()[0] == "| kernel | size | vectorized forward | hand-written | wrong |"
    row = table.splitlines()[2]
    assert row.startswith("| tiny | 4 | ") and f"{report.fmt_ratio(r['grad_vec_ratio'])}" in row
    assert "**WRONG**" in row
    growth = report.memory_growth_table(list(recs.values()), notes, 5.0)
    assert "B per unit" in growth.splitlines()[2]


def test_vectorized_forward_of_another_value_is_flagged_not_timed(tiny_bad_vectorized, tmp_path):
    r = _run(tiny_bad_vectorized, [], tmp_path=tmp_path)["hand-written"]
    assert r["status"] == "ok"                          # the gradient's own figures stand
    assert r["vec_fwd_s"] is None and r["grad_vec_ratio"] is None
    assert "differs from the plain function" in r["vec_note"]
    assert "**WRONG**" in report.vectorized_table([r], report.Notes(), 5.0)


def test_interleaved_alternates_the_two_calls_and_pairs_their_times(monkeypatch):
    """On a fake clock that each call advances by a known cost (gradient 3, vectorized forward 1; no
    timing of the real machine), the medians are the costs, the ratio is 3, and the calls alternate
    in rounds of whole repeats."""
    now, calls = [0.0], []

    def call(name, cost):
        def run():
            calls.append(name)
            now[0] += cost
        return run

    monkeypatch.setattr(measure.time, "perf_counter", lambda: now[0])
    cfg = Config(budget_s=40.0, target_repeat_s=2.0, min_repeats=3, max_repeats=5)
    g, v, ratio = measure.interleaved(call("g", 3.0), call("v", 1.0), lambda r: r, cfg, 3.0, 1.0)
    assert (g, v, ratio) == (3.0, 1.0, 3.0)
    # 1 gradient call (3 ≥ 2) then 2 forward calls per round; 40 / (3 + 2) = 8 rounds, capped at 5
    assert "".join(calls) == "gvv" * 5


def test_wrong_gradient_is_flagged_and_not_timed(tiny, tmp_path):
    r = _run(tiny, [_method(tiny, "wrong", numpy_based=True)], tmp_path=tmp_path)["wrong"]
    assert r["status"] == "wrong"
    assert "differs from hand-written" in r["message"]
    assert r["grad_s"] is None and r["fwd_s"] is None
    notes = report.Notes()
    assert "**WRONG**" in report.status_cell(r, notes, 5.0)


def test_slow_method_is_reported_over_the_limit(tiny, tmp_path):
    cfg = Config(**{**FAST.__dict__, "timeout_s": 0.5})
    recs = _run(tiny, [_method(tiny, "slow")], cfg, tmp_path)
    r = recs["slow"]
    assert r["status"] == "timeout"
    assert "first gradient call" in r["message"] and "0.5 s" in r["message"]
    assert report.status_cell(r, report.Notes(), 0.5).startswith("> 0.5 s")


def test_call_stuck_beyond_the_alarm_is_killed_and_the_run_continues(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "KILL_GRACE_S", 0.5)
    cfg = Config(**{**FAST.__dict__, "timeout_s": 0.5})
    stuck = _method(tiny, "stuck")
    tasks = harness.plan({"tiny": tiny}, [stuck], quick=True)
    tasks += [(tiny.__name__, "tiny", 6, METHODS["hand-written"])]
    recs = harness.run(tasks, cfg, log_path=str(tmp_path / "w.log"))
    assert recs[1]["status"] == "timeout" and "killed after" in recs[1]["message"]
    assert recs[2]["status"] == "ok"


def test_crash_and_exception_are_reported_not_raised(tiny, tmp_path):
    recs = _run(tiny, [_method(tiny, "crash"), _method(tiny, "raises")], tmp_path=tmp_path)
    assert recs["crash"]["status"] == "error" and "worker died" in recs["crash"]["message"]
    assert recs["raises"]["status"] == "error"
    assert recs["raises"]["message"] == "ValueError: deliberate failure"


def test_missing_peer_is_unavailable(tiny, tmp_path):
    m = Method("ghost", "coarsen_nb.benchmarks.peers:hand_written", requires=("no_such_module_for_bench",))
    r = _run(tiny, [m], tmp_path=tmp_path)["ghost"]
    assert r["status"] == "unavailable" and "not installed" in r["message"]


def test_installed_peers_agree_on_the_tiny_kernel(tiny, tmp_path):
    """autograd and JAX adapters (when installed) run the same loop and match the hand-written gradient.

    torch and tangent are left to ``python -m coarsen_nb.benchmarks --quick``: their imports alone
    would take most of this file's time budget.
    """
    names = [m for m in ("autograd", "jax", "jax jit")
             if importlib.util.find_spec(METHODS[m].requires[0]) is not None]
    if not names:
        pytest.skip("no peer installed")
    recs = _run(tiny, names, Config(**{**FAST.__dict__, "timeout_s": 20.0}), tmp_path)
    for m in names:
        assert recs[m]["status"] == "ok", recs[m]
        assert recs[m]["max_rel_err"] < 1e-6


def test_in_place_write_is_unsupported_for_immutable_arrays(tiny):
    pytest.importorskip("autograd")
    from coarsen_nb.benchmarks.peers import Unsupported, autograd_peer

    with pytest.raises(Unsupported, match=r"out\[i\].*immutable"):
        autograd_peer(tiny.writer, tiny, (np.ones(3),), [0])


def test_rebind_reaches_same_module_helpers(tiny):
    calls = []

    class Spy:
        def sin(self, v):
            calls.append(v)
            return 0.0

        def __getattr__(self, name):
            import math
            return getattr(math, name)

    f = rebind(tiny.tiny, math=Spy())
    assert f(np.ones(3)) == 0.0 and len(calls) == 3
    assert tiny.tiny(np.ones(3)) != 0.0          # the original is untouched


def test_compare_catches_shape_and_nonfinite_mismatches():
    ok, _, _ = compare((np.ones(3),), (np.ones(3) * (1 + 1e-9),), 1e-6)
    assert ok
    assert not compare((np.ones(2),), (np.ones(3),), 1e-6)[0]
    assert not compare((np.array([1.0, np.nan]),), (np.ones(2),), 1e-6)[0]
    assert not compare((np.ones(3) * 1.001,), (np.ones(3),), 1e-6)[0]


def test_memory_figures():
    assert memory.peak_bytes(lambda: np.ones(100_000)) >= 800_000
    n = memory.count_numpy_allocations(lambda: np.sum(np.ones(1000) * 2.0))
    if n is None:
        pytest.skip(memory.UNAVAILABLE_REASON)
    assert n >= 2


def test_report_files_are_written(tiny, tmp_path):
    res = cli.run_benchmarks({"tiny": tiny}, [_method(tiny, "wrong", numpy_based=True)], FAST,
                             tmp_path / "out", quick=True, progress=False, log_path=str(tmp_path / "w.log"))
    md = res["markdown"].read_text()
    assert res["markdown"].name == "RESULTS-quick.md"
    assert "| kernel | size | hand-written | wrong |" in md
    assert "**WRONG**" in md and "Machine:" in md and "numpy" in md
    assert res["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(res["json"].read_text())
    assert {r["method"] for r in data["records"]} == {"hand-written", "wrong"}


def test_cli_rejects_unknown_names_and_normalizes_method_names():
    assert cli.parse_methods("jax-JIT, coarsen_nb-L=1") == ["jax jit", "coarsen_nb L=1"]
    assert cli.main(["--methods", "nonesuch", "--no-progress"]) == 2
    assert cli.main(["--kernels", "nonesuch", "--no-progress"]) == 2


def test_a_worker_that_timed_out_is_replaced(tiny, tmp_path):
    """The alarm may stop the measurement but not what it started (a peer's compile threads): the
    worker that reported a timeout is ended, and the next measurement gets a fresh one."""
    pool = harness.Pool(log_path=str(tmp_path / "w.log"))
    try:
        cfg = Config(**{**FAST.__dict__, "timeout_s": 0.5})
        slow = _method(tiny, "slow")
        assert pool.run(tiny.__name__, "tiny", 4, slow, cfg)["status"] == "timeout"
        assert "slow" not in pool.workers
        hand = METHODS["hand-written"]
        assert pool.run(tiny.__name__, "tiny", 4, hand, FAST)["status"] == "ok"
        first = pool.workers["hand-written"].proc.pid
        assert pool.run(tiny.__name__, "tiny", 6, hand, FAST)["status"] == "ok"
        assert pool.workers["hand-written"].proc.pid == first     # an ok measurement keeps its worker
    finally:
        pool.close()


_FAULTS = """
import resource, sys
import numpy as np
from coarsen_nb.benchmarks import harness
if sys.argv[1] == "settled":
    harness._settle_allocator()
x = np.random.default_rng(0).standard_normal(10**5)
np.where(x > 0, 2.0 * x, np.cos(x))
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    np.where(x > 0, 2.0 * x, np.cos(x))
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator (Linux)")
def test_settled_allocator_reuses_large_temporaries():
    """In a fresh process each 10⁵-element temporary is fresh pages (a page fault per 4 KiB, every
    call); after ``_settle_allocator`` the heap serves and reuses them: the state every method is
    measured in."""
    import subprocess

    root = str(Path(harness.__file__).resolve().parents[2])

    def faults(state):
        out = subprocess.run([sys.executable, "-c", _FAULTS, state], capture_output=True, text=True, cwd=root,
                             check=True)
        return int(out.stdout.split()[-1])

    fresh, settled = faults("fresh"), faults("settled")
    assert fresh > 20 * 100          # three 800 KB temporaries per call, 200 pages each
    assert settled < fresh / 10


def test_the_numba_method_runs_checked_like_every_method(tiny, tmp_path, monkeypatch):
    """``coarsen_nb numba`` is measured like the others: its gradient checked against the hand-written one
    before it is timed, its compile time (the first call) apart from the steady state."""
    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path / "cache"))
    recs = _run(tiny, ["coarsen_nb numba"], Config(**{**FAST.__dict__, "timeout_s": 60.0}), tmp_path)
    r = recs["coarsen_nb numba"]
    assert r["status"] == "ok", r
    assert r["max_rel_err"] < 1e-9


def test_plan_largest_keeps_each_kernels_largest_size(tiny):
    tasks = harness.plan({"tiny": tiny}, ["hand-written"], quick=False, largest=True)
    assert [(t[2], t[3].name) for t in tasks] == [(6, "hand-written")]
    assert cli.build_parser().parse_args(["--largest"]).largest
