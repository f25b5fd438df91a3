"""No hidden contracts between chapters. When an earlier chapter's exercise leaves a private
attribute to the learner (it is set inside a solution region) and a later chapter's given code
reads it, the earlier chapter's text must name it -- and its check then holds the learner to it.
Otherwise a learner who kept, say, the saved tensors under another name passes the chapter that
asks for them and loses points in a later one."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
KEYS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
_SOLUTION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
_READ = re.compile(r"\.(_[a-z]\w*)\b(?!\s*=[^=])")  # a read, not an assignment
_SET = re.compile(r"\.(_[a-z]\w*)\s*=[^=]")
_NAMED = re.compile(r"`[^`]*?(_[a-z]\w*)[^`]*`")


def hidden_contracts(notebooks: list[Path]) -> list[str]:
    named: set[str] = set()  # named in the text of the chapters so far
    left_to_learner: dict[str, tuple[str, frozenset[str]]] = {}  # name -> chapter, its names
    found = []
    for path in notebooks:
        cells = nbformat.read(path, 4).cells
        for index, cell in enumerate(cells):
            if cell.cell_type != "code":
                continue
            for name in sorted(set(_READ.findall(_SOLUTION.sub("", cell.source)))):
                chapter, names_then = left_to_learner.get(name, (path.name, frozenset()))
                if chapter != path.name and name not in names_then:
                    found.append(f"{path.name} cell {index}: given code reads .{name}, which "
                                 f"{chapter} leaves to the learner without naming it")
        named |= {n for c in cells if c.cell_type == "markdown" for n in _NAMED.findall(c.source)}
        for cell in cells:
            for region in _SOLUTION.findall(cell.source) if cell.cell_type == "code" else []:
                for name in _SET.findall(region):
                    left_to_learner.setdefault(name, (path.name, frozenset(named)))
    return found


def test_given_code_reads_only_what_an_earlier_exercise_names() -> None:
    assert KEYS
    assert hidden_contracts(KEYS) == []


def test_the_contract_rule_can_fail(tmp_path: Path) -> None:
    first = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Keep the tensors on the node."),
        nbformat.v4.new_code_cell("class Context:\n    def save(self, *t):\n"
                                  "        ### BEGIN SOLUTION\n        self._saved = t\n"
                                  "        ### END SOLUTION\n")])
    later = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Remember the tensors (in `ctx._saved`, as before)."),
        nbformat.v4.new_code_cell("def saved(ctx):\n    return ctx._saved\n")])
    nbformat.write(first, tmp_path / "03_a.ipynb")
    nbformat.write(later, tmp_path / "06_b.ipynb")
    assert hidden_contracts([tmp_path / "03_a.ipynb", tmp_path / "06_b.ipynb"]) == [
        "06_b.ipynb cell 1: given code reads ._saved, which 03_a.ipynb leaves to the learner "
        "without naming it"]
    first.cells[0].source = "Keep the tensors on the node, in `_saved`."
    nbformat.write(first, tmp_path / "03_a.ipynb")
    assert hidden_contracts([tmp_path / "03_a.ipynb", tmp_path / "06_b.ipynb"]) == []
