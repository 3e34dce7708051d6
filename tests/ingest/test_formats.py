"""Conference exports, recognised by content: OpenReview notes, the site's program, abstracts apart, flat records."""

from __future__ import annotations

import json

import pytest

from benchmarks import shapes
from benchmarks.shapes import PAPERS, write_json, write_jsonl
from ingest.parse import parse_file, read_file
from ingest.pipeline import load_papers
from paperbot.errors import InputError

BETA, PROTEIN, BENCH, PENDING = PAPERS


def by_id(papers):
    return {p.paper_id: p for p in papers}


@pytest.mark.parametrize("shape", ["array", "jsonl", "object", "jsonl-named-json", "v1"])
def test_openreview_notes_in_every_container(tmp_path, shape):
    notes = [shapes.note_v1(p) if shape == "v1" else shapes.note_v2(p) for p in PAPERS]
    if shape in ("array", "v1"):
        path = write_json(tmp_path / "notes.json", notes)
    elif shape == "object":
        path = write_json(tmp_path / "notes.json", {"notes": notes, "count": len(notes)})
    else:
        path = write_jsonl(tmp_path / ("notes.jsonl" if shape == "jsonl" else "notes.json"), notes)
    papers = by_id(parse_file(path))
    assert list(papers) == [p["id"] for p in PAPERS]
    beta = papers[BETA["id"]]
    assert beta.title == BETA["title"]  # the LaTeX source is kept
    assert beta.label == BETA["title"]
    assert beta.authors == ("Émilie Durand", "Emanuele Rodolà")
    assert beta.abstract == BETA["abstract"]
    assert beta.keywords == ("preference optimization", "alignment")
    assert beta.area == "Deep learning"
    assert beta.presentation == "oral"
    assert beta.track == "Main"
    assert beta.venue == "NeurIPS 2026 oral"
    assert beta.tldr == f"TLDR of {BETA['id']}"
    assert beta.url == f"https://openreview.net/forum?id={BETA['id']}"
    assert beta.pdf_url == f"https://openreview.net/pdf/{BETA['id']}.pdf"
    assert beta.links == ("https://github.com/example/beta-dpo",)
    assert papers[BENCH["id"]].track == "Datasets and Benchmarks"
    assert papers[PROTEIN["id"]].presentation == "spotlight"
    pending = papers[PENDING["id"]]
    assert pending.abstract == "" and not pending.has_abstract and pending.label == PENDING["title"]


def test_site_program_collapses_repeats_and_keeps_affiliations(tmp_path):
    data = shapes.program()
    assert data["count"] == len(PAPERS) + 1  # the oral is listed twice
    papers = parse_file(write_json(tmp_path / "program.json", data))
    assert [p.paper_id for p in papers] == [str(p["num"]) for p in PAPERS]
    # A paper's position is its first entry's place in the file: the oral's talk and poster are entries 1 and 2.
    assert [r["eventtype"] for r in data["results"][:2]] == ["Oral", "Poster"]
    assert [p.position for p in papers] == [1, 3, 4, 5]
    beta = papers[0]
    assert beta.authors == ("Émilie Durand", "Emanuele Rodolà")
    assert beta.affiliations == ("Université de Montréal", "Sapienza University of Rome")
    assert (beta.area, beta.subarea) == ("Deep Learning", "Alignment")
    assert beta.presentation == "oral" and beta.track == "Main"
    assert beta.url == f"https://openreview.net/forum?id={BETA['id']}"
    assert beta.pdf_url == f"https://openreview.net/pdf?id={BETA['id']}"
    assert beta.site_url == "https://neurips.cc/virtual/2026/poster/101"
    assert papers[2].track == "Datasets and Benchmarks"
    assert papers[3].abstract == ""


def test_repeated_entry_fills_what_the_first_lacked(tmp_path):
    first = shapes.program_entry(BETA, "Poster", with_abstract=False)
    first["decision"] = None
    again = shapes.program_entry(BETA, "Oral")
    [paper] = parse_file(write_json(tmp_path / "program.json", {"count": 2, "results": [first, again]}))
    assert paper.abstract == BETA["abstract"]
    assert paper.presentation == "oral"


@pytest.mark.parametrize("form", ["mapping", "records", "jsonl"])
def test_abstracts_published_apart_are_merged_with_the_program(tmp_path, form):
    program = write_json(tmp_path / "c" / "program.json", shapes.program(with_abstracts=False))
    mapping = shapes.abstracts_map()
    if form == "mapping":
        abstracts = write_json(tmp_path / "c" / "abstracts.json", mapping)
    elif form == "records":
        abstracts = write_json(tmp_path / "c" / "abstracts.json", [{"id": k, "abstract": v} for k, v in mapping.items()])
    else:
        abstracts = write_jsonl(tmp_path / "c" / "abstracts.jsonl", [{"id": int(k), "abstract": v}
                                                                     for k, v in mapping.items()])
    assert not read_file(abstracts).papers and len(read_file(abstracts).abstracts) == 3
    for paths in ([program, abstracts], [tmp_path / "c"]):  # same command, or the same folder
        loaded = load_papers(paths)
        papers, duplicates = loaded.papers, loaded.duplicates
        assert len(papers) == 4 and duplicates == []
        beta = by_id(papers)["101"]
        assert beta.abstract == BETA["abstract"] and beta.source == "program.json"
        assert beta.links == ("https://github.com/example/beta-dpo",)
        assert by_id(papers)["104"].abstract == ""


def test_abstract_without_a_listed_paper_is_a_paper_of_its_own(tmp_path):
    path = write_json(tmp_path / "abstracts.json", {"77": BETA["abstract"]})
    [paper] = load_papers([path])[0]
    assert paper.paper_id == "77" and paper.abstract == BETA["abstract"] and paper.title == ""


def test_flat_records_with_the_new_fields(tmp_path):
    papers = by_id(parse_file(write_json(tmp_path / "flat.json", [shapes.flat_record(p) for p in PAPERS])))
    beta = papers[BETA["id"]]
    assert (beta.area, beta.presentation, beta.track) == ("Deep Learning", "oral", "Main")
    assert beta.keywords == ("preference optimization", "alignment")
    rec = {"title": "T", "abstract": BETA["abstract"], "authors": "Ada Lovelace and Alan Turing",
           "keywords": "a; b", "topic": "Theory->Optimization", "decision": "Accept (spotlight)"}
    [p] = parse_file(write_jsonl(tmp_path / "one.jsonl", [rec]))
    assert p.authors == ("Ada Lovelace", "Alan Turing")
    assert p.keywords == ("a", "b")
    assert (p.area, p.subarea, p.presentation) == ("Theory", "Optimization", "spotlight")


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("config.json", {"model": "x", "batch": 3}, "without a list of papers or notes"),
        ("numbers.json", [1, 2], "record 1: expected a JSON object"),
        ("scalar.json", 42, "expected a JSON object or array"),
        ("empty.json", [], "contains no papers"),
        ("untitled.json", {"results": [{"id": 1, "name": "T"}, {"id": 2, "authors": [{"fullname": "A"}]}]},
         "record 2: abstract is missing"),
        ("badtitle.json", [{"title": {"nested": 1}, "abstract": BETA["abstract"]}], "record 1: field 'title' must be text"),
        ("badauthors.json", [{"title": "T", "authors": 5}], "record 1: field 'authors' must be text or a list"),
        ("short.json", {"1": "too short"}, "record 1: abstract is too short"),
    ],
)
def test_anything_else_is_refused_naming_file_and_record(tmp_path, name, data, message):
    path = write_json(tmp_path / name, data)
    with pytest.raises(InputError) as err:
        load_papers([path], strict=True)
    assert message in str(err.value)
    assert name in str(err.value)


def test_broken_json_names_the_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"results": [\n {"id": 1,}\n]}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        parse_file(path)
    assert "broken.json" in str(err.value) and err.value.line == 2


def test_json_lines_record_error_names_its_line(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text(json.dumps(shapes.note_v2(BETA)) + "\n" + json.dumps({"content": {"authors": {"value": []}}}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError) as err:
        parse_file(path, strict=True)
    assert err.value.line == 2 and "abstract is missing" in str(err.value)
    assert [p.paper_id for p in parse_file(path)] == [BETA["id"]]  # by default the bad record is skipped


def test_mixed_records_keep_their_order_and_distinct_positions(tmp_path):
    records = [{"id": "a", "title": "A", "abstract": BETA["abstract"]}, {"id": "b", "abstract": PROTEIN["abstract"]},
               {"id": "c", "title": "C", "abstract": BENCH["abstract"]}]
    papers = parse_file(write_jsonl(tmp_path / "mixed.jsonl", records))
    assert [(p.paper_id, p.position) for p in papers] == [("a", 1), ("b", 2), ("c", 3)]


def test_withdrawn_and_rejected_submissions_are_skipped_and_counted(tmp_path):
    notes = [shapes.note_v2(p) for p in PAPERS]
    notes[1]["content"]["venueid"]["value"] = "NeurIPS.cc/2026/Conference/Withdrawn_Submission"
    notes[1]["content"]["venue"]["value"] = "NeurIPS 2026 Conference Withdrawn Submission"
    v1 = shapes.note_v1(PAPERS[2])
    v1["content"].update(venueid="NeurIPS.cc/2026/Conference/Rejected_Submission", venue="Submitted to NeurIPS 2026")
    notes[2] = v1
    path = write_jsonl(tmp_path / "notes.jsonl", notes)
    program = shapes.program()
    program["results"][-1]["decision"] = "Reject"
    site = write_json(tmp_path / "program.json", program)
    loaded = load_papers([path])
    assert [p.paper_id for p in loaded.papers] == [BETA["id"], PENDING["id"]]
    assert loaded.not_accepted == [f"{path}:2", f"{path}:3"]  # file and line of each
    assert [p.paper_id for p in load_papers([site]).papers] == ["101", "102", "103"]
    assert load_papers([site]).not_accepted == [f"{site} record 5"]
