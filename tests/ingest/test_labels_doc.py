"""docs/labels.md lists the labels the code derives for the bundled corpus (regenerate: scripts/labels_doc.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("labels_doc", REPO / "scripts" / "labels_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_labels_doc_matches_the_code():
    doc = _script()
    assert (REPO / "docs" / "labels.md").read_text(encoding="utf-8") == doc.render(), (
        "docs/labels.md is stale: run scripts/labels_doc.py")


def test_the_labels_doc_lists_every_bundled_abstract_once():
    rows = [line for line in (REPO / "docs" / "labels.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| 00")]
    assert len(rows) == 57
    assert len({row.split("|")[3] for row in rows}) == 57
