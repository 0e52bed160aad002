"""One random program judged under one backend and selection, against independent references.

Shared by the fuzz driver (``tests/fuzz_driver.py``, thousands of programs, every failure logged) and the
suite's derandomized sample (``tests/phi/test_extended_random_programs.py``):

- the value equals the plain Python function to rtol 1e-9 (NaN where Python gives NaN); where Python
  raises, the compiled function must raise the same exception type (coarsen_nb's ``CoarsenValueError``
  is a ``ValueError``: the user's error at their line);
- the gradient equals central differences at a generic point near the arguments, with the suite's own
  filters (two step sizes agree, the one-sided differences agree: otherwise the gradient is not judged);
- warnings are errors (a ``FallbackWarning`` or ``NumbaFallbackWarning`` fails the configuration), and an
  ``InternalCompilerError`` constructed anywhere fails it even where the code under test catches it.
"""

from __future__ import annotations

import warnings

import numpy as np
from gradcheck import finite_difference, one_sided_differences
from program_gen import Program, main_function

import coarsen_nb as cn
from coarsen_nb import errors

__all__ = ["SELECTIONS", "check_program", "generic_point", "python_result"]

SELECTIONS = {"default": {}, "max_soi=1": {"max_soi": 1}, "per_block": {"per_block": True}}

_internal_errors: list[BaseException] = []


def _record_internal_errors() -> None:
    """Remember every InternalCompilerError constructed, so an ``except`` in the compiler cannot hide one
    (the suite's conftest wraps the same ``__init__``: both wrappers record)."""
    original = errors.InternalCompilerError.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _internal_errors.append(self)

    errors.InternalCompilerError.__init__ = init


_record_internal_errors()


def generic_point(v, k: int = 0):
    """``v`` moved off round values by an offset that differs per argument and element (the suite's
    ``_generic`` in tests/phi/test_random_programs.py: a tie such as ``min(a, b)`` at a = b is a kink)."""
    if isinstance(v, np.ndarray):
        return v + 0.0137 * (1.0 + np.abs(v)) * (1.0 + 0.1234 * k + 0.0719 * np.arange(v.size).reshape(v.shape))
    return v + 0.0137 * (1.0 + abs(v)) * (1.0 + 0.1234 * k) if isinstance(v, float) else v


def python_result(py, args):
    """``(value, None)`` of the plain function, or ``(None, exception type)`` where it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return py(*args), None
    except Exception as e:
        return None, type(e)


def check_program(p: Program, backend: str, selection: str) -> str | None:
    """None where ``p`` passes under ``backend`` and ``selection``; else what went wrong."""
    py = main_function(p.source)
    _internal_errors.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            message = _compare(p, py, backend, SELECTIONS[selection])
    except Exception as e:
        message = f"raised {type(e).__name__}: {str(e)[:600]}"
    if _internal_errors and message is None:
        message = f"internal error (caught inside): {_internal_errors[0]!s:.600}"
    return message


def _compare(p: Program, py, backend: str, selection: dict) -> str | None:
    want, raises = python_result(py, p.args)
    f = cn.coarsen(p.source, wrt=p.wrt, backend=backend, **selection)
    if raises is not None:
        try:
            got = f(*p.args)
        except Exception as e:
            # (the user's error at their line: a CoarsenError that is also the exception Python raised)
            return None if isinstance(e, raises) else f"python raises {raises.__name__}, compiled {e!r}"
        return f"python raises {raises.__name__}, compiled returned {got!r}"
    got = f(*p.args)
    if np.shape(got) != np.shape(want):        # (allclose would broadcast a scalar against an array)
        return f"value of shape {np.shape(got)}, python's {np.shape(want)}: {got!r}, python {want!r}"
    if not np.allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True):
        return f"value {got!r}, python {want!r}"
    args = tuple(generic_point(v, n) if k in p.wrt else v
                 for n, (k, v) in enumerate(zip(p.params, p.args, strict=True)))
    value, raises = python_result(py, args)
    if raises is not None or not np.all(np.isfinite(value)):
        return None
    grads = f.grad(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    if len(grads) != len(p.wrt):
        return f"{len(grads)} gradients for {len(p.wrt)} parameters"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # finite differences of the plain function
        for name, g in zip(p.wrt, grads, strict=True):
            i = p.params.index(name)
            fd = np.asarray(finite_difference(py, args, i, eps=1e-6))
            coarse = np.asarray(finite_difference(py, args, i, eps=1e-5))
            scale = 1.0 + np.abs(fd)
            if not (np.all(np.isfinite(fd)) and np.all(np.abs(fd - coarse) <= 1e-6 * scale)):
                continue            # not smooth here: finite differences are no reference
            left, right = one_sided_differences(py, args, i, 1e-6)
            if not np.all(np.abs(left - right) <= 1e-3 * scale):
                continue
            if np.shape(g) != np.shape(fd) or not np.allclose(g, fd, rtol=1e-5, atol=1e-6):
                return f"d/d{name} {g!r}, finite differences {fd!r} at {args!r}"
    return None
