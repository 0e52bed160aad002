"""The work a chunk repeats before its sum over the records (issue 18's chunk sums).

:mod:`coarsen_nb.dask_chunk_sums` takes a function whose result is a sum over its records; the steps of
its plan before that sum run again in every chunk (the chunk runs the whole function's module).  That is
right for what the other arguments alone decide (gmm's mixture weights from its logits), and wrong for
what the records or their number decide (a mean of the records, an array of their length): each chunk
would compute its own.  :class:`BeforeTheSum` follows, step by step, which parameters each plan name is
computed from, and says in words where such a step reads the records.
Shape reads (``len(x)``, ``X.shape[0]``), which a chunk answers with its own rows' number, are read by
:func:`shape_read`.
"""

from __future__ import annotations

from coarsen_nb import ir


class BeforeTheSum:
    """What each plan name is computed from (the parameters, their data or their lengths), for the work a
    chunk repeats before its sum: an opaque primitive (gmm's ``np.zeros(k)``) or an SOI's array (gmm's
    ``log_w`` from its ``logits``) on the other arguments is the same in every chunk, so each chunk may compute
    it again; one computed from the records, or from their number, would be the chunk's own (refused)."""

    def __init__(self, params):
        self.params = set(params)
        self.sources: dict[str, set] = {}       # name -> the parameters it is computed from
        self.opaque: list = []                  # the primitives that are not shape reads
        self.arrays: set = set()                # the names later SOIs read as arrays

    def note(self, name: str, used) -> None:
        self.sources[name] = set().union(*({u} & self.params | self.sources.get(u, set()) for u in used))

    def note_kernel(self, k) -> None:
        used = set(k.scalars.values()) | {r.array for r in k.reads} | set(k.arrays.values())
        self.arrays |= {r.array for r in k.reads if r.array not in self.params} | set(k.arrays.values())
        for out in k.exprs():
            self.note(out, used)

    def of_records(self, records, say, lanes=None) -> str:
        """Why the work before the sum reads ``records`` or their number (empty: it does not).  A name
        ``lanes`` (:class:`~coarsen_nb.dask_chunk_lanes.Lanes`) finds lane-wise in them is each chunk's own
        part (``theta = theta0.copy()``), computed right by the chunk."""
        def own(name: str) -> bool:
            return lanes is not None and lanes.lane_wise(name, records)

        for step in self.opaque:
            if self.sources.get(step.name, set()) & set(records) and not own(step.name):
                return (f"an operation between its SOIs ({say(step.name)}, line {step.line}) is computed from "
                        f"its records {', '.join(records)} or their number")
        for name in sorted(self.arrays):
            if self.sources.get(name, set()) & set(records) and not own(name):
                return f"it computes the array {say(name)} from its records {', '.join(records)} before its sum"
        return ""


def shape_read(step, params, lengths: dict, shapes: dict, say) -> str:
    """Note what the shape read ``step`` (a primitive of the plan) gives (a length of a first axis, a shape);
    a refusal otherwise (``say``: dask_chunk_words.Said, the user's names)."""
    e = step.expr
    if isinstance(e, ir.Attr) and e.attr == "shape" and isinstance(e.value, ir.Name) and e.value.id in params:
        shapes[step.name] = e.value.id
    elif isinstance(e, ir.Call) and e.func == "unpack_shape" and isinstance(e.args[0], ir.Name) \
            and e.args[0].id in shapes:
        shapes[step.name] = shapes[e.args[0].id]
    elif isinstance(e, ir.Call) and e.func == "len" and len(e.args) == 1 and isinstance(e.args[0], ir.Name) \
            and e.args[0].id in params:
        lengths[step.name] = e.args[0].id
    elif isinstance(e, ir.Index) and isinstance(e.value, ir.Name) and e.value.id in shapes \
            and len(e.index) == 1 and isinstance(e.index[0], ir.Const):
        if e.index[0].value == 0:
            lengths[step.name] = shapes[e.value.id]
        # (another axis's length is the same in every chunk: the records are cut along the first only)
    else:
        return f"an operation between its SOIs ({say(step.name)}, line {step.line}) is not a shape read"
    return ""
