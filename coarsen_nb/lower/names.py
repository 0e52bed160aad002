"""SSA names → readable, unique Python identifiers for generated code.

A variable the plan holds one version of is printed as the user wrote it (``d1``, not ``d1_1``); one
with several keeps its versions apart (``theta_2``, ``theta_3``).  ``len(x)`` is ``n_x`` (it was
``p2_1``, after the compiler's ``$p2.1``) and the function's result is ``result``.  Every other
temporary the frontend made prints as the word it recorded for it (``plan.words``: ``x[1:]`` ->
``x_tail``, its length ``n_x_tail``, a loop's counter the user's loop variable), else as the word of
its kind (``naming.KIND_WORDS``), made unique in the order the module prints them.  Which names are
unambiguous is decided from the whole plan (:meth:`Names.for_plan`); a name already in use (a
temporary of the same function holding that variable's value) leaves the variable its version.
"""

from __future__ import annotations

import keyword

from coarsen_nb.lower import naming

RESERVED = {"xp", "math", "np", "cupy"}


class Names:
    """``s.2`` → ``s_2``, ``$sl5.1`` → ``x_tail``, ``$k1.2`` → ``i``, ``_h3:x.1`` → ``x``; unique and stable."""

    def __init__(self, params=(), preferred: dict | None = None, words=None):
        self.map: dict[str, str] = {}
        self.taken: set[str] = set(RESERVED)
        self.local: set[str] = set()        # the temporaries of the function being written
        self.preferred: dict[str, str] = {}
        self.words = words or {}            # the frontend's words for its temporaries (plan.words)
        self.spoken_for: set[str] = set()
        self.words_of: dict[str, str] = {}  # each name printed -> the word it was made from (word())
        for p in params:
            self(p)
        self.preferred = dict(preferred or {})
        self.spoken_for = set(self.preferred.values())      # a temporary's word keeps clear of these

    @classmethod
    def for_plan(cls, plan) -> Names:
        """The names of ``plan``'s generated module (the module writer's, and the error reports')."""
        return cls(plan.params, naming.preferred_names(plan, set(RESERVED)), plan.words)

    def __call__(self, name: str) -> str:
        if name in self.map:
            return self.map[name]
        cand = self.preferred.get(name)
        if cand is not None and cand not in self.taken and cand not in self.local:
            # (a temporary of this function may hold it already: the value of the same variable)
            self.taken.add(cand)
            self.map[name] = cand
            self.words_of[cand] = cand          # (a word already: the only version of a variable, n_x)
            return cand
        word = self.words.get(name.split(".")[0]) or (naming.user_word(name) if ":" in name else None) or \
            naming.kind_word(name)      # an inlined helper's variable (_clip3:v.2): v
        if word is not None:     # a temporary the plan does not list (a loop's counter inside a kernel)
            cand = naming.unique(naming.clean(word), self.taken | self.local | self.spoken_for)
            self.taken.add(cand)
            self.map[name] = cand
            self.words_of[cand] = cand
            return cand
        base = naming.identifier(name)
        cand = base
        k = 1
        while cand in self.taken or cand in self.local or keyword.iskeyword(cand):
            k += 1
            cand = f"{base}_{k}" if not base.endswith("_") else f"{base}{k}"
        self.taken.add(cand)
        self.map[name] = cand
        self.words_of[cand] = naming.identifier(name.split(".")[0])     # (theta.2 -> theta_2: theta)
        return cand

    def word(self, printed: str) -> str:
        """The word a name this module prints was made from, for naming what is computed from it: a
        version of a user's variable its variable (``theta_2`` -> ``theta``), an adjoint ``bar_`` and a
        tangent ``d`` before its primal's (``b_theta_2`` -> ``bar_theta``), a temporary its own name.  Kept
        when the name is made, never read back from the printed name; a name made elsewhere (a fuser's
        loop variable) is its own word."""
        return self.words_of.get(printed) or printed.strip("_") or printed

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
            self.words_of[cand] = ("bar_" if prefix == "b_" else "d") + self.word(self(name))
        return self.map[key]

    def fresh(self, hint: str | None) -> str:
        """A new temporary named after ``hint`` (see :mod:`.naming`): ``sin_theta``, then
        ``sin_theta2``; never a name of the user's, a keyword, a builtin or an array-module name."""
        cand = naming.unique(naming.clean(hint), self.taken | self.local)
        self.local.add(cand)
        self.words_of[cand] = cand
        return cand

    def new_scope(self) -> None:
        """Start a new function: its temporaries may reuse the names of another function's."""
        self.local = set()
