"""Shared test setup: the shared test modules (corpus, interpreter, generators) import by name."""

from __future__ import annotations

import os
import sys

from hypothesis import settings

# The whole-pipeline cache (coarsen_nb/pipeline_cache.py) is off: a test that replaces a pipeline stage must
# see it run.  tests/test_compile_cache.py turns it on for itself.
os.environ.setdefault("COARSEN_NB_PIPELINE_CACHE", "0")

# The suite's default backend is numpy, set through the variable users have (coarsen_nb.backends.resolve):
# ~8900 tests call coarsen() without a backend, and compiling each with Numba (seconds cold) would not fit
# CI's 30 minutes.  Numba is tested where a test asks for it by name (tests/lower/test_numba_*.py, the numba
# pairs), and the default itself, auto -> numba, in subprocesses with the variable unset
# (tests/test_default_backend.py, tests/notebook/test_default_backend_notebook.py).  Set here, before any
# test starts a kernel or a subprocess, so that those inherit it: a notebook kernel compiles as the test
# process does.
os.environ.setdefault("COARSEN_NB_BACKEND", "numpy")

_TESTS = os.path.dirname(os.path.abspath(__file__))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# The README's test command is deterministic: every property test draws the same examples on every
# run ("repeatable", derandomized per test), so a red CI run is reproduced by running the same command.
# Exploration is a separate, explicit run with fresh random examples on every call (the issue notes give
# the command):  HYPOTHESIS_PROFILE=explore COARSEN_RANDOM_EXAMPLES=1000 python -m pytest tests/phi
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


# -- every test fails on a fallback or an internal compiler error ------------------------------------------
# A fallback to a finer selection is allowed only for a documented limit, and only in a test that says so
# (``@pytest.mark.allows_fallback("reason")``); an internal compiler error is never allowed, even where a
# test expects a CoarsenError (InternalCompilerError is one, so ``pytest.raises(CoarsenError)`` alone would
# accept a compiler bug).  Both are recorded where they are constructed, so a warnings filter or an
# ``except`` in the code under test cannot hide them.

import pytest  # noqa: E402

from coarsen_nb import errors as _errors  # noqa: E402

_seen: list[BaseException] = []


def _recording(cls):
    original = cls.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _seen.append(self)

    cls.__init__ = init


_recording(_errors.InternalCompilerError)
_recording(_errors.FallbackWarning)


def pytest_configure(config):
    config.addinivalue_line("markers", "allows_fallback(reason): the test exercises a documented limit "
                            "(coarsen_nb.errors.SEGMENT_LIMITS) and may see a FallbackWarning")
    config.addinivalue_line("markers", "expects_internal_error: the test injects a fault into the compiler "
                            "to check how an internal error is reported")


@pytest.fixture(autouse=True)
def _no_fallback_no_internal_error(request):
    _seen.clear()
    yield
    seen, _seen[:] = list(_seen), []
    internal = [e for e in seen if isinstance(e, _errors.InternalCompilerError)]
    if internal and request.node.get_closest_marker("expects_internal_error") is None:
        pytest.fail(f"internal compiler error: {internal[0]}", pytrace=False)
    fallbacks = [w for w in seen if isinstance(w, _errors.FallbackWarning)]
    if fallbacks and request.node.get_closest_marker("allows_fallback") is None:
        pytest.fail(f"fallback to a finer selection: {fallbacks[0]}", pytrace=False)
