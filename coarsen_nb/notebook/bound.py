"""What ``%%coarsen`` binds in the user namespace: a compiled function plus memory.

A :class:`Bound` forwards everything to the ``Coarsened`` it holds, and adds
the two things only the notebook needs:

* the arguments of the user's last call, so the *Tuning* view can time the
  gradient on real inputs rather than invented ones;
* the optional ``--check`` view: on the first gradient, compare with central
  finite differences of the *plain Python function* the cell defined (an
  oracle independent of the compiler) and print a short report.

The *Tuning* view swaps ``compiled`` when the user moves a slider, so the name
in the notebook always means the selection on screen.

The compiler selects SOIs and generates code on the first call, for that
call's argument types, so a view drawn when the cell ran has little to show.
``on_specialize`` lets it redraw when a call produced a new specialization
(seen as a new ``source`` text: public data, no private state).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coarsen_nb.errors import CoarsenError
from coarsen_nb.notebook.format import effective_reuse, fmt_knob, fmt_wrt


class Bound:
    """A ``Coarsened`` as the notebook user holds it.

    Parameters
    ----------
    compiled : coarsen_nb.runtime.Coarsened
        The compiled function; replaced when the view retunes it.
    reference : callable or None
        The plain Python function the cell defined, the ``--check`` oracle.
    check : bool
        Print a finite-difference report on the first gradient call.
    """

    def __init__(self, compiled, reference=None, check: bool = False) -> None:
        self.compiled = compiled
        self.reference = reference
        self.last_args: tuple | None = None
        self.check_report = None
        self._check_pending = check
        self._listeners: list = []
        self._call_listeners: list = []
        self._seen_source = source_or_none(compiled)

    def on_specialize(self, callback) -> None:
        """Call ``callback()`` after a call that compiled a new specialization."""
        self._listeners.append(callback)

    def on_call(self, callback) -> None:
        """Call ``callback()`` after every call (what changes per call: how a Dask call was chunked)."""
        self._call_listeners.append(callback)

    def __call__(self, *args):
        self.last_args = args
        value = self.compiled(*args)
        self._notify()
        return value

    def grad(self, *args):
        self.last_args = args
        grads = self.compiled.grad(*args)
        self._notify()
        self._maybe_check(args, grads)
        return grads

    def value_and_grad(self, *args):
        self.last_args = args
        value, grads = self.compiled.value_and_grad(*args)
        self._notify()
        self._maybe_check(args, grads)
        return value, grads

    def _notify(self) -> None:
        source = source_or_none(self.compiled)
        if source is not self._seen_source:
            self._seen_source = source
            for callback in self._listeners:
                callback()
        for callback in self._call_listeners:
            callback()

    def _maybe_check(self, args: tuple, grads) -> None:
        if not self._check_pending:
            return
        from coarsen_nb.notebook.check import check_gradient

        self._check_pending = False
        reference = self.reference if self.reference is not None else self.compiled
        self.check_report = check_gradient(
            reference, args, wrt_names(self.compiled, args), grads, name=self.compiled.name,
            params=self.compiled.params, independent=self.reference is not None,
        )
        print(self.check_report)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not set in __init__; guard against recursion
        # while unpickling or copying, before `compiled` exists.
        if name == "compiled":
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(self.compiled)))

    def __repr__(self) -> str:
        c = self.compiled
        return (
            f"<coarsened {c.name}({', '.join(c.params)}): gradient w.r.t. {fmt_wrt(c.wrt)} "
            f"(L={fmt_knob(c.max_soi)}, R={effective_reuse(c)}{', per block' if c.per_block else ''})>"
        )


def source_or_none(compiled):
    """The generated module's text, or None before the first call generated one."""
    try:
        return compiled.source
    except CoarsenError:  # not called yet: nothing generated
        return None


def wrt_names(compiled, args) -> tuple[str, ...]:
    """The names the gradient is taken for.

    ``Coarsened.wrt`` is None when the user did not name them; the compiler
    then takes every float parameter, which this mirrors from the arguments.
    """
    if compiled.wrt:
        return tuple(compiled.wrt)
    return tuple(
        p for p, a in zip(compiled.params, args, strict=True)
        if isinstance(a, float | np.floating) or getattr(getattr(a, "dtype", None), "kind", "") == "f"
    )
