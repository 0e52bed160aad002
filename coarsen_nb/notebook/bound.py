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
"""

from __future__ import annotations

from typing import Any


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

    def __call__(self, *args):
        self.last_args = args
        return self.compiled(*args)

    def grad(self, *args):
        self.last_args = args
        grads = self.compiled.grad(*args)
        self._maybe_check(args, grads)
        return grads

    def value_and_grad(self, *args):
        self.last_args = args
        value, grads = self.compiled.value_and_grad(*args)
        self._maybe_check(args, grads)
        return value, grads

    def _maybe_check(self, args: tuple, grads) -> None:
        if not self._check_pending:
            return
        from coarsen_nb.notebook.check import check_gradient

        self._check_pending = False
        reference = self.reference if self.reference is not None else self.compiled
        self.check_report = check_gradient(
            reference, args, self.compiled.wrt, grads, name=self.compiled.name,
            independent=self.reference is not None,
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
        return f"<coarsened {c.name}({', '.join(c.wrt)} ...) max_soi={c.max_soi} reuse={c.reuse}>"
