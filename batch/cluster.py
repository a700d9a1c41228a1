"""Where the shots run: an embedded local Dask cluster sized to the machine, or an existing one.

Local: one worker *process* per core (fewer when memory is short: a Blender baking a character
takes up to ``MEMORY_PER_WORKER``), one thread each, so a worker runs one shot at a time.
``allowed-failures`` is 0 so a worker that dies fails its task at once and the batch's own retry
(counted in the report) resubmits it; ``worker-saturation`` 1.0 keeps the next shot on the
scheduler until a worker is free, so a long shot never holds a queue behind it.

Remote (``scheduler="tcp://host:8786"``): whatever cluster Dask runs there (``dask scheduler`` +
``dask worker --nthreads 1`` on farm nodes, dask-jobqueue for SLURM/PBS, dask-kubernetes). Its
workers need Python with the bpy wheel and Dask, and the shots and ``--out`` on shared storage.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import BatchError

MEMORY_PER_WORKER = 1.5e9  # bytes


def _dask():
    try:
        import dask
        import distributed
    except ImportError as error:
        raise BatchError("batch baking runs on Dask: pip install 'dask[distributed]' "
                         "(or the project with its extra: pip install '.[batch]')") from error
    return dask, distributed


def local_worker_count() -> int:
    cores = os.cpu_count() or 1
    try:
        import psutil  # a dependency of distributed

        by_memory = int(psutil.virtual_memory().available // MEMORY_PER_WORKER)
    except ImportError:
        by_memory = cores
    return max(1, min(cores, by_memory))


def nanny_environ_names() -> list[str]:
    """Variables a Dask nanny sets in its own process's environment before it starts a worker
    (MALLOC_TRIM_THRESHOLD_, one BLAS/OpenMP thread, a fixed PYTHONHASHSEED)."""
    dask, _ = _dask()
    names = set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    return sorted(names | {"PYTHONHASHSEED"})


@contextmanager
def _environ_kept(names: list[str]) -> Iterator[None]:
    """Put ``names`` back as they were: a local cluster's nannies run in this process and
    leave their worker settings in its ``os.environ`` (a bpy in the same process would then
    run with MALLOC_TRIM_THRESHOLD_=65536, 2.6× slower)."""
    kept = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        for name, value in kept.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def worker_count(client) -> int:
    """Shots that can run at once: the workers' threads."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(w.get("nthreads", 1) for w in workers.values()))


@contextmanager
def open_client(*, scheduler: str | None = None, workers: int | None = None,
                dashboard: bool = True) -> Iterator:
    """A ``distributed.Client`` for the batch, closed (and a local cluster stopped) on exit."""
    dask, distributed = _dask()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout="20s")
        except OSError as error:
            raise BatchError(f"no Dask scheduler at {scheduler}: {error}") from error
        with client:
            yield client
        return
    if workers is not None and workers < 1:
        raise BatchError(f"--workers {workers}: at least one worker is needed")
    serve = dashboard and importlib.util.find_spec("bokeh") is not None
    with _environ_kept(nanny_environ_names()), dask.config.set(
            {"distributed.scheduler.allowed-failures": 0,
             "distributed.scheduler.worker-saturation": 1.0}):
        cluster = distributed.LocalCluster(
            n_workers=workers or local_worker_count(), threads_per_worker=1, processes=True,
            dashboard_address=":0" if serve else None, silence_logs=logging.ERROR)
        with cluster, distributed.Client(cluster) as client:
            yield client
