"""Number and knob formatting shared by the text and widget views."""

from __future__ import annotations

import numbers

from coarsen_nb.soi.select import DEFAULT_REUSE  # what ``coarsen`` uses when ``reuse`` is None


def effective_reuse(compiled) -> int:
    """The reuse threshold R in force for ``compiled``."""
    return DEFAULT_REUSE if compiled.reuse is None else compiled.reuse


def fmt_knob(value) -> str:
    """A tuning knob: ``None`` means no cap, shown as ∞."""
    return "∞" if value is None else str(value)


def fmt_wrt(wrt) -> str:
    """The differentiated parameters; ``None`` means the compiler's default."""
    return ", ".join(wrt) if wrt else "every float parameter"


def fmt_number(value) -> str:
    """Counts as integers, other reals with 3 significant digits."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}"


def fmt_seconds(seconds: float) -> str:
    """A duration in the unit that keeps 3 significant digits readable."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
