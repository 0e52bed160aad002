"""A callee only compiled code calls is optimized and code-generated once, inside its caller
(coarsen_nb/numba_lazy_callees.py), and runs as before: values against the plain Python functions, errors
raised through the caller, a caller outside the block linking it, the codegen's class put back, a warm process
loading the entry without compiling its callees.

Each check runs in a fresh process: the block replaces an attribute of Numba's codegen, and a process that
compiled nothing before shows that the replacement, not something compiled earlier, is what the check sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
from numba_child import central, energy, run_child

_NUMBA_ALONE = textwrap.dedent('''
    import json, math
    import numba
    import numpy as np
    from numba.core.codegen import JITCodeLibrary
    from coarsen_nb.numba_lazy_callees import lazy_callee_libraries

    INTERNAL = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True)

    @numba.njit(error_model="numpy", **INTERNAL)
    def decayed_sum(x):
        s = 0.0
        for v in x:
            if v < 0:
                raise ValueError("negative")
            s += math.exp(-v) / v          # (NumPy's error model: inf at 0, no ZeroDivisionError)
        return s

    @numba.njit(boundscheck=True, **INTERNAL)
    def first_twice(x):
        return 2.0 * x[0]

    @numba.njit
    def entry(x):
        return decayed_sum(x) + first_twice(x)

    array = numba.float64[::1]
    context = entry.targetdescr.target_context
    codegen = context.codegen()
    with lazy_callee_libraries(context):
        inside = codegen._library_class.__name__
        entry.compile((array,))
    restored = "_library_class" not in vars(codegen) and codegen._library_class is JITCodeLibrary
    library = decayed_sum.overloads[(array,)].library
    lazy_after_compile = not library._finalized
    x = np.array([0.5, 1.0, 2.0])
    value = entry(x)
    at_zero = entry(np.array([0.0, 1.0]))
    try:
        entry(np.array([1.0, -1.0]))
        raised = None
    except ValueError as exc:
        raised = str(exc)

    @numba.njit
    def outside(x):                     # (a caller compiled outside the block: the callee finalized for it)
        return 3.0 * decayed_sum(x)

    tripled = outside(x)
    try:
        with lazy_callee_libraries(context):
            entry.compile((numba.types.unicode_type,))
        failed = None
    except Exception as exc:
        failed = type(exc).__name__
    print(json.dumps(dict(inside=inside, restored=restored, lazy_after_compile=lazy_after_compile,
                          value=value, at_zero=at_zero, raised=raised, tripled=tripled,
                          finalized_for_outside=library._finalized, failed=failed,
                          restored_after_failure="_library_class" not in vars(codegen))))
''')


def _decayed_sum(x):
    return sum(np.exp(-v) / v for v in x)


def test_a_callee_is_code_generated_inside_its_caller_and_runs_as_before():
    out = json.loads(subprocess.run([sys.executable, "-c", _NUMBA_ALONE], capture_output=True, text=True,
                                    check=True, timeout=300).stdout.strip().splitlines()[-1])
    assert out["inside"] == "LazyLibrary" and out["restored"]
    assert out["lazy_after_compile"]            # never optimized nor code-generated on its own
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(out["value"], _decayed_sum(x) + 2 * x[0], rtol=1e-14)
    assert out["at_zero"] == np.inf             # the callee's own error model, inside the caller
    assert out["raised"] == "negative"          # its exception raised through the caller
    np.testing.assert_allclose(out["tripled"], 3 * _decayed_sum(x), rtol=1e-14)
    assert out["finalized_for_outside"]         # a caller outside the block had it finalized
    assert out["failed"] is not None and out["restored_after_failure"]


_THROUGH_THE_LOADER = '''
    x = np.linspace(-1.0, 2.0, 7) ** 2
    f = cn.coarsen(SOURCE, backend="numba")
    with event.install_listener("numba:compile", Count()):
        gx, gw = f.grad(x, 1.5)
    namespace = f._specialize((x, 1.5)).grad.dispatcher.py_func.__globals__
    callees = {name: [not cres.library._finalized for cres in d.overloads.values()]
               for name, d in namespace.items()
               if hasattr(d, "targetoptions") and d.targetoptions.get("no_cpython_wrapper") and d.overloads
               and type(d._cache).__name__ == "NullCache"}
    print(json.dumps(dict(compiled=compiled, callees=callees, gx=list(gx), gw=gw)))
'''


def test_the_loaders_loop_functions_are_lazy_and_a_warm_process_needs_none_of_them(tmp_path):
    env = dict(os.environ, COARSEN_NB_CACHE=str(tmp_path), COARSEN_NB_PIPELINE_CACHE="0")
    cold, warm = [run_child(_THROUGH_THE_LOADER, env=env) for _ in range(2)]
    assert cold["callees"] and all(all(lazy) for lazy in cold["callees"].values())     # the loop functions
    assert "energy_grad" in cold["compiled"]
    assert warm["compiled"] == [] and warm["callees"] == {}      # the entry from the disk cache, alone
    x = np.linspace(-1.0, 2.0, 7) ** 2
    rx, rw = central(energy(), x, 1.5)
    for out in (cold, warm):
        np.testing.assert_allclose(out["gx"], rx, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(out["gw"], rw, rtol=1e-6, atol=1e-6)
