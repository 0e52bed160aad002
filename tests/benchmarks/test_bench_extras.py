"""``coarsen-nb bench`` without its extras, and where it writes.

The README advertises ``coarsen-nb bench --quick``; it crashed on an install
without the ``bench`` extras (tqdm first, then matplotlib), and wrote its
results next to the installed package.  Here the extras are made unimportable
(``sys.modules[name] = None``) in this process, where the progress bar and
the plot are made; the measurements themselves run in worker processes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from coarsen_nb.benchmarks import cli
from coarsen_nb.benchmarks.measure import Config
from coarsen_nb.kernels import KERNELS

FAST = Config(timeout_s=30.0, budget_s=0.01, target_repeat_s=0.0005, min_repeats=1, max_repeats=3,
              memory_max_call_s=1.0)


def test_bench_runs_without_tqdm_and_matplotlib_and_says_which_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    res = cli.run_benchmarks({"horner_fit": KERNELS["horner_fit"]}, [], FAST, tmp_path, quick=True,
                             progress=True, log_path=str(tmp_path / "workers.log"))
    err = capsys.readouterr().err
    notes = [ln for ln in err.splitlines() if ln.startswith("note: ")]
    assert any("tqdm" in ln for ln in notes) and any("matplotlib" in ln for ln in notes)
    assert all("coarsen-nb[bench]" in ln for ln in notes) and len(notes) == 2
    assert res["plot"] is None and not list(tmp_path.glob("*.png"))
    records = json.loads(res["json"].read_text())["records"]
    assert [r["status"] for r in records] == ["ok"]   # the hand-written baseline was measured
    md = res["markdown"].read_text()
    assert "horner_fit" in md and "![gradient time vs size]" not in md


def test_results_go_to_the_current_directory_outside_a_source_checkout(monkeypatch, tmp_path):
    assert cli.build_parser().parse_args([]).out is None
    checkout = Path(cli.__file__).resolve().parent
    assert (checkout.parents[1] / "pyproject.toml").is_file()   # these tests run from a source checkout
    assert cli.default_out() == checkout
    installed = tmp_path / "site-packages" / "coarsen_nb" / "benchmarks"
    installed.mkdir(parents=True)
    monkeypatch.setattr(cli, "__file__", str(installed / "cli.py"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert cli.default_out() == work
