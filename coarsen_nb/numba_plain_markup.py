"""Numba's error messages marked up without colorama's stream wrapping, during a compile (issue 14's cold bar;
benchmarks/RESULTS.md, stop 42).

Numba types a call by trying templates, and a template that does not match raises an error whose message it
marks up (``errors.termcolor().errmsg(...)``, also ``typeof`` of each global it probes and each literal it
cannot make): thousands of messages for one gradient (gmm: ~5,000), almost all caught and dropped.  Where
colorama is installed, each markup runs ``colorama.init()`` and ``deinit()`` (``errors.ColorShell``), which
wrap ``sys.stdout`` and ``sys.stderr`` in new ``AnsiToWin32`` objects and unwrap them again: gmm's gradient
spent ~0.05 s of CPU of its cold compile there.  The string made is ``style + color + msg + RESET_ALL``
whatever the wrapping did; :func:`markup_without_stream_wrapping` makes that same string without it, on
Numba's one color scheme object, for one ``dispatcher.compile``: every message is the same, character for
character.

Contained: the instance attribute is set inside the block alone (the compile runs under Numba's global
compiler lock and coarsen_nb's one-compile-at-a-time lock) and removed after.  Numba internals read here (a
risk on Numba upgrades, tested in a fresh process by ``tests/test_numba_plain_markup.py``): ``errors.termcolor``
and ``HighlightColorScheme._markup``'s signature and string (colorama's ``Style``).
"""

from __future__ import annotations

import contextlib

_BRIGHT = object()      # (``_markup``'s default style, colorama's ``Style.BRIGHT``)


def _plain_markup(msg, color=None, style=_BRIGHT):
    """``HighlightColorScheme._markup``'s string without ``ColorShell``: the color, the style, the message and
    ``RESET_ALL``."""
    from colorama import Style

    style = Style.BRIGHT if style is _BRIGHT else style
    return f"{color or ''}{style or ''}{msg}{Style.RESET_ALL}"


@contextlib.contextmanager
def markup_without_stream_wrapping():
    """Numba's messages marked up as they are, without colorama's ``init``/``deinit`` at each (module
    docstring); nothing changes where Numba's color scheme is not colorama's."""
    from numba.core import errors

    scheme = errors.termcolor()
    if type(scheme).__name__ != "HighlightColorScheme" or "_markup" in vars(scheme):
        yield
        return
    scheme._markup = _plain_markup
    try:
        yield
    finally:
        del scheme._markup
