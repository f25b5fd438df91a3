"""A learner's first minutes in a real browser: ``autograd-lab start``, JupyterLab in headless
Chromium, chapter 00 opened from the working folder, its cells run, the check cells' ✓ and ✗
read back from the page.

Needs Debian's ``chromium`` and the ``playwright`` Python package (which drives that Chromium;
no browser download). Run it alone with ``python3 -m pytest -m browser``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
import urllib.request

import nbformat
import pytest

from autograd_lab.course.authoring.notebooks import checkout_root, write_notebook
from tests.course.test_start import URL, Started, alive, free_port, jupyter_pids
from tests._console import cli_env

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
NOTEBOOK = "00_welcome.ipynb"
SOLVED, GRADED, UNTOUCHED = "ch00-center-rows-code", "ch00-center-rows", "ch00-pairwise-sq-dists"


def _requirements() -> str | None:
    if CHROMIUM is None:
        return "Chromium is not installed (Debian: apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except Exception as err:
        return f"the playwright package is not available ({err}; pip install playwright)"
    if not (checkout_root() / "course" / NOTEBOOK).exists():
        return f"course/{NOTEBOOK} is missing"
    return None


def cell_by_id(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def wait_for_idle_kernel(base: str, token: str, timeout: float) -> None:
    """Until the notebook's kernel has started and is idle (asked over Jupyter's REST API)."""
    request = urllib.request.Request(f"{base}/api/sessions",
                                     headers={"Authorization": f"token {token}"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(request, timeout=20) as response:
            sessions = json.loads(response.read())
        if any(s.get("kernel", {}).get("execution_state") == "idle" for s in sessions):
            return
        time.sleep(0.5)
    raise AssertionError(f"no idle kernel within {timeout} s")


def output_of(page, marker: str, until: str, timeout: float) -> str:
    """The output text of the code cell whose source contains ``marker``, once it shows ``until``
    (its output streams in line by line); what it showed by then if ``until`` never came."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea", has_text=marker)).first
    out = cell.locator(".jp-OutputArea")
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = out.inner_text(timeout=5_000) if out.count() else ""
        if until in text:
            return text
        time.sleep(0.5)
    if not text.strip():
        raise AssertionError(f"the cell with {marker!r} showed no output within {timeout} s")
    return text


@pytest.mark.skipif(_requirements() is not None, reason=str(_requirements()))
def test_a_learner_runs_chapter_00_in_jupyterlab(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    runtime, settings = tmp_path / "runtime", tmp_path / "settings"
    runtime.mkdir()
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))  # every cell in the page
    env = cli_env(JUPYTER_RUNTIME_DIR=str(runtime), JUPYTERLAB_SETTINGS_DIR=str(settings),
                  JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"), BROWSER="true")
    work = tmp_path / "work"

    # the learner has done the first exercise with the key's answer and saved the notebook
    key = nbformat.read(str(checkout_root() / "solutions" / NOTEBOOK), as_version=4)
    mine = nbformat.read(str(checkout_root() / "course" / NOTEBOOK), as_version=4)
    cell_by_id(mine, SOLVED).source = cell_by_id(key, SOLVED).source
    work.mkdir()
    write_notebook(mine, work / NOTEBOOK)

    server = Started(["start", "--dir", str(work), "--no-browser", "--port", str(free_port()),
                      "--ip", "127.0.0.1"], env, tmp_path)
    try:
        url = server.wait_for(URL, timeout=180).group(1)
        base, token = url.split("/lab?token=")
        with sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True,
                args=FLAGS, viewport={"width": 1400, "height": 1000})
            try:
                page = browser.new_page()
                page.set_default_timeout(60_000)
                page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}", timeout=120_000)
                page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
                wait_for_idle_kernel(base, token, timeout=120)
                page.locator("li.lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
                page.locator("li.lm-Menu-item:has(.lm-Menu-itemLabel:text-is('Run All Cells'))"
                             ).click()

                passed = output_of(page, "check.ch00_center_rows(", "passed.", timeout=180)
                assert "✓ a (3, 5) array" in passed
                assert "All 5 cases of ch00-center-rows passed." in passed
                assert "hidden" not in passed  # the student copy has no hidden tests

                # the untouched exercise's check cell: ✗ with the stub's message
                failed = output_of(page, "check.ch00_pairwise_sq_dists(", "NotImplementedError", timeout=120)
                assert "NotImplementedError" in failed
                assert "Exercise ch00-pairwise-sq-dists" in failed
            finally:
                browser.close()
        saved = nbformat.read(str(work / NOTEBOOK), as_version=4)
        assert cell_by_id(saved, SOLVED).source == cell_by_id(key, SOLVED).source
    finally:
        pids = jupyter_pids(runtime)
        if server.proc.poll() is None:
            server.proc.send_signal(signal.SIGTERM)
            try:
                server.finish(timeout=60)
            except Exception:
                server.proc.kill()
        for pid in pids:
            deadline = time.monotonic() + 15
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        assert not any(alive(pid) for pid in pids)
