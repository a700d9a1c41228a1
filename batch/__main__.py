"""``python -m waft.batch``: see batch/cli.py."""

import sys

from .cli import main

sys.exit(main())
