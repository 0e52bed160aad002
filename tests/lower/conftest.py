"""Fixtures of the lowering tests."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def private_numba_cache(tmp_path_factory):
    """Numba's disk cache in a directory of this test run (never the user's ~/.cache), one per test module:
    the numba test modules use it (``pytestmark = pytest.mark.usefixtures("private_numba_cache")``)."""
    old = os.environ.get("COARSEN_NB_CACHE")
    os.environ["COARSEN_NB_CACHE"] = str(tmp_path_factory.mktemp("numba_cache"))
    yield
    if old is None:
        del os.environ["COARSEN_NB_CACHE"]
    else:
        os.environ["COARSEN_NB_CACHE"] = old
