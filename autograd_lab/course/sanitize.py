"""Safe, bounded outputs: what a graded notebook may show the instructor and the student.

Two steps on the notebook that came back from a job, both in the trusted parent, before
it is scored and rendered:

* :func:`sanitize` runs nbconvert's ``SanitizeHTML`` (bleach) over every cell: HTML and
  Markdown outputs and Markdown/raw cells keep harmless tags only (no ``<script>``, no
  ``on...=`` attributes, no ``javascript:`` links), and output kinds that can run code in
  a browser (JavaScript, SVG, widgets, ...) are dropped.
* :func:`cap_outputs` bounds every output kind, images included: per output, per cell and
  per notebook, with a note in the cell saying what was cut. Error outputs and standard
  error are shortened but never removed, so capping cannot change a score.
"""
from __future__ import annotations

from typing import Any

from nbformat import NotebookNode
from nbformat.v4 import new_output

MAX_OUTPUT_CHARS = 20_000
"""Longest text kept per output (stream text, a text/plain value, a traceback)."""
MAX_IMAGE_CHARS = 1_000_000
"""Largest image kept (base64 characters, about 750 kB of PNG); the course's are below 200 kB."""
MAX_CELL_CHARS = 2_000_000
"""Most output kept per cell, all kinds together."""
MAX_NOTEBOOK_CHARS = 10_000_000
"""Most output kept per notebook."""
MAX_OUTPUTS_PER_CELL = 100
"""Most separate outputs kept per cell (errors and standard error are always kept)."""

EXTRA_TAGS = {"p", "div", "span", "br", "hr", "pre", "code", "table", "thead", "tbody", "tr",
              "th", "td", "h1", "h2", "h3", "h4", "h5", "h6", "img", "sub", "sup", "details",
              "summary", "kbd", "del", "ins", "dl", "dt", "dd"}
EXTRA_ATTRIBUTES = {"img": ["src", "alt", "width", "height"], "td": ["align"],
                    "th": ["align"], "span": ["class"], "div": ["class"]}


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` shortened to ``limit`` characters, with a note saying how long it was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... output cut by the grader ({len(text):,} characters)\n"


def _size(output: NotebookNode) -> int:
    size = len(_text(output.get("text", ""))) + sum(len(t) for t in output.get("traceback", []))
    return size + sum(len(_text(v)) for v in output.get("data", {}).values())


def _cap_output(output: NotebookNode, notes: list[str]) -> None:
    if "text" in output:
        output["text"] = cut(_text(output["text"]))
    if "traceback" in output:
        kept, used = [], 0
        for line in output["traceback"]:
            if used + len(line) > MAX_OUTPUT_CHARS:
                kept.append("... traceback cut by the grader")
                break
            kept.append(line)
            used += len(line)
        output["traceback"] = kept
    for mime, value in list(output.get("data", {}).items()):
        text = _text(value) if not isinstance(value, dict) else ""
        if mime.startswith("image/"):
            if len(text) > MAX_IMAGE_CHARS:
                del output["data"][mime]
                notes.append(f"an image ({mime}, {len(text):,} characters) was cut")
        elif isinstance(value, (str, list)):
            output["data"][mime] = cut(text)
    if "data" in output and not output["data"]:
        output["data"]["text/plain"] = "(output cut by the grader)"


def _essential(output: NotebookNode) -> bool:
    """Outputs that decide a graded cell's score (nbgrader's rule) and so are never dropped."""
    return output.get("output_type") in ("error", "execute_result") or (
        output.get("output_type") == "stream" and output.get("name") == "stderr")


def cap_outputs(nb: NotebookNode) -> NotebookNode:
    """Bound every cell's outputs and the notebook's total, noting in each cell what was cut."""
    budget = MAX_NOTEBOOK_CHARS
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        notes: list[str] = []
        kept, used, dropped = [], 0, 0
        for output in cell.get("outputs", []):
            _cap_output(output, notes)
            size = _size(output)
            over = (used + size > MAX_CELL_CHARS or size > budget
                    or len(kept) >= MAX_OUTPUTS_PER_CELL)
            if over and not _essential(output):
                dropped += 1
                continue
            kept.append(output)
            used += size
            budget -= min(size, budget)
        if dropped:
            notes.append(f"{dropped:,} output(s) were cut (limits: {MAX_OUTPUTS_PER_CELL} outputs, "
                         f"{MAX_CELL_CHARS:,} characters per cell, {MAX_NOTEBOOK_CHARS:,} per "
                         "notebook)")
        if notes:
            kept.append(new_output("stream", name="stdout",
                                   text="[grader] " + "; ".join(notes) + "\n"))
        cell["outputs"] = kept
    return nb


def sanitize(nb: NotebookNode) -> NotebookNode:
    """Strip what could run in the instructor's browser from cells and outputs (in place)."""
    from nbconvert.preprocessors.sanitize import SanitizeHTML
    defaults = SanitizeHTML()  # bleach's safe tags and attributes, as nbconvert configures them
    cleaner = SanitizeHTML(tags=sorted(set(defaults.tags) | EXTRA_TAGS),
                           attributes={**defaults.attributes, **EXTRA_ATTRIBUTES}, strip=True)
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            for mime, value in list(output.get("data", {}).items()):
                if isinstance(value, list):  # bleach wants one string
                    output["data"][mime] = "".join(value)
        cleaner.preprocess_cell(cell, {}, index)
    return nb
