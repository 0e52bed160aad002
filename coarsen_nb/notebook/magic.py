"""The ``%%coarsen`` cell magic: parse options, compile, bind, hand to the views.

The magic is deliberately thin (STYLE.md, habit 8).  It

1. runs the cell in the user namespace, so that helpers, imports and the plain
   Python function itself exist (the last is the oracle for ``--check``);
2. compiles the cell's main function with :func:`coarsen_nb.runtime.coarsen`,
   reusing an earlier compilation when nothing that affects it changed: the
   cache key is a hash of the cell text, the compile options and the
   coarsen_nb version, as Cython's ``%%cython`` does, and an entry is used
   only while every name the compiler read from the namespace (helpers from
   other cells, global constants) still means what it did
   (:mod:`coarsen_nb.frontend.reads`);
3. binds a :class:`~coarsen_nb.notebook.bound.Bound` under the function's name;
4. shows the widget view in a Jupyter frontend, or a text summary in a
   terminal (or with ``--no-widgets``).

A :class:`~coarsen_nb.errors.CoarsenError` is the user's mistake, not ours, so
it is shown as its short message with the caret and no traceback.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from coarsen_nb import option_help
from coarsen_nb.backends import AUTO, BACKENDS, resolve
from coarsen_nb.errors import CoarsenError
from coarsen_nb.frontend import reads
from coarsen_nb.notebook.bound import Bound, source_or_none
from coarsen_nb.version import __version__


class CoarsenCellError(Exception):
    """A compile error raised out of a ``%%coarsen`` cell.

    It wraps the :class:`CoarsenError` (kept as ``.error``) only to give
    IPython a ``_render_traceback_``: the frames of the compiler say nothing to
    a notebook user, while the cell still fails, so that "Run All" stops
    before cells that would use the function that did not compile.
    """

    def __init__(self, error: CoarsenError) -> None:
        super().__init__(str(error))
        self.error = error

    def _render_traceback_(self) -> list[str]:
        return [f"CoarsenError: {self.error}"]


@dataclass(frozen=True)
class CompileOptions:
    """Everything in the magic's line that changes the compiled result."""

    wrt: tuple[str, ...] | None
    backend: str
    max_soi: int | None
    reuse: int | None
    per_block: bool
    name: str | None
    parallel: bool = False

    def cache_key(self, cell: str) -> str:
        """A hash of everything that affects a compilation of ``cell``."""
        blob = json.dumps(
            {"cell": cell, "options": asdict(self), "version": __version__},
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()


_MAGIC_LINE = "# %%coarsen\n"


def _names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise ValueError("--wrt needs at least one parameter name")
    return names


@magics_class
class CoarsenMagics(Magics):
    """Holds the compilation cache and the counters tests and users can read.

    ``compilations`` counts calls into the compiler, ``cache_hits`` the cells
    answered from the cache; both only ever grow.
    """

    def __init__(self, shell) -> None:
        super().__init__(shell)
        self._cache: dict[str, tuple[object, reads.NamespaceReads]] = {}
        self.compilations = 0
        self.cache_hits = 0
        self._exports = _Exports()

    @magic_arguments(name="%coarsen")  # IPython prints one "%" before it: the usage reads "%%coarsen"
    @argument("--wrt", type=_names, default=None, metavar="a,b", help=option_help.WRT)
    @argument("--backend", choices=(AUTO, *BACKENDS), default=AUTO, help=option_help.BACKEND)
    @argument("--max-soi", type=int, default=None, metavar="L", help=option_help.MAX_SOI)
    @argument("--reuse", type=int, default=None, metavar="R", help=option_help.REUSE)
    @argument("--per-block", action="store_true", help=option_help.PER_BLOCK)
    @argument("--parallel", action="store_true", help=option_help.PARALLEL)
    @argument("--export", default=None, metavar="PATH",
              help="write the generated module to PATH once generated, on the first call; an existing file "
                   "is replaced only with --overwrite (or if this magic wrote it)")
    @argument("--overwrite", action="store_true", help=option_help.OVERWRITE)
    @argument("--no-widgets", action="store_true",
              help="print a text summary instead of the interactive view")
    @argument("--check", action="store_true",
              help="on the first .grad call, compare with central finite differences")
    @argument("--force", action="store_true", help="recompile even if the cache has this cell")
    @argument("--name", default=None, metavar="FUNC",
              help="the function to compile (default: the cell's last def)")
    @cell_magic
    def coarsen(self, line: str, cell: str):
        """Compile the cell's function to fast gradient code and bind it.

        The cell runs as ordinary Python first; then its function (the last
        ``def``, or ``--name``) is compiled by coarsening optimization and
        bound under its name with ``f(...)``, ``f.grad(...)``,
        ``f.value_and_grad(...)`` and the reports of ``coarsen_nb.coarsen``.
        """
        args = parse_argstring(self.coarsen, line)
        try:
            # resolved here, so that the cache key names what runs: $COARSEN_NB_BACKEND may change (%env)
            backend = resolve(args.backend)
        except CoarsenError as err:
            raise CoarsenCellError(err) from None
        options = CompileOptions(
            wrt=args.wrt, backend=backend, max_soi=args.max_soi,
            reuse=args.reuse, per_block=args.per_block, name=args.name, parallel=args.parallel,
        )
        exported = Path(args.export).expanduser().resolve() if args.export else None
        if exported is not None and not args.overwrite and not self._exports.may_replace(exported):
            raise CoarsenCellError(_exists_error(exported))
        # IPython hands the magic the cell without its first line, the `%%coarsen` line; put a comment
        # in its place so that line numbers (errors, reports, tracebacks) count from the top of the cell.
        cell = _MAGIC_LINE + cell
        user_ns = self.shell.user_ns
        exec(compile(cell, self.shell.compile.cache(cell), "exec"), user_ns)

        compiled, cached = self._compile(cell, options, force=args.force)
        plain = user_ns.get(compiled.name)
        bound = Bound(compiled, reference=plain if callable(plain) else None, check=args.check)
        user_ns[compiled.name] = bound

        if exported is not None:
            self._exports.keep_written(bound, exported, overwrite=args.overwrite)
        self._show(bound, cached=cached, exported=exported, widgets=not args.no_widgets)

    def _compile(self, cell: str, options: CompileOptions, force: bool):
        from coarsen_nb.runtime import coarsen

        key = options.cache_key(cell)
        entry = self._cache.get(key)
        if not force and entry is not None and entry[1].unchanged():
            self.cache_hits += 1
            return entry[0], True
        try:
            # The front end reads the namespace only while parsing, inside coarsen().
            with reads.recording() as read:
                compiled = coarsen(
                    cell, wrt=options.wrt, backend=options.backend, max_soi=options.max_soi,
                    reuse=options.reuse, per_block=options.per_block, name=options.name,
                    namespace=self.shell.user_ns, parallel=options.parallel,
                )
        except CoarsenError as err:
            raise CoarsenCellError(err) from None
        self.compilations += 1
        self._cache[key] = (compiled, read)
        return compiled, False

    def _show(self, bound: Bound, *, cached: bool, exported: Path | None, widgets: bool) -> None:
        # A kernel means a frontend that can render widgets (JupyterLab,
        # Notebook, VS Code, nbclient); terminal IPython has none.
        if widgets and getattr(self.shell, "kernel", None) is not None:
            from IPython.display import display

            from coarsen_nb.notebook.widgets import CoarsenView

            display(CoarsenView(bound, cached=cached, exported=exported).widget)
        else:
            from coarsen_nb.notebook.text import summary

            print(summary(bound.compiled, cached=cached, exported=exported), file=sys.stdout)


class _Exports:
    """The files ``--export`` wrote in this session, and the text it wrote to each.

    The generated code depends on the argument types, so a cell's module is
    rewritten after each new specialization, and again when the cell is run
    again.  Those rewrites replace the magic's own file.  A file that holds
    anything else (it was there before, or someone edited it) is the user's,
    and is replaced only with ``--overwrite``, as ``Coarsened.export`` and the
    CLI refuse to replace it without being told.
    """

    def __init__(self) -> None:
        self._written: dict[Path, str] = {}

    def may_replace(self, path: Path) -> bool:
        """Whether ``path`` is free: absent, or holding just what this magic wrote there."""
        if not path.exists():
            return True
        try:
            return self._written.get(path) == path.read_text()
        except (OSError, UnicodeDecodeError):
            return False

    def keep_written(self, bound: Bound, path: Path, *, overwrite: bool) -> None:
        """Keep ``path`` holding the generated module: now if there is one, else after each new one."""
        def write() -> None:
            if not (overwrite or self.may_replace(path)):
                # Written over since the cell ran: keep that, and say so (the call itself succeeded).
                warnings.warn(f"{_exists_error(path).message}, so this new specialization is not exported; "
                              "run the cell again with --overwrite to replace it", stacklevel=4)
                return
            text = bound.compiled.source
            bound.compiled.export(path, overwrite=True)
            self._written[path] = text

        bound.on_specialize(write)
        if source_or_none(bound.compiled) is not None:  # else nothing is generated before the first call
            write()


def _exists_error(path: Path) -> CoarsenError:
    return CoarsenError("--export", hint="add --overwrite to replace it, or export to another path",
                        message=f"--export {path}: the file exists and was not written by this magic")


def register(ipython) -> CoarsenMagics:
    """Register ``%%coarsen`` with ``ipython``; returns the magics instance.

    Returning it lets a caller (and the tests) read ``compilations`` and
    ``cache_hits`` without reaching into IPython's registry.
    """
    global _remove_status
    from coarsen_nb import numba_loader
    from coarsen_nb.notebook.status import CompileStatus, jupyter_display

    magics = CoarsenMagics(ipython)
    ipython.register_magics(magics)
    if _remove_status is not None:          # (registered again: one status line, for the latest shell)
        _remove_status()
    _remove_status = numba_loader.on_compile(CompileStatus(jupyter_display(ipython)))
    return magics


_remove_status = None       # removes the "compiling …" listener register() installed
