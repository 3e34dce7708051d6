"""Real conference lists as labs have them (tests/data/lists, see its README): every field read or reported."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ingest import fields
from ingest.parse import read_file
from ingest.pipeline import FileReport, load_papers
from paperbot.errors import InputError
from paperbot.settings import REPO_ROOT
from retrieval.filters import Filters, select

LISTS = REPO_ROOT / "tests" / "data" / "lists"


def raw(name: str) -> list[dict]:
    path = LISTS / name
    if path.is_dir():
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]
    return json.loads(path.read_text(encoding="utf-8"))


def by_id(papers):
    return {p.paper_id: p for p in papers}


def report(path: Path) -> FileReport:
    [rep] = load_papers([path]).files
    return rep


def test_paperlists_nips2018_reads_authors_types_links_and_bibtex_and_keeps_short_abstracts_title_only():
    records = raw("paperlists-nips2018.json")
    loaded = load_papers([LISTS / "paperlists-nips2018.json"])
    papers = by_id(loaded.papers)
    assert len(papers) == len(records) == 200
    first = papers["11127"]
    assert first.authors == ("Lijun Zhang", "Zhi-Hua Zhou")
    assert first.affiliations[0].startswith("National Key Laboratory for Novel Software Technology, Nanjing")
    assert first.site_url == "https://nips.cc/virtual/2018/poster/11127"
    assert first.url == records[0]["oa"] and first.pdf_url == records[0]["pdf"]
    assert first.bibtex == records[0]["bibtex"]
    assert Counter(p.presentation for p in papers.values()) == Counter(r["status"].lower() for r in records)
    with_code = [r for r in records if r["github"]]
    assert with_code and all(r["github"].removeprefix("https://") in " ".join(papers[r["id"]].links)
                             for r in with_code)
    # Scrape artifacts ("Part of", a missing abstract) do not sink the file: those papers keep their title only.
    short = {r["id"] for r in records if 0 < len(r.get("abstract") or "") < 20}
    assert short and all(papers[i].abstract == "" and papers[i].title for i in short)
    rep = loaded.files[0]
    assert len(rep.title_only) == len(short) and not rep.skipped
    assert all("abstract is too short" in t and "paperlists-nips2018.json: record" in t for t in rep.title_only)
    assert rep.ignored["gs_citation"] == 200 and "author" not in rep.ignored and "bibtex" not in rep.ignored
    assert select(loaded.papers, Filters(author="Zhi-Hua Zhou")) and select(loaded.papers, Filters(type="oral"))


def test_paperlists_iclr2018_skips_rejected_and_withdrawn_and_reads_workshop_as_a_track():
    records = raw("paperlists-iclr2018.json")
    loaded = load_papers([LISTS / "paperlists-iclr2018.json"])
    statuses = Counter(r["status"] for r in records)
    rep = loaded.files[0]
    assert rep.decisions == Counter({"Reject": statuses["Reject"], "Withdraw": statuses["Withdraw"]})
    assert len(loaded.papers) == len(records) - statuses["Reject"] - statuses["Withdraw"]
    tracks = Counter(p.track for p in loaded.papers)
    assert tracks["Workshop"] == statuses["Workshop"] and tracks["Main"] == len(loaded.papers) - statuses["Workshop"]
    assert all(p.url.startswith("https://openreview.net/forum?id=") for p in loaded.papers)
    assert sum(p.presentation == "oral" for p in loaded.papers) == statuses["Oral"]
    assert "rating" in rep.ignored and "tldr" not in rep.ignored
    assert any("not accepted, skipped: Reject ×" in n for n in rep.notes())


def test_paperlists_nips2023_types_come_from_status_not_from_review_scores():
    records = raw("paperlists-nips2023.json")
    loaded = load_papers([LISTS / "paperlists-nips2023.json"])
    kept = [r for r in records if r["status"] != "Reject"]
    assert len(loaded.papers) == len(kept) and loaded.files[0].decisions == Counter(
        {"Reject": len(records) - len(kept)})
    assert Counter(p.presentation for p in loaded.papers) == Counter(r["status"].lower() for r in kept)
    assert Counter(p.track for p in loaded.papers) == Counter(r["track"].capitalize() if r["track"] == "main"
                                                              else r["track"] for r in kept)
    assert "presentation_avg" in loaded.files[0].ignored


def test_paperlists_nips2024_title_only_list_has_authors_orals_and_links():
    records = raw("paperlists-nips2024.json")
    papers = by_id(load_papers([LISTS / "paperlists-nips2024.json"]).papers)
    first = papers[records[0]["id"]]
    assert first.authors == ("Adrian Sauter", "Milan Miletić", "Ryan Ott", "Rohith Prabakaran")
    assert first.url == first.site_url == "https://nips.cc/virtual/2024/poster/99349" and first.abstract == ""
    assert sum(p.presentation == "oral" for p in papers.values()) == sum(r["status"] == "Oral" for r in records)
    assert not report(LISTS / "paperlists-nips2024.json").ignored


def test_one_file_per_paper_folder_reads_links_translations_and_skips_submissions():
    records = raw("elephantpaper-neurips2024")
    loaded = load_papers([LISTS / "elephantpaper-neurips2024"])
    submitted = [r for r in records if r["venue"].startswith("Submitted to")]
    assert len(loaded.papers) == len(records) - len(submitted)
    assert sum(f.decisions["Submitted to NeurIPS 2024"] for f in loaded.files) == len(submitted)
    papers = by_id(loaded.papers)
    for r in records:
        if r in submitted:
            assert r["id"] not in papers
            continue
        p = papers[r["id"]]
        assert p.url == r["links"]["openreview"] and p.pdf_url == r["links"]["pdf"]
        assert p.title_zh == r["title_zh"] and p.tldr == " ".join(r["tldr"].split())
        assert p.presentation == r["venue"].rsplit(" ", 1)[-1]
    ignored = sum((f.ignored for f in loaded.files), Counter())
    assert ignored["citationCount"] == len(records) and ignored["abstract_zh"] == sum(
        bool(r["abstract_zh"]) for r in records)


def test_workshop_list_reads_spotlights_from_the_session():
    records = raw("generated-ml4ps2025.json")
    loaded = load_papers([LISTS / "generated-ml4ps2025.json"])
    spotlights = {str(r["id"]) for r in records if r["session"].endswith("Spotlight")}
    assert spotlights and {p.paper_id for p in loaded.papers if p.presentation == "spotlight"} == spotlights
    assert {p.venue for p in loaded.papers} == {"ML4PS@Neurips 2025"}
    assert loaded.files[0].ignored == Counter({"poster_image_url": 40, "award": 3})


def test_json_lines_saved_as_txt_are_read_as_json():
    papers = load_papers([LISTS / "derived-nips2018-jsonlines.txt"]).papers
    assert [p.title for p in papers] == [r["title"] for r in raw("paperlists-nips2018.json")[:20]]
    assert not any(p.abstract.startswith("{") for p in papers)


def test_csv_without_a_header_row_is_one_short_line():
    with pytest.raises(InputError) as err:
        read_file(LISTS / "derived-nips2018-noheader.csv")
    message = str(err.value)
    assert "no header row naming its columns" in message and "\n" not in message and len(message) < 250
    assert err.value.line == 1


def test_the_readme_field_table_is_the_parsers_table():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start, end = readme.index("<!-- fields-table:start -->\n"), readme.index("<!-- fields-table:end -->")
    assert readme[start:end].split("\n", 1)[1].strip() == fields.markdown_table()


def test_every_list_reports_each_ignored_field_once_per_file():
    for path in sorted(p for p in LISTS.iterdir() if p.suffix in (".json", "") and p.name != "README.md"):
        loaded = load_papers([path])
        notes = [n for f in loaded.files for n in f.notes() if ": ignored: " in n]
        assert len(notes) == sum(bool(f.ignored) for f in loaded.files), path.name


def test_a_real_list_ingests_once_and_reingests_unchanged(tmp_path):
    from retrieval.library import Library
    from tests.conftest import make_settings
    from tests.fakes import HashEmbedder

    path = LISTS / "paperlists-iclr2018.json"
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        first = lib.ingest([path])
        assert first.added == 83 and "117 withdrawn or rejected submissions skipped" in first.line()
        again = lib.ingest([path])
        assert (again.added, again.updated, again.unchanged, again.chunks_embedded) == (0, 0, 83, 0)
        stored = {p.title: p for p in lib.papers()}
    record = next(r for r in raw("paperlists-iclr2018.json") if r["status"] == "Oral")
    assert stored[record["title"]].bibtex == record["bibtex"].strip() and stored[record["title"]].presentation == "oral"


def test_a_folder_of_per_paper_files_is_summed_up_in_one_line_per_kind(tmp_path):
    from ingest.pipeline import IngestSummary

    folder = tmp_path / "papers"
    folder.mkdir()
    for i in range(7):
        venue = "Submitted to NeurIPS 2024" if i == 3 else "NeurIPS 2024 poster"
        record = {"id": f"p{i}", "title": f"Paper number {i}", "venue": venue, "citationCount": i,
                  "abstract": f"We study problem {i} and show that a simple method solves it in linear time."}
        if i < 2:
            record["collected_at"] = "2024-12-01"
        (folder / f"p{i}.json").write_text(json.dumps(record), encoding="utf-8")
    (tmp_path / "alone.json").write_text(json.dumps([{"title": "A lone list", "tags2": "x", "abstract":
                                                      "We show a lone list is still reported on its own line."}]))
    loaded = load_papers([folder, tmp_path / "alone.json"])
    notes = IngestSummary(files=list(loaded.files)).notes()
    assert notes == [
        "papers/: 1 not accepted, skipped: Submitted to NeurIPS 2024 ×1 (in 1 file: p3.json)",
        "papers/: ignored in 7 files (p0.json, p1.json, p2.json, p3.json, p4.json and 2 more): "
        "citationCount ×7, collected_at ×2",
        "alone.json: ignored: tags2 ×1",
    ], notes
