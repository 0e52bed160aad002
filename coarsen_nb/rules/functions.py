"""SymPy function classes made from a registration: a primitive whose derivative and LaTeX are all there is
to say about it (``cbrt``) needs no class of its own in :mod:`coarsen_nb.phi.forms`."""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp


def elementwise_function(name: str, derivative: Callable, latex: str, real: bool = False) -> type:
    """A SymPy function of one argument, kept as written (no folding), with

    * ``derivative(x, f)``: df/dx in terms of the argument ``x`` and the function's own value ``f``;
    * ``latex``: its LaTeX, ``{0}`` the printed argument;
    * ``real``: whether it is real for every real argument.
    """

    def fdiff(self, argindex=1):
        return derivative(self.args[0], self)

    def _latex(self, printer):
        return latex.format(printer._print(self.args[0]))

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real if real else None

    def _eval_is_real(self):
        return self.args[0].is_real if real else None

    return type(name, (sp.Function,), {"nargs": 1, "eval": classmethod(lambda cls, x: None), "fdiff": fdiff,
                                       "_latex": _latex, "_eval_is_extended_real": _eval_is_extended_real,
                                       "_eval_is_real": _eval_is_real, "__module__": __name__})
