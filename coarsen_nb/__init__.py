"""coarsen_nb: fast, exact, visible gradients of plain Python numeric code.

Public API only; see ``coarsen`` and ``%load_ext coarsen_nb``.
"""

from coarsen_nb.errors import CoarsenError
from coarsen_nb.version import __version__  # noqa: F401 (public)

__all__ = ["coarsen", "CoarsenError", "load_ipython_extension", "Coarsened"]


def __getattr__(name):
    # Imported lazily so that `import coarsen_nb` stays cheap (no SymPy import
    # until something is compiled).
    if name in ("coarsen", "Coarsened"):
        from coarsen_nb import runtime

        return getattr(runtime, name)
    raise AttributeError(name)


def load_ipython_extension(ipython):
    """`%load_ext coarsen_nb`: register the `%%coarsen` cell magic."""
    from coarsen_nb.notebook.magic import register

    register(ipython)
