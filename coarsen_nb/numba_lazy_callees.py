"""Compiling an entry point without code-generating, on their own, the callees only compiled code calls
(issue 14's cold bar: gmm's LLVM time; benchmarks/RESULTS.md, stop 41).

Numba compiles a jitted callee while typing its caller, and finishes it there: its library is *finalized*
(its module optimized at O3 and turned into machine code) before the caller is lowered, because Numba asks
for the address of its Python wrapper (``get_executable``) and the caller's ``add_linking_library`` asks for
a finalized library.  Then the caller's own finalize links the callee's module in again and optimizes and
code-generates the whole again, so every callee was optimized twice and code-generated twice.  For a
function without Numba's wrappers (``no_cpython_wrapper``, ``no_cfunc_wrapper``: the generated loop
functions and helpers, ``numba_xp.INTERNAL``) the first round produced nothing anybody reads: it has no
wrapper to take the address of, and the caller uses its IR, not its machine code.

:func:`lazy_callee_libraries` makes, for one ``dispatcher.compile``, every library Numba creates a
:class:`LazyLibrary`: one finalized only when something needs it finalized — the address of a function it
defines (an entry point's Python wrapper), its serialization for Numba's disk cache (a ``cache=True``
function is finalized when it is saved, right after its compile, as before), or a library outside the block
linking it.  A caller inside the block links a lazy callee's module as it stands (its function passes run,
its own callees linked in) and optimizes and code-generates it once, in its own finalize.  The environment
of a lazy callee (``get_executable``'s ``set_env``, which needs the module in the JIT engine) is set when it
is finalized, if ever; until then nothing can run its machine code (there is none): its copies linked into
callers use their own, as a caller loaded from Numba's disk cache always did.

The generated loop functions are compiled with ``cache=False`` (``backends.py``: a caller loaded from the
disk cache never compiles its callees, so their own cache entries were read only where a new caller of the
same module was compiled in a later process); a ``cache=True`` function (the shared helpers, which
``python -m coarsen_nb warmup`` compiles once per machine) is finalized at its save exactly as before.

Contained: the codegen's library class is replaced inside the block alone (the compile runs under Numba's
global compiler lock and coarsen_nb's own one-compile-at-a-time lock), and a lazy library behaves as
Numba's own in every other respect.  Numba internals read here (a risk on Numba upgrades, tested in a fresh
process by ``tests/test_numba_lazy_callees.py``): ``JITCPUCodegen._library_class``, ``CPUCodeLibrary``'s
``_finalized``, ``_final_module``, ``_linking_libraries``, ``_reload_init``, ``_get_module_for_linking``,
``add_linking_library``, ``_finalize_final_module``, and ``codegen.set_env``.
"""

from __future__ import annotations

import contextlib


def _lazy_library_class():
    """The :class:`LazyLibrary` class, built on Numba's ``JITCodeLibrary`` (imported only with Numba)."""
    from llvmlite import binding as ll
    from numba.core.codegen import JITCodeLibrary

    class LazyLibrary(JITCodeLibrary):
        """A ``JITCodeLibrary`` finalized only when its machine code, its serialization or a library outside
        :func:`lazy_callee_libraries` needs it (:mod:`coarsen_nb.numba_lazy_callees`)."""

        def __init__(self, codegen, name, **kwargs):
            super().__init__(codegen, name, **kwargs)
            self._pending_envs: list = []
            self._unfinalized_linkable = None

        @property
        def codegen(self):
            return _EnvDeferringCodegen(self) if not self._finalized else self._codegen

        def add_linking_library(self, library):
            # (a lazy caller links a lazy callee's module as it stands, in its own finalize)
            if not isinstance(library, LazyLibrary):
                library._ensure_finalized()
            self._linking_libraries.append(library)

        def get_pointer_to_function(self, name):
            if not self._finalized:
                function = _defined(self._final_module, name)
                if function is None:
                    return 0            # (no such function: nothing to generate code for, as Numba answers)
            return super().get_pointer_to_function(name)

        def _get_module_for_linking(self):
            if self._finalized:
                return super()._get_module_for_linking()
            if self._unfinalized_linkable is None:
                module = self._final_module.clone()
                seen = set()
                for library in self._linking_libraries:
                    if library not in seen:
                        seen.add(library)
                        self._reload_init.update(library._reload_init)
                        module.link_in(library._get_module_for_linking(), preserve=True)
                for function in module.functions:
                    if not function.is_declaration and function.linkage == ll.Linkage.external:
                        function.linkage = "linkonce_odr"
                self._unfinalized_linkable = module
            return self._unfinalized_linkable

        def _finalize_final_module(self):
            super()._finalize_final_module()
            pending, self._pending_envs = self._pending_envs, []
            for env_name, env in pending:
                self._codegen.set_env(env_name, env)

    return LazyLibrary


def _defined(module, name):
    """The function ``name`` defined (not only declared) in the LLVM ``module``, or None."""
    try:
        function = module.get_function(name)
    except NameError:
        return None
    return None if function.is_declaration else function


class _EnvDeferringCodegen:
    """A lazy library's codegen as its ``get_executable`` sees it: ``set_env`` waits for the finalize (the
    environment's global variable has an address only once the module is in the JIT engine)."""

    def __init__(self, library):
        self._library = library

    def set_env(self, env_name, env):
        self._library._pending_envs.append((env_name, env))

    def __getattr__(self, name):
        return getattr(self._library._codegen, name)


_LAZY_LIBRARY = None


@contextlib.contextmanager
def lazy_callee_libraries(target_context):
    """Inside the block, the libraries ``target_context``'s codegen creates are :class:`LazyLibrary`'s: a
    callee without wrappers is optimized and code-generated once, inside its caller."""
    global _LAZY_LIBRARY
    if _LAZY_LIBRARY is None:
        _LAZY_LIBRARY = _lazy_library_class()
    codegen = target_context.codegen()
    if "_library_class" in vars(codegen):       # (nested: the outer block's)
        yield
        return
    codegen._library_class = _LAZY_LIBRARY
    try:
        yield
    finally:
        del codegen._library_class                 # the class's attribute again
