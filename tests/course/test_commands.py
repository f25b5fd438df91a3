"""course/commands/: one module per subcommand, each with its parser and its run, all registered."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

from autograd_lab.course import commands

ROOT = Path(__file__).resolve().parents[2]
MODULES = [importlib.import_module(f"{commands.__name__}.{info.name}")
           for info in pkgutil.iter_modules(commands.__path__)]


def test_every_command_module_has_a_parser_and_a_run_and_is_registered() -> None:
    assert len(MODULES) == len(commands.COMMANDS) == 9
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    for module in MODULES:
        assert callable(module.run), module.__name__
        assert module.add_parser in commands.COMMANDS, module.__name__
        before = set(sub.choices)
        module.add_parser(sub)
        added = set(sub.choices) - before
        assert len(added) == 1, (module.__name__, added)  # one subcommand per module
        func = sub.choices[added.pop()].get_default("func")
        assert func is module.run or module.__name__.endswith(".train"), module.__name__


def test_help_imports_no_command_s_work() -> None:
    """Building the parsers imports argparse's needs only; what a command does loads in run()."""
    work = [f"autograd_lab.course.learner.{m}" for m in ("start", "check", "export", "ownership")]
    work += ["autograd_lab.course.authoring.release", "autograd_lab.course.grading.batch",
             "autograd_lab.course.grading.nbgrader_root"]
    program = ("import sys\nfrom autograd_lab.cli import main\n"
               "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
               f"print(sorted(m for m in {work!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]", done.stdout
