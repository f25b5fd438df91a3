"""Re-execute key notebooks in place, storing their outputs, as nbval will check them.

    python3 -m tests.execute_key solutions/03_function.ipynb [more notebooks]

Each runs in a fresh kernel from its own folder, with `AUTOGRAD_LAB_MYGRAD_DIR` pointing at a
temporary copy of the key's library (as in tests/notebooks/test_nbval.py), so the loader's lines
and every output are what the strict nbval run expects. Timing cells keep `# NBVAL_IGNORE_OUTPUT`.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from autograd_lab.course.learner.export import DIR_ENV, PACKAGE, REFERENCE_ROOT

ROOT = Path(__file__).resolve().parents[1]


def reference_folder(folder: Path) -> Path:
    """``folder`` with a copy of the key's ``mygrad`` in it; returns ``folder``."""
    shutil.copytree(REFERENCE_ROOT / PACKAGE, Path(folder) / PACKAGE, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return Path(folder)


def execute(notebook: Path, timeout: int = 600) -> None:
    """Run ``notebook`` top to bottom and write it back with its new outputs."""
    import nbformat
    from nbclient import NotebookClient

    from autograd_lab.course.authoring.notebooks import notebook_text
    nb = nbformat.read(notebook, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[DIR_ENV] = str(reference_folder(Path(tmp)))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        os.environ.pop("MPLBACKEND", None)
        NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                       store_widget_state=False,  # widgets show live; the stored output is their picture
                       resources={"metadata": {"path": str(notebook.parent)}}).execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = _merged_streams(cell.outputs)
    notebook.write_text(notebook_text(nb), encoding="utf-8", newline="\n")


def _merged_streams(outputs: list) -> list:
    """Consecutive outputs of the same stream as one (as a notebook saved from JupyterLab)."""
    merged: list = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"executing {arg}", flush=True)
        execute(Path(arg).resolve())
