"""What every benchmark script shares: where things are, the labelled questions, percentiles, RSS.

Benchmarks print numbers; they are not tests. Run them from the repository root as modules, so that this
package and the project are importable without any path juggling:

    .venv/bin/python -m benchmarks.retrieval_bench --skip-scifact
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ingest.chroma_child import free_port

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data"
# BEIR SciFact (test split), kept beside the repository on these machines; every script takes --scifact DIR.
SCIFACT = REPO.parent / "shared" / "bench" / "scifact"


def bundled_questions() -> list[dict]:
    """The labelled questions about the bundled corpus ({"question", "paper_id", ...}), in file order."""
    path = DATA / "bundled_questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def retrieval_env() -> dict[str, str]:
    """The RETRIEVAL_* variables of this process, for a benchmark's own settings: `RETRIEVAL_MIN_ANSWERED=0` measures
    the answers without the question-level check, in the same run as with it."""
    return {k: v for k, v in os.environ.items() if k.startswith("RETRIEVAL_")}


def percentile(values: list[float], p: float) -> float:
    """The `p`-th percentile (0-100) of `values`, nearest rank."""
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))]


def rss_mb(pid: int | str = "self", children: bool = False) -> float:
    """A process's resident memory, in MB (Linux); with `children`, its child processes' too (the bot's store
    is served by one: ingest/chroma_child.py)."""
    total = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total = int(line.split()[1]) / 1024
    except OSError:  # it ended meanwhile
        return 0.0
    if children:
        total += sum(rss_mb(child, children=True) for child in child_pids(os.getpid() if pid == "self" else int(pid)))
    return total


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is `parent` (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent:
            found.append(int(stat.parent.name))
    return found


# A child's ru_maxrss starts from the RSS of the process that forked it, so a benchmark holding a model
# would report its own size: a small Python process starts the command and reads its peak instead.
_PEAK_RSS = (
    "import json, resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], stdin=sys.stdin, capture_output=True, text=True)\n"
    "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode,"
    " len(p.stdout.splitlines()), p.stderr[-400:]]))\n"
)


def peak_rss(cmd: list[str], *, stdin: str = "", env: dict | None = None,
             cwd: str | Path | None = None) -> tuple[float, int, int, str]:
    """Run `cmd`; (its peak RSS in MB, exit status, lines it printed, the end of its stderr)."""
    proc = subprocess.run([sys.executable, "-c", _PEAK_RSS, *cmd], input=stdin, capture_output=True, text=True,
                          env=env, cwd=cwd, check=True)
    kb, code, lines, err = json.loads(proc.stdout)
    return kb / 1024, code, lines, err


@contextlib.contextmanager
def chroma_server(path: Path) -> Iterator[dict[str, str]]:
    """A `chroma run` serving the store folder `path` on a free loopback port, for as long as the block runs;
    yields the environment that points paperbot at it."""
    port = free_port()
    chroma = Path(sys.executable).with_name("chroma")
    server = subprocess.Popen([str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise RuntimeError(f"`chroma run --path {path}` did not start") from None
                time.sleep(0.5)
        yield {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port)}
    finally:
        server.terminate()
        server.wait(timeout=30)
