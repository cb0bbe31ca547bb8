"""Imported last by the forkserver of :mod:`docbench.workloads.fresh_process`, and nowhere else.

Importing docbench installed the run's SIGTERM/SIGHUP handler (systems/server.py: "stop the
servers this run started"), which belongs to the run's own process: the forkserver, and the
workers forked from it, end by those signals quietly, as spawned workers do.
"""

from __future__ import annotations

import signal

from docbench import runlock

for signum in runlock.EXIT_SIGNALS:
    signal.signal(signum, signal.SIG_DFL)
