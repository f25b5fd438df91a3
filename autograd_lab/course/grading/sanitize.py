"""Safe, bounded outputs: what a graded notebook may show the instructor and the student.

Two steps on the notebook that came back from a job, both in the trusted parent, before
it is scored and rendered:

* :func:`sanitize` runs nbconvert's ``SanitizeHTML`` (bleach) over every cell: HTML and
  Markdown outputs and Markdown/raw cells keep harmless tags only (no ``<script>``, no
  ``on...=`` attributes, no ``javascript:`` links), and output kinds that can run code in
  a browser (JavaScript, SVG, widgets, ...) are dropped.
  Markdown (cells and ``text/markdown`` outputs) keeps only links and images whose target
  is ``http``, ``https``, relative or a ``data:image`` raster (:func:`safe_markdown`):
  bleach sees ``[x](javascript:...)`` as text, but the feedback page renders it as a link.
* :func:`cap_outputs` bounds every output kind, images included: per output, per cell and
  per notebook, with a note in the cell saying what was cut; Markdown cells' attachments
  count toward the same caps and only raster images are kept. Error outputs and standard
  error are shortened but never removed, so capping cannot change a score.
"""
from __future__ import annotations

import html
import re
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
MAX_SOURCE_CHARS = 100_000
"""Longest cell source kept in the graded notebook (the course's cells are below 10,000)."""
MAX_SOURCES_CHARS = 2_000_000
"""Most cell source kept per notebook; past it each further cell keeps 2,000 characters."""
MAX_METADATA_CHARS = 20_000
"""Largest metadata (a cell's, the notebook's) kept as JSON; nbgrader's own entry is kept."""
MAX_ERROR_NAME_CHARS = 200
"""Longest exception name kept (an error output's ``ename``)."""

EXTRA_TAGS = {"p", "div", "span", "br", "hr", "pre", "code", "table", "thead", "tbody", "tr",
              "th", "td", "h1", "h2", "h3", "h4", "h5", "h6", "img", "sub", "sup", "details",
              "summary", "kbd", "del", "ins", "dl", "dt", "dd"}
EXTRA_ATTRIBUTES = {"img": ["src", "alt", "width", "height"], "td": ["align"],
                    "th": ["align"], "span": ["class"], "div": ["class"]}


RASTER_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
"""Image types an attachment or a ``data:`` link may have (no SVG: it can hold script)."""
BLOCKED = "#blocked-by-grader"
"""What an unsafe link or image target becomes."""

_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
_RASTER_DATA = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp|bmp)[;,]")
_REFERENCE = re.compile(r"^( {0,3}\[(?:[^\]\\\n]|\\.)+\]:[ \t]*\n?[ \t]*)(<[^>\n]*>|\S+)", re.M)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\s]*)>")


def safe_target(url: str, attachments: Any = ()) -> bool:
    """Whether a link or image target is ``http``/``https``, relative, a raster
    ``data:image`` or one of ``attachments``, the cell's own (checked by :func:`cap_outputs`;
    a missing one would stop nbconvert from rendering the feedback). Entities are decoded and the characters browsers skip in a scheme
    (white space, control characters) removed before the check."""
    plain = "".join(c for c in html.unescape(url.strip("<>")) if c > " " and c != "\x7f").lower()
    if plain.startswith(("http:", "https:")) or _RASTER_DATA.match(plain):
        return True
    if plain.startswith("attachment:"):
        return url.strip("<>").strip()[len("attachment:"):] in attachments
    return _SCHEME.match(plain) is None


def _target_end(text: str, start: int) -> int:
    """Where a Markdown link destination that starts at ``start`` ends (after ``](``)."""
    if start < len(text) and text[start] == "<":
        end = text.find(">", start)
        return len(text) if end < 0 else end + 1
    depth, i = 0, start
    while i < len(text) and not text[i].isspace():
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            if depth == 0:
                break
            depth -= 1
        i += 1
    return i


def safe_markdown(text: str, attachments: Any = ()) -> str:
    """``text`` with every unsafe link or image target (inline, reference style, autolink)
    replaced by :data:`BLOCKED`; ``attachments`` are the names ``attachment:`` may use."""
    out, i = [], 0
    while (at := text.find("](", i)) >= 0:
        start = at + 2
        while start < len(text) and text[start].isspace():
            start += 1
        end = _target_end(text, start)
        target = text[start:end]
        out.append(text[i:start])
        out.append(target if safe_target(target, attachments) else BLOCKED)
        i = end
    text = "".join(out) + text[i:]
    text = _REFERENCE.sub(lambda m: m.group(1) + (m.group(2) if safe_target(m.group(2), attachments)
                                                   else BLOCKED), text)
    return _AUTOLINK.sub(lambda m: m.group(0) if safe_target(m.group(1))
                         else "&lt;" + m.group(1) + "&gt;", text)


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` shortened to ``limit`` characters, with a note saying how long it was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... output cut by the grader ({len(text):,} characters)\n"


MAX_FIELD_CHARS = 2_000
"""Longest text a CSV cell gets from a submission (a reason, the flags)."""
MAX_PAGE_BYTES = 10_000_000
"""Largest file written from one submission (graded notebook, feedback page, manual page)."""


def clip(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, saying where and how long it was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... cut by the grader at {limit:,} of {len(text):,} characters]"


def _size(output: NotebookNode) -> int:
    size = len(_text(output.get("text", ""))) + sum(len(t) for t in output.get("traceback", []))
    size += len(_text(output.get("evalue", ""))) + len(_text(output.get("ename", "")))
    return size + sum(len(_text(v)) for v in output.get("data", {}).values())


def _cap_output(output: NotebookNode, notes: list[str]) -> None:
    if "evalue" in output:  # the exception's message: it reaches grades.csv as the reason
        output["evalue"] = cut(_text(output["evalue"]))
    if "ename" in output:
        output["ename"] = cut(_text(output["ename"]), MAX_ERROR_NAME_CHARS)
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


def _cap_attachments(cell: NotebookNode, budget: int) -> int:
    """Keep a Markdown or raw cell's attachments only if they are raster images within the
    caps; say in the cell what was cut. Returns what they used of ``budget``."""
    attachments = cell.get("attachments")
    if not attachments:
        return 0
    notes, used = [], 0
    for name, bundle in list(attachments.items()):
        if not isinstance(bundle, dict):
            del attachments[name]
            continue
        for mime, value in list(bundle.items()):
            size = len(_text(value))
            if mime not in RASTER_TYPES:
                why = f"of type {mime}"
            elif size > MAX_IMAGE_CHARS or used + size > min(MAX_CELL_CHARS, budget):
                why = f"of {size:,} characters"
            else:
                used += size
                continue
            del bundle[mime]
            notes.append(f"the attachment {name!r} {why} was cut by the grader")
        if not bundle:
            del attachments[name]
    if notes:  # references to what was cut go too: nbconvert refuses a missing attachment
        cell["source"] = safe_markdown(_text(cell.get("source", "")), set(attachments)) + \
            "\n\n*[grader] " + "; ".join(notes) + "*"
    return used


def _cap_metadata(meta: Any, where: str, notes: list[str]) -> None:
    """Drop every entry but nbgrader's from metadata larger than MAX_METADATA_CHARS."""
    import json
    if not isinstance(meta, dict):
        return
    try:
        size = len(json.dumps(meta, default=str))
    except (TypeError, ValueError, RecursionError):
        size = MAX_METADATA_CHARS + 1
    if size > MAX_METADATA_CHARS:
        for name in [k for k in meta if k != "nbgrader"]:
            del meta[name]
        notes.append(f"the {where} metadata ({size:,} characters) was cut by the grader")


def cap_sources(nb: NotebookNode, kinds: tuple[str, ...] = ("code", "markdown", "raw")) -> int:
    """Bound each cell's source and metadata and all sources together, saying in the cell
    what was cut. Code is cut only after the run (the notebook ran with its whole source);
    ``kinds=("markdown", "raw")`` cuts what never runs, before the run, so an 11 MB essay
    does not slow the job. Returns the characters of source kept."""
    used = 0
    top: list[str] = []
    _cap_metadata(nb.get("metadata"), "notebook's", top)
    for cell in nb.cells:
        notes: list[str] = []
        _cap_metadata(cell.get("metadata"), "cell's", notes)
        source = _text(cell.get("source", ""))
        limit = MAX_SOURCE_CHARS if used < MAX_SOURCES_CHARS else 2_000
        if len(source) > limit and cell.get("cell_type") in kinds:
            notes.append(f"the cell's source ({len(source):,} characters) was cut to "
                         f"{limit:,} by the grader")
            source = source[:limit]
        if notes:
            mark = "# " if cell.get("cell_type") == "code" else ""
            source += f"\n{mark}[grader] " + "; ".join(notes) + "\n"
        cell["source"] = source
        used += len(source)
    if top and nb.cells:
        first = nb.cells[0]
        mark = "# " if first.get("cell_type") == "code" else ""
        first["source"] = _text(first.get("source", "")) + f"\n{mark}[grader] {top[0]}\n"
    return used


def cap_outputs(nb: NotebookNode) -> NotebookNode:
    """Bound every cell's source, outputs and attachments and the notebook's total, noting in
    each cell what was cut."""
    budget = MAX_NOTEBOOK_CHARS - min(cap_sources(nb), MAX_NOTEBOOK_CHARS // 2)
    for cell in nb.cells:
        if "attachments" in cell:
            budget -= min(budget, _cap_attachments(cell, budget))
        if cell.get("cell_type") != "code":
            continue
        notes: list[str] = []
        kept: list[dict] = []
        used, dropped = 0, 0
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
                if mime == "text/markdown" and isinstance(output["data"][mime], str):
                    output["data"][mime] = safe_markdown(output["data"][mime])
        if cell.get("cell_type") in ("markdown", "raw"):
            names = cell.get("attachments") or {}
            cell["source"] = safe_markdown(_text(cell.get("source", "")),
                                           set(names) if isinstance(names, dict) else set())
        cleaner.preprocess_cell(cell, {}, index)
    return nb
