"""An error raised inside the generated code, reported as the user's: at their line, in their names.

:class:`~coarsen_nb.runtime.Coarsened` calls :func:`reraise` from the ``except`` around every run of a
generated function (its fast path too), so an error is mapped the same way whichever path ran it.
"""

from __future__ import annotations

from coarsen_nb.errors import InternalCompilerError


def reraise(f, c, exc: Exception, args: tuple):
    """Raise ``exc``, raised by the generated code of ``c`` (a :class:`~coarsen_nb.specialize.Compiled`) run
    on ``args`` by ``f``, as the user's error at the user's line, or as it is where it says nothing of theirs.
    Call it while ``exc`` is being handled (a bare ``raise`` keeps its traceback)."""
    from coarsen_nb.frontend.unbound import UNBOUND_MARK

    # The user's subset has no attributes, dicts or free names that these could come from: a bug in the
    # generated code -- except the UnboundLocalError a possibly-unbound read raises on purpose.
    if isinstance(exc, (AttributeError, KeyError, NameError)) and not (
            isinstance(exc, UnboundLocalError) and UNBOUND_MARK in str(exc)):
        raise InternalCompilerError(f.name, "running the generated code", exc) from exc
    # (an error inside compiled code was repeated on the NumPy module, which says where: numba_loader)
    from coarsen_nb import call_errors  # (imports SymPy: only when something went wrong)

    module = getattr(exc, "generated_module", None)     # (else the module's own: its text is not read)
    filename, table = (module[1], module[2]) if module is not None else (c.filename, c.line_table)
    err = call_errors.from_generated(exc, filename=filename, line_table=table, fname=f.name,
                                     params=f.params, primal=args, user_source=f.front_source, plan=c.plan)
    if err is None:
        raise
    raise err from exc
