"""The Dask task: bake one shot in a fresh Blender child process, with a timeout; never raises.

Standard library only. The driver registers this module with cloudpickle to travel *by value*
(``cloudpickle.register_pickle_by_value``), and sends the child script's text and the extension
zip's bytes with the task, so a farm worker needs Python with the bpy wheel and Dask, not Waft.

The shot's outcome is the returned dict's ``status``: ``ok``, ``failed`` (the bake refused the
file: its message, not retried, it would fail again), ``timeout`` (killed after ``timeout``
seconds) or ``crashed`` (Blender ended without a result: a segfault, the OOM killer, a kill). The
driver retries ``timeout`` and ``crashed``. While the shot runs, ``STATE/running/<shot>.json``
names the host and the worker and Blender processes, so a TD can see (and kill) what runs where;
Blender's whole output is kept in ``STATE/logs/<shot>.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

LOG_TAIL = 2000  # characters of Blender's output quoted in a crash's message


def _write_json(path: str, data: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".part", "w", encoding="utf-8") as f:
        json.dump(data, f)
    os.replace(path + ".part", path)


def _tail(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()[-LOG_TAIL:].strip()


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group (it was started in a session of its own)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _run_child(job: dict, work: str, *, python: str, timeout: float | None,
               running_path: str, log_path: str) -> tuple[str, int | None]:
    """Start Blender on ``job``; ('ended', returncode) or ('timeout', None)."""
    job_path = os.path.join(work, "job.json")
    _write_json(job_path, job)
    env = dict(os.environ)
    env.pop("BLENDER_USER_RESOURCES", None)  # the child sets its own throwaway user dir
    # A Dask nanny starts its worker with MALLOC_TRIM_THRESHOLD_=65536 and one BLAS thread; a
    # Blender inheriting the trim threshold solves 2.6× slower (NumPy's temporaries go back to
    # the kernel on every free). Blender gets these variables as the batch's caller had them.
    for name, value in job["environ"].items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    with open(log_path, "w", encoding="utf-8") as log:
        # A session of its own: a timeout kills Blender and anything it started, not the worker.
        process = subprocess.Popen([python, os.path.join(work, "child.py"), job_path],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env=env, cwd=work, start_new_session=True)
        _write_json(running_path, {"shot": job["shot"], "host": socket.gethostname(),
                                   "worker_pid": os.getpid(), "blender_pid": process.pid,
                                   "started": time.time()})
        try:
            return "ended", process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return "timeout", None
        except BaseException:  # the worker is stopping: do not leave Blender running
            _kill_group(process)
            raise


def run_shot(job: dict, zip_bytes: bytes, child_source: str, *, python: str | None,
             timeout: float | None, state_dir: str) -> dict:
    """Bake ``job`` (see batch/child.py) and return its result dict (``status`` and figures)."""
    start = time.perf_counter()
    shot = job["shot"]
    running_path = os.path.join(state_dir, "running", f"{shot}.json")
    log_path = os.path.join(state_dir, "logs", f"{shot}.log")
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    work = tempfile.mkdtemp(prefix=f"waft-shot-{shot}-")
    output_dir = os.path.dirname(job["output"])
    job = {**job, "user_dir": os.path.join(work, "user"), "zip": os.path.join(work, "waft.zip"),
           "result": os.path.join(work, "result.json"), "parent_pid": os.getpid(),
           # beside the output, so the final rename stays on one file system (atomic)
           "temporary": os.path.join(output_dir, f".{shot}.{uuid.uuid4().hex[:8]}.blend.part")}
    try:
        with open(job["zip"], "wb") as f:
            f.write(zip_bytes)
        with open(os.path.join(work, "child.py"), "w", encoding="utf-8") as f:
            f.write(child_source)
        ended, code = _run_child(job, work, python=python or sys.executable, timeout=timeout,
                                 running_path=running_path, log_path=log_path)
        if ended == "timeout":
            result = {"status": "timeout",
                      "error": f"still baking after {timeout:g} s; Blender was stopped"}
        elif os.path.exists(job["result"]):
            with open(job["result"], encoding="utf-8") as f:
                result = json.load(f)
        else:
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            result = {"status": "crashed",
                      "error": f"Blender ended without a result ({how}): {_tail(log_path)}"}
    finally:
        for path in (running_path, job["temporary"]):
            if os.path.exists(path):
                os.remove(path)
        shutil.rmtree(work, ignore_errors=True)
    result.update(seconds=time.perf_counter() - start, host=socket.gethostname())
    return result
