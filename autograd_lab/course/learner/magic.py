"""The ``%%mygrad`` cell magic: run a cell *and* write it into the learner's ``mygrad`` package.

::

    %%mygrad variable
    class Variable:
        ...

runs the cell as usual (its names land in the notebook) and puts its code, as the section
named after its first class or function (or the name given after the module), into
``mygrad/variable.py`` of the working folder. The file is current the moment the cell runs:
nobody has to save the notebook. The file is written first, so it mirrors the cell even when
the cell fails; the chapter loader (:mod:`.loader`) checks each module before using it.

Registered by :func:`autograd_lab.course.learner.loader.load_mygrad` (each chapter's first cell), or
by hand with ``%load_ext autograd_lab.course.learner.magic``.
"""
from __future__ import annotations

from typing import Any

from .export import LibraryError, library_dir, split_magic, write_section


def run_mygrad_cell(line: str, cell: str, namespace: dict[str, Any] | None = None) -> None:
    """What ``%%mygrad LINE`` does with ``cell``: write its section, then run it."""
    __tracebackhide__ = True  # noqa: F841  (IPython hides this frame in tracebacks)
    parsed = split_magic(f"%%mygrad {line}".rstrip() + "\n" + cell)
    assert parsed is not None  # the line was built to match
    module, section, code = parsed
    write_section(library_dir(), module, section, code)
    shell = _shell()
    if shell is not None and namespace is None:
        filename = shell.compile.cache(code)
        exec(compile(code, filename, "exec"), shell.user_ns)  # noqa: S102 - the learner's cell
    else:
        exec(compile(code, f"<mygrad {module}>", "exec"), {} if namespace is None else namespace)


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with JupyterLab
        return None
    return get_ipython()


def mygrad(line: str, cell: str) -> None:
    """``%%mygrad MODULE [SECTION]``: run the cell and write it into ``mygrad/MODULE.py``."""
    __tracebackhide__ = True  # noqa: F841
    try:
        run_mygrad_cell(line, cell)
    except LibraryError as err:
        from IPython.core.error import UsageError
        raise UsageError(str(err)) from None


def register(shell: Any | None = None) -> bool:
    """Register ``%%mygrad`` in the running IPython; return whether there was one."""
    shell = shell or _shell()
    if shell is None:
        return False
    shell.register_magic_function(mygrad, magic_kind="cell", magic_name="mygrad")
    return True


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext autograd_lab.course.learner.magic``."""
    register(shell)
