"""A learner's first minutes in a real browser: ``autograd-lab start``, JupyterLab in headless
Chromium, chapter 00 opened from the working folder, its cells run, the check cells' ✓ and ✗
read back from the page.

Needs Debian's ``chromium`` and the ``playwright`` Python package (which drives that Chromium;
no browser download). Run it alone with ``python3 -m pytest -m browser``.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

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


@contextlib.contextmanager
def jupyterlab(tmp_path: Path, work: Path, notebook: str, console: list | None = None) -> Iterator:
    """``autograd-lab start`` on ``work`` and ``notebook`` open in headless Chromium, its kernel
    idle; yields the page. Console errors go into ``console``; everything stops afterwards."""
    from playwright.sync_api import sync_playwright

    runtime, settings = tmp_path / "runtime", tmp_path / "settings"
    runtime.mkdir()
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))  # every cell in the page
    env = cli_env(JUPYTER_RUNTIME_DIR=str(runtime), JUPYTERLAB_SETTINGS_DIR=str(settings),
                  JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"), BROWSER="true")
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
                if console is not None:
                    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
                    page.on("pageerror", lambda err: console.append(str(err)))
                page.set_default_timeout(60_000)
                page.goto(f"{base}/lab/tree/{notebook}?token={token}", timeout=120_000)
                page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
                wait_for_idle_kernel(base, token, timeout=120)
                yield page
            finally:
                browser.close()
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


def run_all_cells(page) -> None:
    page.locator("li.lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator("li.lm-Menu-item:has(.lm-Menu-itemLabel:text-is('Run All Cells'))").click()


@pytest.mark.skipif(_requirements() is not None, reason=str(_requirements()))
def test_a_learner_runs_chapter_00_in_jupyterlab(tmp_path) -> None:
    work = tmp_path / "work"
    # the learner has done the first exercise with the key's answer and saved the notebook
    key = nbformat.read(str(checkout_root() / "solutions" / NOTEBOOK), as_version=4)
    mine = nbformat.read(str(checkout_root() / "course" / NOTEBOOK), as_version=4)
    cell_by_id(mine, SOLVED).source = cell_by_id(key, SOLVED).source
    work.mkdir()
    write_notebook(mine, work / NOTEBOOK)

    with jupyterlab(tmp_path, work, NOTEBOOK) as page:
        run_all_cells(page)
        passed = output_of(page, "check.ch00_center_rows(", "passed.", timeout=180)
        assert "✓ a (3, 5) array" in passed
        assert "All 5 cases of ch00-center-rows passed." in passed
        assert "hidden" not in passed  # the student copy has no hidden tests

        # the untouched exercise's check cell: ✗ with the stub's message
        failed = output_of(page, "check.ch00_pairwise_sq_dists(", "NotImplementedError", timeout=120)
        assert "NotImplementedError" in failed
        assert "Exercise ch00-pairwise-sq-dists" in failed
    saved = nbformat.read(str(work / NOTEBOOK), as_version=4)
    assert cell_by_id(saved, SOLVED).source == cell_by_id(key, SOLVED).source


EXPLORER = "04_engine.ipynb"
BIG_GRAPH = '''import autograd_lab as al
from autograd_lab.viz import explore
big_x = al.tensor(0.5, requires_grad=True)
big = big_x
for _ in range(100):
    big = big.sin()
explore(big, names={big_x: "x"})'''


STEP_IN_PAGE = """async (root) => {
  const button = root.querySelector("button.al-step"), status = root.querySelector(".al-status");
  const started = performance.now();
  let clicks = 0;
  while (!/^step (\\d+) \\/ \\1\\b/.test(status.textContent) && clicks < 10000) {
    button.click();
    clicks += 1;
    await new Promise((resolve) => requestAnimationFrame(resolve));  // until it is drawn
  }
  return [clicks, (performance.now() - started) / Math.max(clicks, 1)];
}"""


def step_to_the_end(explorer, expect) -> tuple[int, float]:
    """Click *Step* until the last step shows; the number of steps and the milliseconds per
    step after the first (the first runs backward in the kernel; the others redraw the page)."""
    status = explorer.locator(".al-status")
    explorer.locator("button.al-step").click()
    expect(status).to_have_text(re.compile(r"^step 1 / \d+"), timeout=60_000)
    total = int(re.search(r"/ (\d+)", status.inner_text()).group(1))
    clicks, per_step = explorer.evaluate(STEP_IN_PAGE)
    assert clicks == total - 1
    expect(status).to_have_text(re.compile(rf"^step {total} / {total}"))
    return total, per_step


@pytest.mark.skipif(_requirements() is not None, reason=str(_requirements()))
def test_the_graph_explorer_steps_through_the_learners_engine(tmp_path) -> None:
    """Chapter 04's explorer cell on the key's mygrad, in JupyterLab: 14 nodes drawn, *Step*
    to the end, the leaves' 28, 8 and 10 read off the page, no console error. A 200-node graph
    (a chain of 100 sin) steps too: after the first step (backward in the kernel), a step
    redraws in 20-40 ms in headless Chromium on a loaded 2-core machine, one animation
    frame included (printed by this test)."""
    from playwright.sync_api import expect

    from tests.execute_key import reference_folder

    work = reference_folder(tmp_path / "work")  # the key's mygrad: chapters 02-04 done
    nb = nbformat.read(str(checkout_root() / "course" / EXPLORER), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(BIG_GRAPH, id="big-graph"))
    write_notebook(nb, work / EXPLORER)
    console: list[str] = []
    with jupyterlab(tmp_path, work, EXPLORER, console) as page:
        run_all_cells(page)
        explorers = page.locator(".al-explorer")
        expect(explorers).to_have_count(2, timeout=400_000)
        seed = explorers.nth(0)
        assert seed.locator(".al-node").count() == 14
        assert seed.locator(".al-function").count() == 5
        steps, _ = step_to_the_end(seed, expect)
        assert steps == 8  # 5 Function nodes and 3 leaves, in the learner's engine's order
        grads = sorted(t for t in seed.locator(".al-leafgrad").all_text_contents() if t)
        assert grads == [".grad = 10", ".grad = 28", ".grad = 8"]
        sums = [t for t in seed.locator(".al-grad").all_text_contents() if " + " in t]
        assert sums == ["[[5. 5.] [5. 5.]] + [[2. 2.] [2. 2.]] = [[7. 7.] [7. 7.]]"]  # l1, used twice
        seed.locator(".al-param", has_text="w1").click()
        info = seed.locator(".al-info").inner_text()
        assert "shape: ()" in info or "shape: scalar" in info
        assert "version: 0" in info and "float64" in info
        seed.locator(".al-function", has_text="MeanBackward").click()
        assert "ctx saved" in seed.locator(".al-info").inner_text()
        seed.focus()
        page.keyboard.press("r")              # Reset, by its key
        expect(seed.locator(".al-status")).to_have_text(re.compile(r"^step 0 / 8"))
        page.keyboard.press("s")              # one Step
        expect(seed.locator(".al-status")).to_have_text(re.compile(r"^step 1 / 8"))
        seed.locator("button.al-reset").click()
        expect(seed.locator(".al-status")).to_have_text(re.compile(r"^step 0 / 8"))
        assert not any(seed.locator(".al-leafgrad").all_text_contents())

        big = explorers.nth(1)
        assert big.locator(".al-node").count() == 201
        steps, per_step = step_to_the_end(big, expect)
        assert steps == 101
        print(f"200-node graph: {per_step:.1f} ms per step")
        assert per_step < 2000  # a frozen page, not a speed check (benchmarks/ measure speed)
    assert not console, f"console errors: {console}"
