"""An ``@overload`` implementation is compiled once for callers whose flags differ only where it cannot tell,
and apart for callers whose inherited flags differ (coarsen_nb/numba_overload_sharing.py): counted by Numba's
compile events, with each caller's value and error against plain Python's.

In a fresh process: the block replaces a method of a Numba class, and a process that compiled nothing before
shows that the replacement, not an implementation compiled earlier, is what the count sees.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_PROCESS = textwrap.dedent('''
    import json
    import numba
    from numba.core import event
    from numba.core.typing.templates import _OverloadFunctionTemplate
    from coarsen_nb.numba_overload_sharing import overloads_shared_across_flags

    def reciprocal(x):
        raise NotImplementedError

    @numba.extending.overload(reciprocal)
    def _reciprocal(x):
        def impl(x):
            return 1.0 / x
        return impl

    INTERNAL = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True)

    @numba.njit(boundscheck=True, **INTERNAL)
    def helper(x):                  # (no wrappers, bounds checks: the Python error model, as the entry)
        return reciprocal(x)

    @numba.njit(error_model="numpy", **INTERNAL)
    def loop(x):                    # (NumPy's error model: inherited by the implementation)
        return reciprocal(x)

    @numba.njit
    def entry(x):
        return reciprocal(x) + helper(x) + loop(x)

    @numba.njit
    def numpy_errors(x):
        return loop(x)

    @numba.njit
    def later(x):                   # (compiled after the block: Numba's own key)
        return 2.0 * reciprocal(x)

    compiled = []

    class Count(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__qualname__.startswith("_reciprocal"):
                compiled.append(1)

        def on_end(self, ev):
            pass

    original = _OverloadFunctionTemplate._get_impl
    with event.install_listener("numba:compile", Count()):
        with overloads_shared_across_flags():
            value = entry(4.0)
            at_zero_numpy = numpy_errors(0.0)
        inside = len(compiled)
        restored = _OverloadFunctionTemplate._get_impl is original
        doubled = later(4.0)
        after = len(compiled)
    try:
        entry(0.0)
        raised = None
    except ZeroDivisionError as exc:
        raised = type(exc).__name__
    print(json.dumps(dict(inside=inside, after=after, restored=restored, value=value, doubled=doubled,
                          at_zero_numpy=at_zero_numpy, raised=raised)))
''')


def test_an_overload_is_compiled_once_per_inherited_flags_and_keeps_each_error_model():
    out = json.loads(subprocess.run([sys.executable, "-c", _PROCESS], capture_output=True, text=True, check=True,
                                    timeout=300).stdout.strip().splitlines()[-1])
    assert out["inside"] == 2                   # the entry and the helper share one; the loop has its own
    assert out["restored"]
    assert out["after"] == 3                    # outside the block Numba's own key: compiled again
    assert out["value"] == 3 * (1 / 4.0)
    assert out["doubled"] == 2 * (1 / 4.0)
    assert out["at_zero_numpy"] == float("inf")  # the loop's implementation: NumPy's error model
    assert out["raised"] == "ZeroDivisionError"  # the entry's: Python's, as plain Python raises


_ALLOCATING = textwrap.dedent('''
    import json
    import numpy as np
    import numba
    from numba.core import event
    from coarsen_nb.numba_overload_sharing import overloads_shared_across_flags

    INTERNAL = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True)

    @numba.njit(error_model="numpy", **INTERNAL)
    def loop(n):                    # (NumPy's error model, as the generated loop functions)
        out = np.empty(n)
        for i in range(n):
            out[i] = 1.0 / (i + 1.0)
        return out

    @numba.njit
    def entry(n):                   # (Python's, as an entry point)
        a = np.empty(n)
        for i in range(n):
            a[i] = i
        return a, loop(n)

    compiled = []

    class Count(event.Listener):
        def on_start(self, ev):
            if ev.data["dispatcher"].py_func.__qualname__.startswith("ol_np_empty"):
                compiled.append(1)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Count()):
        with overloads_shared_across_flags():
            a, b = entry(3)
    print(json.dumps(dict(empties=len(compiled), a=a.tolist(), b=b.tolist())))
''')


def test_numpy_empty_is_compiled_once_for_both_error_models():
    """``np.empty``'s implementation allocates and divides nothing: a caller with Python's error model and one with
    NumPy's share one compilation (each compiled its own before, ~0.03 s of a cold process)."""
    out = json.loads(subprocess.run([sys.executable, "-c", _ALLOCATING], capture_output=True, text=True, check=True,
                                    timeout=300).stdout.strip().splitlines()[-1])
    assert out["empties"] == 1
    assert out["a"] == [0.0, 1.0, 2.0]
    assert out["b"] == [1.0, 1 / 2.0, 1 / 3.0]
