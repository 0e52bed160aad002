"""Free each temporary after its last use: ``del`` lines in the generated functions.

A Python local lives until its function returns, so a gradient whose SOIs name
forty 10⁶-element temporaries holds all forty at once: the peak memory is their
sum, and every one of them is fresh memory (page faults) on every call.  Deleting
a name right after the last statement that reads it lets NumPy (or CuPy's pool)
reuse its buffer for the next temporary, as a hand-written gradient's expressions
do without names (TorchInductor's generated code does the same, ``del buf0``).

Only names assigned at the function's top level are freed, after the top-level
statement that reads them last (a loop or an ``if`` counts as one statement, so
a name read inside a loop body lives until the loop ends); a name assigned only
inside a block may not exist on every path, so it is left to the return.  The
pass works on the writer's lines (4-space indentation, one statement per line or
a block of deeper-indented lines after a header ending in ``:``).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_TOP_ASSIGN = re.compile(r"^    ([A-Za-z_]\w*) = ")
_TOP = "    "
# right-hand sides that are Python numbers (sizes, trip counts, math): nothing to free, only noise
_SCALAR = re.compile(r"(max|min|int|len|float|bool)\(|math\.|[\w.]+\.shape\[\d+\]$|-?[\d.]+(e-?\d+)?$|True$|False$")


def free_dead_names(lines: list[str], keep=()) -> list[str]:
    """``lines`` (a function body) with ``del`` after the last top-level reader of each top-level name.

    ``keep``: names never deleted (the function's parameters)."""
    stmts: list[list[str]] = []
    for ln in lines:
        top = ln.startswith(_TOP) and not ln.startswith(_TOP + " ")
        if top and not ln.strip().startswith(("else", "elif", "except", "finally")) or not stmts:
            stmts.append([ln])
        else:
            stmts[-1].append(ln)
    assigned = {m.group(1) for s in stmts if (m := _TOP_ASSIGN.match(s[0]))} - set(keep)
    assigned -= {m.group(1) for s in stmts if (m := _TOP_ASSIGN.match(s[0])) and _SCALAR.match(s[0][m.end():])}
    last: dict[str, int] = {}
    for i, s in enumerate(stmts):
        for ln in s:
            for w in _WORD.findall(ln.split("#", 1)[0]):
                if w in assigned:
                    last[w] = i
    frees: dict[int, list[str]] = {}
    for name, i in last.items():
        if i + 1 < len(stmts) and not stmts[i + 1][0].strip().startswith("return"):   # (return frees them)
            frees.setdefault(i, []).append(name)
    out: list[str] = []
    for i, s in enumerate(stmts):
        out += s
        if i in frees and i + 1 < len(stmts):
            out.append(_TOP + "del " + ", ".join(sorted(frees[i], key=_order(s))))
    return out


def _order(stmt: list[str]):
    """Names in the order they appear in the statement (stable, readable ``del`` lines)."""
    text = " ".join(stmt)
    return lambda name: (text.find(name), name)
