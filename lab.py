#!/usr/bin/env python3
"""Start the autograd_lab course, or run its tests, with one command on any Python 3.10+.

    python3 lab.py start     install the course (first time) and open it in JupyterLab
    python3 lab.py test      install the course and its test tools (first time), run every test

Which Python gets the packages:
- inside an active virtual environment or conda environment: that environment;
- otherwise: a virtual environment ``.venv`` beside this file, made on the first run and
  reused later. System Pythons that follow PEP 668 (Debian, Ubuntu, Homebrew) refuse
  ``pip install`` outside a virtual environment, and a course's packages do not belong in the
  system's Python anyway.

The install runs again only when the project's requirements (pyproject.toml) or the wanted
extras change, or the package is no longer installed. Arguments after the command go to
``autograd_lab start`` or to pytest, e.g. ``python3 lab.py test -n 0 tests/library/test_engine.py``.
``--dry-run`` prints what would be done and does nothing.

This file uses the standard library only, so it runs before anything is installed.
"""
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
DEFAULT_VENV = os.path.join(ROOT, ".venv")
STATE = os.path.join(ROOT, ".lab", "installed.json")
PIP_LOG = os.path.join(ROOT, ".lab", "pip.log")
EXTRAS = {"start": "", "test": "test"}
"""The pip extra each command needs (``test`` holds pytest, nbval and the instructor tools)."""
MIN_PYTHON = (3, 10)


class LaunchError(Exception):
    """Something the user has to fix before the course can be installed; the text says how."""


# -- what this Python is ------------------------------------------------------------------------

def in_virtualenv(prefix, base_prefix):
    """A venv or virtualenv is active for this interpreter."""
    return os.path.realpath(prefix) != os.path.realpath(base_prefix)


def in_conda_env(prefix, environ):
    """This interpreter belongs to an activated conda environment (base included)."""
    conda_prefix = environ.get("CONDA_PREFIX")
    if not conda_prefix:
        return False
    return os.path.realpath(conda_prefix) == os.path.realpath(prefix)


def externally_managed(stdlib_dir):
    """The interpreter is marked as managed by the system (PEP 668)."""
    return os.path.isfile(os.path.join(stdlib_dir, "EXTERNALLY-MANAGED"))


def _paths(os_name):
    import ntpath
    import posixpath
    return ntpath if os_name == "nt" else posixpath


def venv_python(venv_dir, os_name):
    """The interpreter inside a virtual environment: ``Scripts\\python.exe`` on Windows."""
    if os_name == "nt":
        return _paths(os_name).join(venv_dir, "Scripts", "python.exe")
    return _paths(os_name).join(venv_dir, "bin", "python")


def venv_bin(venv_dir, os_name):
    """The folder of an environment's commands (what activating it puts first on PATH)."""
    return _paths(os_name).join(venv_dir, "Scripts" if os_name == "nt" else "bin")


def facts(environ=None):
    """What the decision depends on, read off this interpreter and the environment variables."""
    import sysconfig
    environ = os.environ if environ is None else environ
    return {
        "prefix": sys.prefix,
        "executable": sys.executable,
        "in_venv": in_virtualenv(sys.prefix, getattr(sys, "base_prefix", sys.prefix)),
        "in_conda": in_conda_env(sys.prefix, environ),
        "externally_managed": externally_managed(sysconfig.get_path("stdlib")),
        "os_name": os.name,
        "version": tuple(sys.version_info[:2]),
    }


# -- the decision -------------------------------------------------------------------------------

def choose_environment(f, venv_dir):
    """Where to install and run: ``{"python", "kind", "create", "reason"}``.

    ``kind`` is ``active`` (the environment this Python runs in) or ``venv`` (``venv_dir``).
    """
    if f["in_venv"]:
        return {"python": f["executable"], "kind": "active", "create": False,
                "reason": "the active virtual environment " + f["prefix"]}
    if f["in_conda"] and not f["externally_managed"]:
        return {"python": f["executable"], "kind": "active", "create": False,
                "reason": "the active conda environment " + f["prefix"]}
    python = venv_python(venv_dir, f["os_name"])
    why = ("this Python is managed by the system (PEP 668) and refuses packages outside a "
           "virtual environment" if f["externally_managed"] else
           "no virtual or conda environment is active, so the course gets one of its own")
    return {"python": python, "kind": "venv", "create": not os.path.isfile(python),
            "reason": why}


def requirement_stamp(root, extra, python):
    """What an install depends on: the requirements, the extra, the interpreter, the checkout.

    The interpreter is named by its path as given, not resolved: a venv's ``bin/python`` is a
    link to the system's, and the two are different environments."""
    digest = hashlib.sha256()
    with open(os.path.join(root, "pyproject.toml"), "rb") as handle:
        digest.update(handle.read())
    for part in (extra, os.path.abspath(python), os.path.realpath(root)):
        digest.update(b"\0" + part.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def read_state(path=STATE):
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_state(state, path=STATE):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def satisfied_extras(command):
    """The extras whose install also serves ``command`` (``test`` includes what ``start`` needs)."""
    return {"start": ("", "test"), "test": ("test",)}[command]


def needs_install(state, root, command, python, installed_here):
    """Whether pip has to run: no record of an install that serves ``command``, or a record that
    no longer matches pyproject.toml, or the package is not importable from this checkout."""
    if not installed_here:
        return True
    for extra in satisfied_extras(command):
        if state.get(os.path.abspath(python)) == requirement_stamp(root, extra, python):
            return False
    return True


# -- doing it -----------------------------------------------------------------------------------

def check_python(version):
    if tuple(version) < MIN_PYTHON:
        raise LaunchError(
            "autograd_lab needs Python {}.{} or newer; this is Python {}.{}. Install a newer "
            "Python (python.org, your package manager, or conda) and run this file with it."
            .format(MIN_PYTHON[0], MIN_PYTHON[1], version[0], version[1]))


def venv_missing_message(detail):
    return ("Cannot make the virtual environment .venv: {}\n"
            "This Python lacks the standard `venv` module or its `ensurepip` part. Install it:\n"
            "  Debian/Ubuntu:  sudo apt install python3-venv   (or python3.X-venv for your "
            "version)\n"
            "  Fedora/RHEL:    sudo dnf install python3-pip\n"
            "  macOS/Windows:  the installers from python.org and Homebrew include it\n"
            "or activate an environment of your own (venv or conda) and run this command "
            "again.".format(detail))


def create_venv(venv_dir, say):
    try:
        import ensurepip  # noqa: F401  (Debian splits it into python3-venv)
        import venv  # noqa: F401
    except ImportError as err:
        raise LaunchError(venv_missing_message(str(err))) from None
    say("Making a virtual environment in {} (once) ...".format(venv_dir))
    done = subprocess.run([sys.executable, "-m", "venv", venv_dir],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        shutil.rmtree(venv_dir, ignore_errors=True)
        raise LaunchError(venv_missing_message(
            done.stdout.decode(errors="replace").strip().splitlines()[-1:] or "no output"))


def installed_from_here(python, root):
    """Whether ``python`` imports ``autograd_lab`` from this checkout (a cheap look, no import)."""
    code = ("import importlib.util as u; s = u.find_spec('autograd_lab'); "
            "print(s.origin if s and s.origin else '')")
    try:
        done = subprocess.run([python, "-I", "-c", code], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, cwd=os.path.dirname(python) or None,
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    origin = done.stdout.decode(errors="replace").strip()
    package = os.path.join(os.path.realpath(root), "autograd_lab")
    return bool(origin) and os.path.realpath(origin).startswith(package + os.sep)


def has_pip(python):
    done = subprocess.run([python, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    return done.returncode == 0


def pip_install(python, root, extra, say, tty):
    """``pip install -e .[extra]`` into ``python``'s environment with one progress line."""
    if not has_pip(python):
        raise LaunchError(
            "The environment of {} has no pip. Add it (conda: `conda install pip`; Debian/"
            "Ubuntu system Python: sudo apt install python3-pip) and run this command again."
            .format(python))
    target = ".[{}]".format(extra) if extra else "."
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", "-e", target]
    say("Installing autograd_lab{} and its dependencies (the first time takes a few minutes; "
        "the full log is in {}) ...".format(" with its test tools" if extra else "",
                                          os.path.relpath(PIP_LOG, root)))
    os.makedirs(os.path.dirname(PIP_LOG), exist_ok=True)
    started = time.monotonic()
    with open(PIP_LOG, "w", encoding="utf-8", errors="replace") as log:
        log.write(" ".join(cmd) + "\n")
        process = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        width = shutil.get_terminal_size((80, 20)).columns - 1
        for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip()
            log.write(line + "\n")
            if tty and line.startswith(("Collecting", "Downloading", "Building", "Installing",
                                        "Obtaining", "Processing", "Requirement already")):
                text = "  {:>4.0f} s  {}".format(time.monotonic() - started, line.strip())
                sys.stdout.write("\r" + text[:width].ljust(width))
                sys.stdout.flush()
        code = process.wait()
    if tty:
        sys.stdout.write("\r" + " " * width + "\r")
    if code != 0:
        with open(PIP_LOG, encoding="utf-8", errors="replace") as log:
            tail = log.read().splitlines()[-25:]
        raise LaunchError("pip could not install the course (exit code {}). The end of its log "
                          "({}):\n  {}".format(code, PIP_LOG, "\n  ".join(tail)))
    say("Installed in {:.0f} s.".format(time.monotonic() - started))


def child_environment(env_choice, venv_dir, os_name, environ=None):
    """The environment variables of the command: a made venv is activated (its commands first
    on PATH, as `activate` does), so the tools that start others by name find them."""
    env = dict(os.environ if environ is None else environ)
    if env_choice["kind"] == "venv":
        env["VIRTUAL_ENV"] = venv_dir
        sep = ";" if os_name == "nt" else ":"
        env["PATH"] = venv_bin(venv_dir, os_name) + sep + env.get("PATH", "")
        env.pop("PYTHONHOME", None)
    return env


def command_line(command, python, args):
    if command == "start":
        return [python, "-m", "autograd_lab", "start"] + list(args)
    return [python, "-m", "pytest"] + list(args)


def run(cmd, cwd, env):
    """Run the command to its end; Ctrl+C reaches it (same terminal) and we wait for it."""
    sys.stdout.flush()  # what we said comes before what the command says
    process = subprocess.Popen(cmd, cwd=cwd, env=env)
    while True:
        try:
            return process.wait()
        except KeyboardInterrupt:
            continue


def parse(argv):
    import argparse
    parser = argparse.ArgumentParser(
        prog="lab.py", description="Install the autograd_lab course where it belongs (the "
        "active environment, or .venv beside this file) and start it or run its tests.",
        epilog="Arguments after the command go to `autograd_lab start` or to pytest.")
    parser.add_argument("command", choices=("start", "test"),
                        help="start: open the course in JupyterLab; test: run every test")
    parser.add_argument("--venv", default=DEFAULT_VENV, metavar="DIR",
                        help="where to make the virtual environment when none is active "
                             "(default: .venv beside this file)")
    parser.add_argument("--reinstall", action="store_true",
                        help="run pip even if nothing changed since the last install")
    parser.add_argument("--dry-run", action="store_true",
                        help="print what would be done, and do nothing")
    return parser.parse_known_args(argv)


def main(argv=None):
    options, rest = parse(sys.argv[1:] if argv is None else argv)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    # flushed: with the output going to a file or a pipe, the learner reads each line as it happens
    say = functools.partial(print, flush=True)
    try:
        f = facts()
        check_python(f["version"])
        venv_dir = os.path.abspath(options.venv)
        choice = choose_environment(f, venv_dir)
        python = choice["python"]
        extra = EXTRAS[options.command]
        state = read_state()
        present = os.path.isfile(python) and installed_from_here(python, ROOT)
        install = options.reinstall or needs_install(state, ROOT, options.command, python, present)
        cmd = command_line(options.command, python, rest)
        cwd = ROOT if options.command == "test" else os.getcwd()
        if options.dry_run:
            say(json.dumps({"environment": choice["kind"], "python": python,
                            "create_venv": choice["create"], "install": install,
                            "extra": extra, "command": cmd, "cwd": cwd,
                            "reason": choice["reason"]}, indent=1))
            return 0
        say("Using {}: {}.".format(python, choice["reason"]))
        if choice["create"]:
            create_venv(venv_dir, say)
        if install:
            pip_install(python, ROOT, extra, say, sys.stdout.isatty())
            if not installed_from_here(python, ROOT):
                raise LaunchError("pip finished, but {} does not import autograd_lab from {}. "
                                  "See {}.".format(python, ROOT, PIP_LOG))
            state = read_state()
            state[os.path.abspath(python)] = requirement_stamp(ROOT, extra, python)
            write_state(state)
        env = child_environment(choice, venv_dir, f["os_name"])
        return run(cmd, cwd, env)
    except LaunchError as err:
        sys.stderr.write("lab.py: {}\n".format(err))
        return 2


if __name__ == "__main__":
    sys.exit(main())
