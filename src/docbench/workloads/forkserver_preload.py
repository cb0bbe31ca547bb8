"""Imported last by the forkserver of :mod:`docbench.workloads.fresh_process`, and nowhere else.
What it sets here, every worker forked from the forkserver inherits.

- Importing docbench installed the run's SIGTERM/SIGHUP handler (servers/managed.py: "stop the
  servers this run started"), which belongs to the run's own process: the forkserver and its
  workers end by those signals quietly, as spawned workers do.
- Under ``python -m docbench.cli`` each worker runs the main module again as ``__mp_main__``
  (multiprocessing does so for every start method), and Python warns that ``docbench.cli`` is
  already imported: it is, on purpose (preloaded), so the warning is noise on every query.
"""

from __future__ import annotations

import signal
import warnings

from docbench.core import runlock

for signum in runlock.EXIT_SIGNALS:
    signal.signal(signum, signal.SIG_DFL)

ALREADY_IMPORTED = r"'docbench\.cli' found in sys\.modules after import of package"
warnings.filterwarnings("ignore", message=ALREADY_IMPORTED, category=RuntimeWarning)
