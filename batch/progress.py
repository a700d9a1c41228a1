"""The terminal progress bar: shots done, running, failed, time left.

On a terminal one line is redrawn in place; in a log (not a TTY) a line is printed when a count
changes, so farm logs stay readable. The same work shows in Dask's dashboard as the
``waft-bake`` task group (its progress bars and task stream).
"""

from __future__ import annotations

import sys

BAR = 24


def eta_seconds(durations: list[float], remaining: int, workers: int) -> float | None:
    """Time left: the mean shot so far × shots left ÷ workers (None before the first shot)."""
    if not durations or remaining <= 0:
        return None if remaining > 0 else 0.0
    return sum(durations) / len(durations) * remaining / max(workers, 1)


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


class ProgressBar:
    def __init__(self, total: int, *, stream=None, enabled: bool = True):
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.last = None

    def line(self, *, done: int, running: int, failed: int, eta: float | None) -> str:
        filled = BAR * done // max(self.total, 1)
        return (f"waft batch [{'#' * filled}{'.' * (BAR - filled)}] {done}/{self.total} done, "
                f"{running} running, {failed} failed, {_clock(eta)} left")

    def update(self, *, done: int, running: int, failed: int, eta: float | None) -> None:
        if not self.enabled:
            return
        counts = (done, running, failed)
        if not self.tty and counts == self.last:
            return
        self.last = counts
        text = self.line(done=done, running=running, failed=failed, eta=eta)
        self.stream.write(f"\r{text}\033[K" if self.tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
