"""A real PostgreSQL server in a temp dir, started and stopped by the tests (`postgres` and `initdb` where installed).

PostgreSQL refuses to run as root: as root, the server runs as `nobody` (setpriv), its data dir owned by it.
Where no server can run, the tests that need one are skipped with the reason, unless PAPERBOT_REQUIRE_POSTGRES=1
(CI sets it: there a missing server is a failure, not a skip).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from ingest.chroma_child import free_port

START_TIMEOUT = 30.0
USER = "paperbot"
# Read at import, before the tests' isolated environment drops every PAPERBOT_ variable.
REQUIRED = os.environ.get("PAPERBOT_REQUIRE_POSTGRES") == "1"


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def unavailable() -> str | None:
    """Why no PostgreSQL server can be started here, or None."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg and psycopg-pool are not installed"
    if not (_binary("postgres") and _binary("initdb")):
        return "no PostgreSQL server here (the `postgres` and `initdb` commands are not installed)"
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        return "running as root, and no setpriv to run PostgreSQL as another user"
    return None


def need_postgres() -> None:
    reason = unavailable()
    if reason:
        if REQUIRED:
            pytest.fail(f"PAPERBOT_REQUIRE_POSTGRES=1 but {reason}")
        pytest.skip(reason)


@dataclass
class PostgresServer:
    proc: subprocess.Popen
    port: int
    root: Path
    host: str = "127.0.0.1"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A fresh empty database's URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # a "fast" shutdown: clients disconnected, then a clean stop
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        shutil.rmtree(self.root, ignore_errors=True)


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]


def start_postgres() -> PostgresServer:
    """initdb in a new temp dir, then a server on a free loopback port (trust authentication: loopback only).
    The dir is made under the system's temp dir, not pytest's (whose 0700 parents `nobody` cannot enter)."""
    need_postgres()
    root = Path(tempfile.mkdtemp(prefix="paperbot-pg-"))
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(root, nobody.pw_uid, nobody.pw_gid)
    data = root / "data"
    init = subprocess.run(_as_server_user([str(_binary("initdb")), "-D", str(data), "-U", USER, "--auth=trust",
                                           "-E", "UTF8", "--no-sync"]),
                          capture_output=True, text=True, timeout=120, cwd=root)
    if init.returncode != 0:
        pytest.fail(f"initdb failed: {init.stderr[-2000:]}")
    port = free_port()
    log = open(root / "postgres.log", "wb")  # noqa: SIM115  # the server's lifetime, closed with the process
    proc = subprocess.Popen(_as_server_user([str(_binary("postgres")), "-D", str(data), "-p", str(port), "-k",
                                             str(root), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=on"]),
                            stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = PostgresServer(proc=proc, port=port, root=root)
    deadline = time.monotonic() + START_TIMEOUT
    import psycopg

    while True:
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return server
        except psycopg.OperationalError:
            if proc.poll() is not None or time.monotonic() > deadline:
                server.stop()
                pytest.fail(f"PostgreSQL did not start: {(root / 'postgres.log').read_text()[-2000:]}")
            time.sleep(0.1)
