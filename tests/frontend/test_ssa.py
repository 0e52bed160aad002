"""CFG → SSA: the SSA form means what the Python function means, and is well formed.

Oracles: the plain Python function (run on the same inputs), an independent
SSA checker written here (its own dominators, from the textbook data-flow
equations), golden text read by a person, and hand-made broken IR that
``verify`` must reject.

Regenerate a golden file only after reading the new text through:
``python -c "from coarsen_nb.frontend.parse import parse; from coarsen_nb.frontend.ssa import to_ssa;
print(to_ssa(parse(open('tests/frontend/golden/horner.py').read())))"``
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest
from corpus import CORPUS, CORPUS_IDS
from hypothesis import HealthCheck, given, settings
from program_gen import program_cases, run_source
from ssa_interp import assert_same, run_ir

from coarsen_nb import ir
from coarsen_nb.frontend.parse import parse
from coarsen_nb.frontend.ssa import VerifyError, to_ssa, verify

GOLDEN = Path(__file__).parent / "golden"
SEEDS = range(5)


# ---------------------------------------------------------------- an independent SSA check


def _dominator_sets(fn: ir.Function) -> dict[str, set[str]]:
    """dom(entry) = {entry}; dom(b) = {b} ∪ ⋂ dom(p) over predecessors p, to a fixed point."""
    labels = {b.label for b in fn.blocks}
    preds = fn.predecessors()
    dom = {b: set(labels) for b in labels}
    dom[fn.entry] = {fn.entry}
    changed = True
    while changed:
        changed = False
        for b in labels - {fn.entry}:
            new = {b} | set.intersection(*(dom[p] for p in preds[b])) if preds[b] else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def _check_ssa(fn: ir.Function) -> None:
    """Single assignment, φ arity, and every use dominated by its definition."""
    defs: dict[str, tuple[str, int]] = {p: (fn.entry, -2) for p in fn.params}
    for b in fn.blocks:
        for p in b.phis:
            assert p.target not in defs, f"{p.target} assigned twice"
            defs[p.target] = (b.label, -1)
        for k, s in enumerate(b.stmts):
            assert s.target not in defs, f"{s.target} assigned twice"
            defs[s.target] = (b.label, k)
    dom = _dominator_sets(fn)
    preds = fn.predecessors()

    def dominated(name: str, block: str, pos: int) -> bool:
        db, dpos = defs[name]
        return dpos < pos if db == block else db in dom[block]

    for b in fn.blocks:
        for p in b.phis:
            assert sorted(lbl for lbl, _ in p.args) == sorted(preds[b.label]), f"{b.label}: {p}"
            for lbl, v in p.args:
                for u in ir.names_used(v):
                    assert dominated(u, lbl, 10**9), f"{b.label}: {p}: {u} not available at the end of {lbl}"
        for k, s in enumerate(b.stmts):
            for u in ir.names_used(s.value):
                assert dominated(u, b.label, k), f"{b.label}: {s}: {u} not dominated"
        term_value = b.term.cond if isinstance(b.term, ir.Branch) else getattr(b.term, "value", None)
        for u in ir.names_used(term_value) if term_value is not None else []:
            assert dominated(u, b.label, len(b.stmts)), f"{b.label}: {b.term}: {u} not dominated"


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_corpus_ssa_verifies(entry):
    cfg = parse(entry.fn)
    ssa = to_ssa(cfg)
    assert ssa.ssa and not cfg.ssa
    verify(ssa)
    _check_ssa(ssa)
    assert ssa.params == cfg.params and ssa.name == cfg.name and ssa.entry == cfg.entry
    # Same control flow: SSA conversion adds φs and renames, never moves edges.
    cfg_succ = {b.label: b.successors() for b in cfg.blocks}
    for b in ssa.blocks:
        assert b.successors() == cfg_succ[b.label]


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_corpus_ssa_runs_like_python(entry):
    ssa = to_ssa(parse(entry.fn))
    for seed in SEEDS:
        args = entry.make_args(np.random.default_rng(seed))
        assert_same(run_ir(ssa, args), entry.fn(*args), f"{entry.name}, seed {seed}")


@pytest.mark.parametrize("entry", CORPUS, ids=CORPUS_IDS)
def test_corpus_ssa_twice_is_stable(entry):
    # Converting the same CFG twice gives the same text: names are deterministic.
    cfg = parse(entry.fn)
    assert str(to_ssa(cfg)) == str(to_ssa(cfg))


# ---------------------------------------------------------------- random programs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_cases())
def test_random_programs_round_trip(prog):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = run_source(prog.source, prog.args)
    cfg = parse(prog.source)
    ssa = to_ssa(cfg)
    verify(ssa)
    _check_ssa(ssa)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got_cfg = run_ir(cfg, prog.args)
        got_ssa = run_ir(ssa, prog.args)
    assert_same(got_cfg, ref, prog.source)
    assert_same(got_ssa, ref, prog.source)


# ---------------------------------------------------------------- golden text


@pytest.mark.parametrize("name", ["clamp_scale", "horner", "newton"])
def test_golden_ssa(name):
    source = (GOLDEN / f"{name}.py").read_text()
    expected = (GOLDEN / f"{name}.ssa.txt").read_text().rstrip("\n")
    assert str(to_ssa(parse(source))) == expected


# ---------------------------------------------------------------- verify rejects broken IR


def _fn(*blocks: ir.Block, params=("p",)) -> ir.Function:
    return ir.Function("f", params, blocks, blocks[0].label, ssa=True)


def _diamond(join_phis, join_stmts, then_stmts=(), else_stmts=()):
    """entry → (then | else) → join, branching on parameter p."""
    return _fn(
        ir.Block("entry", (), ir.Branch(ir.Name("p"), "then", "else")),
        ir.Block("then", tuple(then_stmts), ir.Jump("join")),
        ir.Block("else", tuple(else_stmts), ir.Jump("join")),
        ir.Block("join", tuple(join_stmts), ir.Return(ir.Name("r.1")), tuple(join_phis)),
    )


A, B = ir.Assign("a.1", ir.Const(1.0)), ir.Assign("a.2", ir.Const(2.0))
GOOD_PHI = ir.Phi("a.3", (("then", ir.Name("a.1")), ("else", ir.Name("a.2"))))
RET = ir.Assign("r.1", ir.Name("a.3"))


def test_verify_accepts_the_well_formed_diamond():
    # The control for the negative tests below: each breaks exactly one thing of this function.
    fn = _diamond([GOOD_PHI], [RET], [A], [B])
    verify(fn)
    _check_ssa(fn)
    assert run_ir(fn, (True,)) == 1.0 and run_ir(fn, (False,)) == 2.0


def test_verify_rejects_double_assignment():
    twice = ir.Assign("a.1", ir.Const(2.0))          # `else` assigns a.1 again
    phi = ir.Phi("a.3", (("then", ir.Name("a.1")), ("else", ir.Name("a.1"))))
    _assert_rejected(_diamond([phi], [RET], [A], [twice]))


def test_verify_rejects_double_assignment_in_one_block():
    fn = _fn(ir.Block("entry", (ir.Assign("a.1", ir.Const(1.0)), ir.Assign("a.1", ir.Const(2.0))),
                      ir.Return(ir.Name("a.1"))))
    _assert_rejected(fn)


def test_verify_rejects_assigning_a_parameter():
    fn = _fn(ir.Block("entry", (ir.Assign("p", ir.Const(1.0)),), ir.Return(ir.Name("p"))))
    _assert_rejected(fn)


def test_verify_rejects_use_not_dominated():
    # join reads a.1, defined only on the `then` path.
    _assert_rejected(_diamond([], [ir.Assign("r.1", ir.Name("a.1"))], [A], [B]))


def test_verify_rejects_use_before_definition_in_a_block():
    fn = _fn(ir.Block("entry", (ir.Assign("b.1", ir.Name("a.1")), ir.Assign("a.1", ir.Const(1.0))),
                      ir.Return(ir.Name("b.1"))))
    _assert_rejected(fn)


def test_verify_rejects_use_in_terminator_not_dominated():
    fn = _diamond([GOOD_PHI], [RET], [A], [B])
    blocks = list(fn.blocks)
    blocks[3] = dataclasses.replace(blocks[3], term=ir.Return(ir.Name("a.2")))
    _assert_rejected(dataclasses.replace(fn, blocks=tuple(blocks)))


def test_verify_rejects_phi_operand_not_available_at_its_predecessor():
    # The operand for `then` is a.2, which only `else` defines.
    phi = ir.Phi("a.3", (("then", ir.Name("a.2")), ("else", ir.Name("a.2"))))
    _assert_rejected(_diamond([phi], [RET], [A], [B]))


@pytest.mark.parametrize("args", [
    (("then", ir.Name("a.1")),),                                                   # too few
    (("then", ir.Name("a.1")), ("else", ir.Name("a.2")), ("entry", ir.Const(0.0))),  # too many
    (("then", ir.Name("a.1")), ("then", ir.Name("a.1"))),                          # wrong label
], ids=["too-few", "too-many", "wrong-pred"])
def test_verify_rejects_wrong_phi_arity(args):
    _assert_rejected(_diamond([ir.Phi("a.3", args)], [RET], [A], [B]))


def test_verify_rejects_non_ssa_function():
    fn = dataclasses.replace(_diamond([GOOD_PHI], [RET], [A], [B]), ssa=False)
    with pytest.raises(VerifyError):
        verify(fn)


def test_verify_error_is_an_assertion_error():
    assert issubclass(VerifyError, AssertionError)


def _assert_rejected(fn: ir.Function) -> None:
    """Both ``verify`` and the independent checker above reject ``fn``."""
    with pytest.raises(VerifyError):
        verify(fn)
    with pytest.raises(AssertionError):
        _check_ssa(fn)


def _corpus_ssa(name):
    return to_ssa(parse(next(e.fn for e in CORPUS if e.name == name)))


@pytest.mark.parametrize("name", ["horner", "break_first_negative", "pairwise_energy", "bgd_hyperopt"])
def test_verify_catches_mutations_of_real_ssa(name):
    """Break real SSA output in each of the three ways; verify must notice every one."""
    ssa = _corpus_ssa(name)
    verify(ssa)
    blocks = list(ssa.blocks)
    # 1. double assignment: the last statement of the function re-assigns the first target.
    first = next(s for b in blocks for s in b.stmts)
    k = max(i for i, b in enumerate(blocks) if b.stmts)
    b = blocks[k]
    dup = (*b.stmts[:-1], dataclasses.replace(b.stmts[-1], target=first.target))
    broken = list(blocks)
    broken[k] = dataclasses.replace(b, stmts=dup)
    _assert_rejected(dataclasses.replace(ssa, blocks=tuple(broken)))
    # 2. wrong φ arity: drop the last operand of the first φ.
    k = next(i for i, b in enumerate(blocks) if b.phis)
    b = blocks[k]
    phi = dataclasses.replace(b.phis[0], args=b.phis[0].args[:-1])
    broken = list(blocks)
    broken[k] = dataclasses.replace(b, phis=(phi, *b.phis[1:]))
    _assert_rejected(dataclasses.replace(ssa, blocks=tuple(broken)))
    # 3. use not dominated: the entry block reads a value defined in the loop body.
    body_value = next(s.target for b in blocks[1:] if not b.phis for s in b.stmts)
    entry = blocks[0]
    broken = list(blocks)
    broken[0] = dataclasses.replace(entry, stmts=(*entry.stmts, ir.Assign("z.99", ir.Name(body_value))))
    _assert_rejected(dataclasses.replace(ssa, blocks=tuple(broken)))
