"""What every benchmark script shares: where things are, the labelled questions, percentiles, RSS.

Benchmarks print numbers; they are not tests. Run them from the repository root as modules, so that this
package and the project are importable without any path juggling:

    .venv/bin/python -m benchmarks.retrieval_bench --skip-scifact
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data"
# BEIR SciFact (test split), kept beside the repository on these machines; every script takes --scifact DIR.
SCIFACT = REPO.parent / "shared" / "bench" / "scifact"


def bundled_questions() -> list[dict]:
    """The labelled questions about the bundled corpus ({"question", "paper_id", ...}), in file order."""
    path = DATA / "bundled_questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def percentile(values: list[float], p: float) -> float:
    """The `p`-th percentile (0-100) of `values`, nearest rank."""
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))]


def rss_mb() -> float:
    """This process's resident memory, in MB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0
