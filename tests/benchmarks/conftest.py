"""Make ``benchmarks`` and ``kernels`` resolve to the repository's packages under plain ``pytest`` too.

``tests/conftest.py`` puts ``tests/`` first on sys.path, where ``tests/benchmarks``
and ``tests/kernels`` (no ``__init__.py``) would otherwise shadow the real packages
as namespace packages; ``python -m pytest`` avoids that through the working
directory, plain ``pytest`` does not.  Benchmark workers inherit this sys.path.
"""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if sys.path[:1] != [_ROOT]:
    sys.path.insert(0, _ROOT)
