"""Call a helper function in a fresh Python process, with the environment of a loopback Hub.

``huggingface_hub`` and ``datasets`` read ``HF_ENDPOINT``, ``HF_HOME``, ``HF_HUB_OFFLINE`` and
``HF_HUB_DISABLE_XET`` when they are imported, so a test reaches the loopback Hub (or works
offline from a given cache) from a new process. The function is named, not passed as code::

    got = run_in_client(hub.client_env(tmp_path / "hf_home"), hub_clients.publish_steps, REPO, steps)
    got.result, got.stdout, got.stderr

Arguments and the result travel as JSON; the result is printed on a marked last line.
``python -m helpers.client CALL_JSON`` is the entry point in the new process.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = TESTS_DIR.parent
_MARK = "@@client-result@@ "


@dataclass
class ClientRun:
    result: Any
    stdout: str  # without the result line
    stderr: str


def run_in_client(env: dict, func: Callable, *args: Any, timeout: float = 300, cwd: str | os.PathLike | None = None,
                  **kwargs: Any) -> ClientRun:
    """``func(*args, **kwargs)`` in a new Python with ``env``; fails the test if it raises."""
    call = json.dumps({"module": func.__module__, "name": func.__qualname__, "args": args, "kwargs": kwargs})
    # this checkout's `tinybench_builder` and the test helpers, whatever is installed
    # and the folder of the function's own module (a test module sits in its stage's folder)
    home = str(Path(sys.modules[func.__module__].__file__).resolve().parent)
    path = os.pathsep.join(p for p in (home, str(TESTS_DIR), str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-m", "helpers.client", call], env={**env, "PYTHONPATH": path},
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, (f"{func.__qualname__} failed in the client\nSTDOUT:\n{proc.stdout[-3000:]}\n"
                                  f"STDERR:\n{proc.stderr[-4000:]}")
    lines = proc.stdout.splitlines()
    marked = [i for i, line in enumerate(lines) if line.startswith(_MARK)]
    assert marked, f"{func.__qualname__} printed no result\nSTDOUT:\n{proc.stdout[-3000:]}"
    result = json.loads(lines[marked[-1]][len(_MARK):])
    stdout = "\n".join(line for i, line in enumerate(lines) if i != marked[-1])
    return ClientRun(result, stdout, proc.stderr)


def _main(call_json: str) -> None:
    call = json.loads(call_json)
    func = importlib.import_module(call["module"])
    for part in call["name"].split("."):
        func = getattr(func, part)
    result = func(*call["args"], **call["kwargs"])
    sys.stdout.flush()
    print(_MARK + json.dumps(result), flush=True)


if __name__ == "__main__":
    _main(sys.argv[1])
