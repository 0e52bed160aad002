"""A :class:`CoarsenError` that is also the Python error it stands for.

Some user errors have a Python meaning as well: an export target that exists
is a ``FileExistsError``, a read past the end of an array is the
``IndexError`` the plain function would raise too.  Code that catches the
Python type (``except FileExistsError``, ``pytest.raises(IndexError)``) keeps
working, and the user still gets coarsen_nb's message: the construct in their
words, the source line with a caret, a hint.
"""

from __future__ import annotations

from functools import cache

from coarsen_nb.errors import CoarsenError


@cache
def coarsen_error_as(base: type[Exception]) -> type[CoarsenError]:
    """The subclass of both ``CoarsenError`` and ``base`` (one class per base, so ``type(e)`` is stable).

    Example
    -------
    >>> err = coarsen_error_as(IndexError)("x", message="x is too short")
    >>> isinstance(err, IndexError) and isinstance(err, CoarsenError)
    True
    """
    if issubclass(base, CoarsenError):
        return base
    # OSError and KeyError format their own str() (errno fields, repr of the key): show ours instead.
    # The class is made at run time, so pickle (multiprocessing, joblib) rebuilds it from its base.
    return type(f"Coarsen{base.__name__}", (CoarsenError, base),
                {"__str__": CoarsenError._format, "__module__": __name__, "__reduce__": _reduce})


def _reduce(err: CoarsenError):
    base = type(err).__mro__[2]
    return _rebuild, (base, err.construct, err.line, err.col, err.source_line, err.hint, err.filename, err.message)


def _rebuild(base: type[Exception], *fields) -> CoarsenError:
    return coarsen_error_as(base)(*fields)
