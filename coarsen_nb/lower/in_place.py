"""Which arrays an iterated loop may write in place, so that no iteration copies them.

In SSA an element write ``y[i] = v`` makes a new array, ``y_3 = update(y_2, [i], v)``, and the
lowering printed it as a copy of ``y_2`` with one element changed: O(n) work per iteration, and
the reverse sweep's tape kept every one of those copies (O(n²) time and memory for a loop that
writes each element once).  Where no one can observe the old version after the write, the write
can mutate the array instead.  Then the forward sweep records only what it overwrites — the
index and the old element, and for a write inside a branch whether it ran — and the reverse
sweep walks back by restoring them, so at each step it sees the state that iteration read
(:meth:`~coarsen_nb.lower.iterated.IteratedLoops.iterate_reverse`).  The adjoint of the array
is one accumulator as well: ``b_v += b_y[i]; b_y[i] = 0``.

A loop state ``y`` qualifies when, in the loop's body (its branches included, not inner loops):

* its next value comes from element writes ``y_2 → y_3 → … → y_last`` of one element each
  (every index integer arithmetic on scalars; a slice write overwrites a whole part, and its copy
  is the honest record), and from the merges of a branch's arms (``γ(c, y_3, y_2)``);
* before the first write (in program order, in either arm), the state ``y_2`` may be read by
  steps whose values are all scalars (an array value could be a view of ``y_2``, and see the
  write); after it, the latest version may be read only as single elements at scalar indices,
  by SOIs that make scalars (``y[i] = v; s = y[i] * 0.9``): the reverse sweep's adjoint code
  runs with the state restored to the iteration's start, so the replay names those elements
  first (``_name_element_reads``), and a whole-array read after a write (``np.sum(y)``) keeps
  the copying form;
* no write's index or value reads a version, and no other state's next value is one.

Anything else keeps the copying form, which is always right.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from coarsen_nb import ir
from coarsen_nb.lower import lir
from coarsen_nb.lower.printing import FLOAT64, TRUE, xp_call
from coarsen_nb.plan import CondStep, IterStep, KernelStep, PrimStep, names_read


@dataclass(frozen=True)
class InPlaceState:
    """A loop state written in place: ``mu``, its first value ``init``, its element writes in the order
    the body meets them (then-arm before else-arm), which of those sit inside a branch, and every
    version of the array (the writes' and the branches' merges): all one array, and one adjoint."""

    mu: str
    init: str
    writes: tuple[str, ...]
    conditional: frozenset[str]
    versions: frozenset[str]


class _Observed(Exception):
    """A version of the array is seen other than through the writes: keep the copying form."""


def in_place_states(s: IterStep, types) -> dict[str, InPlaceState]:
    """{state name: :class:`InPlaceState`} for the states of ``s`` that may be written in place."""
    out = {}
    for mu, init, nxt in s.mus:
        t = types.get(mu)
        if t is None or not t.is_array or not isinstance(init, ir.Name) or not isinstance(nxt, ir.Name):
            continue
        walk = _Walk(mu, types)
        try:
            last = walk.steps(s.body, mu, conditional=False)
            for st in s.header:
                if names_read([st]) & walk.versions and _array_values(st, types):
                    raise _Observed
            for other, _, other_next in s.mus:
                if other != mu and set(ir.names_used(other_next)) & walk.versions:
                    raise _Observed
        except _Observed:
            continue
        if walk.writes and last == nxt.id:
            out[mu] = InPlaceState(mu, init.id, tuple(walk.writes), frozenset(walk.conditional),
                                   frozenset(walk.versions))
    return out


class _Walk:
    """The body in order, following the array's current version through writes and branches.

    Before the first write a step may read the state itself if all it makes are scalars; after it,
    nothing reads a version but the next write or the branch merge that picks it."""

    def __init__(self, mu: str, types):
        self.mu, self.types = mu, types
        self.versions = {mu}
        self.writes: list[str] = []
        self.conditional: set[str] = set()
        self.written = False

    def steps(self, steps, cur: str, conditional: bool) -> str:
        for st in steps:
            read = names_read([st]) & self.versions
            if isinstance(st, PrimStep) and isinstance(st.expr, ir.Update) \
                    and isinstance(st.expr.array, ir.Name) and st.expr.array.id in self.versions:
                cur = self._write(st, cur, conditional)
            elif isinstance(st, CondStep) and read:
                cur = self._branch(st, cur)
            elif read and not (read == {self.mu} and not self.written and not _array_values(st, self.types)
                               or read == {cur} != {self.mu} and _element_reads(st, cur, self.types)):
                raise _Observed
        return cur

    def _write(self, st: PrimStep, cur: str, conditional: bool) -> str:
        e = st.expr
        operands = set(ir.names_used(e.value)).union(*(ir.names_used(i) for i in e.index))
        if e.array.id != cur or operands & self.versions or not _one_element(e, self.types):
            raise _Observed
        self.writes.append(st.name)
        if conditional:
            self.conditional.add(st.name)
        self.versions.add(st.name)
        self.written = True
        return st.name

    def _branch(self, st: CondStep, cur: str) -> str:
        before = self.written
        then_cur = self.steps(st.then, cur, conditional=True)
        then_written, self.written = self.written, before
        else_cur = self.steps(st.orelse, cur, conditional=True)
        self.written = then_written or self.written
        merges = [(g, a, b) for g, a, b in st.gammas if _reads_of(a, b) & self.versions]
        if not merges and then_cur == cur == else_cur:
            return cur                      # the arms only read the state
        if len(merges) != 1 or merges[0][1] != ir.Name(then_cur) or merges[0][2] != ir.Name(else_cur):
            raise _Observed
        self.versions.add(merges[0][0])
        return merges[0][0]


def _element_reads(st, cur: str, types) -> bool:
    """Whether ``st`` reads the version ``cur`` (after a write) only as single elements at scalar
    indices, making scalars: an SOI the reverse sweep replays with the array in that state, whose
    reads the replay then names (``InPlaceWriting._name_element_reads``), so its adjoint does not
    read the array again after the undo."""
    if _array_values(st, types):
        return False
    if isinstance(st, PrimStep):        # y_3[i] as its own step: its value is a name, its adjoint b_y[i] += …
        e = st.expr
        return isinstance(e, ir.Index) and e.value == ir.Name(cur) and all(_scalar_int(i, types) for i in e.index)
    if not isinstance(st, KernelStep):
        return False
    k = st.kernel
    if cur in k.scalars.values() or cur in k.arrays.values():
        return False
    scalars = set(k.scalars)
    return all(set().union(*(sp.sympify(i).free_symbols for i in r.index)) <= scalars
               for r in k.reads if r.array == cur)


def _reads_of(a: ir.Expr, b: ir.Expr) -> set[str]:
    return set(ir.names_used(a)) | set(ir.names_used(b))


def _one_element(e: ir.Update, types) -> bool:
    t = types.get(e.array.id)
    if t is None or len(e.index) != t.ndim:
        return False
    for i in e.index:       # integer arithmetic on scalar ints: `y[i + 1]`, `y[n - 1 - i]`
        if not _scalar_int(i, types):
            return False
    return True


def _scalar_int(e: ir.Expr, types) -> bool:
    if isinstance(e, ir.Const):
        return isinstance(e.value, int) and not isinstance(e.value, bool)
    if isinstance(e, ir.Name):
        t = types.get(e.id)
        return t is not None and t.kind == "int" and not t.is_array
    if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*", "//", "%"):
        return _scalar_int(e.left, types) and _scalar_int(e.right, types)
    if isinstance(e, ir.UnaryOp) and e.op == "-":
        return _scalar_int(e.operand, types)
    return False


def _array_values(st, types) -> bool:
    """Whether a step defines an array (which might be a view of what it read)."""
    if isinstance(st, KernelStep):
        names = st.kernel.output_names
    elif isinstance(st, PrimStep):
        names = [st.name]
    elif isinstance(st, CondStep):
        return True                 # its arms' values: not worth following
    else:
        names = [o for o, _ in st.etas]
    return any(getattr(types.get(n), "is_array", True) for n in names)


class InPlaceWriting:
    """The printing of in-place loop states: a mixin of :class:`~coarsen_nb.lower.module.ModuleWriter`.

    ``_in_place`` maps each write's SSA name to its state and loop label; ``_recorders`` maps a loop
    label to whether its body records its writes this pass (not in the forward function, nor in the
    reverse sweep's replay of an iteration); ``_records`` names what each write records: (a flag
    that it ran, for a write inside a branch; its index; the element it overwrote)."""

    def _in_place_loop(self, s: IterStep) -> dict[str, InPlaceState]:
        states = in_place_states(s, self.plan.types)
        for st in states.values():
            for w in st.writes:
                self._in_place[w] = (st, s.label)
        return states

    def _initial_values(self, s: IterStep, states) -> list[lir.Expr]:
        """Each state's first value; an array written in place starts as a copy of its first value
        (which others may still read)."""
        return [xp_call("asarray", self.expr(i), dtype=FLOAT64, copy=TRUE) if n in states else self.expr(i)
                for n, i, _ in s.mus]

    def _start_records(self, s: IterStep, states) -> None:
        """Name each write's record, and give the ones inside a branch their not-taken value."""
        for st in states.values():
            for w in st.writes:
                ndim = self.plan.types[st.mu].ndim
                flag = self.names.fresh("wrote") if w in st.conditional else None
                self._records[w] = (flag, [self.names.fresh("iw") for _ in range(ndim)], self.names.fresh("old"))
                if flag:
                    idx, old = self._records[w][1:]
                    self.assign_state([flag, *idx, old], [lir.Lit("False"), *(lir.Lit("0") for _ in idx),
                                                          lir.Lit("0.0")])
        self._recorders[s.label] = True

    def _name_element_reads(self, k, pr) -> None:
        """Name ``k``'s element reads of in-place arrays now, while the array holds what this iteration
        read: the adjoint printed later with ``pr`` uses these names (its memo), not the array, which
        the reverse sweep has by then restored to the iteration's start."""
        versions = {v for st, _ in self._in_place.values() for v in st.versions}
        for r in k.reads:
            if r.array in versions and not pr.deps(r.symbol):
                pr.value(r.symbol)

    def _in_place_write(self, s: PrimStep) -> bool:
        """Print an element write of an in-place state; False if ``s`` is not one."""
        if s.name not in self._in_place:
            return False
        st, label = self._in_place[s.name]
        e = s.expr
        arr, idx = self._name(st.mu), [self.expr(i) for i in e.index]
        if self._recorders.get(label):
            flag, names, old = self._records[s.name]
            self.assign_state(([flag] if flag else []) + names, ([lir.Lit("True")] if flag else []) + idx)
            idx = [lir.Name(n) for n in names]
            self.emit(lir.Assign(lir.Name(old), lir.Index(arr, tuple(idx))))
        self.emit(lir.Assign(lir.Index(arr, tuple(idx)), self.expr(e.value)))
        self.emit(lir.Assign(self._name(s.name), arr))
        return True

    def _in_place_write_reverse(self, s: PrimStep, bar: lir.Expr) -> bool:
        """The adjoint of an in-place write, in place: the value's cotangent is the element's, which
        the version before the write no longer has (the array's adjoint is one accumulator)."""
        if s.name not in self._in_place:
            return False
        e = s.expr
        element = lir.Index(bar, tuple(self.expr(i) for i in e.index))
        if isinstance(e.value, ir.Name) and e.value.id in self.active:
            self.emit(lir.AugAssign(self._bar(e.value.id), "+", element))
        self.emit(lir.Assign(element, lir.Lit("0.0")))
        return True

    def _record_writes(self, s: IterStep, states) -> None:
        """One tape entry per iteration: for every write, whether it ran, its index and the element it
        overwrote."""
        flat = [c for st in states.values() for w in st.writes
                for c in ([self._records[w][0]] if self._records[w][0] else []) + self._records[w][1] +
                [self._records[w][2]]]
        self.emit(append(lir.Name(self.tape_name(s) + "_w"), lir.Tuple(tuple(map(lir.Name, flat)))))
        self._recorders[s.label] = None

    def _restore_writes(self, s: IterStep, states, entry: lir.Expr) -> list[lir.Stmt]:
        """The reverse sweep's undo of one iteration's writes, last first (the writes into different
        arrays commute): the arrays are then the state that iteration read.  Returns the statements, to
        print again after the replay has written them once more."""
        names, undos = [], []
        for st in states.values():
            for w in st.writes:
                flag = self.names.fresh("wrote") if w in st.conditional else None
                idx = [self.names.fresh("iw") for _ in range(self.plan.types[st.mu].ndim)]
                old = self.names.fresh("old")
                names += ([flag] if flag else []) + [*idx, old]
                undo = lir.Assign(lir.Index(self._name(st.mu), tuple(map(lir.Name, idx))), lir.Name(old))
                undos.append(lir.If(lir.Name(flag), (undo,)) if flag else undo)
        self.emit(lir.Assign(lir.Tuple(tuple(map(lir.Name, names)), bare=True), entry))
        return undos[::-1]


def append(tape: lir.Expr, entry: lir.Expr) -> lir.Stmt:
    """``tape.append(entry)``: one iteration's entry on a loop's tape."""
    return lir.ExprStmt(lir.Call(lir.Attr(tape, "append"), (entry,)))
