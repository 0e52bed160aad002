"""The view of how the last call on Dask arrays was chunked (``f.chunking``), under the function's header.

A call on Dask arrays runs chunk by chunk through the in-memory module or as the dask module's array
statements (:mod:`coarsen_nb.dask_chunking` says which, why, and what the graph holds).  Whether a chunking
suits the function is a question a user asks at the function, so the answer stands under its header, and
is redrawn after each call (the chunks are the call's, not the compilation's); after a call that was not on
Dask arrays it is empty.
"""

from __future__ import annotations

import html

from coarsen_nb.errors import CoarsenError


def chunking_of(compiled):
    """``compiled.chunking``, or None before the first call."""
    try:
        return compiled.chunking
    except CoarsenError:
        return None


def chunking_lines(compiled) -> list[str]:
    """The chunking of the last call as lines of text (none where the last call was not on Dask arrays)."""
    chunking = chunking_of(compiled)
    return [] if chunking is None else chunking.lines()


def chunking_html(compiled) -> str:
    """The chunking of the last call as HTML: its first line, the rest as a list (empty where the last call
    was not on Dask arrays)."""
    first, *rest = chunking_lines(compiled) or [""]
    if not first:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in rest)
    return (f"<div class='coarsen-chunking-text' style='font-size:90%'><b>Dask:</b> {html.escape(first)}"
            f"<ul style='margin:2px 0'>{items}</ul></div>")
