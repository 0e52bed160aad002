"""The text passes the module writer ran before the lowered IR: kept here as the tests' independent
reference for the passes over records (``coarsen_nb/lower/lir_passes.py``), which replace them.

Which names of a generated function are live: dead assignments dropped, temporaries freed.

:func:`drop_dead_assignments` removes ``name = expr`` lines nothing reads (what ``NAME_grad``
does not need of the forward sweep, the recomputed next state inside a reverse loop).

:func:`free_dead_names` frees each temporary after its last use (``del`` lines).

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

_TOP = "    "
_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*) = (.+)$")
_WORD = re.compile(r"[A-Za-z_]\w*")


def physical_lines(lines: list[str]) -> list[str]:
    """Printed statements (``lir.print_body``) as the lines these passes read: a statement printed over
    several lines (a CuPy kernel's construction, ``lower/cupy.py``) is split into them, except inside a
    triple-quoted string (the kernel's C text), which stays in the line it starts on."""
    out: list[str] = []
    for text in lines:
        parts = text.split('"""')
        line = ""
        for k, part in enumerate(parts):        # odd parts are inside a triple-quoted string
            if k % 2:
                line += '"""' + part + '"""'
                continue
            first, *rest = part.split("\n")
            line += first
            if rest:
                out += [line, *rest[:-1]]
                line = rest[-1]
        out.append(line)
    return out


def drop_dead_assignments(lines: list[str]) -> list[str]:
    """Remove ``name = expr`` lines whose name is read nowhere in the function.

    Every generated statement of that form is pure, so dropping it is safe;
    what remains is what the function's results need (``NAME_grad`` then
    skips the primal values only the value needed).  A block left empty gets
    ``pass``.  Repeated until nothing changes.
    """
    lines = list(lines)
    while True:
        counts: dict[str, int] = {}
        as_target: dict[str, int] = {}
        for ln in lines:
            for w in _WORD.findall(ln.split("#", 1)[0]):
                counts[w] = counts.get(w, 0) + 1
            m = _ASSIGN.match(ln)
            if m:
                name = m.group(2)
                as_target[name] = as_target.get(name, 0) + 1 + _WORD.findall(m.group(3)).count(name)
        dead = {n for n, c in as_target.items() if counts.get(n, 0) == c}
        drop = {k for k, ln in enumerate(lines) if (m := _ASSIGN.match(ln)) and m.group(2) in dead}
        drop |= _dead_in_loops(lines)
        lines = _fill_empty_blocks([ln for k, ln in enumerate(lines) if k not in drop])
        if not drop:
            return lines


def _indent(ln: str) -> int:
    return len(ln) - len(ln.lstrip())


def _dead_in_loops(lines: list[str]) -> set[int]:
    """Assignments inside a loop whose name nothing can read afterwards.

    A name assigned in a loop body is observable only by the body itself (in the same or a later
    iteration), by the rest of the function after the loop, and by any loop around it.  The reverse
    sweep of an iterated loop recomputes the forward body to reach the primal values its adjoint
    needs; the forward body's outputs (the next state) are read by the *forward* loop but by none of
    those, so the name-based pass above keeps them — this one drops them.
    """
    words = [_WORD.findall(ln.split("#", 1)[0]) for ln in lines]
    loops = []                                   # (header, end) of every for/while block
    for h, ln in enumerate(lines):
        st = ln.lstrip()
        if (st.startswith("for ") or st.startswith("while ")) and st.rstrip().endswith(":"):
            end = h + 1
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > _indent(ln)):
                end += 1
            loops.append((h, end))
    dead: set[int] = set()
    for h, end in loops:
        observers = list(range(end, len(lines)))
        for h2, end2 in loops:
            if h2 < h and end2 >= end:
                observers += range(h2, end2)
        seen = {w for k in observers for w in words[k]}
        inside: dict[str, int] = {}
        targets: dict[str, list[int]] = {}
        for k in range(h + 1, end):
            for w in words[k]:
                inside[w] = inside.get(w, 0) + 1
            m = _ASSIGN.match(lines[k])
            if m:
                targets.setdefault(m.group(2), []).append(k)
        for name, ks in targets.items():
            own = sum(1 + _WORD.findall(_ASSIGN.match(lines[k]).group(3)).count(name) for k in ks)
            if name not in seen and inside.get(name, 0) == own:
                dead.update(ks)
    return dead


def _fill_empty_blocks(lines: list[str]) -> list[str]:
    out: list[str] = []
    for k, ln in enumerate(lines):
        out.append(ln)
        if ln.rstrip().endswith(":") and not ln.lstrip().startswith("#"):
            indent = _indent(ln)
            nxt = next((x for x in lines[k + 1:] if x.strip() and not x.lstrip().startswith("#")), None)
            if nxt is None or _indent(nxt) <= indent:
                out.append(" " * (indent + 4) + "pass")
    return out


# right-hand sides that are Python numbers (sizes, trip counts, math): nothing to free, only noise
_SCALAR = re.compile(r"(max|min|int|len|float|bool)\(|math\.|[\w.]+\.shape\[\d+\]$|-?[\d.]+(e-?\d+)?$|True$|False$")


def free_dead_names(lines: list[str], keep=()) -> list[str]:
    """``lines`` (a function body) with ``del`` after the last top-level reader of each top-level name.

    ``keep``: names never deleted (the function's parameters)."""
    stmts: list[list[str]] = []
    for ln in lines:
        opens = _indent(ln) == len(_TOP) and not ln.strip().startswith(("else", "elif", "except", "finally"))
        if opens or not stmts:
            stmts.append([ln])
        else:
            stmts[-1].append(ln)
    assigned, numbers = set(), set()     # a name ever assigned a Python number is not freed
    for s in stmts:
        m = _ASSIGN.match(s[0])
        if m and m.group(1) == _TOP:
            (numbers if _SCALAR.match(m.group(3)) else assigned).add(m.group(2))
    assigned -= numbers | set(keep)
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
        if i in frees:
            text = " ".join(s)          # in the order the statement reads them
            out.append(_TOP + "del " + ", ".join(sorted(frees[i], key=lambda name: (text.find(name), name))))
    return out
