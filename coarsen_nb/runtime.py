"""``coarsen(fn)`` → :class:`Coarsened`: the compiled callable.

Parsing, SSA and gating happen at once (so ``.ssa`` and ``.gated`` work
before any call, and unsupported code fails early) -- unless the pipeline
cache has seen this function with the same inputs (:mod:`coarsen_nb.front_cache`):
then they wait until something asks for them, and a call whose module is in
the cache never runs them (nor imports SymPy).  Lifting, SOI selection,
differentiation and lowering depend on the argument types (scalar or array,
rank), so they run lazily on the first call with a new *signature* and are
cached per signature.  The generated module is registered with ``linecache``
under a real file name, so tracebacks and ``inspect`` show it.
"""

from __future__ import annotations

import dataclasses
import math

from coarsen_nb import backends, checks, cupy_arrays, dask_arrays, front_cache, run_errors
from coarsen_nb.call_keys import SEEN_MAX, Seen, type_key
from coarsen_nb.collector_pause import collector_paused
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend import reads
from coarsen_nb.inspection import Inspection
from coarsen_nb.phi.arg_types import T, signature_of
from coarsen_nb.specialize import Compiled, compile_signature


def coarsen(fn_or_source, wrt=None, backend: str = "auto", max_soi=None, reuse=None, per_block: bool = False,
            name: str | None = None, namespace: dict | None = None, parallel: bool = False) -> Coarsened:
    """Compile a plain Python function for fast, exact gradients.

    Parameters
    ----------
    fn_or_source : function or str
        The function, or source text (a notebook cell) defining it.
    wrt : str or tuple of str, optional
        Parameters to differentiate with respect to (default: every float
        parameter, in order).
    backend : {"auto", "numpy", "numba", "cupy", "dask"}
        "auto" (the default) is the environment variable ``COARSEN_NB_BACKEND`` where it is set,
        else "numba" where Numba imports, else "numpy"; ``f.backend`` says which it became.
        "numba" compiles every generated function with Numba (loops and the scalar code between SOIs
        run as machine code); a function Numba cannot compile runs as the NumPy code, with a
        ``NumbaFallbackWarning`` naming why.  "numpy" runs NumPy code, and exports a module that
        needs only NumPy.  "cupy" (a GPU) is chosen for you only by your data: a CuPy array argument
        runs the "cupy" module (:mod:`coarsen_nb.cupy_arrays`), and a Dask array argument the "dask"
        module (:mod:`coarsen_nb.dask_arrays`), whatever this says.
    max_soi : int, optional
        Size cap L of a segment of interest (operations); 1 gives
        operator-level AD.  Default: no cap.
    reuse : int, optional
        Reuse threshold R: a value read more than R times is kept as a named
        temp instead of being substituted into its users.  Default: 1
        (``coarsen_nb.soi.select.DEFAULT_REUSE``).
    per_block : bool
        SOIs never cross a φ (the paper's "without phi-calculus" ablation).
    parallel : bool
        With the numba backend: the fused loops whose iterations are independent (elementwise maps, sums and
        products, scatters to each iteration's own element) run on threads (``numba.prange``; Numba's
        ``NUMBA_NUM_THREADS`` sets how many).  Sums then add in another order (equal to ~1e-15 relative).

    Example
    -------
    >>> import coarsen_nb as cn
    >>> f = cn.coarsen("def sq(x):\\n    return x * x\\n")
    >>> f.grad(3.0)
    6.0
    """
    return Coarsened(fn_or_source, wrt, backend, max_soi, reuse, per_block, name, namespace, parallel=parallel)


class Coarsened(Inspection):
    """A compiled function: call it, take gradients; look inside and export (:class:`~coarsen_nb.inspection.
    Inspection`)."""

    def __init__(self, fn_or_source, wrt=None, backend="auto", max_soi=None, reuse=None, per_block=False,
                 name=None, namespace=None, _front=None, _known=None, parallel=False):
        backend, max_soi, reuse = checks.options(backend, max_soi, reuse, per_block, parallel)
        self._origin = (fn_or_source, name, namespace)
        self._front = _front            # (cfg, ssa, gated), or None until asked for (a cached front end)
        self._known = _known if _known is not None or _front is not None \
            else front_cache.lookup(fn_or_source, name, namespace)
        if self._known is None:
            self._known = self._run_front_end()
        self.name = self._known.name
        self.params = self._known.params
        self.__signature__ = checks.signature(self.params, self._known.defaults)
        self.wrt = checks.wrt_names(wrt, self.params, self.name)
        self.backend = backend          # resolved: never "auto" (what runs, and what an export needs)
        self.max_soi = max_soi
        self.reuse = reuse
        self.per_block = bool(per_block)
        self.parallel = bool(parallel)
        self._cache: dict = {}          # signature -> Compiled
        self._seen: dict = {}           # type_key of the arguments -> Seen (call_keys)
        self._arity = len(self.params)
        self._last: Compiled | None = None
        self._last_key: tuple = ()     # the last call's type_key: its arguments' shapes, for f.cost
        self._last_ints: dict = {}
        self.__doc__ = fn_or_source.__doc__ if callable(fn_or_source) else None   # not str's docstring
        self.__name__ = self.name

    def _run_front_end(self) -> front_cache.Front:
        """Parse, build SSA and gate; what it read from the user's namespace is recorded with the result
        (:mod:`coarsen_nb.front_cache`), so that a later process can skip this.  It runs with Python's cyclic
        collector paused (:mod:`coarsen_nb.collector_pause`): SymPy's import is most of a cold front end."""
        with collector_paused():
            return self._front_end_run()

    def _front_end_run(self) -> front_cache.Front:
        """:meth:`_run_front_end`'s work."""
        from coarsen_nb.frontend.parse import parse
        from coarsen_nb.frontend.signature import defaults_of
        from coarsen_nb.frontend.ssa import to_ssa
        from coarsen_nb.phi.gate import gate
        from coarsen_nb.phi.tree_passes import hoist_invariants, prune_etas

        fn_or_source, name, namespace = self._origin
        with reads.recording() as read:
            fn = parse(fn_or_source, name=name, namespace=namespace)
            ssa = to_ssa(fn)
            gated = hoist_invariants(prune_etas(gate(ssa)))
            defaults = defaults_of(fn_or_source, fn.name if isinstance(fn_or_source, str) else None, namespace)
        for ns, looked_up in read.lookups():          # (an enclosing recording, the magic's, sees them too)
            reads.note(ns, looked_up, ns.get(looked_up, reads.ABSENT))
        self._front = (fn, ssa, gated)
        known = front_cache.remember(fn_or_source, name, namespace, fn.name, fn.params, defaults, read.lookups())
        return known or front_cache.Front(fn.name, fn.params, defaults, key=None)

    def _front_end(self) -> tuple:
        """The front end's result, run now where the pipeline cache let construction skip it.  Should a global
        it reads have changed since (a number reassigned between ``coarsen()`` and the first call that
        misses the cache), the modules compiled from now on read the new value, and are keyed by it."""
        if self._front is None:
            known = self._run_front_end()
            if known.key != self._known.key:
                self._known = dataclasses.replace(self._known, key=known.key)
        return self._front

    @property
    def _cfg(self):
        return self._front_end()[0]

    @property
    def _ssa(self):
        return self._front_end()[1]

    @property
    def _gated(self):
        return self._front_end()[2]

    @property
    def front_key(self) -> str | None:
        """A digest of the front end's result computed from its inputs (None: only the gated text tells)."""
        return self._known.key

    # -- text of each stage ------------------------------------------------------------------

    @property
    def ssa(self) -> str:
        return str(self._ssa)

    @property
    def gated(self) -> str:
        return str(self._gated)

    @property
    def fallback(self) -> str | None:
        """Why the last signature called was compiled at a finer selection than asked for (else None)."""
        return self._last.fallback if self._last is not None else None

    @property
    def mode(self) -> str:
        if self.max_soi == 1:
            return "operator"
        return "block" if self.per_block else "phi"

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        """One value per parameter (``checks.bind``); every parameter given in order is that already, without
        binding's cost per call (a few µs, a tenth of a small compiled gradient)."""
        if not kwargs and len(args) == self._arity:
            return args
        return checks.bind(self.name, self.__signature__, args, kwargs)

    # -- specialization ------------------------------------------------------------------------

    def _specialize(self, args, entry: str | None = None) -> Compiled:
        """The specialization for ``args`` (one per parameter), compiled on the first call with its signature;
        ``entry``: the kind of entry function the call runs (a compiling backend prints that one first and
        each other on its first use, :mod:`coarsen_nb.entry_modules`; None: every entry).

        A call whose arguments have the types and shapes of an earlier call's (:func:`~coarsen_nb.call_keys.
        type_key`) takes the fast path, a dictionary lookup: the argument checks and the signature depend on
        nothing else (the shape not even: it is in the key because the key is then also what ``f.cost`` reads,
        so no second pass over the arguments), so they would pass and give the same as then.  A call on Dask
        arrays never does: its chunks are checked on every call (:mod:`coarsen_nb.dask_arrays`)."""
        key = type_key(args)
        seen = self._seen.get(key)
        if seen is None:        # (inline: a fallback's warning counts the frames up to the user's call)
            if len(self._seen) >= SEEN_MAX:        # (a new shape each call: the checks run again, not memory)
                self._seen.clear()
            checks.arguments(self.params, args)
            sig = signature_of(args)
            ints = tuple(k for k, t in enumerate(sig) if t.kind == "int" and t.ndim == 0)
            if dask_arrays.wanted(self.backend, args):      # a Dask argument: the dask module, never kept by key
                seen = Seen(dask_arrays.specialize(self, sig, args, self._cache), ints)
            elif cupy_arrays.wanted(self.backend, args):    # a CuPy argument: the cupy module
                seen = self._seen[key] = Seen(cupy_arrays.specialize(self, sig, self._cache), ints)
            else:
                hit = self._cache.get(sig)
                if hit is None:
                    hit = self._compile(sig, entry)
                    self._cache[sig] = hit
                seen = self._seen[key] = Seen(hit, ints)
        self._note(seen, key, args)
        hit = seen.compiled
        if hit.missing:
            raise CoarsenError(self.backend, message=f"the {self.backend} module cannot be loaded here ({hit.missing})",
                               hint=backends.get(self.backend).install_hint)
        return hit

    def _note(self, seen: Seen, key: tuple, args: tuple) -> None:
        """Remember the call for ``f.cost``; set together, after a compile that succeeded (the plan is read
        with these shapes)."""
        self._last, self._last_key = seen.compiled, key
        if seen.ints or self._last_ints:
            self._last_ints = seen.int_values(self.params, args)

    def _compile(self, sig: tuple[T, ...], entry: str | None = None) -> Compiled:
        return compile_signature(self, sig, entry)

    @property
    def ssa_function(self):
        """The SSA function (``ir.Function``: what :attr:`ssa` prints)."""
        return self._ssa

    @property
    def gated_function(self):
        """The gated SSA function (what a specialization lifts)."""
        return self._gated

    @property
    def front_source(self):
        """The user's source: its file name and first line (a generated module's header names them)."""
        return self._ssa.source

    # -- calling -----------------------------------------------------------------------------

    def _run(self, c: Compiled, fn, args: tuple, *extra):
        """``fn(*args, *extra)``: an error inside the generated code is reported at the user's line."""
        try:
            return fn(*args, *extra)
        except Exception as exc:
            run_errors.reraise(self, c, exc, args)

    def __call__(self, *args, **kwargs):
        args = self._bind(args, kwargs)
        c = self._specialize(args, "value")
        return self._run(c, c.forward, args)

    def value_and_grad(self, *args, **kwargs):
        """The value and the gradient (one array/float for one wrt name, else a tuple)."""
        args = self._bind(args, kwargs)
        c = self._specialize(args, "vjp")
        if not c.scalar_result:
            raise CoarsenError(self.name, message=f"{self.name} does not return a scalar; grad needs one",
                               hint="return a float (e.g. a sum) or use .vjp")
        value, grads = self._run(c, c.vjp, args)
        return value, grads[0] if len(grads) == 1 else grads

    def grad(self, *args, **kwargs):
        """The gradient with respect to ``wrt`` (in wrt order)."""
        if kwargs or len(args) != self._arity:
            args = checks.bind(self.name, self.__signature__, args, kwargs)
        # a repeated call (call_keys): _specialize and _run inlined, the gradient-only entry found once
        key = type_key(args)
        seen = self._seen.get(key)
        if seen is None or seen.grad is None:
            c = self._specialize(args, "grad")
            if not c.scalar_result or c.grad is None:
                return self.value_and_grad(*args)[1]
            seen = self._seen.get(key) or Seen(c, ())       # (a Dask call is not kept by key)
            seen.grad = c.grad                              # (loaded now where the first call was another kind)
        else:
            self._last, self._last_key = seen.compiled, key      # (self._note, inline)
            if seen.ints or self._last_ints:
                self._last_ints = seen.int_values(self.params, args)
        try:
            grads = seen.grad(*args)
        except Exception as exc:
            run_errors.reraise(self, seen.compiled, exc, args)
        return grads[0] if len(grads) == 1 else grads

    def vjp(self, *args, **kwargs):
        """``(value, pullback)``: ``pullback(cotangent)`` gives the wrt gradients.  The cotangent has the
        value's structure: a float or an array of its shape, or a tuple with one per element of a tuple
        result (default: ones)."""
        args = self._bind(args, kwargs)
        c = self._specialize(args, "vjp")
        value, _ = self._run(c, c.vjp, args)

        def pullback(cotangent=None):
            if cotangent is None:
                grads = self._run(c, c.vjp, args)[1]
            else:
                grads = self._run(c, c.vjp, args, checks.cotangent(value, cotangent, self.name))[1]
            return grads[0] if len(grads) == 1 else grads

        return value, pullback

    def jvp(self, args, tangents):
        """``(value, directional derivative)`` along ``tangents`` (one per wrt name, each shaped like its
        argument: a number for a float, an array of the same shape for an array)."""
        args = checks.bind(self.name, self.__signature__, checks.primals(self.name, args), {})
        c = self._specialize(args, "jvp")
        tangents = checks.tangents(self.params, args, c.wrt, tangents)
        if c.jvp is None:
            raise CoarsenError("jvp", message="forward mode is not available for this function",
                               hint="use .vjp or .grad")
        return self._run(c, c.jvp, args, *tangents)

    def retune(self, max_soi=math.nan, reuse=math.nan, per_block=None) -> Coarsened:
        """A new compiled object with another SOI selection (no re-parsing)."""
        fn_or_source, name, namespace = self._origin
        new = Coarsened(fn_or_source, self.wrt, self.backend,
                        self.max_soi if isinstance(max_soi, float) and math.isnan(max_soi) else max_soi,
                        self.reuse if isinstance(reuse, float) and math.isnan(reuse) else reuse,
                        self.per_block if per_block is None else per_block, name, namespace,
                        _front=self._front, _known=self._known, parallel=self.parallel)
        if self._last is not None:
            new._compile_like(self._last.signature)
            new._last_key = self._last_key
            new._last_ints = self._last_ints
        return new

    def _compile_like(self, sig) -> None:
        compiled = self._compile(sig)
        self._cache[sig] = compiled
        self._last = compiled

    def __repr__(self) -> str:
        threads = " parallel" if self.parallel else ""
        return f"<Coarsened {self.name}({', '.join(self.params)}) backend={self.backend}{threads} mode={self.mode}>"
