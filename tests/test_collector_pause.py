"""Python's cyclic collector is paused while coarsen_nb builds a module and while Numba compiles one
(coarsen_nb/collector_pause.py), resumed after, and left alone where the user turned it off."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import coarsen_nb as cn
from coarsen_nb import specialize
from coarsen_nb.collector_pause import collector_paused
from coarsen_nb.phi import gate as gate_module

SOURCE = "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s += x[i] * x[i]\n    return s\n"


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_block_runs_without_the_collector_and_it_is_on_again_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_on_again_after_a_block_that_raised(collector_on):
    with pytest.raises(ZeroDivisionError), collector_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off(collector_on):
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_front_end_and_the_pipeline_run_with_the_collector_paused(collector_on, monkeypatch):
    seen: dict[str, bool] = {}
    gate, generate = gate_module.gate, specialize._generate

    def gate_watched(*args, **kwargs):
        seen["front end"] = gc.isenabled()
        return gate(*args, **kwargs)

    def generate_watched(*args, **kwargs):
        seen["pipeline"] = gc.isenabled()
        return generate(*args, **kwargs)

    monkeypatch.setattr(gate_module, "gate", gate_watched)
    monkeypatch.setattr(specialize, "_generate", generate_watched)
    f = cn.coarsen(SOURCE, backend="numpy")
    x = np.array([1.0, 2.0, 3.0])
    assert f.grad(x) == pytest.approx(2 * x)        # (the gradient of Σ x_i², independent of the pause)
    assert seen == {"front end": False, "pipeline": False}
    assert gc.isenabled()


def test_numba_compiles_with_the_collector_paused(collector_on, monkeypatch, tmp_path):
    from numba.core import event

    monkeypatch.setenv("COARSEN_NB_CACHE", str(tmp_path))       # (a cold cache: Numba compiles, never loads)

    during: list[bool] = []

    class Watch(event.Listener):
        def on_start(self, ev):
            during.append(gc.isenabled())

        def on_end(self, ev):
            pass

    f = cn.coarsen(SOURCE, backend="numba")
    x = np.array([1.0, 2.0, 3.0])
    with event.install_listener("numba:compile", Watch()):
        got = f.grad(x)
    assert np.allclose(got, 2 * x)
    assert during and not any(during)     # (every function Numba compiled for the call: the entry and callees)
    assert gc.isenabled()


class _Cycle:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


def _collections_during(block) -> list[int]:
    """The generations the collector collected while ``block()`` ran (``gc.callbacks``)."""
    seen: list[int] = []

    def watch(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(watch)
    try:
        block()
    finally:
        gc.callbacks.remove(watch)
    return seen


def test_a_pause_that_kept_past_the_young_threshold_ends_with_one_collection_of_the_two_younger_generations(
        collector_on):
    """The block's garbage cycles are freed when the block ends (not at some later allocation), by one
    collection of generation 1 (the young one it would have been plus the middle one), after which the young
    and middle generations are empty (their counts ~0): the survivors went straight to the oldest generation."""
    import weakref

    kept: list = []

    def block():
        with collector_paused():
            garbage = _Cycle()
            kept.append(weakref.ref(garbage))
            del garbage
            kept.extend([k] for k in range(5 * gc.get_threshold()[0]))      # (survivors the collector tracks)
            assert kept[0]() is not None          # (paused: nothing collected it yet)
    gc.collect()
    assert _collections_during(block) == [1]
    young, middle, _ = gc.get_count()
    assert kept[0]() is None
    assert middle == 0 and young < 10           # (a few allocations since: the callbacks' own)


def test_a_short_pause_leaves_the_collections_to_the_collector(collector_on):
    """A block that allocated less than the young generation's threshold does not collect on its way out."""
    gc.collect()

    def block():
        with collector_paused():
            [1.0, 2.0]  # noqa: B018
    assert _collections_during(block) == []


def test_a_pause_collects_nothing_where_automatic_collection_is_off_by_threshold(collector_on):
    """``gc.set_threshold(0)`` turns automatic collection off: the pause does not collect for it either."""
    was = gc.get_threshold()
    gc.set_threshold(0)
    try:
        def block():
            with collector_paused():
                [[k] for k in range(5000)]  # noqa: B018
        assert _collections_during(block) == []
    finally:
        gc.set_threshold(*was)
