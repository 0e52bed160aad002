"""The notebook as a person sees it: JupyterLab in headless Chromium.

Starts JupyterLab on 127.0.0.1 (a free port, a token, its own config, runtime
and IPython dirs, a temporary root holding a copy of quickstart.ipynb), runs
every cell, and checks what only a browser can show: MathJax typeset the
derivatives, Graphviz-in-WebAssembly drew the SOI graph, moving the L slider
redrew it, and the Export button wrote the module.  Screenshots go to
``test-artifacts/``.

Chromium is Debian's (``apt-get install chromium``; ``.ci/run`` installs it).
Without it the test skips, except under CI, where a skip would hide a broken
setup, so it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
QUICKSTART = REPO / "demo_notebooks" / "quickstart.ipynb"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
EXPORT_NAME = "exported_from_browser.py"


def _require_browser():
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "Python Playwright is not installed (pip install playwright)"
    if reason and os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser test must run")
    if reason:
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyter_lab(base: Path):
    """Run JupyterLab rooted at ``base / "root"``; yields (url, token, root)."""
    root, home = base / "root", base / "home"
    # No news or update checks (they reach for the network and pop up toasts), and
    # start the notebook's kernel without asking.
    for plugin, values in (
        ("apputils-extension/notification", {"fetchNews": "false", "checkForUpdates": False}),
        ("notebook-extension/tracker", {"autoStartDefaultKernel": True}),
    ):
        path = home / "settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = _free_port(), os.urandom(16).hex()
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
    )
    log = (base / "jupyter.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            f"--LabApp.user_settings_dir={home / 'settings'}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            "--allow-root", "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited: {(base / 'jupyter.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not answer within 60 s") from None
                time.sleep(0.5)
        yield url, token, root
    finally:
        proc.send_signal(signal.SIGINT)  # a clean shutdown also stops the kernels it started
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def run_all_cells(page, timeout_ms: int = 120_000) -> None:
    """Menu Run ▸ Run All Cells, then wait until no cell shows ``[*]``."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-InputArea-prompt')];
            return prompts.length > 0 && prompts.every(p => !p.textContent.includes('*'))
                && prompts.some(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=timeout_ms,
    )


def _graph_nodes(view) -> list[str]:
    return view.locator(".coarsen-graph svg g.node text").all_text_contents()


def _tab(view, title: str) -> None:
    view.locator(".lm-TabBar-tab", has_text=title).first.click()


def test_quickstart_in_jupyterlab(tmp_path):
    _require_browser()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    (tmp_path / "root").mkdir()
    shutil.copy(QUICKSTART, tmp_path / "root" / "quickstart.ipynb")

    with jupyter_lab(tmp_path) as (url, token, root), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            page.goto(f"{url}/lab/tree/quickstart.ipynb?token={token}")
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            # Should the settings above not apply, answer the kernel dialog like a person.
            with contextlib.suppress(PlaywrightTimeout):
                page.locator(".jp-Dialog button", has_text="Select").click(timeout=5_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
            run_all_cells(page, timeout_ms=40_000)
            errors = page.locator("[data-mime-type='application/vnd.jupyter.error']")
            assert errors.count() == 0, errors.all_text_contents()

            view = page.locator(".coarsen-view").first
            view.scroll_into_view_if_needed()
            view.locator(".coarsen-derivatives mjx-container").first.wait_for()
            page.screenshot(path=ARTIFACTS / "browser-1-derivatives.png")

            _tab(view, "SOI graph")
            view.locator(".coarsen-graph svg g.node").first.wait_for()
            before = _graph_nodes(view)
            view.screenshot(path=ARTIFACTS / "browser-2-soi-graph.png")

            _tab(view, "Tuning")
            handle = view.locator(".coarsen-L .noUi-handle").first
            handle.focus()
            handle.press("Home")  # L = 1: every operation its own SOI
            page.wait_for_function(
                "() => document.querySelector('.coarsen-view .coarsen-header').textContent.includes('L=1')"
            )
            view.locator(".coarsen-measure").click()  # quickstart called .grad, so it has arguments
            view.locator(".coarsen-speedup").wait_for()
            view.screenshot(path=ARTIFACTS / "browser-3-tuning.png")
            _tab(view, "SOI graph")
            deadline = time.monotonic() + 30
            while _graph_nodes(view) == before and time.monotonic() < deadline:
                page.wait_for_timeout(250)
            after = _graph_nodes(view)
            assert after != before, f"graph unchanged after L=1: {before}"
            view.screenshot(path=ARTIFACTS / "browser-4-soi-graph-L1.png")

            _tab(view, "Code")
            view.locator(".coarsen-export-name input").fill(EXPORT_NAME)
            view.locator(".coarsen-export").click()
            view.locator(".coarsen-exported").wait_for()
            view.screenshot(path=ARTIFACTS / "browser-5-export.png")
            exported = root / EXPORT_NAME
            assert exported.exists()
            text = exported.read_text()
            compile(text, str(exported), "exec")
            assert not re.search(r"^\s*(import|from)\s+coarsen_nb", text, re.M), "must stand alone"
        except Exception:
            page.screenshot(path=ARTIFACTS / "browser-failure.png", full_page=True)
            raise
        finally:
            browser.close()
