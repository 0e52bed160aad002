"""The glue: a :class:`~coarsen_nb.plan.Plan` → one Python module's source text.

The outer level is algorithmic differentiation at SOI granularity.  The
module defines

* ``NAME(*params)`` — the forward function;
* ``NAME_vjp(*params, _bar=1.0)`` — the forward sweep (recording what the
  reverse sweep needs), then the SOIs' VJPs in reverse order; returns
  ``(value, gradients in wrt order)``.  The cotangent ``_bar`` has the value's
  structure: a float, an array of the result's shape, or a tuple with one
  entry per element of a tuple result (``_bar=(1.0, 1.0)``);
* ``NAME_grad(*params)`` — for a scalar result only: the gradient alone,
  without the forward values nothing in it reads;
* ``NAME_jvp(*params, *tangents)`` — tangents carried forward with the values.

Only branch decisions and loop states are recorded: a branch's predicate is
a value the reverse sweep can read, and an iterated loop stores its μ state
once per iteration (never one entry per operation); the reverse sweep
re-runs an iteration's body from its stored state and then its VJP (the forward sweep's printing is
:mod:`coarsen_nb.lower.forward`, the reverse sweep's :mod:`coarsen_nb.lower.reverse`).  An array
the loop writes element by element is, where nothing can see its old version,
written in place and stored as the elements each iteration overwrote
(:mod:`coarsen_nb.lower.in_place`), not as one copy per iteration.

The module imports only NumPy (or CuPy) and ``math`` — never coarsen_nb.  It defines exactly the
helpers (:mod:`coarsen_nb.lower.helpers`) its code calls and those they call: each printed call of a
helper registers it (``helper()``, here and in the kernel printer), and what a helper calls is read
from its code.  ``import math`` is there where some printed code uses ``math`` (the printers' and
fusers' ``uses_math``) or a defined helper does; ``import numpy as xp`` where a function's records read ``xp``.

Each entry function is a body of lowered-IR records (:mod:`coarsen_nb.lower.lir`) until it is printed:
an adjoint's first contribution takes its zero fill's place (:mod:`coarsen_nb.lower.first_contributions`,
from what the reverse sweep claims of the contributions' shapes), the passes over records drop dead
assignments and free temporaries (``_finish``), and the records are kept
(``printed``) for the cost model and for the line table that maps an error's line to the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coarsen_nb import backends, ir
from coarsen_nb.lower import lir, lir_lines, lir_passes
from coarsen_nb.lower.first_contributions import first_contributions
from coarsen_nb.lower.forward import ForwardSweep
from coarsen_nb.lower.helpers import HELPERS, Helper, closure
from coarsen_nb.lower.iterated import IteratedLoops
from coarsen_nb.lower.lir_liveness import drop_dead_code, narrowed_call
from coarsen_nb.lower.names import Names
from coarsen_nb.lower.reverse import ReverseSweep
from coarsen_nb.lower.tangent import TangentSweep
from coarsen_nb.lower.writer_records import WriterRecords
from coarsen_nb.module_parts import CARRIED, FUNCTION, HEAD, HELPER, SHARED_HELPER, Part, joined, lines_of
from coarsen_nb.plan import Plan
from coarsen_nb.symbolic.activity import active_names

#: The kinds of entry function a module defines, in the order it prints them: ``NAME``, ``NAME_vjp``,
#: ``NAME_grad`` (a scalar result only), ``NAME_jvp`` (where forward mode has a form).
ENTRY_KINDS = ("value", "vjp", "grad", "jvp")


@dataclass
class ModuleState:
    """What every function of one generated module shares, whichever writer prints it.

    :class:`ModuleWriter` prints the forward, VJP and gradient functions; the JVP
    function is printed by another writer (the tangent sweep of
    :mod:`coarsen_nb.lower.tangent` over this one) constructed on the same state: the
    same name allocator (no name clashes across functions) and the same helper set
    and table (the module defines every helper any of its functions calls).
    Everything else a writer holds (lines, indent, printers kept for the adjoint) is
    its own.
    """

    plan: Plan
    wrt: tuple[str, ...]
    backend: backends.Backend
    names: Names
    active: set[str]                 # activity analysis: values that depend on wrt
    helpers: set[str]                # the helpers the module's code calls
    # helper name -> the helper (lower.helpers', a backend's own version, a fuser's loop function); what
    # each calls is its own (numba's ``_gammaln`` does not import SciPy)
    helper_table: dict[str, Helper]
    helper_decorators: dict[str, str] = field(default_factory=dict)   # a helper's own decorator (a fuser's)
    uses_math: bool = False          # some function's code uses ``math`` (a helper's own use: Helper.names)
    modules_read: set[str] = field(default_factory=set)   # the modules the functions' records read (xp, math)
    # name -> (parameters, defaults, body) of each entry function: its records, for the line table and the
    # cost model (``ModuleWriter.printed``, once ``source`` has placed them in the module)
    functions: dict = field(default_factory=dict)



class ModuleWriter(ForwardSweep, ReverseSweep, IteratedLoops, WriterRecords):
    """Writes the forward, VJP and JVP functions of one plan: the sweeps' printing is its mixins', the
    assembly of the module and what the rules of :mod:`coarsen_nb.rules` call are its own."""

    def __init__(self, plan: Plan, wrt: tuple[str, ...], xp_module: str | backends.Backend = "numpy",
                 header: str = "", shared: ModuleState | None = None):
        if shared is None:
            backend = xp_module if isinstance(xp_module, backends.Backend) else backends.for_module(xp_module)
            own = backend.load_helpers() if backend.load_helpers else {}
            decorators = backend.load_helper_decorators() if backend.load_helper_decorators else {}
            table = {**HELPERS, **{name: Helper.of_source(text) for name, text in own.items()}}
            shared = ModuleState(plan, wrt, backend, Names.for_plan(plan),
                                 active_names(plan, wrt), set(), table, dict(decorators))
        self.shared = shared
        # the shared objects, by their short names (the same objects: a helper one function's
        # writer adds is the module's, a name one allocates no other reuses)
        self.plan, self.wrt, self.backend = shared.plan, shared.wrt, shared.backend
        self.xp_module = shared.backend.xp_module
        self.names, self.active = shared.names, shared.active
        self.helpers, self.helper_table = shared.helpers, shared.helper_table
        self.helper_decorators = shared.helper_decorators
        self.header = header
        self.body: list[lir.Stmt] = []     # the statements of the function being written (emit)
        self.indent = 1
        self._blocks: list = []             # the open blocks' statements, innermost last
        self._printers: dict = {}
        # id(kernel) -> {subexpression: name}: values a loop's reverse sweep loaded from its tape, which the
        # replay of that kernel reads instead of computing them (lower/iterated.py, lower/numba_tape.py)
        self._known_values: dict = {}
        self._kept_values: dict = {}        # loop label -> the values its tape keeps besides the state
        self._grad_only = False
        self._unit_bars: set[str] = set()
        self._needed: set | None = None    # in NAME_grad: the values some later step reads
        self._in_place: dict = {}           # write name -> (InPlaceState, loop label): lower/in_place.py
        # allocation statement -> the check of its sizes that stays where the dead-code passes drop it
        self.size_checks: dict = {}         # (lower/allocation_checks.py)
        self._nonnegative: frozenset | None = None      # the plan's sizes that cannot be negative (_integer)
        self._recorders: dict = {}          # loop label -> whether its body records its writes
        self._records: dict = {}            # write name -> the names of what it records
        self._shared_bars: set[str] = set()  # versions of an in-place array: they share its adjoint
        self._fills: list[lir.Stmt] = []    # the adjoints' zero fills and the contributions of exactly
        self._exact: list[lir.Stmt] = []    # their primal's shape (lower/first_contributions.py)
        self._fresh: list[lir.Stmt] = []    # and the assignments of the new float64 arrays among them
        self._lane_names: dict | None = None

    # -- assembling ------------------------------------------------------------------------

    def source(self, entries: tuple[str, ...] | None = None) -> str:
        """The module's text; its parts, each with its role, are kept in ``self.parts``
        (:mod:`coarsen_nb.module_parts`: the numba loader and the notebook read those, not the text).

        ``entries``: the kinds of entry function to print (of :data:`ENTRY_KINDS`), by default all: a module of
        fewer entries defines only the helpers those call (the numba backend's first call prints the entry it
        runs, :mod:`coarsen_nb.entry_modules`).  An entry prints the same text alone as beside the others."""
        wanted = ENTRY_KINDS if entries is None else entries
        result = self.plan.result
        texts = []
        if "value" in wanted:
            texts.append(self._function(self.plan.name, list(self.plan.params), self._forward_body))
        if "vjp" in wanted:
            one = lir.Lit("1.0")
            bar = lir.Tuple((one,) * len(result.elts)) if isinstance(result, ir.Tuple) else one
            texts.append(self._function(f"{self.plan.name}_vjp", list(self.plan.params), self._vjp_body,
                                        ("_bar", bar)))
        rt = self.plan.types.get("$result")
        if "grad" in wanted and isinstance(result, ir.Name) and rt is not None and rt.ndim == 0:
            self._grad_only = True      # (a gradient is of a scalar function; of an int one, zeros)
            texts.append(self._function(f"{self.plan.name}_grad", list(self.plan.params), self._vjp_body))
            self._grad_only = False
        if "jvp" in wanted:
            tan = self._jvp_source()
            if tan:
                texts.append(tan)
        self.helpers |= closure(self.helpers, self.helper_table)
        helpers = [self._decorated(self.helper_table[h].source, self.helper_decorators.get(h)).strip("\n")
                   for h in sorted(self.helpers)]
        shared = self.backend.shared_helpers
        imports = []
        if self.shared.uses_math or any("math" in self.helper_table[h].names for h in self.helpers):
            imports.append("import math")
        uses_xp = self._imports_xp(self.shared.modules_read)
        if uses_xp:
            imports.append(("" if not imports else "\n") + f"import {self.xp_module} as xp")
        head = f'"""{self.header}"""' if self.header else '"""Generated by coarsen_nb."""'
        parts = [Part(HEAD, head + ("\n\n" + "\n".join(imports) if imports else ""))]
        if self.backend.prologue and (uses_xp or self.backend.decorator):
            parts.append(Part(CARRIED, self.backend.prologue.strip("\n")))
        parts += [Part(SHARED_HELPER if h in shared else HELPER, h) for h in helpers]
        self.printed = {}
        line = sum(lines_of(p) for p in parts) + 2 * len(parts) + 1     # (parts joined by two blank lines)
        for name, text in zip(self.shared.functions, texts, strict=True):
            params, defaults, body = self.shared.functions[name]
            def_line = line + (1 if self.backend.decorator else 0)
            self.printed[name] = lir_lines.PrintedFunction(name, params, defaults, body, def_line)
            line += text.strip("\n").count("\n") + 1 + 2
        self.parts = tuple(parts + [Part(FUNCTION, t.strip("\n")) for t in texts])
        return joined(self.parts)

    def line_table(self) -> dict:
        """The record printed at each line of the module :meth:`source` wrote (its entry functions' lines)."""
        return lir_lines.line_table(self.printed.values())

    def _function(self, name: str, params: list[str], body, default: tuple | None = None) -> str:
        """``def name(params):`` with ``body()``'s statements after the passes over records (first the
        adjoints' first contributions, :mod:`coarsen_nb.lower.first_contributions`); ``default``: one
        more parameter, ``(name, value record)`` (the VJP's seed ``_bar=1.0``)."""
        self.body, self.indent = [], 1
        self._fills, self._exact, self._fresh = [], [], []
        self.names.new_scope()      # a temporary's name is unique in its function
        body()
        names = tuple(self.names(p) for p in params)
        first = first_contributions(tuple(self.body), self._fills, self._exact, self._fresh)
        finished, used = self._finish(first, keep=names)
        self.shared.modules_read |= used
        defaults = (default[1],) if default else ()
        self.shared.functions[name] = (names + ((default[0],) if default else ()), defaults, finished)
        sig = ", ".join(names + ((f"{default[0]}={default[1]}",) if default else ()))
        return self._decorated(f"def {name}({sig}):\n" + "\n".join(lir.print_body(finished)) + "\n")

    def _finish(self, body, keep=(), frees: bool | None = None) -> tuple[tuple[lir.Stmt, ...], set[str]]:
        """A function's ``body`` after the passes over records, and the modules it reads (``xp``, ``math``):
        dead assignments dropped (and a backend's own tape arrays nothing reads), the temporaries freed
        (``frees``, by default where the backend frees them; never the names in ``keep``, the parameters),
        verified before and after: every read known (no :class:`~coarsen_nb.lower.lir.Raw`), or the passes
        could drop or free a name too early."""
        lir.verify(tuple(body), structured=True)
        writes = frozenset(n for n, h in self.helper_table.items() if h.writes)
        body = lir_passes.drop_dead_assignments(tuple(body), impure=writes, checks=self.size_checks)
        narrowed: dict = {}
        body = drop_dead_code(body, impure=writes, narrow=lambda call, keep, names: narrowed_call(
            self.helper_table, narrowed, call, keep, names, impure=writes), checks=self.size_checks)
        for name in lir_passes.names_called(body) & narrowed.keys():      # (the copies the body calls)
            helper, original = narrowed[name]
            self.helpers.add(name)
            self.helper_table[name] = helper
            if original in self.helper_decorators:
                self.helper_decorators[name] = self.helper_decorators[original]
        if self.backend.tape is not None:
            body = self.backend.tape.finished(body)     # the backend's own tape: unread entries, one block
        if self.backend.frees_temporaries if frees is None else frees:
            body = lir_passes.free_dead_names(body, keep=keep)
        lir.verify(body, structured=True)
        return body, lir_passes.modules_used(body)

    def _imports_xp(self, used: set[str]) -> bool:
        """Whether the module imports ``xp``, from the modules its functions read (``_finish``) and its
        helpers' names (it was read from the text, ``"xp." in code``, before the records)."""
        return "xp" in used or any("xp" in self.helper_table[h].names for h in self.helpers)

    def _decorated(self, function_source: str, decorator: str | None = None) -> str:
        """A function's source with its decorator line before it: ``decorator`` (a fuser's loop function,
        numba's ``@_jit_loop``), else the backend's (numba's ``@_jit``)."""
        decorator = decorator or self.backend.decorator
        return f"{decorator}\n{function_source}" if decorator else function_source

    # -- what the rules of coarsen_nb.rules call -----------------------------------------------

    def helper(self, name: str) -> str:
        """``name``, a helper the module then defines: code this writer or a rule of :mod:`coarsen_nb.rules`
        prints calls a helper through this (a kernel printer's calls come with its lines, ``_absorb``)."""
        self.helpers.add(name)
        return name

    def value(self) -> lir.Expr:
        """The value of the step whose rule runs, by its name (a rule of :mod:`coarsen_nb.rules` need not
        recompute it: ``np.linalg.solve``'s cotangent of A reads the solution)."""
        return self._name(self._step)

    def temp(self, code: lir.Expr, hint: str = "t") -> lir.Name:
        """``code`` computed once, into a fresh name after ``hint`` (for a rule that uses one value twice)."""
        name = lir.Name(self.names.fresh(hint))
        self.emit(lir.Assign(name, code))
        return name

    # -- forward mode ------------------------------------------------------------------------------

    def _jvp_source(self) -> str:
        """The JVP function: the tangent sweep (:mod:`coarsen_nb.lower.tangent`) over this writer's
        printing, on this writer's :class:`ModuleState`."""
        return _JvpWriter(self.plan, self.wrt, self.xp_module, self.header, shared=self.shared).jvp_function()


class _JvpWriter(TangentSweep, ModuleWriter):
    """The JVP function's writer: :class:`~coarsen_nb.lower.tangent.TangentSweep`'s step rules
    first, this module's printing underneath (``super()``)."""
