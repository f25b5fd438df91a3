"""Manual items: answers graded by a person (nbgrader's manually graded cells).

A manual item is a key cell with nbgrader ``solution`` and ``grade`` both true (a written answer
worth points, e.g. the capstone's rubric answers) or a ``task`` cell. For each item the term
writes one HTML page with every student's answer in an anonymised order (each answer is known
by a code, not by the student) and one line per answer in ``scores.csv``, to be filled in
(``score``, ``comment``). The next run reads the filled file back: a score stays with its
answer (matched by notebook, item and code), rows are added for new answers and never dropped,
and an answer that changed after it was scored is marked in the ``note`` column.
"""
from __future__ import annotations

import csv
import hashlib
import html
import secrets
from dataclasses import dataclass
from pathlib import Path

from ...authoring.notebooks import CourseError, format_points, nbgrader_meta, read_notebook
from .export import safe_cell
from ..sanitize import MAX_OUTPUT_CHARS, clip
from .late import open_own_csv, read_student_notebook

_LETTERS = str.maketrans("0123456789abcdef", "ABCDEFGHJKLMNPQR")
MAX_ANSWER_CHARS = MAX_OUTPUT_CHARS
"""Longest answer shown on an item's page (the rest is cut with a note; its hash is of all)."""
SCORE_COLUMNS = ("notebook", "item", "answer", "max_points", "score", "comment",
                 "answer_sha", "note")


@dataclass(frozen=True)
class Item:
    notebook: str
    id: str
    points: float
    prompt: str


def manual_items(key: dict[str, Path], notebooks: list[str]) -> list[Item]:
    """The manually graded cells of the key's notebooks, in order."""
    items = []
    for name in notebooks:
        if name not in key:
            continue
        cells = read_notebook(key[name]).cells
        for index, cell in enumerate(cells):
            meta = nbgrader_meta(cell)
            if (meta.get("solution") and meta.get("grade")) or meta.get("task"):
                before = cells[index - 1] if index else None
                prompt = before.source if before is not None and before.cell_type == "markdown" \
                    else ""
                items.append(Item(name, str(meta.get("grade_id", f"cell-{index}")),
                                  float(meta.get("points", 0)), prompt))
    return items


def answer_of(submissions: Path, student: str, item: Item,
              assignment: str | None = None) -> str | None:
    """The student's text of the item's cell, or None when the notebook or cell is missing."""
    nb = read_student_notebook(submissions, student, item.notebook, assignment)
    if nb is None:  # missing, refused or unreadable: the grade run reports it already
        return None
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == item.id:
            return str(cell.source)
    return None


def _salt(folder: Path) -> str:
    path = folder / "salt.txt"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(16) + "\n", encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()


def answer_code(salt: str, item: Item, student: str) -> str:
    """The anonymous code of one student's answer to one item (stable for a given salt).

    Eight letters and no digits, so a spreadsheet never turns a code into a number (``1E10``).
    """
    digest = hashlib.sha256(f"{salt}\0{item.notebook}\0{item.id}\0{student}".encode())
    return digest.hexdigest()[:8].translate(_LETTERS)


def _read_scores(path: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    if not path.exists():
        return {}
    with open_own_csv(path, "utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = {"notebook", "item", "answer", "score"} - set(reader.fieldnames or [])
        if missing:
            raise CourseError(f"{path} lacks the column(s) {', '.join(sorted(missing))}; keep "
                              "the header the term wrote and fill in only score and comment.")
        rows = {}
        for line, row in enumerate(reader, start=2):
            row = {k: (v or "").strip() for k, v in row.items() if k}
            for column in ("notebook", "item", "answer"):
                row[column] = row[column].lstrip("'")  # undo the CSV-injection guard
            if row["score"]:
                try:
                    score = float(row["score"])
                except ValueError:
                    raise CourseError(f"{path}, line {line}: score must be a number such as 1.5 "
                                      f"or empty, got {row['score']!r}.") from None
                top = float(row.get("max_points") or "inf")
                if not 0 <= score <= top:
                    raise CourseError(f"{path}, line {line}: score {score:g} is outside 0.."
                                      f"{top:g}; give at most the item's max_points.")
            rows[(row["notebook"], row["item"], row["answer"])] = row
    return rows


def collect(submissions: Path, students: list[str], items: list[Item], folder: Path,
            scores_path: Path | None = None,
            assignment: str | None = None) -> list[dict[str, str]]:
    """Write the pages and ``scores.csv`` (merging a filled one); return grade rows per answer.

    The returned rows look like grades.csv rows: status ``manual`` (scored by hand) or
    ``ungraded`` (not scored yet: 0 points until it is).
    """
    folder.mkdir(parents=True, exist_ok=True)
    scores_path = scores_path or folder / "scores.csv"
    kept = _read_scores(scores_path)
    salt = _salt(scores_path.parent)  # the codes' salt lives beside the scores it keys
    rows: list[dict[str, str]] = []
    table: dict[tuple[str, str, str], dict[str, str]] = dict(kept)
    for item in items:
        answers = []
        for student in students:
            text = answer_of(submissions, student, item, assignment)
            code = answer_code(salt, item, student)
            sha = hashlib.sha256((text or "").encode()).hexdigest()[:12]
            old = kept.get((item.notebook, item.id, code), {})
            note = old.get("note", "")
            if old.get("score") and old.get("answer_sha") and old["answer_sha"] != sha:
                note = "the answer changed after it was scored: check the score"
            table[(item.notebook, item.id, code)] = {
                "notebook": item.notebook, "item": item.id, "answer": code,
                "max_points": format_points(item.points), "score": old.get("score", ""),
                "comment": old.get("comment", ""), "answer_sha": sha, "note": note}
            answers.append((code, text))
            score = old.get("score", "")
            rows.append({
                "student": student, "notebook": item.notebook, "exercise": item.id,
                "points": score or "0", "max_points": format_points(item.points),
                "status": "manual" if score else "ungraded",
                "reason": old.get("comment", "") if score else "not graded by hand yet",
                "isolation": "none", "flags": ""})
        _write_page(folder / f"{item.notebook}__{item.id}.html", item, sorted(answers))
    with open(scores_path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(SCORE_COLUMNS)
        for key in sorted(table):
            writer.writerow([safe_cell(table[key].get(c, "")) for c in SCORE_COLUMNS])
    return rows


def _write_page(path: Path, item: Item, answers: list[tuple[str, str | None]]) -> None:
    parts = [f"<h1>{html.escape(item.notebook)}: {html.escape(item.id)} "
             f"({format_points(item.points)} points)</h1>"]
    if item.prompt:
        parts.append(f"<h2>The question</h2><pre class='prompt'>{html.escape(item.prompt)}</pre>")
    parts.append(f"<p>{len(answers)} answers, ordered by their code (not by student). Score "
                 "each in scores.csv: the line with this item and the answer's code.</p>")
    for code, text in answers:  # an essay is cut, saying where: the page stays small
        body = html.escape(clip(text, MAX_ANSWER_CHARS)) if text is not None else \
            "<em>no answer (missing)</em>"
        parts.append(f"<h3 id='{code}'>Answer {code}</h3><pre>{body}</pre>")
    path.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>"
        f"{html.escape(item.id)}</title><style>pre{{white-space:pre-wrap;background:#f6f6f6;"
        "padding:.6em;border:1px solid #ddd}</style></head><body>\n" + "\n".join(parts)
        + "\n</body></html>\n", encoding="utf-8")


def merge_manual(rows: list[dict[str, str]], manual: list[dict[str, str]]) -> list[dict[str, str]]:
    """Manual rows replace the autograded row of the same exercise, or are added after it."""
    by_key = {(m["student"], m["notebook"], m["exercise"]): m for m in manual}
    out = []
    for row in rows:
        key = (row["student"], row["notebook"], row["exercise"])
        if key in by_key:
            new = dict(row)
            new.update({k: by_key.pop(key)[k] for k in ("points", "status", "reason")})
            out.append(new)
        else:
            out.append(row)
    blank = dict.fromkeys(rows[0], "") if rows else {}
    out += [{**blank, **m} for m in by_key.values()]
    return out
