"""Measure what a generated VJP function actually does, by instrumenting its source.

Every assignment's right-hand side (and every expression statement) is
wrapped in ``_rec(value, nops, phase, operands)``, which, at run time,
counts the statement's arithmetic nodes × its work (the largest element
count among the result and the arrays it reads), and counts an allocation
when the result is an array that shares no memory with any array it read
(so a view of a name is not one).  The operation-node count of a statement
is :func:`coarsen_nb.lower.cost.arithmetic_nodes` — the unit is shared, the sizes,
trip counts and branch outcomes are observed here, not modelled.  The loops'
trip counts (their tapes) and the fraction of true elements of every boolean
array assigned to a name are recorded, for the facts of the data the model
cannot know.
"""

from __future__ import annotations

import ast

import numpy as np

from coarsen_nb.lower.cost import arithmetic_nodes


class Counts:
    def __init__(self):
        self.ops = [0.0, 0.0]
        self.allocations = 0
        self.bytes = 0.0
        self.phase = 0
        self.tapes: dict[str, list] = {}
        self.masks: dict[str, list] = {}     # name -> [true elements, elements] over its assignments

    def trips(self) -> dict[str, float]:
        """Mean recorded trip count per loop entry, by tape name."""
        return {k: sum(map(len, v)) / len(v) for k, v in self.tapes.items() if v}

    def mask_fractions(self) -> dict[str, float]:
        """Fraction of true elements per boolean array name, over all its assignments."""
        return {k: t / n for k, (t, n) in self.masks.items() if n}

    def note(self, name, value):
        if isinstance(value, np.ndarray) and value.dtype == bool and value.ndim > 0:
            seen = self.masks.setdefault(name, [0, 0])
            seen[0] += int(np.count_nonzero(value))
            seen[1] += value.size

    def rec(self, value, nops, operands, alloc=True):
        arrays = [o for o in operands if isinstance(o, np.ndarray) and o.ndim > 0]
        size = value.size if isinstance(value, np.ndarray) and value.ndim > 0 else 1
        work = max([size] + [a.size for a in arrays])
        self.ops[self.phase] += nops * work
        is_arr = isinstance(value, np.ndarray) and value.ndim > 0
        if alloc and is_arr and not any(np.may_share_memory(value, a) for a in arrays):
            self.allocations += 1
        if is_arr or work > 1:
            self.bytes += 8 * (size + sum(a.size for a in arrays))
        return value


class _Wrap(ast.NodeTransformer):
    def _wrap(self, e, alloc=True, extra=0):
        names = sorted({n.id for n in ast.walk(e) if isinstance(n, ast.Name)})
        ops = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
        return ast.Call(ast.Name("_rec", ast.Load()), [e, ast.Constant(arithmetic_nodes(e) + extra), ops,
                                                       ast.Constant(alloc)], [])

    def visit_Assign(self, s):
        t = s.targets[0]
        if isinstance(t, ast.Name) and t.id == "_value":
            return [ast.parse("_C.phase = 1").body[0], s]
        if isinstance(t, ast.Name) and t.id.startswith("_tape_"):
            keep = ast.parse(f"_C.tapes.setdefault({t.id!r}, []).append({t.id})").body[0]
            return [s, keep]
        if isinstance(t, ast.Tuple) or isinstance(s.value, (ast.Name, ast.Constant)):
            return s
        s.value = self._wrap(s.value)
        if isinstance(t, ast.Name):
            return [s, ast.parse(f"_C.note({t.id!r}, {t.id})").body[0]]
        return s

    def visit_AugAssign(self, s):
        s.value = self._wrap(s.value, extra=1)
        return s

    def visit_Expr(self, s):
        if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "append":
            return s
        s.value = self._wrap(s.value, alloc=False)
        return s


def measure(source: str, name: str, args) -> Counts:
    """Run ``name_vjp(*args)`` from ``source`` instrumented; the counts of that one call."""
    tree = ast.parse(source)
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == name + "_vjp":
            fn.body = [_Wrap().visit(s) for s in fn.body]
            fn.body = [x for s in fn.body for x in (s if isinstance(s, list) else [s])]
            _flatten(fn)
    ast.fix_missing_locations(tree)
    counts = Counts()
    env = {"_rec": counts.rec, "_C": counts}
    exec(compile(tree, f"<instrumented {name}>", "exec"), env)
    out = env[name + "_vjp"](*args)
    del out
    return counts


def _flatten(node) -> None:
    """NodeTransformer may return lists inside nested bodies; flatten them in place."""
    for field in ("body", "orelse"):
        block = getattr(node, field, None)
        if isinstance(block, list):
            flat = []
            for s in block:
                flat += s if isinstance(s, list) else [s]
                if not isinstance(s, list):
                    _flatten(s)
            setattr(node, field, flat)
