"""``bake_many``: bake a list of shots on a Dask cluster and return the report.

Every shot goes through the one bake path (``addon.bake_api.bake_scene``) in a fresh Blender
child process started by a Dask worker (``batch/task.py``, ``batch/child.py``): the result is
the same as baking that file alone. Unchanged shots are skipped (``batch/ledger.py``); a shot
that fails is reported with its message and the others go on; shots whose Blender crashed, whose
worker died or that ran past the timeout are retried up to ``retries`` times. Outputs are written
to a temporary file beside the target and renamed over it, never over an input unless
``in_place``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from . import cluster, task
from .errors import BatchError
from .ledger import BakeSettings, Ledger, extension_identity, file_sha256, input_key
from .progress import ProgressBar, eta_seconds
from .report import FAILED, ShotResult, summary_table, write_jsonl
from .shots import Shot, read_shots

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
CHILD_SCRIPT = Path(__file__).with_name("child.py")
STATE_FOLDER = ".waft-batch"
REPORT_NAME = "waft-batch-report.jsonl"
RETRIED = ("crashed", "timeout")
PROGRESS_S = 0.5


def extension_zip(zip_path, build_dir: Path) -> Path:
    """The Waft extension zip the workers install: ``zip_path``, or built from this checkout."""
    if zip_path is not None:
        path = Path(zip_path).expanduser().resolve()
        if not path.is_file():
            raise BatchError(f"--zip {path}: no such file")
        return path
    builder = PACKAGE_ROOT / "tools" / "build_extension.py"
    if not (builder.is_file() and (PACKAGE_ROOT / "addon").is_dir()):
        raise BatchError("pass --zip PATH: the Waft extension zip the workers install (the "
                         "file Blender's Install from Disk takes)")
    run = subprocess.run([sys.executable, str(builder), "--source-dir", str(PACKAGE_ROOT),
                          "--output-dir", str(build_dir)], capture_output=True, text=True,
                         check=False)
    if run.returncode != 0:
        raise BatchError(f"building the extension zip from {PACKAGE_ROOT} failed: "
                         f"{(run.stderr or run.stdout).strip()[-800:]}")
    return Path(run.stdout.strip().splitlines()[-1])


def _outputs(shots: list[Shot], out_dir: Path, in_place: bool) -> dict[str, Path]:
    outputs = {s.name: s.blend if in_place else out_dir / f"{s.name}.blend" for s in shots}
    if not in_place:
        inputs = {s.blend: s.name for s in shots}
        for name, output in outputs.items():
            if output in inputs:
                raise BatchError(f"shot '{name}' would be written over the input of shot "
                                 f"'{inputs[output]}' ({output}): choose another --out, or "
                                 "--in-place to save the shots over themselves")
    return outputs


def _job(shot: Shot, output: Path, settings: BakeSettings, environ: dict) -> dict:
    return {"shot": shot.name, "blend": str(shot.blend), "output": str(output),
            "environ": environ,
            "frames": list(shot.frames) if shot.frames else None,
            "objects": list(shot.objects) if shot.objects else None, "scene": shot.scene,
            **asdict(settings)}


def _result(shot: Shot, output: Path, outcome: dict, attempts: int, seconds: float) -> ShotResult:
    return ShotResult(shot=shot.name, blend=str(shot.blend), output=str(output),
                      status=outcome["status"], seconds=seconds, attempts=attempts,
                      setups=outcome.get("setups", []), bones=outcome.get("bones", 0),
                      frames=outcome.get("frames", 0), error=outcome.get("error", ""),
                      blender=outcome.get("blender", ""), host=outcome.get("host", ""))


class _ByValue:
    """A function that unpickles as itself, rebuilt from cloudpickle's by-value bytes.

    Dask pickles the whole task graph with plain pickle, which stores a module function by
    reference (``waft.batch.task.run_shot``): a worker without Waft installed could not load it.
    Reducing to ``cloudpickle.loads(bytes)`` ships the code itself (the module is registered
    by value), so workers need only Dask and the bpy wheel.
    """

    def __init__(self, function):
        import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[function.__module__])
        self.function = function
        self.payload = cloudpickle.dumps(function)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __reduce__(self):
        import cloudpickle

        return cloudpickle.loads, (self.payload,)


class _Batch:
    """The submit / collect / retry loop over one Dask client."""

    def __init__(self, client, pending, *, outputs, settings, ledger, state_dir, retries,
                 timeout, python, in_place, extension, progress, environ):
        self.client, self.outputs, self.settings = client, outputs, settings
        self.ledger, self.state_dir, self.retries = ledger, state_dir, retries
        self.timeout, self.python, self.in_place = timeout, python, in_place
        self.extension, self.progress, self.environ = extension, progress, environ
        self.pending = pending
        self.run_shot = _ByValue(task.run_shot)
        self.attempts = {shot.name: 0 for shot, _ in pending}
        self.seconds = {shot.name: 0.0 for shot, _ in pending}
        self.results: dict[str, ShotResult] = {}
        self.durations: list[float] = []

    def submit(self, shot: Shot, zip_bytes, child_source):
        self.attempts[shot.name] += 1
        tag = hashlib.sha256(shot.name.encode()).hexdigest()[:8]
        # "waft-bake-<hex>-<n>": Dask's dashboard groups every shot under "waft-bake".
        job = _job(shot, self.outputs[shot.name], self.settings, self.environ)
        return self.client.submit(
            self.run_shot, job, zip_bytes, child_source, python=self.python, timeout=self.timeout,
            state_dir=str(self.state_dir), key=f"waft-bake-{tag}-{self.attempts[shot.name]}",
            pure=False)

    def outcome(self, future) -> dict:
        if future.status == "error":  # the worker process died (KilledWorker) or vanished
            error = future.exception()
            return {"status": "crashed",
                    "error": f"the Dask worker baking it died ({type(error).__name__}: {error})"}
        return future.result()

    def finish(self, shot: Shot, key: str, outcome: dict) -> None:
        output = self.outputs[shot.name]
        result = _result(shot, output, outcome, self.attempts[shot.name], self.seconds[shot.name])
        self.results[shot.name] = result
        (self.state_dir / "running" / f"{shot.name}.json").unlink(missing_ok=True)
        if result.status != "ok":
            return
        self.durations.append(result.seconds)
        output_sha = file_sha256(output)
        if self.in_place:  # the next run reads the baked file as this shot's input
            key = input_key(blend_sha256=output_sha, shot=shot, settings=self.settings,
                            extension=self.extension, python=self.python or "")
        self.ledger.record(shot.name, key=key, output=output, output_sha256=output_sha,
                           result={"setups": result.setups, "bones": result.bones,
                                   "frames": result.frames, "blender": result.blender})

    def run(self, zip_bytes, child_source) -> None:
        import distributed

        active = {self.submit(shot, zip_bytes, child_source): (shot, key)
                  for shot, key in self.pending}
        workers = cluster.worker_count(self.client)
        while active:
            for future in [f for f in active if f.done()]:
                shot, key = active.pop(future)
                outcome = self.outcome(future)
                self.seconds[shot.name] += float(outcome.get("seconds", 0.0))
                if outcome["status"] in RETRIED and self.attempts[shot.name] <= self.retries:
                    active[self.submit(shot, zip_bytes, child_source)] = (shot, key)
                else:
                    self.finish(shot, key, outcome)
            running = sum((self.state_dir / "running" / f"{s.name}.json").exists()
                          for s, _ in active.values())
            failed = sum(r.status in FAILED for r in self.results.values())
            self.progress.update(done=len(self.results), running=running, failed=failed,
                                 eta=eta_seconds(self.durations, len(active), workers))
            if active:  # back at once when a shot ends, else redraw the bar every PROGRESS_S
                with contextlib.suppress(TimeoutError):
                    distributed.wait(list(active), timeout=PROGRESS_S,
                                     return_when="FIRST_COMPLETED")


def bake_many(shots, out_dir, *, in_place: bool = False, settings: BakeSettings | None = None,
              frames: tuple[int, int] | None = None, objects=None, scene: str | None = None,
              scheduler: str | None = None, workers: int | None = None, retries: int = 1,
              timeout: float | None = None, force: bool = False, zip_path=None,
              python: str | None = None, report_path=None, progress: bool = True,
              dashboard: bool = True) -> list[ShotResult]:
    """Bake ``shots`` (.blend paths, .txt/.json shot lists or ``Shot``s) into ``out_dir``.

    Returns one ``ShotResult`` per shot, in the order given, also written as JSON lines to
    ``report_path`` (default ``out_dir/waft-batch-report.jsonl``). ``frames``/``objects``/
    ``scene`` apply to shots that do not set their own. ``python`` is the interpreter with the
    bpy wheel that runs Blender on the workers (default: the worker's own). Raises
    ``BatchError`` only when the batch cannot start; failing shots are in the report.
    """
    wall = time.perf_counter()
    settings = settings or BakeSettings()
    shots = read_shots(shots, frames=frames, objects=objects, scene=scene)
    if retries < 0:
        raise BatchError(f"--retries {retries}: zero or more")
    if timeout is not None and timeout <= 0:
        raise BatchError(f"--timeout {timeout}: seconds, more than zero")
    out_dir = Path(out_dir).expanduser().resolve()
    state_dir = out_dir / STATE_FOLDER
    outputs = _outputs(shots, out_dir, in_place)
    zip_file = extension_zip(zip_path, state_dir / "extension")
    extension = extension_identity(zip_file)
    ledger = Ledger(state_dir / "ledger.json")
    results: dict[str, ShotResult] = {}
    pending = []
    for shot in shots:
        key = input_key(blend_sha256=file_sha256(shot.blend), shot=shot, settings=settings,
                        extension=extension, python=python or "")
        if not force and ledger.is_current(shot.name, key, outputs[shot.name]):
            last = ledger.entries[shot.name].get("result", {})
            results[shot.name] = _result(shot, outputs[shot.name],
                                         {"status": "skipped", **last}, 0, 0.0)
        else:
            pending.append((shot, key))
    if progress and len(pending) < len(shots):
        print(f"waft batch: {len(shots) - len(pending)} of {len(shots)} shots unchanged since "
              "their last bake, skipped (--force bakes them)", file=sys.stderr)
    bar = ProgressBar(len(pending), enabled=progress)
    batch = None
    try:
        if pending:
            # Read before a local nanny changes them: Blender gets them as the caller had them.
            environ = {name: os.environ.get(name) for name in cluster.nanny_environ_names()}
            with cluster.open_client(scheduler=scheduler, workers=workers,
                                     dashboard=dashboard) as client:
                if progress and client.dashboard_link and dashboard:
                    print(f"waft batch: Dask dashboard {client.dashboard_link}", file=sys.stderr)
                # Sent with every task rather than scattered once: scattered data lives on the
                # workers, and a worker that dies takes it along (a retry on a 1-worker
                # cluster would find it lost). 0.35 MB per shot.
                zip_bytes = zip_file.read_bytes()
                child_source = CHILD_SCRIPT.read_text(encoding="utf-8")
                batch = _Batch(client, pending, outputs=outputs, settings=settings,
                               ledger=ledger, state_dir=state_dir, retries=retries,
                               timeout=timeout, python=python, in_place=in_place,
                               extension=extension, progress=bar, environ=environ)
                batch.run(zip_bytes, child_source)
    finally:
        bar.close()
        if batch is not None:
            results.update(batch.results)
        ordered = [results.get(s.name) or _result(s, outputs[s.name], {"status": "cancelled"},
                                                  0, 0.0) for s in shots]
        write_jsonl(ordered, Path(report_path) if report_path else out_dir / REPORT_NAME)
    if progress:
        print(summary_table(ordered, time.perf_counter() - wall), file=sys.stderr)
    return ordered
