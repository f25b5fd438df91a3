"""Each chapter's first cell: import the learner's ``mygrad``, module by module, with a fallback.

::

    from autograd_lab.course import load_mygrad
    mygrad = load_mygrad(chapter=4)        # the modules of chapters 02 and 03
    from mygrad import Variable, Function

For every module of the earlier chapters, in the course's order, the loader tries the
learner's file ``mygrad/<module>.py`` (working folder, or ``$AUTOGRAD_LAB_MYGRAD_DIR``) on top
of the modules already chosen, and runs that chapter's library check
(``autograd_lab.course.exercises.chNN.mygrad_<module>``). A module that is missing, does not import
or fails its check is replaced by the key's module (:data:`~.library.REFERENCE_ROOT`), and
the loader says so in one line. So a learner can always go on, and each notebook grades on its
own. The result is a fresh package ``mygrad`` in ``sys.modules``: ``import mygrad`` anywhere in
the notebook gets it. The ``%%mygrad`` magic is registered too.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import io
import json
import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .export import (PACKAGE, REFERENCE_ROOT, Module, atomic_write, library_dir, modules_before)

CHECK_SECONDS = 60
"""Processor seconds one module's check may use before it counts as failed (an endless loop,
say). Processor time, not wall time: on a busy machine compiling a kernel takes long on the
clock but little of the processor."""


@dataclass(frozen=True)
class Choice:
    """Which file a module of the loaded package came from, and why."""

    module: str
    path: Path
    yours: bool
    reason: str = ""  # why the reference was used ("" when the learner's module is used)


class _CheckTimeout(Exception):
    stops_observing = True  # the whole check stops, not one case of it (exercises._observe)


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise ``_CheckTimeout`` after ``seconds`` of processor time (main thread on POSIX;
    elsewhere there is no limit)."""
    usable = (hasattr(signal, "SIGPROF") and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise _CheckTimeout(f"the check did not finish within {seconds:g} s of processor time "
                            "(an endless loop?)")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _forget_package() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def build_package(files: dict[str, Path], search: Path | None = None) -> types.ModuleType:
    """A fresh package ``mygrad`` in ``sys.modules`` made of these module files.

    ``files`` maps module names to paths; modules are executed in the course's order, so a
    module sees the ones before it (``from .variable import *``). ``search`` is where
    ``import mygrad.other`` looks for modules not in ``files``.
    """
    from .export import MODULES
    _forget_package()
    package = types.ModuleType(PACKAGE, "mygrad: the autograd library you build in the course.")
    package.__path__ = [str(search)] if search is not None else []
    package.__package__ = PACKAGE
    sys.modules[PACKAGE] = package
    exported: list[str] = []
    try:
        for info in MODULES:
            if info.name not in files:
                continue
            name = f"{PACKAGE}.{info.name}"
            spec = importlib.util.spec_from_file_location(name, files[info.name])
            if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has one
                raise ImportError(f"cannot load {files[info.name]}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            setattr(package, info.name, module)
            if info.imports_ours:
                for attr in getattr(module, "__all__", []):
                    setattr(package, attr, getattr(module, attr))
                    exported.append(attr)
    except BaseException:
        _forget_package()
        raise
    package.__all__ = list(dict.fromkeys(exported))  # type: ignore[attr-defined]  # a module made here
    importlib.invalidate_caches()
    return package


def library_check(module: Module) -> Callable[[types.ModuleType], None] | None:
    """The check of a module: ``autograd_lab.course.exercises.chNN.mygrad_<module>``, if it exists."""
    chapter = importlib.import_module(f"autograd_lab.course.exercises.ch{module.chapter:02d}")
    return getattr(chapter, f"mygrad_{module.name}", None)


def _first_line(err: BaseException) -> str:
    from ..exercises.module_checks import ModuleCheckFailed
    text = str(err).strip().splitlines()
    if isinstance(err, ModuleCheckFailed) and text:  # it names the exercise and the case
        return text[0]
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def try_module(files: dict[str, Path], module: Module, search: Path | None = None) -> str:
    """Build the package from ``files`` and check ``module`` with every graded check of its
    chapter that touches it (visible and hidden cases, :mod:`~..exercises.module_checks`) and
    the chapter's library check; return '' or why it failed."""
    from ..exercises.module_checks import run_module_checks
    try:
        with contextlib.redirect_stdout(io.StringIO()), _time_limit(CHECK_SECONDS):
            package = build_package(files, search)
            run_module_checks(package, module.name)
            check = library_check(module)
            if check is not None:
                check(package)
    except (Exception, _CheckTimeout) as err:  # the learner's code may raise anything
        return _first_line(err)
    return ""


# -- the record of checks already run -----------------------------------------------------------
RECORD = ".checks.json"
"""In the learner's ``mygrad/``: the outcome of each module's checks, keyed by a hash of exactly
the sources they ran on (the module, the modules under it, the checkers), so an unchanged
module is not checked again at the start of every chapter."""


def _checkers_hash() -> str:
    folder = Path(__file__).resolve().parents[1] / "exercises"
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def record_key(files: dict[str, Path], module: Module) -> str:
    """What a module's outcome depends on: every file the package was built from, in order,
    and the checkers."""
    digest = hashlib.sha256(f"{module.name}\0{_checkers_hash()}".encode())
    for name, path in files.items():
        digest.update(f"\0{name}\0".encode() + Path(path).read_bytes())
    return digest.hexdigest()


def read_record(folder: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_record(folder: Path, record: dict[str, dict[str, str]]) -> None:
    """Write the record whole or not at all (two notebooks may load at once)."""
    with contextlib.suppress(OSError):
        atomic_write(folder / RECORD, json.dumps(record, indent=1, sort_keys=True))


def _checked(files: dict[str, Path], module: Module, own_dir: Path,
             record: dict[str, dict[str, str]]) -> str:
    """``try_module``, or its recorded outcome for exactly these sources."""
    key = record_key(files, module)
    seen = record.get(module.name)
    if isinstance(seen, dict) and seen.get("key") == key and isinstance(seen.get("reason"), str):
        return seen["reason"]
    reason = try_module(files, module, own_dir)
    if "did not finish within" not in reason:  # a time-out depends on the machine's load
        record[module.name] = {"key": key, "reason": reason}
    return reason


def choose_modules(chapter: int, *, including: bool = False,
                   folder: str | os.PathLike[str] | None = None) -> list[Choice]:
    """For each module before ``chapter``: the learner's file if it works, else the reference."""
    own_dir = library_dir(folder) / PACKAGE
    reference = REFERENCE_ROOT / PACKAGE
    files: dict[str, Path] = {}
    choices = []
    record = read_record(own_dir)
    before = dict(record)
    for module in modules_before(chapter, including=including):
        own = own_dir / f"{module.name}.py"
        if own.is_file():
            reason = _checked({**files, module.name: own}, module, own_dir, record)
        else:
            reason = "missing"
        chosen = own if not reason else reference / f"{module.name}.py"
        if not chosen.is_file():  # neither yours nor a key's module (a chapter without one)
            continue
        files[module.name] = chosen
        choices.append(Choice(module.name, chosen, not reason, reason))
    if record != before and own_dir.is_dir():
        write_record(own_dir, record)
    return choices


def describe(choices: list[Choice]) -> list[str]:
    """One line for the modules in use, one line for each that fell back to the reference."""
    lines = []
    yours = [c.module for c in choices if c.yours]
    if yours:
        lines.append("mygrad: your " + ", ".join(f"{m}.py" for m in yours)
                     + " (each passed its chapter's checks)")
    for c in choices:
        if c.yours:
            continue
        chapter = next(m.chapter for m in modules_before(99) if m.name == c.module)
        if c.reason == "missing":
            lines.append(f"mygrad: no {c.module}.py of yours yet -> using the course's; run the "
                         f"%%mygrad cells of chapter {chapter:02d} to write yours")
        else:
            lines.append(f"mygrad: your {c.module}.py failed chapter {chapter:02d}'s checks "
                         f"({c.reason}) -> using the course's until you fix it")
    return lines


def load_mygrad(chapter: int, *, including: bool = False,
                folder: str | os.PathLike[str] | None = None,
                quiet: bool = False) -> types.ModuleType:
    """Import ``mygrad`` for a chapter (see the module docstring) and register ``%%mygrad``."""
    from .magic import register
    register()
    choices = choose_modules(chapter, including=including, folder=folder)
    package = build_package({c.module: c.path for c in choices}, library_dir(folder) / PACKAGE)
    package.__choices__ = choices  # type: ignore[attr-defined]
    if not quiet:
        for line in describe(choices):
            print(line)
    return package
