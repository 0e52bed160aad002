"""The ``coarsen-nb`` command on real files: what it prints, what it writes, how it refuses.

Most tests call :func:`coarsen_nb.cli.main` in-process (the same argv the
console script passes); one runs the declared ``coarsen-nb`` entry point in a
subprocess, for the exit status a shell sees.  The oracle for values and
gradients is the plain Python function, run by Python, and central finite
differences of it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from coarsen_nb.cli import main

PROGRAM = textwrap.dedent('''\
    import math

    import numpy as np


    def bump(a):
        return math.exp(-a * a) * (a + 2.0) + a ** 3


    def softsum(x, t):
        s = 0.0
        for i in range(len(x)):
            s += np.log(1.0 + np.exp(t * x[i]))
        return s * t


    def make_inputs(size, seed):
        return np.linspace(-1.0, 1.0, size), 0.7
''')

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    spec = importlib.util.spec_from_file_location("program_under_test", path)
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return path, plain


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _without_compile_status(err: str) -> list[str]:
    """stderr's lines less the compile status lines of :mod:`coarsen_nb.notebook.status`."""
    status = re.compile(r"coarsen_nb: (compiling \w+ with Numba …|\w+ (compiled by Numba|loaded from Numba's disk "
                        r"cache) in \d+\.\d s)$")
    return [ln for ln in err.splitlines() if not status.match(ln)]


def _number(out: str, label: str) -> float:
    line = next(ln for ln in out.splitlines() if ln.startswith(label))
    return float(re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", line)[-1])


def _refusal(rc: int, out: str, err: str, *needles: str) -> None:
    """Exit status 2, one ``coarsen-nb:`` line on stderr saying ``needles``, no traceback, nothing on stdout."""
    assert rc == 2, (out, err)
    assert out == "" and err.startswith("coarsen-nb: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


def test_compile_prints_the_value_and_gradient_python_and_finite_differences_give(program, capsys):
    path, plain = program
    rc, out, err = _run(capsys, f"{path}:bump", "--args", "0.3")
    assert rc == 0 and err == ""
    assert out.startswith(f"compiled bump() from {path}: ")
    h = 1e-6
    assert _number(out, "value") == pytest.approx(plain.bump(0.3), rel=1e-12)
    assert _number(out, "grad") == pytest.approx((plain.bump(0.3 + h) - plain.bump(0.3 - h)) / (2 * h), rel=1e-6)


def test_parallel_compiles_with_threads_and_is_refused_for_numpy(program, capsys, tmp_path):
    path, _ = program
    out_file = tmp_path / "softsum_threads.py"
    rc, out, err = _run(capsys, f"{path}:softsum", "--backend", "numba", "--parallel", "--export", out_file)
    # the only lines on stderr may be the "compiling … with Numba" status (shown once a notebook test in the
    # same process has installed it): nothing else, no warning or error
    assert rc == 0 and _without_compile_status(err) == [], err
    assert "Options: backend=numba, parallel=True," in out_file.read_text()
    rc, out, err = _run(capsys, f"{path}:softsum", "--backend", "numpy", "--parallel")
    assert rc == 1 and "parallel=True needs the numba backend" in err and "Traceback" not in err


def test_report_prints_every_stage_in_the_users_names(program, capsys):
    path, _ = program
    rc, out, _ = _run(capsys, f"{path}:softsum", "--report")   # arguments from make_inputs(size, seed)
    assert rc == 0
    for section in ("== SSA ==", "== gated ==", "== SOIs =="):
        assert section in out
    sois = out[out.index("== SOIs =="):]
    assert "SOI 1" in sois and " += " in sois
    # no LaTeX, no SSA versions: \bar{$ret.2} is dresult, x[$k1.2]#1 is x[k1]
    assert "\\bar" not in sois and "$" not in sois and not re.search(r"[A-Za-z_]\w*\.\d", sois)


def test_export_writes_a_standalone_module_with_the_same_gradient(program, capsys, tmp_path):
    path, plain = program
    out_path = tmp_path / "bump_grad.py"
    rc, out, _ = _run(capsys, f"{path}:bump", "--args", "0.3", "--export", out_path)
    assert rc == 0 and f"exported the generated module to {out_path}" in out
    text = out_path.read_text()
    assert "coarsen_nb" not in "\n".join(ln for ln in text.splitlines() if "import" in ln)
    namespace: dict = {}
    exec(compile(text, str(out_path), "exec"), namespace)
    h = 1e-6
    grad = namespace["bump_grad"](0.9)
    assert float(np.asarray(grad).ravel()[0]) == pytest.approx(
        (plain.bump(0.9 + h) - plain.bump(0.9 - h)) / (2 * h), rel=1e-6)


def test_export_refuses_an_existing_file_without_overwrite(program, capsys, tmp_path):
    path, _ = program
    out_path = tmp_path / "taken.py"
    out_path.write_text("# someone's file\n")
    _refusal(*_run(capsys, f"{path}:bump", "--args", "0.3", "--export", out_path), str(out_path), "--overwrite")
    assert out_path.read_text() == "# someone's file\n"
    rc, _, _ = _run(capsys, f"{path}:bump", "--args", "0.3", "--export", out_path, "--overwrite")
    assert rc == 0 and "def bump_grad(" in out_path.read_text()


def test_export_into_a_missing_directory_names_it(program, capsys, tmp_path):
    path, _ = program
    _refusal(*_run(capsys, f"{path}:bump", "--args", "0.3", "--export", tmp_path / "nowhere" / "m.py"),
             str(tmp_path / "nowhere"))


def test_target_without_a_function_name_is_refused(program, capsys):
    path, _ = program
    _refusal(*_run(capsys, path), "FILE.py:FUNC")


def test_missing_file_is_refused_in_one_line(capsys, tmp_path):
    _refusal(*_run(capsys, f"{tmp_path / 'absent.py'}:f", "--args", "1.0"), "no such file", "absent.py")


def test_missing_function_is_refused_naming_the_functions_defined(program, capsys):
    path, _ = program
    _refusal(*_run(capsys, f"{path}:nothere"), "no function 'nothere'", "bump", "softsum")


def test_a_name_that_is_not_a_function_is_refused(program, capsys):
    path, _ = program
    _refusal(*_run(capsys, f"{path}:math"), "math is a module, not a function")


@pytest.mark.parametrize("args, needle", [
    ("0.3, 0.5", "--args gives 2 value(s); bump(a) takes 1"),
    ("np.oness(3)", "AttributeError"),
    ("0.3 +", "SyntaxError"),
])
def test_wrong_args_are_refused_naming_args(program, capsys, args, needle):
    path, _ = program
    _refusal(*_run(capsys, f"{path}:bump", "--args", args), "--args", needle)


def test_make_inputs_with_another_signature_is_refused(capsys, tmp_path):
    path = tmp_path / "other.py"
    path.write_text("def f(x):\n    return x * x\n\n\ndef make_inputs(size):\n    return (1.0,)\n")
    _refusal(*_run(capsys, f"{path}:f"), "make_inputs(size)", "make_inputs(size, seed)", "--args")


def test_no_args_and_no_make_inputs_is_refused_not_guessed(capsys, tmp_path):
    # The old default, 1.0 for every parameter, is the wrong type for an array or a trip count.
    path = tmp_path / "plain.py"
    path.write_text("def total(x, n):\n    s = 0.0\n    for i in range(n):\n        s += x[i]\n    return s\n")
    _refusal(*_run(capsys, f"{path}:total"), "total(x, n) needs example arguments", "--args", "make_inputs")


def test_unsupported_construct_exits_1_with_line_and_caret(capsys, tmp_path):
    path = tmp_path / "unsupported.py"
    path.write_text("def f(x):\n    try:\n        return x\n    except ValueError:\n        return 0.0\n")
    rc, out, err = _run(capsys, f"{path}:f", "--args", "1.0")
    assert rc == 1 and out == ""
    assert err.startswith("coarsen-nb: unsupported construct 'try/except' at line 2") and "^" in err
    assert "Traceback" not in err


def test_help_shows_the_shared_defaults(capsys):
    from coarsen_nb import option_help

    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    bare = "".join(capsys.readouterr().out.split())   # argparse wraps lines, at spaces and after hyphens
    for text in (option_help.WRT, option_help.MAX_SOI, option_help.REUSE, option_help.OVERWRITE):
        assert "".join(text.split()) in bare


def test_console_script_entry_point_runs_and_exits_with_the_status(program, tmp_path):
    """The ``coarsen-nb`` entry point the package declares, run in a process of its own."""
    path, _ = program
    launch = ("import sys; from importlib.metadata import entry_points; "
              "sys.exit(entry_points(group='console_scripts', name='coarsen-nb')['coarsen-nb'].load()())")
    ok = subprocess.run([sys.executable, "-c", launch, f"{path}:bump", "--args", "0.3"],
                        capture_output=True, text=True, cwd=_ROOT, timeout=300)
    assert ok.returncode == 0 and ok.stdout.startswith("compiled bump()"), ok.stderr
    bad = subprocess.run([sys.executable, "-c", launch, f"{tmp_path / 'absent.py'}:f"],
                         capture_output=True, text=True, cwd=_ROOT, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("coarsen-nb: no such file") and "Traceback" not in bad.stderr


def test_demo_table_says_whether_each_check_passed_and_what_l_1_is(monkeypatch, capsys, tmp_path):
    import coarsen_nb.kernels as kernels

    monkeypatch.setattr(kernels, "KERNELS", {"piecewise_sum": kernels.KERNELS["piecewise_sum"]})
    rc = main(["demo", "--out", str(tmp_path / "demo")])
    out = capsys.readouterr().out
    assert rc == 0
    header = next(ln for ln in out.splitlines() if ln.startswith("kernel"))
    row = next(ln for ln in out.splitlines() if ln.startswith("piecewise_sum "))
    assert header.split()[2] == "check" and row.split()[2] == "ok"
    assert "operator-level AD" in out and "L = 1" in header
    assert (tmp_path / "demo" / "piecewise_sum_grad.py").is_file()
