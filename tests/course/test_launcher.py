"""lab.py, the launcher of the README's two commands: where it installs, when it reinstalls, what
it tells a user whose Python lacks venv, and the paths of Windows. No network: pip never runs."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("lab_launcher", ROOT / "lab.py")
assert _spec is not None and _spec.loader is not None
lab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lab)


def facts(**changes: object) -> dict:
    base = {"prefix": "/usr", "executable": "/usr/bin/python3", "in_venv": False,
            "in_conda": False, "externally_managed": False, "os_name": "posix",
            "version": (3, 11)}
    base.update(changes)
    return base


# -- the decision table -------------------------------------------------------------------------

def test_inside_a_virtualenv_it_uses_that_environment() -> None:
    choice = lab.choose_environment(
        facts(prefix="/tmp/v", executable="/tmp/v/bin/python", in_venv=True), "/repo/.venv")
    assert choice["kind"] == "active" and choice["python"] == "/tmp/v/bin/python"
    assert not choice["create"]
    assert "virtual environment /tmp/v" in choice["reason"]


def test_inside_conda_it_uses_that_environment() -> None:
    choice = lab.choose_environment(
        facts(prefix="/opt/conda/envs/a", executable="/opt/conda/envs/a/bin/python",
              in_conda=True), "/repo/.venv")
    assert choice["kind"] == "active" and choice["python"] == "/opt/conda/envs/a/bin/python"
    assert "conda environment" in choice["reason"]


def test_a_conda_env_marked_externally_managed_gets_a_venv() -> None:
    choice = lab.choose_environment(facts(in_conda=True, externally_managed=True), "/r/.venv")
    assert choice["kind"] == "venv" and choice["python"] == "/r/.venv/bin/python"


@pytest.mark.parametrize("managed", [True, False])
def test_outside_any_environment_it_makes_dot_venv(managed: bool, tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    choice = lab.choose_environment(facts(externally_managed=managed), str(venv))
    assert choice["kind"] == "venv"
    assert choice["python"] == str(venv / "bin" / "python")
    assert choice["create"]  # nothing there yet
    assert ("PEP 668" in choice["reason"]) is managed
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    assert not lab.choose_environment(facts(externally_managed=managed), str(venv))["create"]


def test_windows_paths() -> None:
    choice = lab.choose_environment(facts(os_name="nt", executable="C:\\Python312\\python.exe",
                                          prefix="C:\\Python312"), "C:\\course\\.venv")
    assert choice["python"] == "C:\\course\\.venv\\Scripts\\python.exe"
    env = lab.child_environment(choice, "C:\\course\\.venv", "nt", {"PATH": "C:\\Windows"})
    assert env["PATH"] == "C:\\course\\.venv\\Scripts;C:\\Windows"
    assert env["VIRTUAL_ENV"] == "C:\\course\\.venv"


def test_a_made_venv_is_activated_for_the_command_and_an_active_one_left_alone() -> None:
    made = lab.choose_environment(facts(), "/r/.venv")
    env = lab.child_environment(made, "/r/.venv", "posix",
                                {"PATH": "/usr/bin", "PYTHONHOME": "/x"})
    assert env["PATH"] == "/r/.venv/bin:/usr/bin" and env["VIRTUAL_ENV"] == "/r/.venv"
    assert "PYTHONHOME" not in env
    active = lab.choose_environment(facts(in_venv=True, prefix="/v"), "/r/.venv")
    assert lab.child_environment(active, "/r/.venv", "posix", {"PATH": "/usr/bin"}) == \
        {"PATH": "/usr/bin"}


def test_the_commands_it_runs() -> None:
    assert lab.command_line("start", "/p", ["--no-browser"]) == \
        ["/p", "-m", "autograd_lab", "start", "--no-browser"]
    assert lab.command_line("test", "/p", ["-n", "0"]) == ["/p", "-m", "pytest", "-n", "0"]


# -- what this interpreter is ----------------------------------------------------------------------

def test_environment_detection(tmp_path: Path) -> None:
    assert lab.in_virtualenv("/tmp/v", "/usr")
    assert not lab.in_virtualenv("/usr", "/usr")
    assert lab.in_conda_env("/opt/conda/envs/a", {"CONDA_PREFIX": "/opt/conda/envs/a"})
    assert not lab.in_conda_env("/usr", {"CONDA_PREFIX": "/opt/conda/envs/a"})
    assert not lab.in_conda_env("/usr", {})
    assert not lab.externally_managed(str(tmp_path))
    (tmp_path / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n")
    assert lab.externally_managed(str(tmp_path))


def test_this_interpreter_is_read_correctly() -> None:
    f = lab.facts({})
    assert f["in_venv"] == (os.path.realpath(sys.prefix) != os.path.realpath(sys.base_prefix))
    assert f["version"] == sys.version_info[:2]
    assert f["externally_managed"] == (
        Path(sysconfig.get_path("stdlib")) / "EXTERNALLY-MANAGED").is_file()


def test_old_python_is_refused_with_the_version() -> None:
    with pytest.raises(lab.LaunchError, match=r"needs Python 3\.10 or newer; this is Python 3\.8"):
        lab.check_python((3, 8))
    lab.check_python((3, 10))


# -- when it installs ---------------------------------------------------------------------------

def _root(tmp_path: Path, requirements: str = "numpy") -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\ndependencies = ['{requirements}']\n")
    return tmp_path


def test_install_is_skipped_only_when_nothing_changed(tmp_path: Path) -> None:
    root, py = _root(tmp_path), "/r/.venv/bin/python"
    assert lab.needs_install({}, str(root), "test", py, True)  # never installed
    state = {os.path.abspath(py): lab.requirement_stamp(str(root), "test", py)}
    assert not lab.needs_install(state, str(root), "test", py, True)
    assert not lab.needs_install(state, str(root), "start", py, True)  # test serves start too
    assert lab.needs_install(state, str(root), "test", py, False)  # uninstalled meanwhile
    assert lab.needs_install(state, str(root), "test", "/other/bin/python", True)
    _root(tmp_path, "numpy>=2")  # the requirements changed
    assert lab.needs_install(state, str(root), "test", py, True)


def test_a_start_install_does_not_serve_test(tmp_path: Path) -> None:
    root, py = _root(tmp_path), "/r/.venv/bin/python"
    state = {py: lab.requirement_stamp(str(root), "", py)}
    assert not lab.needs_install(state, str(root), "start", py, True)
    assert lab.needs_install(state, str(root), "test", py, True)


def test_a_venv_link_and_its_target_are_different_environments(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (tmp_path / "v" / "bin").mkdir(parents=True)
    link = tmp_path / "v" / "bin" / "python"
    link.symlink_to(sys.executable)
    assert lab.requirement_stamp(str(root), "test", str(link)) != \
        lab.requirement_stamp(str(root), "test", sys.executable)


def test_state_survives_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / ".lab" / "installed.json"
    assert lab.read_state(str(path)) == {}
    lab.write_state({"a": "b"}, str(path))
    assert lab.read_state(str(path)) == {"a": "b"}
    path.write_text("{not json")
    assert lab.read_state(str(path)) == {}


# -- what a user without venv or pip is told -------------------------------------------------------

def test_missing_venv_names_the_debian_package(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ensurepip", None)  # as on Debian without python3-venv
    with pytest.raises(lab.LaunchError) as err:
        lab.create_venv(str(tmp_path / ".venv"), lambda text: None)
    assert "sudo apt install python3-venv" in str(err.value)
    assert not (tmp_path / ".venv").exists()


def test_missing_pip_says_how_to_add_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab, "has_pip", lambda python: False)
    with pytest.raises(lab.LaunchError, match="conda install pip"):
        lab.pip_install("/x/bin/python", str(ROOT), "test", lambda text: None, False)


# -- real interpreters, with --dry-run (nothing is installed) ---------------------------------------

def _dry_run(python: str, *args: str, env: dict | None = None) -> dict:
    done = subprocess.run([python, str(ROOT / "lab.py"), *args, "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_dry_run_in_a_real_virtualenv(tmp_path: Path) -> None:
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    plan = _dry_run(python, "test", "-n", "0", "tests/library/test_engine.py")
    assert plan["environment"] == "active" and plan["python"] == python
    assert plan["install"]  # autograd_lab is not in that environment
    assert plan["command"] == [python, "-m", "pytest", "-n", "0", "tests/library/test_engine.py"]
    assert plan["cwd"] == str(ROOT)


def _system_python_is_managed() -> bool:
    """Whether /usr/bin/python3 exists and follows PEP 668 (Debian's, Ubuntu's)."""
    if not Path("/usr/bin/python3").exists():
        return False
    done = subprocess.run(["/usr/bin/python3", "-c",
                           "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                          capture_output=True, text=True)
    return (Path(done.stdout.strip()) / "EXTERNALLY-MANAGED").is_file()


@pytest.mark.skipif(not _system_python_is_managed(),
                    reason="no externally managed system Python (PEP 668) at /usr/bin/python3")
def test_dry_run_with_the_systems_externally_managed_python(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    plan = _dry_run("/usr/bin/python3", "start", "--venv", str(tmp_path / "v"), env=env)
    assert plan["environment"] == "venv" and "PEP 668" in plan["reason"]
    assert plan["python"] == str(tmp_path / "v" / "bin" / "python") and plan["create_venv"]
    assert plan["command"][1:4] == ["-m", "autograd_lab", "start"]
