"""The bilingual glossary: released byte for byte, complete, and linked from every chapter."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograd_lab.course.authoring.notebooks import read_notebook
from autograd_lab.course.authoring.release import GLOSSARY, release

ROOT = Path(__file__).resolve().parents[2]
KEY = ROOT / "solutions" / GLOSSARY
COPY = ROOT / "course" / GLOSSARY
CHAPTERS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
LINK = "[glossary](GLOSSARY.md)"

# Chapters whose introductions may still lack the link (reported as skipped, by name). Every
# chapter links it now, so the set is empty: a chapter that loses the link fails.
PENDING: set[str] = set()

# The terms issue 9 names, as they must appear (English and Chinese in one row).
REQUIRED = [("computational graph", "计算图"), ("leaf node", "叶子节点"),
            ("gradient accumulation", "梯度累加"), ("in-place operation", "原地操作"),
            ("backpropagation", "反向传播"), ("topological sort", "拓扑排序"),
            ("broadcasting", "广播")]


def rows() -> list[list[str]]:
    """The table rows of the key's glossary, as lists of cell texts (header rows dropped)."""
    found = []
    for line in KEY.read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and not line.startswith("| ---") and "中文" not in line:
            found.append([c.strip() for c in line.strip().strip("|").split("|")])
    return found


def test_course_glossary_is_the_release_of_the_keys(tmp_path: Path) -> None:
    assert COPY.read_bytes() == KEY.read_bytes(), (
        "course/GLOSSARY.md differs from solutions/GLOSSARY.md: run `autograd-lab release`")
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / GLOSSARY).write_bytes(KEY.read_bytes())
    nb = CHAPTERS[0]
    (tmp_path / "solutions" / nb.name).write_bytes(nb.read_bytes())
    pytest.importorskip("nbgrader")
    written = release(tmp_path / "solutions", tmp_path / "course")
    assert tmp_path / "course" / GLOSSARY in written
    assert (tmp_path / "course" / GLOSSARY).read_bytes() == KEY.read_bytes()


def test_glossary_has_the_key_terms_each_with_its_chapter() -> None:
    table = rows()
    assert len(table) >= 30, f"only {len(table)} terms"
    for english, chinese in REQUIRED:
        assert any(english in r[0] and chinese in r[1] for r in table), (english, chinese)
    for r in table:
        assert len(r) == 4 and r[0] and re.search(r"[\u4e00-\u9fff]", r[1]), r
        links = re.findall(r"\]\(([^)]+)\)", r[3])
        assert links, f"{r[0]}: no chapter"
        for link in links:
            assert (ROOT / "solutions" / link).exists(), f"{r[0]}: {link} does not exist"


def intro(notebook: Path) -> str:
    """The chapter's introduction: its markdown cells before the first code cell."""
    text = []
    for cell in read_notebook(notebook).cells:
        if cell.cell_type == "code":
            break
        text.append(cell.source)
    return "\n".join(text)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_chapter_introduction_links_the_glossary(notebook: Path) -> None:
    linked = LINK in intro(notebook)
    number = notebook.name[:2]
    if number in PENDING and not linked:
        pytest.skip(f"{notebook.name} does not link the glossary yet (listed in PENDING)")
    assert linked, f"the introduction of {notebook.name} does not link {LINK}"


# -- every bold term of every chapter is in the glossary -----------------------------------------
BOLD = re.compile(r"\*\*([^*\n]+?)\*\*")

# Bold that is emphasis or a run-in label, not a term, per chapter. A bold span that is neither
# here nor in the glossary fails the test below: either add the term to GLOSSARY.md (English and
# Chinese) or, if it only stresses a word, list it here.
NOT_TERMS: dict[str, set[str]] = {
    "00": {"Check cells", "Exercises", "yours"},
    "01": {"copy"},
    "02": {"and", "every Variable it feeds", "properties", "your own library, `mygrad`"},
    "03": {"PyTorch picks 0", "input", "is", "new", "object with state",
           "one gradient per argument of forward", "output"},
    "04": {"add", "added", "adds", "each node comes before all the nodes it was computed from",
           "each once", "free", "once", "order", "sum over its consumers", "without recursion",
           "your own library"},
    "05": {"Max", "Mean", "copies", "from the right", "non-negative", "sum over the copies",
           "your own library"},
    "06": {"In-place on a leaf that requires grad", "in place", "not record", "raises", "runs"},
    "07": {"numba", "on the first call", "reference"},
    "08": {"Module", "your library"},
    "09": {"accumulate", "and", "mean", "on the training set only", "with your own library"},
    "10": {"added", "argmax", "dead", "numpy arrays", "one matrix product", "ties", "your"},
    "11": {"Jacobian of the gradient", "add", "can", "new", "on", "output", "sum", "tridiagonal",
           "zeros"},
    "12": {"1650", "both", "control", "memory and speed", "stability"},
}


def _norm(text: str) -> str:
    """Lower case, hyphens as spaces, one plural 's' dropped: 'Hooks' and 'hook' match."""
    text = re.sub(r"\s+", " ", text.lower().replace("-", " ")).strip()
    return text[:-1] if text.endswith("s") and not text.endswith("ss") else text


def glossary_names() -> set[str]:
    """Every name a glossary row gives: the English items (split at ' · ', with what stands
    in brackets as a name of its own) and the code names in backticks."""
    names = set()
    for english, _chinese, code, _chapter in rows():
        for item in english.split(" · "):
            names.add(_norm(re.sub(r"\s*\(([^)]*)\)", "", item)))
            names.update(_norm(inner) for inner in re.findall(r"\(([^)]*)\)", item))
        names.update(_norm(name) for name in re.findall(r"`([^`(=]+)", code))
    return names


def bold_spans(notebook: Path) -> set[str]:
    """The bold spans of a chapter's markdown, without run-in headings ('**Learning goals.**',
    '**Snippet a**', '**History box: ...**', '**Version 0.2 (...)**')."""
    found = set()
    for cell in read_notebook(notebook).cells:
        if cell.cell_type != "markdown":
            continue
        for span in BOLD.findall(cell.source):
            span = span.strip()
            if span.endswith((".", ":")) or re.match(r"(Snippet|History box|Version) ", span):
                continue
            found.add(span)
    return found


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_bold_term_of_the_chapter_is_in_the_glossary(notebook: Path) -> None:
    names = glossary_names()
    emphasis = NOT_TERMS.get(notebook.name[:2], set())
    missing = sorted(span for span in bold_spans(notebook)
                     if span not in emphasis and _norm(span) not in names)
    assert not missing, (
        f"{notebook.name} sets these terms in bold, but GLOSSARY.md has no row for them: "
        f"{missing}. Add each with its Chinese name, or list it in NOT_TERMS if it is emphasis.")


def test_the_issue_31_terms_are_in_the_glossary() -> None:
    names = glossary_names()
    for term in ("engine", "buffer", "node", "define-by-run", "static graph", "subgradient",
                 "vector-Jacobian product", "numerical gradient"):
        assert _norm(term) in names, term


def test_the_emphasis_list_names_only_bold_spans_that_exist() -> None:
    """A NOT_TERMS entry whose bold span left its chapter is stale and would hide a new term."""
    for notebook in CHAPTERS:
        stale = NOT_TERMS.get(notebook.name[:2], set()) - bold_spans(notebook)
        assert not stale, f"{notebook.name}: {sorted(stale)} are no longer bold there"


def test_the_bold_check_can_fail(tmp_path: Path) -> None:
    """A made-up bold term that is not in the glossary is reported."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("A **zorbification** step."))
    path = tmp_path / "99_x.ipynb"
    nbformat.write(nb, str(path))
    assert bold_spans(path) == {"zorbification"}
    assert _norm("zorbification") not in glossary_names()
