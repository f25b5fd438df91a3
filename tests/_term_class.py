"""A synthetic class for the term tests: a tiny key (chapter 00 plus a manual item), students'
notebooks made from the released copy with their own answers, and a grade run's output folder
written with the grader's own CSV writer."""
from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat

from autograd_lab.course.grading.batch import Row, write_csv
from autograd_lab.course.authoring.notebooks import (
    checkout_root,
    nbgrader_meta,
    read_notebook,
    write_notebook,
)

NOTEBOOK = "00_welcome"
MANUAL_ID = "ch00-explain"

# Each student's answers to the two solution cells of chapter 00, written independently, except
# dave, who copied carol's and renamed the variables.
ANSWERS = {
    "alice": ('''def center_rows(X: np.ndarray) -> np.ndarray:
    """Return X minus the mean of each of its rows (X is 2-D and left unchanged)."""
    return X - X.mean(axis=1, keepdims=True)
''', '''def pairwise_sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared distances D[i, j] between rows A[i] (A is (n, d)) and B[j] (B is (m, d))."""
    diff = A[:, None, :] - B[None, :, :]
    return (diff**2).sum(axis=-1)
'''),
    "bob": ('''def center_rows(X: np.ndarray) -> np.ndarray:
    """Return X minus the mean of each of its rows (X is 2-D and left unchanged)."""
    out = np.empty_like(X, dtype=float)
    for i in range(X.shape[0]):
        out[i] = X[i] - np.sum(X[i]) / X.shape[1]
    return out
''', '''def pairwise_sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared distances D[i, j] between rows A[i] (A is (n, d)) and B[j] (B is (m, d))."""
    a2 = np.einsum("ij,ij->i", A, A)[:, None]
    b2 = np.einsum("ij,ij->i", B, B)[None, :]
    return np.maximum(a2 + b2 - 2 * A @ B.T, 0.0)
'''),
    "carol": ('''def center_rows(X: np.ndarray) -> np.ndarray:
    """Return X minus the mean of each of its rows (X is 2-D and left unchanged)."""
    totals = X.sum(axis=1).reshape(-1, 1)
    counts = float(X.shape[1])
    centred = X - totals / counts
    return centred
''', '''def pairwise_sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Squared distances D[i, j] between rows A[i] (A is (n, d)) and B[j] (B is (m, d))."""
    result = np.zeros((A.shape[0], B.shape[0]))
    for row in range(A.shape[0]):
        gap = B - A[row]
        result[row, :] = np.sum(gap * gap, axis=1)
    return result
'''),
}
ANSWERS["dave"] = tuple(text.replace("totals", "sums").replace("counts", "n_cols")
                        .replace("centred", "res").replace("result", "dist")
                        .replace("gap", "delta").replace("row", "k")
                        for text in ANSWERS["carol"])

MANUAL_ANSWERS = {
    "alice": "Broadcasting stretches the (n, 1) means along the columns.",
    "bob": "<script>alert('x')</script> I looped over the rows instead.",
    "carol": "=HYPERLINK(\"http://example.invalid\") keepdims keeps the axis.",
    "dave": "keepdims keeps the axis, so the subtraction lines up.",
}


def make_key(folder: Path) -> tuple[Path, Path]:
    """solutions/ and course/ folders holding chapter 00, the key with one manual item."""
    root = checkout_root()
    key = read_notebook(root / "solutions" / f"{NOTEBOOK}.ipynb")
    released = read_notebook(root / "course" / f"{NOTEBOOK}.ipynb")
    prompt = nbformat.v4.new_markdown_cell("Explain in two sentences why `keepdims=True` is "
                                           "needed in `center_rows`.")
    answer = nbformat.v4.new_markdown_cell("It keeps the row axis so the means broadcast.")
    answer.metadata["nbgrader"] = {"grade": True, "solution": True, "locked": False,
                                   "grade_id": MANUAL_ID, "points": 2, "schema_version": 3}
    key.cells += [prompt, answer]
    stub = copy.deepcopy(answer)
    stub.source = "YOUR ANSWER HERE"
    released.cells += [copy.deepcopy(prompt), stub]
    write_notebook(key, folder / "solutions" / f"{NOTEBOOK}.ipynb")
    write_notebook(released, folder / "course" / f"{NOTEBOOK}.ipynb")
    return folder / "solutions", folder / "course"


def make_submissions(folder: Path, released: Path) -> Path:
    """SUBMISSIONS/<student>/00_welcome.ipynb for each student (erin hands in the copy)."""
    subs = folder / "submissions"
    base = read_notebook(released / f"{NOTEBOOK}.ipynb")
    ids = [str(nbgrader_meta(c)["grade_id"]) for c in base.cells
           if nbgrader_meta(c).get("solution") and c.cell_type == "code"]
    for student, answers in {**ANSWERS, "erin": None}.items():
        nb = copy.deepcopy(base)
        for cell in nb.cells:
            gid = nbgrader_meta(cell).get("grade_id")
            if answers is not None and gid in ids:
                cell.source = answers[ids.index(gid)]
            if gid == MANUAL_ID and student in MANUAL_ANSWERS:
                cell.source = MANUAL_ANSWERS[student]
        write_notebook(nb, subs / student / f"{NOTEBOOK}.ipynb")
    return subs


def write_run(out: Path, exercises: list[tuple[str, float]], scores: dict[str, list[float]],
              reasons: dict[str, str] | None = None, flags: dict[str, str] | None = None,
              seconds: dict[str, float] | None = None) -> Path:
    """A grade run's folder with grades.csv and totals.csv, written by the grader's writer;
    ``seconds`` gives a student's job time (grades.csv's ``seconds``; default 0, no job)."""
    rows = []
    for student, got in scores.items():
        for (exercise, points), score in zip(exercises, got):
            status = "passed" if score >= points else "partial" if score else "failed"
            reason = "" if status == "passed" else (reasons or {}).get(
                student, "AssertionError: wrong values")
            rows.append(Row(student, NOTEBOOK, exercise, score, points, status, reason,
                            "process", (flags or {}).get(student, ""),
                            seconds=(seconds or {}).get(student, 0.0)))
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out)
    return out


def set_mtime(path: Path, epoch: float) -> None:
    os.utime(path, (epoch, epoch))
