"""Shared test setup: the shared test modules (corpus, interpreter, generators) import by name."""

from __future__ import annotations

import os
import sys

from hypothesis import settings

_TESTS = os.path.dirname(os.path.abspath(__file__))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# "ci": derandomized, so that a red run can be reproduced from its log alone.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
