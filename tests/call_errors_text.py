"""The regexes ``coarsen_nb/call_errors.py`` read the printed module with before the module writer kept its
functions as lowered-IR records: the tests' independent reference for the line table that replaced them
(tests/test_call_errors.py).  Not used by coarsen_nb."""

from __future__ import annotations

import re

from coarsen_nb.call_errors import _opaque_line  # (the plan's line of an opaque step: not text)

_SEGMENT = re.compile(r"^\s*# SOI (\d+)(?: \(lines? ([\d, ]+)\))?")
_LOOP = re.compile(r"^\s*# loop at line (\d+)")


def read_from_text(lines: list[str], gen_line: int, params: tuple[str, ...], plan) -> tuple[list[str], list[int]]:
    """The parameters generated line ``gen_line`` reads and the user's lines it computes, from the text."""
    text = lines[gen_line - 1] if 0 < gen_line <= len(lines) else ""
    read = [p for p in params if re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", text.split("#")[0])]
    target = re.match(r"\s*(\w+) = ", text)
    return read, _opaque_line(target.group(1) if target else None, plan) or user_lines(lines, gen_line)


def user_lines(lines: list[str], gen_line: int) -> list[int]:
    """The user's lines of the segment that generated line ``gen_line`` (1-based) belongs to."""
    for k in range(min(gen_line, len(lines)) - 1, -1, -1):
        if lines[k].startswith("def "):
            return []           # the entry point's first lines, before any segment
        loop = _LOOP.match(lines[k])
        if loop:
            return [int(loop.group(1))]
        seg = _SEGMENT.match(lines[k])
        if seg:
            if seg.group(2):
                return [int(n) for n in seg.group(2).split(",")]
            for other in lines:
                m = _SEGMENT.match(other)
                if m and m.group(1) == seg.group(1) and m.group(2):
                    return [int(n) for n in m.group(2).split(",")]
            note = re.search(r"at line (\d+)", lines[k])
            return [int(note.group(1))] if note else []
    return []
