"""The command line over a conference program, as a user runs it: real subprocesses, real model, real Chroma."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import shapes
from tests.test_cli import CITATION_KEYS, HIT_KEYS, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("cli-program")
    shapes.write_json(home / "export" / "program.json", shapes.program(with_abstracts=False))
    shapes.write_json(home / "export" / "abstracts.json", shapes.abstracts_map())
    return home


@pytest.fixture(scope="module")
def ingested(home):
    proc = run(home, "ingest", str(home / "export"))
    assert proc.returncode == 0, proc.stderr
    return proc


def test_program_and_abstracts_ingest_as_one_paper_each(ingested):
    assert "4 added, 0 updated, 0 removed, 0 unchanged" in ingested.stdout


def test_search_json_carries_paper_metadata_and_filters_before_ranking(home, ingested):
    proc = run(home, "search", "preference optimization", "--json", "--type", "oral")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["filters"] == {"type": "oral"}
    [hit] = out["hits"]
    assert set(hit) == HIT_KEYS
    assert hit["title"] == r"$\beta$-DPO: Preference Optimization with a Dynamic $\beta$"  # JSON keeps the source
    assert hit["authors"] == ["Émilie Durand", "Emanuele Rodolà"]
    assert hit["url"] == "https://openreview.net/forum?id=Xb7Q2rTz01"
    assert (hit["area"], hit["type"], hit["track"]) == ("Deep Learning", "oral", "Main")
    assert hit["keywords"] == ["preference optimization", "alignment"]


def test_ask_with_author_filter_and_text_output(home, ingested):
    proc = run(home, "ask", "how to choose the temperature of preference optimization?", "--json",
               "--author", "Rodola")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["citations"] and all(set(c) == CITATION_KEYS for c in out["citations"])
    assert {c["paper_id"] for c in out["citations"]} == {"101"}
    text = run(home, "search", "theorem proving benchmark", "--track", "datasets")
    assert "A Benchmark for Multilingual Theorem Proving" in text.stdout
    # The program's 4th entry (the oral before it is listed twice: its talk and its poster).
    assert "program.json #4 · poster · Datasets and Benchmarks" in text.stdout


def test_papers_lists_an_author_and_suggests_near_names(home, ingested):
    proc = run(home, "papers", "--author", "wei zhang", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [p["paper_id"] for p in out["papers"]] == ["102", "104"]
    one = run(home, "papers", "--author", "Durand")
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines()[0] == "1 paper matching author “Durand”"
    missing = run(home, "papers", "--author", "Rodolfo")
    assert "No paper matches author “Rodolfo”." in missing.stdout and "Emanuele Rodolà" in missing.stdout


def test_similar_and_related(home, ingested):
    proc = run(home, "similar", "102", "--json", "-k", "3")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["paper"]["paper_id"] == "102"
    assert len(out["papers"]) == 3 and "102" not in [p["paper_id"] for p in out["papers"]]
    assert all(isinstance(p["shared_terms"], list) for p in out["papers"])
    rel = run(home, "related", "-", "--json", "-k", "2",
              stdin="We prune the weights of protein structure models with learned binary masks.")
    assert rel.returncode == 0, rel.stderr
    papers = json.loads(rel.stdout)["papers"]
    assert papers[0]["paper_id"] == "102" and "masks" in papers[0]["shared_terms"]
    unknown = run(home, "similar", "nope")
    assert unknown.returncode == 1 and "no paper has the id 'nope'" in unknown.stderr
