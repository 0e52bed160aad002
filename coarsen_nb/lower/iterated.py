"""Loops run iteration by iteration: the forward sweep with its tape, and the reverse sweep over it.

A mixin of :class:`~coarsen_nb.lower.module.ModuleWriter`.  The tape holds one entry per iteration,
the loop's μ state at its start; the reverse sweep walks it backwards, re-runs an iteration's header
and body from its entry (their primal values, for the VJP), then prints the body's VJP.  Arrays the
loop writes element by element are written in place where :mod:`coarsen_nb.lower.in_place` finds no
one can see their old versions: their tape entry is what each iteration overwrote, and the reverse
sweep undoes the writes as it walks back.

The tape printed here is a list of state tuples; a backend may print its own form of it
(``Backend.load_tape``: numba's preallocated arrays, :mod:`coarsen_nb.lower.numba_tape`), asked through
:meth:`IteratedLoops.own_tape` by the forward and the reverse sweep alike.  Such a tape may keep more than
the state: the costly values a step computes (``exp``), stored going forward and read by the replay instead
of computed again (``numba_tape.kept_values``; the replay's kernel printer finds them in its memo,
``_known_values``).
"""

from __future__ import annotations

from coarsen_nb import ir
from coarsen_nb.lower import lir, naming
from coarsen_nb.lower.in_place import InPlaceWriting, append, in_place_states
from coarsen_nb.lower.printing import FLOAT64, TRUE, xp_call
from coarsen_nb.lower.scratch import hoist_scratch
from coarsen_nb.plan import IterStep, KernelStep


class IteratedLoops(InPlaceWriting):
    """Printing of :class:`~coarsen_nb.plan.IterStep`: forward, taped, and reverse."""

    _scratch_names: frozenset | set = frozenset()

    def note_scratch(self, name: str) -> None:
        """Note ``name`` as a scratch array a call allocates for the loop function it calls
        (:mod:`coarsen_nb.lower.scratch`): a reverse sweep around the call allocates it once, before its loop."""
        self._scratch_names = set(self._scratch_names) | {name}

    def _state(self, s: IterStep, in_place=()) -> lir.Tuple:
        """The loop state as a tuple, the form of one tape entry: ``(x_2,)`` for one μ, ``()`` for none;
        an array written ``in_place`` is not in it (the tape holds the elements it overwrote)."""
        return lir.Tuple(tuple(self._name(n) for n, _, _ in s.mus if n not in in_place))

    def assign_state(self, names: list[str], values: list[lir.Expr | str]) -> None:
        """``names = values`` as one statement: ``x_2 = x_1`` for one name (``x_2, = x_1`` would unpack
        the float), ``x_2, k_2 = x_1, k_1`` for several (all read before any is written), nothing for
        none.  (A value may still be text, a rule's: it enters as ``lir.expr``.)"""
        if len(names) == 1:
            self.emit(lir.Assign(lir.expr(names[0]), lir.expr(values[0])))
        elif names:
            self.emit(lir.Assign(lir.Tuple(tuple(map(lir.expr, names)), bare=True),
                                 lir.Tuple(tuple(map(lir.expr, values)), bare=True)))

    def tape_name(self, s: IterStep) -> str:
        return "_tape_" + self.loop_word(s)

    def loop_word(self, s: IterStep) -> str:
        """The word of iterated loop ``s`` in the names of its own values (:func:`naming.loop_words`)."""
        return naming.loop_words(self.plan)[s.label]

    def own_tape(self, s: IterStep, in_place):
        """The backend's own form of loop ``s``'s state tape (numba: preallocated arrays,
        :mod:`coarsen_nb.lower.numba_tape`), or None: the list of state tuples printed here.  Asked by the
        forward and the reverse sweep alike; the answer depends on the loop alone."""
        printer = self.backend.tape
        return None if printer is None else printer.tape_for(self, s, in_place)

    def interchanged(self, s: IterStep, tape: bool):
        """Loop ``s`` run as each element's steps on numbers where the backend does that and the loop allows
        it (numba: :mod:`coarsen_nb.lower.numba_interchange`), or None.  ``tape``: for the VJP's sweeps;
        the forward and the reverse sweep get the same answer."""
        load = self.backend.load_interchange
        return None if load is None else load().interchange_for(self, s, tape)

    def iterate(self, s: IterStep, tape: bool) -> None:
        if s.never_runs():
            self._never_run(s)
            return
        inter = self.interchanged(s, tape)
        if inter is None:
            self._iterate(s, tape)
            return
        if inter.always:
            self.emit(lir.Comment(f"loop at line {s.line}: each element's steps in turn", (s.line,)))
            self.emit_all(inter.forward(tape))
            return
        self.emit(lir.Comment(f"loop at line {s.line}: each element's steps in turn where its array states "
                              "share one shape", (s.line,)))
        self.emit(inter.test())
        if tape:    # (the tape list exists on both paths: Numba types it from the path that appends)
            self.emit(lir.Assign(lir.Name(self.tape_name(s)), lir.List(())))
        with self.block() as today:
            self._iterate(s, tape, tape_started=tape)
        self.emit(lir.If(inter.flag, tuple(inter.forward(tape)), tuple(today)))

    def _never_run(self, s: IterStep) -> None:
        """Loop ``s`` whose condition is the constant False (:meth:`IterStep.never_runs`): its states keep
        their first values, and there is no tape and no reverse sweep."""
        self.emit(lir.Comment(f"loop at line {s.line} never runs: its condition is always false", (s.line,)))
        self.assign_state([self.py(n) for n, _, _ in s.mus], [self.expr(i) for _, i, _ in s.mus])
        for out, mu in s.etas:
            self.emit(lir.Assign(self._name(out), self._name(mu)))

    def _iterate(self, s: IterStep, tape: bool, tape_started: bool = False) -> None:
        self.emit(lir.Comment(f"loop at line {s.line}, run iteration by iteration{': ' + s.note if s.note else ''}",
                              (s.line,)))
        in_place = self._in_place_loop(s)
        self.assign_state([self.py(n) for n, _, _ in s.mus], self._initial_values(s, in_place))
        own = self.own_tape(s, in_place) if tape else None
        if own is None and tape and not tape_started:
            self.emit(lir.Assign(lir.Name(self.tape_name(s)), lir.List(())))
        with self.block() as body:
            self.steps(s.header, tape=False)
            self.emit(lir.If(lir.Unary("not", self._name(s.cond)), (lir.Break(),)))
            pushed = own.push() if own is not None else []
            self.emit_all(pushed)
            if own is None and tape:
                self.emit(append(lir.Name(self.tape_name(s)), self._state(s, in_place)))
            if tape and in_place:
                self._start_records(s, in_place)
            if own is None:
                self.steps(s.body, tape)
            else:
                allocate = self._keep_values(s, own, body, pushed[-1])
            if tape and in_place:
                self._record_writes(s, in_place)
            self.assign_state([self.py(n) for n, _, _ in s.mus], [self.expr(x) for _, _, x in s.mus])
        if own is not None:     # (after the body: the values it keeps have their arrays)
            # (and those of them that read only the step's data computed ahead, in a loop of their own)
            ahead, body[:] = self.backend.tape.computed_ahead(self, s, own, body, self._kept_values.get(s.label, ()))
            self.emit_all(own.start() + allocate + ahead)
        if tape and in_place:
            self.emit(lir.Assign(lir.Name(self.tape_name(s) + "_w"), lir.List(())))
        self.emit(lir.While(TRUE, tuple(body)))
        for out, mu in s.etas:
            # (the reverse sweep restores the array it wrote in place: what comes after keeps a copy)
            mu_ = self._name(mu)
            self.emit(lir.Assign(self._name(out), xp_call("asarray", mu_, copy=TRUE) if tape and mu in in_place
                                 else mu_))

    def _keep_values(self, s: IterStep, own, body: list, count_up) -> list[lir.Stmt]:
        """Loop ``s``'s body for its backend's own tape, each costly value a kernel computes stored right
        after it (:func:`~coarsen_nb.lower.numba_tape.kept_values`: the replay reads it instead of
        computing it again), at the entry's index: the count, ``count_up``, moves after them to the end
        of ``body``.  Returns the statements that allocate their arrays, before the loop."""
        kept = []
        for st in s.body:
            before = self._printers.get(id(st.kernel)) if isinstance(st, KernelStep) else None
            self.steps([st], tape=True)
            pr = self._printers.get(id(st.kernel)) if isinstance(st, KernelStep) else None
            if pr is not None and pr is not before:
                new = self.backend.tape.kept_values(self, s, st.kernel, pr)
                self.emit_all(own.store(new))
                kept += new
        self._kept_values[s.label] = tuple(kept)
        if kept:
            body[:] = [x for x in body if x is not count_up]
            self.emit(count_up)
        return own.allocate(kept)

    def iterate_reverse(self, s: IterStep) -> None:
        inter = None if s.never_runs() else self.interchanged(s, True)
        if inter is None:
            self._iterate_reverse(s)
            return
        if inter.always:
            self.emit_all(inter.reverse())
            return
        with self.block() as today:
            self._iterate_reverse(s)
        self.emit(lir.If(inter.flag, tuple(inter.reverse()) or (lir.Pass(),), tuple(today)))

    def _iterate_reverse(self, s: IterStep) -> None:
        in_place = in_place_states(s, self.plan.types)
        active_mus = [(n, i, x) for n, i, x in s.mus if n in self.active]
        for out, mu in s.etas:
            if mu in self.active:
                # an in-place array's adjoint is updated in place: a copy, not the η's own (shared) one
                b = self._bar(out)
                self.emit(lir.Assign(self._bar(mu), xp_call("asarray", b, dtype=FLOAT64, copy=TRUE)
                                     if mu in in_place else b))
        eta_mus = {mu for _, mu in s.etas}
        for n, _, _ in active_mus:
            if n not in eta_mus:
                self._zero(n)
        if s.never_runs():
            self._add_to_initial(active_mus)
            return
        tape = self.tape_name(s)
        own = self.own_tape(s, in_place)
        k = self.names.fresh("k")
        with self.block() as body:
            if own is not None:
                self.emit_all(own.read(lir.Name(k)))
                for v in self._kept_values.get(s.label, ()):
                    # the replay reads the value the forward sweep kept instead of computing it
                    load = self.names.fresh(v.name)
                    self.emit(lir.Assign(lir.Name(load), lir.Index(lir.Name(v.array), (lir.Name(k),))))
                    self._known_values.setdefault(v.kernel, {})[v.expr] = lir.Name(load)
            elif len(s.mus) > len(in_place):
                state = lir.Tuple(self._state(s, in_place).elts, bare=True)
                self.emit(lir.Assign(state, lir.Index(lir.Name(tape), (lir.Name(k),))))
            restore = self._restore_writes(s, in_place, lir.Index(lir.Name(f"{tape}_w"), (lir.Name(k),))) \
                if in_place else []
            for undo in restore:
                self.emit(undo)
            self._recorders[s.label] = None          # the replay writes again, and records nothing
            self.steps(s.header, tape=False)
            self.steps(s.body, tape=True)
            for v in self._kept_values.get(s.label, ()) if own is not None else ():
                self._known_values.pop(v.kernel, None)      # (a kernel the fuser printed took none)
            for undo in restore:
                self.emit(undo)
            carried = []
            for n, init, _ in active_mus:
                if n in in_place:
                    continue
                c = self.names.fresh("carry")
                carried.append((n, c))
                self.emit(lir.Assign(lir.Name(c), self._bar(n)))
                self._zero(n, scalar_first=self.is_array(n) and not self.ndim(init))
            # An in-place array's versions share one adjoint, the state's.
            shared_bars = {v for n, _, _ in active_mus if n in in_place for v in in_place[n].versions - {n}}
            self._shared_bars |= shared_bars
            for n, _, _ in active_mus:
                if n in in_place:
                    for v in sorted(in_place[n].versions - {n}):
                        if v in self.active:
                            self.emit(lir.Assign(self._bar(v), self._bar(n)))
            # The next state's adjoint starts as the carried one: assigned, not zeroed and then added
            # (the carried array is referenced by nothing else, so later in-place += on it is safe).
            defined = self._defined(list(s.header) + list(s.body))
            unstarted = {nxt.id for n, _, nxt in active_mus
                         if n not in in_place and isinstance(nxt, ir.Name) and nxt.id in defined
                         and nxt.id in self.active}
            for name in defined:
                if name in self.active and name not in unstarted and name not in shared_bars:
                    self._zero(name)
            for (_, _, nxt), (_, c) in zip([m for m in active_mus if m[0] not in in_place], carried, strict=True):
                if isinstance(nxt, ir.Name) and nxt.id in self.active:
                    first = nxt.id in unstarted
                    unstarted.discard(nxt.id)
                    b, carry = self._bar(nxt.id), lir.Name(c)
                    self.emit(lir.Assign(b, carry) if first else lir.AugAssign(b, "+", carry))
            self.reverse(s.body)
            self.reverse(s.header)
        length = own.length() if own is not None else lir.Call(lir.Name("len"), (lir.Name(tape),))
        once, body = hoist_scratch(body, self._scratch_names, k)
        self.emit_all(once)
        backwards = lir.Call(lir.Name("range"), (lir.BinOp("-", length, lir.Lit("1")), lir.Lit("-1"), lir.Lit("-1")))
        self.emit(lir.For(lir.Name(k), backwards, tuple(body)))
        self._add_to_initial(active_mus)

    def _add_to_initial(self, active_mus) -> None:
        """Each state's adjoint at the loop's first iteration added to its first value's."""
        for n, init, _ in active_mus:
            if isinstance(init, ir.Name) and init.id in self.active:
                self.emit(lir.AugAssign(self._bar(init.id), "+", self._bar(n)))
