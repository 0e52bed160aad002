"""coarsen_nb: fast, exact, visible gradients of plain Python numeric code.

Public API only; see ``coarsen`` and ``%load_ext coarsen_nb``.
"""

from coarsen_nb.errors import CoarsenError

__all__ = ["coarsen", "CoarsenError", "load_ipython_extension", "Coarsened"]
__version__ = "0.1.0"


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
