"""``--check``: compare a compiled gradient with central finite differences.

The oracle is the plain Python function the cell defined, evaluated in float64
at x ± h with h = ε^(1/3)·max(1, |x|), which balances truncation and rounding
error for central differences.  Large arrays are sampled (``MAX_COMPONENTS``
evenly spaced entries), so a check costs a bounded number of calls.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

MAX_COMPONENTS = 32
TOLERANCE = 1e-5
_STEP = np.finfo(np.float64).eps ** (1 / 3)


@dataclass(frozen=True)
class ParamCheck:
    """The comparison for one differentiated parameter."""

    name: str
    max_abs_err: float
    max_rel_err: float
    checked: int
    total: int

    @property
    def ok(self) -> bool:
        return self.max_rel_err <= TOLERANCE


@dataclass(frozen=True)
class CheckReport:
    """All parameters' comparisons; prints as a few aligned lines."""

    function: str
    params: tuple[ParamCheck, ...]
    independent: bool

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.params)

    def __str__(self) -> str:
        oracle = "the plain Python function" if self.independent else "the compiled forward"
        lines = [f"check {self.function}.grad against central differences of {oracle}:"]
        width = max(len(p.name) for p in self.params)
        for p in self.params:
            span = "scalar" if p.total == 1 else f"{p.checked} of {p.total} entries"
            verdict = "ok" if p.ok else "MISMATCH"
            lines.append(
                f"  {p.name:<{width}}  max abs err {p.max_abs_err:.1e}  "
                f"rel {p.max_rel_err:.1e}  ({span})  {verdict}"
            )
        lines.append("all gradients agree" if self.ok else f"tolerance {TOLERANCE:.0e} exceeded")
        return "\n".join(lines)


def check_gradient(
    reference, args, wrt, grads, *, name: str, params=None, independent: bool = True
) -> CheckReport:
    """Compare ``grads`` (as ``Coarsened.grad`` returns them) with finite differences.

    Example
    -------
    >>> def f(x, t):
    ...     return x * x * t
    >>> report = check_gradient(f, (3.0, 2.0), ("x",), 12.0, name="f")
    >>> report.ok
    True
    """
    wrt = tuple(wrt)
    if len(wrt) == 1:
        grads = (grads,)
    positions = [list(params).index(n) for n in wrt] if params else _positions(reference, wrt)
    params = tuple(
        _check_param(reference, list(args), pos, np.asarray(g, dtype=np.float64), pname)
        for pname, pos, g in zip(wrt, positions, grads, strict=True)
    )
    return CheckReport(function=name, params=params, independent=independent)


def _positions(reference, wrt: tuple[str, ...]) -> list[int]:
    try:
        names = list(inspect.signature(reference).parameters)
    except (TypeError, ValueError):
        return list(range(len(wrt)))
    return [names.index(n) for n in wrt]


def _check_param(reference, args: list, pos: int, grad: np.ndarray, pname: str) -> ParamCheck:
    x0 = np.asarray(args[pos], dtype=np.float64)
    scalar = x0.ndim == 0
    flat = x0.reshape(-1).copy()
    picks = np.unique(np.linspace(0, flat.size - 1, min(flat.size, MAX_COMPONENTS)).astype(int))
    abs_err = rel_err = 0.0
    for i in picks:
        h = _STEP * max(1.0, abs(flat[i]))

        def at(delta, i=i, h=h):
            moved = flat.copy()
            moved[i] += delta * h
            args[pos] = float(moved[0]) if scalar else moved.reshape(x0.shape)
            return float(reference(*args))

        fd = (at(+1) - at(-1)) / (2 * h)
        err = abs(float(grad.reshape(-1)[i]) - fd)
        abs_err = max(abs_err, err)
        rel_err = max(rel_err, err / max(1.0, abs(fd)))
    return ParamCheck(pname, abs_err, rel_err, len(picks), flat.size)
