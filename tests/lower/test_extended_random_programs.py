"""Property: the extended random programs (``program_cases(extended=True)`` in ``tests/program_gen.py``:
numbers made by NumPy code over ``x``, helpers that return from inside a loop or from nested branches)
under the NumPy and numba backends and the three selections, each against the plain function and central
differences (``tests/program_check.py``: value to rtol 1e-9, the same exception type where Python raises,
the gradient where finite differences are a reference, no fallback, no internal error).

A derandomized sample, the same programs for every configuration, sized to add well under a minute to the
suite; the large budget is ``tests/fuzz_driver.py`` (RESULTS.md, stop 46, gives the seeds it ran clean).
``COARSEN_RANDOM_EXAMPLES=N`` runs N programs per configuration.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from program_check import SELECTIONS, check_program
from program_gen import program_cases

pytestmark = pytest.mark.usefixtures("private_numba_cache")     # (tests/lower/conftest.py)

#: programs per configuration: a numba compile costs ~0.5 s, a NumPy one ~0.1 s
_EXAMPLES = {"numpy": 20, "numba": 8}
_OVERRIDE = int(os.environ.get("COARSEN_RANDOM_EXAMPLES", 0))


@pytest.mark.parametrize("selection", list(SELECTIONS))
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_extended_programs_match_python_and_fd(backend, selection):
    @settings(max_examples=_OVERRIDE or _EXAMPLES[backend], derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(program_cases(extended=True))
    def judge(p):
        message = check_program(p, backend, selection)
        assert message is None, f"{backend}, {selection}: {message}\n{p.source}\nargs={p.args!r}"

    judge()
