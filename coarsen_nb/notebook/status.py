"""The "compiling …" line: what the notebook shows while Numba compiles a generated function.

Under ``--backend numba`` the first call with new argument types waits for Numba (seconds on a first use,
a fraction of one from its disk cache), and nothing else says why that call is slow.  So while Numba works,
the output of the cell making the call shows ``coarsen_nb: compiling NAME with Numba …``, and once it is
done the same line says how long it took: in a Jupyter frontend one display, updated in place
(``display_id``); in a terminal two lines on stderr.  :func:`~coarsen_nb.notebook.magic.register` installs
it once per process (:func:`coarsen_nb.numba_loader.on_compile`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def compiling_text(name: str) -> str:
    return f"coarsen_nb: compiling {name} with Numba …"


def done_text(name: str, seconds: float, from_disk: bool) -> str:
    how = "loaded from Numba's disk cache" if from_disk else "compiled by Numba"
    return f"coarsen_nb: {name} {how} in {seconds:.1f} s"


class CompileStatus:
    """A listener for :func:`coarsen_nb.numba_loader.on_compile` that shows the status line.

    ``display(text)`` shows a new line and returns a handle whose ``update(text)`` replaces it; without a
    Jupyter frontend (``display`` None) the lines are printed to stderr instead.
    """

    def __init__(self, display: Callable[[str], object] | None = None):
        self._display = display
        self._handles: dict[str, object] = {}

    def __call__(self, event) -> None:
        if event.seconds is None:
            text = compiling_text(event.name)
            if self._display is None:
                print(text, file=sys.stderr, flush=True)
            else:
                self._handles[event.name] = self._display(text)
            return
        text = done_text(event.name, event.seconds, event.from_disk)
        handle = self._handles.pop(event.name, None)
        if handle is not None:
            handle.update(text)
        elif self._display is None:
            print(text, file=sys.stderr, flush=True)
        else:
            self._display(text)


def jupyter_display(shell) -> Callable[[str], object] | None:
    """The frontend's updatable display of plain text, or None in a terminal (no kernel)."""
    if getattr(shell, "kernel", None) is None:
        return None
    from IPython.display import display

    class _Line:
        """The display of one status line; ``update`` replaces its text (raw text/plain: a ``str`` given to
        the handle as it is would show as its repr, in quotes)."""

        def __init__(self, text: str):
            self._handle = display({"text/plain": text}, raw=True, display_id=True)

        def update(self, text: str) -> None:
            self._handle.update({"text/plain": text}, raw=True)

    return _Line
