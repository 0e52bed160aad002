"""The *IR* view's names: the SSA and gated forms with the compiler's temporaries named as the code names them.

The front end names its own values ``$k1`` (loop 1's counter), ``$p2`` (an opaque call such as ``len(x)``),
``$c3`` (a loop test), and an inlined helper's locals ``_clip3:v``.  Those names are the compiler's, and issue
13 asks that none reach the user.  The front end already gave each temporary a word, the one generated code
calls it (``frontend/words.py``: ``$p2`` is ``n_x``, ``$c5`` is ``x_i_gt``); the IR view prints the same
records with those words instead, kept apart from the user's own variables (a word a variable already has gets
a number: the counter of ``for i in ...`` is ``i2``, since ``i`` is the user's).  Versions stay as they are
(``s.2``, ``n_x.1``): they are what SSA is about.

A copy of the records is renamed (``ir.rename``) and printed by their own printers: nothing here reads
printed text back.
"""

from __future__ import annotations

import dataclasses

from coarsen_nb import ir
from coarsen_nb.lower.naming import clean, kind_word, unique, user_word
from coarsen_nb.phi import gate


def readable_ssa(fn: ir.Function) -> str:
    """The SSA form of ``fn`` as :func:`str` prints it, the compiler's temporaries named by their words."""
    name = _namer(fn.words, _defined_ssa(fn))
    blocks = tuple(dataclasses.replace(
        b, stmts=tuple(dataclasses.replace(s, target=name(s.target), value=_expr(s.value, name)) for s in b.stmts),
        phis=tuple(ir.Phi(name(p.target), tuple((pred, _expr(v, name)) for pred, v in p.args)) for p in b.phis),
        term=_term(b.term, name), loop=_loop_info(b.loop, name)) for b in fn.blocks)
    return str(dataclasses.replace(fn, blocks=blocks))


def readable_gated(g: gate.GatedFunction) -> str:
    """The gated form of ``g`` as :func:`str` prints it, the compiler's temporaries named by their words."""
    defined: list[str] = list(g.params)
    _defined_gated(g.body, defined)
    name = _namer(g.words, defined)
    return str(dataclasses.replace(g, body=tuple(_node(n, name) for n in g.body), result=_expr(g.result, name)))


def _namer(words, defined):
    """SSA name -> the name the view prints: a temporary's word for its base, then its versions."""
    bases = [_base(n) for n in defined]
    taken = {b for b in bases if not _internal(b)}
    shown: dict[str, str] = {}
    for b in bases:
        if _internal(b) and b not in shown:
            word = words.get(b) or user_word(b) or kind_word(b) or b.lstrip("$_")
            shown[b] = unique(clean(word), taken)
            taken.add(shown[b])

    def name(ssa: str) -> str:
        base = _base(ssa)
        return shown.get(base, base) + ssa[len(base):]
    return name


def _base(ssa: str) -> str:
    return ssa.split(".")[0]


def _internal(base: str) -> bool:
    return base.startswith("$") or ":" in base


def _expr(e, name):
    return ir.rename(e, lambda n: ir.Name(name(n)))


def _term(t, name):
    if isinstance(t, ir.Branch):
        return dataclasses.replace(t, cond=_expr(t.cond, name))
    if isinstance(t, ir.Return):
        return ir.Return(_expr(t.value, name))
    return t


def _loop_info(info, name):
    if info is None or info.counter is None:
        return info
    return dataclasses.replace(info, counter=name(info.counter), start=_expr(info.start, name),
                               stop=_expr(info.stop, name), step=_expr(info.step, name))


def _node(n, name):
    if isinstance(n, gate.Let):
        return dataclasses.replace(n, name=name(n.name), value=_expr(n.value, name))
    if isinstance(n, gate.If):
        return dataclasses.replace(n, cond=name(n.cond), then=tuple(_node(m, name) for m in n.then),
                                   orelse=tuple(_node(m, name) for m in n.orelse),
                                   gammas=tuple(_node(m, name) for m in n.gammas))
    return dataclasses.replace(n, info=_loop_info(n.info, name), mus=tuple(_node(m, name) for m in n.mus),
                               header=tuple(_node(m, name) for m in n.header), cond=name(n.cond),
                               body=tuple(_node(m, name) for m in n.body), etas=tuple(_node(m, name) for m in n.etas))


def _defined_ssa(fn: ir.Function) -> list[str]:
    out = list(fn.params)
    for b in fn.blocks:
        out += [p.target for p in b.phis] + [s.target for s in b.stmts]
    return out


def _defined_gated(body, out: list[str]) -> None:
    for n in body:
        if isinstance(n, gate.Let):
            out.append(n.name)
        elif isinstance(n, gate.If):
            _defined_gated(n.then + n.orelse + n.gammas, out)
        else:
            _defined_gated(n.mus + n.header + n.body + n.etas, out)
