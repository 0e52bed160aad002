"""SSA names → readable, unique Python identifiers for generated code."""

from __future__ import annotations

import keyword

from coarsen_nb.lower import naming

RESERVED = {"xp", "math", "np", "cupy"}


class Names:
    """``s.2`` → ``s_2``, ``$k1.2`` → ``k1_2``, ``h3:x.1`` → ``h3_x_1``; unique and stable."""

    def __init__(self, params=()):
        self.map: dict[str, str] = {}
        self.taken: set[str] = set(RESERVED)
        self.local: set[str] = set()        # the temporaries of the function being written
        for p in params:
            self(p)

    def __call__(self, name: str) -> str:
        if name in self.map:
            return self.map[name]
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_") or "v"
        if base[0].isdigit():
            base = "v" + base
        cand = base
        k = 1
        while cand in self.taken or cand in self.local or keyword.iskeyword(cand):
            k += 1
            cand = f"{base}_{k}" if not base.endswith("_") else f"{base}{k}"
        self.taken.add(cand)
        self.map[name] = cand
        return cand

    def bar(self, name: str) -> str:
        """The adjoint variable of SSA value ``name``."""
        return self._derived("b_", name)

    def tangent(self, name: str) -> str:
        return self._derived("d_", name)

    def _derived(self, prefix: str, name: str) -> str:
        key = prefix + "\0" + name
        if key not in self.map:
            base = prefix + self(name)
            cand, k = base, 1
            while cand in self.taken or cand in self.local:
                k += 1
                cand = f"{base}_{k}"
            self.taken.add(cand)
            self.map[key] = cand
        return self.map[key]

    def fresh(self, hint: str | None) -> str:
        """A new temporary named after ``hint`` (see :mod:`.naming`): ``sin_theta``, then
        ``sin_theta2``; never a name of the user's, a keyword, a builtin or an array-module name."""
        base = naming.clean(hint)
        sep = "_" if base[-1].isdigit() else ""
        cand, k = base, 1
        while cand in self.taken or cand in self.local or cand in naming.AVOID:
            k += 1
            cand = f"{base}{sep}{k}"
        self.local.add(cand)
        return cand

    def new_scope(self) -> None:
        """Start a new function: its temporaries may reuse the names of another function's."""
        self.local = set()
