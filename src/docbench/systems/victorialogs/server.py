"""docbench's own VictoriaLogs: the single-node ``victoria-logs`` binary that ``setup.sh`` built,
on 127.0.0.1 and a free port (kept across restarts in ``<workdir>/port``), its data in
``<workdir>/victoria-logs-data``, a :class:`~docbench.servers.managed.ManagedServer`."""

from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

from docbench.core import paths
from docbench.core.ownership import remove_owned_directory
from docbench.servers import managed as server

VERSION = "v1.52.1"
BINARY_NAME = "victoria-logs"

# The server's flags beside address and data path (see README.md):
FLAGS = [
    # The events are years old (and a capture may be ahead of this machine's clock): without
    # these VictoriaLogs drops what lies outside now-7d .. now+2d, silently for the client.
    "-retentionPeriod=100y",
    "-futureRetention=100y",
    # A query of the benchmark may take longer than the default 30 s at large scales;
    # docbench's own --timeout stops a query first.
    "-search.maxQueryDuration=24h",
    # Every refused line is named in the log (the loader reads it); no rate limit on warnings.
    "-loggerWarnsPerSecondLimit=0",
    # The delete API (a docbench tenant is emptied through it on a server reached by URL; on
    # its own server docbench empties the data directory instead).
    "-delete.enable",
]


def find_binary() -> Path | None:
    """The victoria-logs that ``docbench setup victorialogs`` built."""
    built = paths.opt_dir() / f"victorialogs-{VERSION.lstrip('v')}" / "bin" / BINARY_NAME
    if built.exists() and os.access(built, os.X_OK):
        return built
    found = shutil.which(BINARY_NAME)
    return Path(found) if found else None


class VictoriaLogsServer(server.ManagedServer):
    """One victoria-logs process; SIGTERM is its normal shutdown (it flushes in-memory parts)."""

    display_name = "VictoriaLogs"
    start_timeout = 60.0
    stop_timeout = 60.0

    def __init__(self, workdir: Path, binary: Path | None = None) -> None:
        super().__init__(workdir, workdir / "victorialogs.log", cwd=workdir)
        self.binary = binary or find_binary()
        self.data_dir = workdir / "victoria-logs-data"

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("VictoriaLogs has not been started")
        return f"http://127.0.0.1:{self.port}"

    def command(self, ports: tuple[int, ...]) -> list[str]:
        if self.binary is None:
            raise RuntimeError("victoria-logs is not installed (run `docbench setup victorialogs`)")
        return [
            str(self.binary),
            f"-httpListenAddr=127.0.0.1:{ports[0]}",
            f"-storageDataPath={self.data_dir}",
            *FLAGS,
        ]

    def ready(self, ports: tuple[int, ...]) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/health", timeout=2) as answer:
            return answer.status == 200 and answer.read().strip() == b"OK"

    def wipe(self) -> None:
        """Stop, remove the data directory, start again (on the same port)."""
        self.stop()
        remove_owned_directory(self.data_dir)
        self.start()

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int) -> str:
        """What the server wrote to its log from byte ``offset`` on."""
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            return log.read().decode("utf-8", "replace")
