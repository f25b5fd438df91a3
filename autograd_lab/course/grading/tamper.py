"""Tamper flags: a static scan of a submission's code for what no exercise needs.

Code running inside the notebook's kernel can rewire that kernel (IPython's hooks, the
import system, the checkers), and no sandbox can tell that apart from honest work at run
time. So before grading, every code cell is turned into Python (IPython magics included)
and read with :mod:`ast`; each use of something from :data:`RULES` becomes a
:class:`Flag` (what, and the cell). Flags do not change a score: they put the notebook on
the "needs review" list and in the ``flags`` column of ``grades.csv``.

The scan reads names, attributes, imports and calls. Code that hides what it does (a name
built from pieces and looked up at run time) is flagged only where the hiding itself uses
something on the list (``getattr`` with a computed name, ``exec`` of a computed string,
``globals()`` edits, ...).
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass

from nbformat import NotebookNode

# attribute (or name) -> why it is flagged
ATTRIBUTES = {
    "ast_transformers": "IPython AST transformers",
    "input_transformers_post": "IPython input transformers",
    "input_transformers_cleanup": "IPython input transformers",
    "input_transformer_manager": "IPython input transformers",
    "set_custom_exc": "IPython custom exception handler",
    "custom_exceptions": "IPython custom exception handler",
    "CustomTB": "IPython custom exception handler",
    "showtraceback": "IPython traceback display",
    "_showtraceback": "IPython traceback display",
    "events": "IPython event hooks",
    "register_magic_function": "IPython magics registration",
    "meta_path": "the import system (sys.meta_path)",
    "path_hooks": "the import system (sys.path_hooks)",
    "path_importer_cache": "the import system (sys.path_importer_cache)",
    "get_referrers": "gc object-graph walking", "get_referents": "gc object-graph walking",
    "_getframe": "frame inspection", "currentframe": "frame inspection",
    "f_back": "frame inspection", "f_globals": "frame inspection", "f_locals": "frame inspection",
    "f_builtins": "frame inspection", "tb_frame": "frame inspection",
    "gi_frame": "frame inspection", "cr_frame": "frame inspection",
    "__globals__": "function internals", "__code__": "function internals",
    "__closure__": "function internals", "__subclasses__": "class-graph walking",
    "__builtins__": "builtins", "settrace": "tracing hooks", "setprofile": "tracing hooks",
    "excepthook": "exception hooks", "displayhook": "display hooks",
    "addaudithook": "audit hooks",
    **{name: "process creation" for name in (
        "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe",
        "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
        "spawnl", "spawnle", "spawnlp", "spawnlpe", "create_subprocess_exec",
        "create_subprocess_shell", "subprocess_exec", "subprocess_shell", "Popen",
        "check_output", "check_call", "getstatusoutput", "fork_exec", "ProcessPoolExecutor",
        "register_at_fork")},
}
"""Attributes flagged on any object: the process-creation names are flagged wherever they are
reached from (``__import__('os').fork``, an event loop's ``subprocess_exec``)."""
_PROCESS = ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "execv",
            "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe", "spawnv",
            "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe")
_FILES = ("remove", "unlink", "rename", "renames", "replace", "rmdir", "removedirs",
          "makedirs", "mkdir", "symlink", "link", "chmod", "chown", "truncate", "utime")
MODULE_ATTRIBUTES: dict[tuple[str, str], str] = {
    ("sys", "modules"): "the import system (sys.modules)",
    ("os", "_exit"): "os._exit (kills the kernel)", ("os", "kill"): "killing processes",
    ("os", "killpg"): "killing processes", ("gc", "get_objects"): "gc object-graph walking",
    ("inspect", "stack"): "frame inspection", ("inspect", "getouterframes"): "frame inspection",
    ("inspect", "getinnerframes"): "frame inspection", ("inspect", "trace"): "frame inspection",
    **{("os", name): "process creation or shell commands" for name in _PROCESS},
    **{("os", name): "changing files (os)" for name in _FILES},
    **{("shutil", name): "changing files (shutil)" for name in (
        "rmtree", "move", "copy", "copy2", "copyfile", "copytree", "chown")},
    **{(module, name): "process creation" for module, name in (
        ("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell"),
        ("pty", "spawn"), ("pty", "fork"), ("concurrent.futures", "ProcessPoolExecutor"))},
}
IMPORTS = {
    "ctypes": "ctypes", "_ctypes": "ctypes", "cffi": "ctypes", "builtins": "builtins",
    "__builtin__": "builtins", "subprocess": "subprocess", "multiprocessing": "subprocess",
    "pty": "subprocess", "socket": "network", "gc": None, "unittest.mock": "mock patching",
    "mock": "mock patching", "importlib": None, "IPython": "IPython internals",
    "ipykernel": "IPython internals", "traitlets": "IPython internals",
    "nbclient": "the grader's machinery", "nbgrader": "the grader's machinery",
    "autograd_lab.course.exercises": "importing the checkers' modules",
    "autograd_lab.course.grading": "the grader's machinery",
    "autograd_lab.course.authoring": "the grader's machinery",
    "asyncio.subprocess": "process creation", "_posixsubprocess": "process creation",
    "posix": "process creation or shell commands (posix)", "_winapi": "process creation",
    "concurrent.futures.process": "process creation",
}
ALLOWED_IMPORTS = {("IPython.display", None), ("autograd_lab.course.exercises", "check")}
PATH_WRITES = {"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"}
"""Methods of ``pathlib.Path`` that write, with names nothing else in the course uses."""
SAFE_LINE_MAGICS = {"time", "timeit", "matplotlib", "precision", "pprint", "who", "whos"}
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "mygrad"}
_SENSITIVE = {"sys", "os", "builtins", "gc", "inspect", "importlib", "IPython", "ctypes",
              "subprocess", "shutil", "autograd_lab"}
DYNAMIC = {"exec", "eval", "compile", "__import__", "import_module", "reload"}
BUILTIN_ONLY = {"exec", "eval", "compile", "__import__"}
"""Dynamic-code builtins: ``model.eval()`` or ``re.compile(...)`` are other functions."""
READ_ONLY_OK = {("sys", "modules")}
"""Reading these is harmless (``sys.modules.get(name)``); writing them is flagged as patching."""
LIBRARIES = frozenset(sys.stdlib_module_names) | {"numpy", "scipy", "IPython", "ipykernel",
                                                   "nbformat", "nbclient", "traitlets"}
"""Modules (and their submodules) whose attributes a submission may read and call but never
assign: replacing ``contextlib._GeneratorContextManager.__exit__`` or ``numpy.allclose`` changes
what every checker runs."""



@dataclass(frozen=True)
class Flag:
    """Something a code cell does that no exercise needs."""

    cell: int
    what: str

    def __str__(self) -> str:
        return f"cell {self.cell}: {self.what}"


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


class _Scanner(ast.NodeVisitor):
    def __init__(self, modules: dict[str, str] | None = None) -> None:
        self.found: list[str] = []
        # local name -> module (or module attribute) it is bound to; shared by a notebook's cells
        self.modules: dict[str, str] = {} if modules is None else modules
        self._read_only: set[int] = set()  # ids of `sys` names only read through (see READ_ONLY_OK)

    def flag(self, what: str, where: str) -> None:
        self.found.append(f"{what} ({where})")

    # imports ------------------------------------------------------------------------------
    def _import(self, module: str, name: str | None, bound: str) -> None:
        full = f"{module}.{name}" if name else module
        self.modules[bound] = full
        why = MODULE_ATTRIBUTES.get((module, name or ""))
        if why:
            self.flag(why, f"from {module} import {name}")
        if (module, name) in ALLOWED_IMPORTS or (module, None) in ALLOWED_IMPORTS:
            return
        for prefix, why in IMPORTS.items():
            if why and (full == prefix or full.startswith(prefix + ".")):
                self.flag(why, f"import {full}")
                return
        if name == "check" and bound != "check" or bound == "check":
            self.flag("rebinding `check`", f"import {full} as {bound}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(alias.name, None, alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self._import(node.module or "", alias.name, alias.asname or alias.name)

    # names and attributes ----------------------------------------------------------------
    def _attribute(self, base: ast.AST, attr: str, where: str) -> None:
        why = ATTRIBUTES.get(attr)
        if why:
            self.flag(why, where)
        key = (self._module_of(base), attr)
        why = MODULE_ATTRIBUTES.get(key)
        if why and not (key in READ_ONLY_OK and id(base) in self._read_only):
            self.flag(why, where)

    def _module_of(self, node: ast.AST) -> str:
        """The module an expression names (``os``, ``os.path``), or ''."""
        if isinstance(node, ast.Name):
            return self.modules.get(node.id, "")
        if isinstance(node, ast.Attribute):
            base = self._module_of(node.value)
            return f"{base}.{node.attr}" if base else ""
        return ""

    def _mark_read(self, node: ast.AST) -> None:
        """``node`` is only read here (``sys.modules[name]``, ``sys.modules.get(name)``)."""
        if isinstance(node, ast.Attribute) and \
                (self._module_of(node.value), node.attr) in READ_ONLY_OK:
            self._read_only.add(id(node.value))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._attribute(node.value, node.attr, f".{node.attr}")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._store_into(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._store_into(node)
        else:
            self._mark_read(node.value)
        self.generic_visit(node)

    def _store_into(self, node: ast.AST) -> None:
        root = _root(node)
        if isinstance(root, ast.Name) and root.id in ("globals", "vars", "locals"):
            self.flag("editing namespaces by name", f"{root.id}()[...]")
        elif isinstance(root, ast.Name):
            module = self.modules.get(root.id, "")
            if root.id == "check" or module.startswith(("autograd_lab", "sys", "builtins")):
                self.flag("patching a module or the checkers", f"assignment into {root.id}")
            elif module.split(".")[0] in LIBRARIES:
                self.flag("patching the standard library or numpy",
                          f"assignment into {module}" + (f" ({root.id})" if module.split(".")[0]
                                                         != root.id else ""))
            elif root.id == "type" and isinstance(node, ast.Attribute):
                self.flag("patching a class through type()", f"type(...).{node.attr} = ...")

    def visit_Assign(self, node: ast.Assign) -> None:
        """``G = contextlib._GeneratorContextManager`` binds G to what it names, so that
        ``G.__exit__ = f`` is an assignment into the standard library too."""
        self.generic_visit(node)
        value, chain = node.value, []
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        module = self.modules.get(value.id, "") if isinstance(value, ast.Name) else ""
        for target in node.targets:
            if isinstance(target, ast.Name):
                if module:
                    self.modules[target.id] = ".".join([module, *reversed(chain)])
                else:
                    self.modules.pop(target.id, None)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("get_ipython", "__builtins__", "__builtin__", "__loader__", "__spec__"):
            self.flag("IPython internals" if node.id == "get_ipython" else "interpreter internals",
                      node.id)
        if node.id == "check" and isinstance(node.ctx, (ast.Store, ast.Del)):
            self.flag("rebinding `check`", "check = ...")

    def _defines(self, name: str, kind: str) -> None:
        if name == "check":
            self.flag("rebinding `check`", f"{kind} check")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._defines(node.name, "def")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._defines(node.name, "class")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        if "check" in node.names:
            self.flag("rebinding `check`", "global check")

    # calls --------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = self._call_name(func)
        if name in DYNAMIC:
            self._dynamic_call(node, name)
        if name == "get" and isinstance(func, ast.Attribute):
            self._mark_read(func.value)
        if name in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) >= 2:
            self._attribute_by_name(node, name)
        if name in ("update", "setdefault", "pop", "__setitem__") and \
                isinstance(func, ast.Attribute):
            self._namespace_method(func, name)
        if self._opens_a_file(func, name) or \
                name in PATH_WRITES and isinstance(func, ast.Attribute):
            self._file_write(node, name)
        self.generic_visit(node)

    def _call_name(self, func: ast.expr) -> str:
        """The name a call is judged by: ``f`` of ``f(...)`` and ``x.f(...)``; empty for other
        callees and for a method that merely shares a builtin's name (``model.eval()``,
        ``re.compile(...)``)."""
        name = func.id if isinstance(func, ast.Name) else func.attr \
            if isinstance(func, ast.Attribute) else ""
        if name in BUILTIN_ONLY and isinstance(func, ast.Attribute) and \
                self._module_of(func.value) != "builtins":
            return ""
        return name

    def _dynamic_call(self, node: ast.Call, name: str) -> None:
        """``exec``/``eval``/``__import__``...: a computed argument is flagged; a literal code
        string is scanned itself."""
        first = node.args[0] if node.args else None
        text = _literal(first) if first is not None else None
        if text is None:
            self.flag("dynamic code or import", f"{name}(...) of a computed value")
        elif name in ("exec", "eval", "compile"):
            self._nested(text, name)

    def _computed_name_is_suspect(self, node: ast.Call, name: str) -> bool:
        """A computed name is flagged for ``setattr``/``delattr`` on anything but ``self``, and
        for ``getattr`` on a sensitive module or on ``check``."""
        target = node.args[0]
        if isinstance(target, ast.Name) and target.id == "self":
            return False
        if name in ("setattr", "delattr"):
            return True
        return name == "getattr" and (
            self._module_of(target).split(".")[0] in _SENSITIVE
            or isinstance(target, ast.Name) and target.id == "check")

    def _attribute_by_name(self, node: ast.Call, name: str) -> None:
        """``getattr(x, 'a')`` and kin are read as ``x.a`` (a store for set/del); a computed
        name is flagged where the hiding itself is suspect."""
        attr = _literal(node.args[1])
        if attr is None:
            if self._computed_name_is_suspect(node, name):
                self.flag("attribute access by a computed name", f"{name}(...)")
            return
        self._attribute(node.args[0], attr, f"{name}(..., {attr!r})")
        if name != "getattr":
            self._store_into(ast.Attribute(value=node.args[0], attr=attr, ctx=ast.Store()))

    def _namespace_method(self, func: ast.Attribute, name: str) -> None:
        """``globals().update(...)`` and kin edit a namespace by name."""
        root = _root(func.value)
        if isinstance(root, ast.Name) and root.id in ("globals", "vars", "locals"):
            self.flag("editing namespaces by name", f"{root.id}().{name}")

    def _opens_a_file(self, func: ast.expr, name: str) -> bool:
        """``open(...)``, or ``io``/``os``/``codecs``/``builtins``'s ``open``; not a method of
        anything else that happens to be called open."""
        return name == "open" and not (
            isinstance(func, ast.Attribute)
            and self._module_of(func.value) not in ("io", "os", "codecs", "builtins"))

    def _file_write(self, node: ast.Call, name: str) -> None:
        if name == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            mode_text = _literal(mode) if mode is not None else "r"
            if mode_text is not None and not set(mode_text) & set("wax+"):
                return
            target = node.args[0] if node.args else None
        else:
            target = node.func.value if isinstance(node.func, ast.Attribute) else None
        path = _literal(target) if target is not None else None
        if isinstance(target, ast.Call) and target.args and \
                isinstance(target.func, ast.Name) and target.func.id == "Path":
            path = _literal(target.args[0])
        if path is None or path.startswith(("/", "~", "\\")) or ".." in path.split("/") \
                or ":" in path[:3]:
            self.flag("writing files outside the working folder",
                      f"{name}({path!r})" if path is not None else f"{name}(<computed path>)")

    def _nested(self, text: str, name: str) -> None:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return
        before = len(self.found)
        self.visit(tree)
        self.found[before:] = [f"{f} inside {name}()" for f in self.found[before:]]


def to_python(source: str) -> tuple[str, list[str]]:
    """A cell's source as plain Python, and flags for magics that run more than Python."""
    lines = source.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%"):
        magic = first[2:].split()[0] if first[2:].split() else ""
        body = "\n".join(lines[[line.strip() for line in lines].index(first) + 1:])
        if magic in PYTHON_CELL_MAGICS:
            python, found = to_python(body)
            return python, found
        return "", [f"cell magic %%{magic} (runs the cell as something else than Python)"]
    from IPython.core.inputtransformer2 import TransformerManager
    python = TransformerManager().transform_cell(source)
    found = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("!"):
            found.append("shell commands (!)")
        elif stripped.startswith("%") and not stripped.startswith("%%"):
            magic = stripped[1:].split()[0] if stripped[1:].split() else ""
            if magic not in SAFE_LINE_MAGICS:
                found.append(f"line magic %{magic}")
    return _strip_magic_calls(python), found


_MAGIC_OPTION = re.compile(r"^\s*(?:-[nrp]\s*\S+|-[tcqo])(?=\s)")


def magic_arguments(source: str) -> list[str]:
    """The Python that magics' arguments run, as separate sources to scan as statements:
    ``%time a = 1; b.c = d`` runs ``a = 1; b.c = d``, ``%%timeit SETUP`` runs ``SETUP``
    (``%timeit``'s options such as ``-n 10`` removed). Arguments that are not Python are
    left out (they parse to nothing the scan could flag)."""
    found: list[str] = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped.startswith("%"):
            continue
        body = stripped.lstrip("%")
        parts = body.split(None, 1)
        if len(parts) < 2:
            continue
        argument = parts[1]
        if parts[0] == "capture":  # %%capture [options] [NAME]: no code
            continue
        while (match := _MAGIC_OPTION.match(argument + " ")):
            argument = argument[match.end():].lstrip()
        found.append(argument)
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        tree = ast.parse(TransformerManager().transform_cell(source))
    except Exception:  # not Python even for IPython: the scan of the cell says what it can
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("run_line_magic", "run_cell_magic") and len(node.args) >= 2:
            literal = _literal(node.args[1])
            if literal and literal not in found:
                found.append(literal)
    return found


def _strip_magic_calls(python: str) -> str:
    """Turn ``get_ipython().run_line_magic('time', 'expr')`` back into ``expr`` for the scan."""
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return python

    class Unmagic(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in (
                    "run_line_magic", "run_cell_magic", "system", "getoutput") and \
                    isinstance(func.value, ast.Call) and \
                    isinstance(func.value.func, ast.Name) and \
                    func.value.func.id == "get_ipython":
                args = [_literal(a) or "" for a in node.args]
                if func.attr == "run_line_magic" and args and args[0] in SAFE_LINE_MAGICS:
                    try:
                        return ast.parse(args[1] or "None", mode="eval").body
                    except SyntaxError:
                        pass
                return ast.Constant(None)
            return self.generic_visit(node)

    return ast.unparse(Unmagic().visit(tree))


def scan_source(source: str, modules: dict[str, str] | None = None) -> list[str]:
    """What in one cell's source is on the list (empty for honest code, or code that fails to
    parse). ``modules`` carries the names earlier cells bound to modules (and gets this cell's)."""
    python, found = to_python(source)
    scanner = _Scanner(modules)
    for text in [python] + magic_arguments(source):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        scanner.visit(tree)
    return list(dict.fromkeys(found + scanner.found))


def scan_notebook(nb: NotebookNode) -> list[Flag]:
    """Flags for every code cell of a submission, in cell order (cells numbered from 0)."""
    flags = []
    modules: dict[str, str] = {}  # what `import numpy as np` in one cell binds, for the next
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") == "code" and isinstance(cell.get("source"), str):
            flags += [Flag(index, what) for what in scan_source(cell.source, modules)]
    return flags
