"""The batch's own error: a shot list, an option or a cluster it cannot use (one line, no trace).

A shot whose bake fails is not an error of the batch: it is reported with its message and the
other shots go on (``batch/report.py``).
"""


class BatchError(Exception):
    """The batch cannot start: the message says what to change."""
