"""Docs that stay true: what they say of the code is checked against the code."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_architecture import PACKAGES, REPO, module_names

ARCHITECTURE = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_is_in_the_architecture_map():
    """A newcomer finds every module of the tree in docs/architecture.md's map (by its file name)."""
    missing = []
    for module, path in module_names(REPO, PACKAGES).items():
        if path.name == "__init__.py":
            continue
        if path.name not in ARCHITECTURE and path.relative_to(REPO).as_posix() not in ARCHITECTURE:
            missing.append(path.relative_to(REPO).as_posix())
    assert not missing, f"docs/architecture.md does not mention: {missing}"


def test_files_the_architecture_doc_names_exist():
    named = set(re.findall(r"`((?:paperbot|ingest|retrieval|bot|benchmarks|scripts|tests)/[\w/]+\.py)", ARCHITECTURE))
    assert named, "the doc names files by path"
    gone = sorted(n for n in named if not (REPO / n).is_file())
    assert not gone, f"docs/architecture.md names files that do not exist: {gone}"


def _number_in(doc: Path, pattern: str) -> float:
    m = re.search(pattern, doc.read_text(encoding="utf-8"))
    assert m, f"{doc.name}: no match for {pattern!r}"
    return float(m.group(1).replace(",", ""))


def test_the_snippet_cache_size_the_benchmarks_quote_is_the_code_s():
    from retrieval.search import SENTENCE_CACHE_PAPERS

    quoted = _number_in(REPO / "docs" / "benchmarks.md", r"([\d,]+)-paper (?:snippet|sentence) cache")
    assert quoted == SENTENCE_CACHE_PAPERS


def test_records_says_where_a_new_field_goes():
    from paperbot import records

    assert "nothing else" not in (records.__doc__ or "")
    assert "ingest/fields.py" in (records.__doc__ or "")


def test_the_support_threshold_docs_llm_quotes_is_the_code_s():
    from retrieval.grounding import SUPPORT_THRESHOLD

    assert _number_in(REPO / "docs" / "llm.md", r"`SUPPORT_THRESHOLD` \((\d\.\d+)") == SUPPORT_THRESHOLD
