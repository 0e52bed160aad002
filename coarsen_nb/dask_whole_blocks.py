"""Where a call on Dask arrays gathered an axis into one block: what ``f.chunking`` says of it (issue 18).

Some forms of the dask namespace need an operand whole along some axes (:mod:`coarsen_nb.lower.dask_xp_forms`):
a determinant the whole matrix, a convolution the whole kernel, Dask's LU chunks of one square size.  Such a
form rechunks its operand and names the gathered block's layer ``coarsen-whole-<operation>-<token>``; this
module finds those layers in the graph a call built and says, in the user's words, which argument (or which
value computed from which arguments) was gathered, for which NumPy function, and why.  Read from the layers
and their dependencies only, as :mod:`coarsen_nb.dask_chunking` reads its figures: nothing is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the layer names' prefix (``dask.utils.key_split`` of a layer name keeps it and the operation)
PREFIX = "coarsen-whole-"

#: operation -> (the user's NumPy function, why it needs its operand whole)
WHY = {
    "slogdet": ("np.linalg.slogdet", "the determinant needs the whole matrix"),
    "det": ("np.linalg.det", "the determinant needs the whole matrix"),
    "solve": ("np.linalg.solve", "Dask's LU needs chunks all of one square size, and these were not"),
    "inv": ("np.linalg.inv", "Dask's LU needs chunks all of one square size, and these were not"),
    "convolve": ("np.convolve", "every output element reads the whole kernel, the shorter operand"),
    "correlate": ("np.correlate", "every output element reads the whole kernel, the shorter operand"),
}


@dataclass(frozen=True)
class WholeBlock:
    """An operand gathered into one block: for ``function``, because ``why``; ``operand`` says what it was (an
    argument by name, or a value computed from named arguments)."""

    function: str
    operand: str
    why: str

    def __str__(self) -> str:
        return f"gathered into one block for {self.function}: {self.operand} ({self.why})"


def whole_blocks(layers: dict, deps: dict, arguments: dict[str, str]) -> tuple[WholeBlock, ...]:
    """The gathers among ``layers`` (name -> layer; ``deps``: name -> the names it reads); ``arguments`` maps
    each Dask argument's layer name to its parameter's name."""
    from dask.utils import key_split

    out = []
    for name in layers:
        word = key_split(name)
        if not word.startswith(PREFIX):
            continue
        function, why = WHY.get(word.removeprefix(PREFIX), (word.removeprefix(PREFIX), "it needs it whole"))
        out.append(WholeBlock(function, _operand(name, deps, arguments), why))
    return tuple(dict.fromkeys(out))


def _operand(name: str, deps: dict, arguments: dict[str, str]) -> str:
    """What the gathered layer ``name`` holds, in the user's names: the argument itself where the gather (a
    rechunk, then the named layer) reads an argument's layer, else the arguments its value is computed from."""
    rechunk = next(iter(deps.get(name, ())), None)
    direct = [d for d in deps.get(rechunk, ()) if d in arguments]
    if direct and len(deps.get(rechunk, ())) == 1:
        return f"the argument {arguments[direct[0]]}"
    seen, todo = set(), [name]
    while todo:
        for d in deps.get(todo.pop(), ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    read = sorted({arguments[d] for d in seen if d in arguments})
    return f"a value computed from {', '.join(read)}" if read else "a value computed from no argument"
