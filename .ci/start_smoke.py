"""CI: the README's first command really opens the course, then stops cleanly.

    python3 .ci/start_smoke.py PYTHON [LAUNCHER ARGS ...]

Runs `PYTHON lab.py start --no-browser --dir TMP` in its own process group, waits for the
address JupyterLab prints, fetches it (HTTP 200, the notebooks listed by the contents API),
then stops the whole group. Exit code 0 when all of that worked.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"(http://\S+?)/lab\?token=(\w+)")


def main() -> int:
    python, extra = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "start.log"
        cmd = [python, str(ROOT / "lab.py"), *extra, "start", "--no-browser", "--dir",
               str(Path(tmp) / "work")]
        print("$", " ".join(cmd), flush=True)
        with open(log, "wb") as out:
            process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 900  # the first run installs the course
            found = None
            while time.monotonic() < deadline and process.poll() is None:
                found = URL.search(log.read_text(errors="replace"))
                if found:
                    break
                time.sleep(2)
            if not found:
                print(log.read_text(errors="replace")[-4000:])
                print("start did not print JupyterLab's address", file=sys.stderr)
                return 1
            base, token = found.groups()
            with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=60) as page:
                assert page.status == 200, page.status
            with urllib.request.urlopen(f"{base}/api/contents?token={token}", timeout=60) as r:
                names = sorted(item["name"] for item in json.load(r)["content"])
            assert "03_function.ipynb" in names, names
            print(f"JupyterLab served the course at {base}: {len(names)} entries", flush=True)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
