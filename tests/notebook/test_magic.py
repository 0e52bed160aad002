"""``%%coarsen`` in a real IPython shell, against the real compiler.

The oracle for gradients is central finite differences of the plain Python
function, computed here (not by ``--check``, which is under test too).
"""

from __future__ import annotations

import numpy as np
import pytest
from IPython import get_ipython
from IPython.core.magic_arguments import parse_argstring
from IPython.testing.globalipapp import start_ipython

from coarsen_nb.notebook.bound import Bound
from coarsen_nb.notebook.magic import CoarsenCellError, register

SOFTPLUS_SUM = """\
def {name}(x, t):
    s = 0.0
    for i in range(len(x)):
        s += np.log(1.0 + np.exp(t * x[i]))
    return s * t
"""

BAD_CELL = """\
def broken(x):
    try:
        return np.log(x)
    except ValueError:
        return 0.0
"""


@pytest.fixture
def shell():
    """The global test shell with ``%%coarsen`` freshly registered (fresh counters)."""
    start_ipython()  # once per process; later calls return None
    ip = get_ipython()
    ip.run_cell("import numpy as np")
    return ip, register(ip)


def _fd(fn, args, pos, h=1e-6):
    """Central differences of ``fn`` in argument ``pos`` (scalar or array)."""
    x = np.asarray(args[pos], dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        moved = [list(args), list(args)]
        for sign, a in zip((1, -1), moved, strict=True):
            y = x.copy()
            y[i] += sign * h
            a[pos] = y if x.ndim else float(y)
        grad[i] = (fn(*moved[0]) - fn(*moved[1])) / (2 * h)
    return grad if x.ndim else float(grad)


def test_every_option_is_parsed_and_documented(shell):
    _, magics = shell
    args = parse_argstring(
        magics.coarsen,
        "--wrt a,b --backend cupy --max-soi 3 --reuse 2 --per-block --parallel --export out.py --overwrite "
        "--no-widgets --check --force --name g",
    )
    assert args.wrt == ("a", "b") and args.backend == "cupy"
    assert (args.max_soi, args.reuse, args.per_block, args.parallel) == (3, 2, True, True)
    assert args.export == "out.py" and args.overwrite and args.name == "g"
    assert args.no_widgets and args.check and args.force
    doc = magics.coarsen.__doc__  # what `%%coarsen?` shows
    for option in ("--wrt", "--backend", "--max-soi", "--reuse", "--per-block", "--parallel", "--export", "--overwrite",
                   "--no-widgets", "--check", "--force", "--name"):
        assert option in doc


def test_function_is_bound_and_its_gradient_matches_finite_differences(shell, capsys):
    ip, _ = shell
    cell = SOFTPLUS_SUM.format(name="softsum")
    result = ip.run_cell_magic("coarsen", "--wrt x,t --no-widgets", cell)
    assert result is None
    f = ip.user_ns["softsum"]
    assert isinstance(f, Bound) and f.name == "softsum" and tuple(f.wrt) == ("x", "t")
    plain = f.reference
    x, t = np.array([0.3, -1.2, 2.0, 0.7]), 0.8
    np.testing.assert_allclose(f(x, t), plain(x, t), rtol=1e-12)
    gx, gt = f.grad(x, t)
    np.testing.assert_allclose(gx, _fd(plain, (x, t), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gt, _fd(plain, (x, t), 1), rtol=1e-6, atol=1e-8)
    assert "softsum" in capsys.readouterr().out  # the text summary names the function


def test_check_prints_a_finite_difference_report_on_first_grad(shell, capsys):
    ip, _ = shell
    ip.run_cell_magic("coarsen", "--wrt t --check --no-widgets", SOFTPLUS_SUM.format(name="checked"))
    capsys.readouterr()
    f = ip.user_ns["checked"]
    f.grad(np.array([0.1, 0.2]), 1.5)
    report = capsys.readouterr().out
    assert "central differences" in report and "all gradients agree" in report
    assert f.check_report.ok
    f.grad(np.array([0.1, 0.2]), 1.5)
    assert capsys.readouterr().out == ""  # only the first call is checked


def test_rerun_hits_the_cache_and_force_or_new_options_recompile(shell):
    ip, magics = shell
    cell = SOFTPLUS_SUM.format(name="cached")
    ip.run_cell_magic("coarsen", "--wrt t --no-widgets", cell)
    assert (magics.compilations, magics.cache_hits) == (1, 0)
    ip.run_cell_magic("coarsen", "--wrt t --no-widgets", cell)
    assert (magics.compilations, magics.cache_hits) == (1, 1)
    ip.run_cell_magic("coarsen", "--wrt t --no-widgets --check", cell)  # views only: still cached
    assert (magics.compilations, magics.cache_hits) == (1, 2)
    ip.run_cell_magic("coarsen", "--wrt t --no-widgets --force", cell)
    ip.run_cell_magic("coarsen", "--wrt t --max-soi 1 --no-widgets", cell)
    ip.run_cell_magic("coarsen", "--wrt t --no-widgets", cell + "\n")  # the text changed
    assert (magics.compilations, magics.cache_hits) == (4, 2)


def test_coarsen_error_is_shown_short_with_caret_and_no_traceback(shell, capsys):
    ip, _ = shell
    result = ip.run_cell("%%coarsen --no-widgets\n" + BAD_CELL)
    assert isinstance(result.error_in_exec, CoarsenCellError)
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "CoarsenError" in text and "^" in text and "line 3" in text  # the cell's line 3: `try:`
    assert "Traceback" not in text and "magic.py" not in text


def test_export_option_writes_a_standalone_module(shell, tmp_path):
    ip, _ = shell
    target = tmp_path / "softsum_module.py"
    ip.run_cell_magic("coarsen", f"--wrt t --no-widgets --export {target}", SOFTPLUS_SUM.format(name="exp"))
    assert not target.exists()  # code is generated on the first call, for its argument types
    ip.user_ns["exp"].grad(np.array([0.5, 1.5]), 0.3)
    text = target.read_text()
    compile(text, str(target), "exec")
    assert "import coarsen_nb" not in text and "from coarsen_nb" not in text
    # Re-running the cell (a cache hit, already specialized) rewrites its own file at once.
    mtime = target.stat().st_mtime_ns
    ip.run_cell_magic("coarsen", f"--wrt t --no-widgets --export {target}", SOFTPLUS_SUM.format(name="exp"))
    assert target.read_text() == text and target.stat().st_mtime_ns >= mtime
    # A new specialization (an int array for x) rewrites it too, without --overwrite: it is the cell's file.
    ip.user_ns["exp"].grad(np.array([1, 2]), 0.3)
    assert target.read_text() == ip.user_ns["exp"].source != text


def test_export_refuses_to_replace_an_existing_file_without_overwrite(shell, tmp_path):
    ip, _ = shell
    target = tmp_path / "mine.py"
    target.write_text("# the user's own file\n")
    cell = SOFTPLUS_SUM.format(name="noclobber")
    result = ip.run_cell(f"%%coarsen --wrt t --no-widgets --export {target}\n" + cell)
    assert isinstance(result.error_in_exec, CoarsenCellError)
    assert "--overwrite" in str(result.error_in_exec) and str(target) in str(result.error_in_exec)
    assert target.read_text() == "# the user's own file\n"
    # A file the magic wrote, edited since by the user, is the user's again.
    ip.run_cell_magic("coarsen", f"--wrt t --no-widgets --export {target} --overwrite", cell)
    ip.user_ns["noclobber"].grad(np.array([0.5, 1.5]), 0.3)
    assert "def noclobber_grad" in target.read_text()
    target.write_text("# edited\n")
    result = ip.run_cell(f"%%coarsen --wrt t --no-widgets --export {target}\n" + cell)
    assert isinstance(result.error_in_exec, CoarsenCellError) and target.read_text() == "# edited\n"


def test_export_keeps_a_file_edited_after_the_cell_ran_and_warns(shell, tmp_path):
    ip, _ = shell
    target = tmp_path / "later.py"
    ip.run_cell_magic("coarsen", f"--wrt t --no-widgets --export {target}", SOFTPLUS_SUM.format(name="later"))
    f = ip.user_ns["later"]
    f.grad(np.array([0.5, 1.5]), 0.3)
    assert "def later_grad" in target.read_text()
    target.write_text("# edited after the cell ran\n")
    with pytest.warns(UserWarning, match="--overwrite"):
        gt = f.grad(np.array([1, 2]), 0.3)   # a new specialization: the call still answers
    assert gt == pytest.approx(_fd(f.reference, (np.array([1.0, 2.0]), 0.3), 1), rel=1e-6)
    assert target.read_text() == "# edited after the cell ran\n"


def test_cache_sees_a_helper_redefined_in_another_cell(shell):
    ip, magics = shell
    ip.run_cell("def helper_sq(u):\n    return u * u\n")
    cell = "def uses_helper(a):\n    return helper_sq(a) + 1.0\n"
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    assert ip.user_ns["uses_helper"].value_and_grad(3.0) == (10.0, 6.0)
    ip.run_cell("def helper_sq(u):\n    return 10.0 * u\n")
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    f = ip.user_ns["uses_helper"]
    value, grad = f.value_and_grad(3.0)
    # the oracle: the plain Python function the cell defined, against today's helper
    assert value == f.reference(3.0) == 31.0
    assert grad == pytest.approx(_fd(f.reference, (3.0,), 0)) and grad == 10.0
    assert magics.compilations == 2


def test_cache_sees_a_changed_global_constant(shell):
    ip, magics = shell
    ip.run_cell("K_SCALE = 2.0")
    cell = "def scaled(a):\n    return K_SCALE * a\n"
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    assert ip.user_ns["scaled"].value_and_grad(3.0) == (6.0, 2.0)
    ip.run_cell("K_SCALE = 5.0")
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    f = ip.user_ns["scaled"]
    assert f.value_and_grad(3.0) == (f.reference(3.0), pytest.approx(_fd(f.reference, (3.0,), 0))) == (15.0, 5.0)
    assert (magics.compilations, magics.cache_hits) == (2, 0)


def test_cache_still_hits_when_helpers_and_globals_are_unchanged(shell):
    ip, magics = shell
    ip.run_cell("K_OFFSET = 0.5\ndef helper_cube(u):\n    return u * u * u\n")
    cell = "def both(a):\n    return helper_cube(a) + K_OFFSET * a\n"
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    assert (magics.compilations, magics.cache_hits) == (1, 1)
    # the helper's cell run again unchanged: a new function object with the same source
    ip.run_cell("K_OFFSET = 0.5\ndef helper_cube(u):\n    return u * u * u\n")
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    assert (magics.compilations, magics.cache_hits) == (1, 2)
    assert ip.user_ns["both"](2.0) == 9.0


def test_error_line_numbers_count_from_the_top_of_the_cell(shell, capsys):
    ip, _ = shell
    cell = "import math\n\nSCALE = 2.0\n" + BAD_CELL
    result = ip.run_cell("%%coarsen --no-widgets\n" + cell)
    # The oracle: where `try:` is in the cell as the notebook shows it, the `%%coarsen` line being line 1.
    shown = ("%%coarsen --no-widgets\n" + cell).splitlines()
    line = next(k for k, text in enumerate(shown, start=1) if text.strip() == "try:")
    assert result.error_in_exec.error.line == line == 6
    assert f"line {line}," in capsys.readouterr().out


def test_usage_line_names_the_cell_magic_and_help_shows_the_defaults(shell):
    from coarsen_nb.soi.select import DEFAULT_REUSE

    _, magics = shell
    doc = magics.coarsen.__doc__  # what `%%coarsen?` shows
    usage = doc.split("::", 1)[1].strip().splitlines()[0]
    assert usage.startswith("%%coarsen [")
    flat = " ".join(doc.split())
    assert "every float parameter" in flat and "(default: all)" not in flat
    assert "(default: no cap)" in flat and f"(default: {DEFAULT_REUSE})" in flat


def test_cache_sees_a_global_read_inside_a_helper_of_another_cell(shell):
    ip, magics = shell
    ip.run_cell("RATE = 3.0\ndef helper_rate(u):\n    return RATE * u * u\n")
    cell = "def through_helper(a):\n    return helper_rate(a) - a\n"
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    assert ip.user_ns["through_helper"].value_and_grad(2.0) == (10.0, 11.0)
    ip.run_cell("RATE = 0.5")
    ip.run_cell_magic("coarsen", "--no-widgets", cell)
    f = ip.user_ns["through_helper"]
    value, grad = f.value_and_grad(2.0)
    assert value == f.reference(2.0) == 0.0
    assert grad == pytest.approx(_fd(f.reference, (2.0,), 0)) and magics.compilations == 2
