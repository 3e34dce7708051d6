"""Slots: when and where each paper is presented, from the site's program and from flat records."""

from __future__ import annotations

import json

import pytest

from benchmarks import shapes
from bot.app import embeds
from bot.display import slot_line
from ingest.parse import parse_file
from paperbot.errors import InputError
from paperbot.records import Slot
from retrieval.library import Library
from retrieval.types import paper_json
from tests.conftest import make_settings
from tests.fakes import HashEmbedder


@pytest.fixture
def program(tmp_path):
    return shapes.write_json(tmp_path / "c" / "program.json", shapes.week_program())


def test_a_talk_and_its_poster_are_one_paper_with_two_slots_in_time_order(program):
    papers = {p.paper_id: p for p in parse_file(program)}
    assert len(papers) == len(shapes.WEEK)
    talk, poster = papers["201"].slots
    assert talk == Slot(session="Oral Session 2A", start="2026-12-08T10:00:00-08:00", end="2026-12-08T10:15:00-08:00",
                        room="Hall A", poster_position="", kind="oral")
    assert (poster.session, poster.kind, poster.poster_position) == ("Poster Session 3", "poster", "1201")
    assert papers["201"].presentation == "oral"
    spot = papers["203"].slots  # a spotlight talk on Tuesday morning, its poster on Tuesday evening
    assert [s.kind for s in spot] == ["spotlight", "poster"]
    assert [s.kind for s in papers["204"].slots] == ["poster"]


@pytest.mark.parametrize(("lang", "expected"), [
    ("en", ["Oral Session 2A · Tue 10:00 · Hall A", "Poster Session 3 · Wed 11:00 · #1201"]),
    ("zh", ["Oral Session 2A · 周二 10:00 · Hall A", "Poster Session 3 · 周三 11:00 · 1201 号海报"]),
])
def test_slot_lines_are_in_the_programs_local_time_and_the_users_language(program, lang, expected):
    paper = next(p for p in parse_file(program) if p.paper_id == "201")
    assert [slot_line(s, lang) for s in paper.slots] == expected


def test_local_time_is_the_offset_given_not_utc():
    late = Slot(session="Oral Session 9", start="2026-12-09T23:30:00-08:00", kind="oral", room="Hall A")
    assert slot_line(late) == "Oral Session 9 · Wed 23:30 · Hall A"  # 07:30 Thursday in UTC


def test_flat_records_carry_slots(tmp_path):
    path = tmp_path / "flat.jsonl"
    rows = [{"id": "f1", "title": "Masks", "abstract": "We learn sparse masks over the weights of a model.",
             "session": "Poster Session 2", "starttime": "2026-12-08T11:00:00+09:00",
             "endtime": "2026-12-08T14:00:00+09:00", "room_name": "Hall E", "poster_position": "#77", "type": "poster"},
            {"id": "f2", "title": "No slot", "abstract": "A paper that the program does not schedule at all."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    f1, f2 = parse_file(path)
    assert f1.slots == (Slot("Poster Session 2", "2026-12-08T11:00:00+09:00", "2026-12-08T14:00:00+09:00",
                             "Hall E", "#77", "poster"),)
    assert slot_line(f1.slots[0]) == "Poster Session 2 · Tue 11:00 · #77"
    assert f2.slots == ()
    assert paper_json(f1)["slots"] == [{"session": "Poster Session 2", "start": "2026-12-08T11:00:00+09:00",
                                        "end": "2026-12-08T14:00:00+09:00", "room": "Hall E",
                                        "poster_position": "#77", "kind": "poster"}]


@pytest.mark.parametrize(("fields", "problem"), [
    ({"starttime": "Tuesday 10am"}, ":1: field 'starttime' is not an ISO 8601 time: 'Tuesday 10am'"),
    ({"starttime": "2026-12-08T10:00:00"}, ":1: field 'starttime' has no UTC offset"),
    ({"starttime": "2026-12-08T10:00:00-08:00", "endtime": "2026-12-08T09:00:00-08:00"},
     ":1: ends (2026-12-08T09:00:00-08:00) before it starts"),
    ({"starttime": "9999-12-31T20:00:00-12:00"}, ":1: field 'starttime' is out of range: '9999-12-31T20:00:00-12:00'"),
])
def test_bad_times_are_refused_with_file_line_and_field(tmp_path, fields, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"title": "T", "abstract": "An abstract that is long enough.", "session": "S",
                                **fields}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        parse_file(path)
    assert str(path) in str(err.value) and problem in str(err.value)


def test_slots_are_stored_and_a_schedule_change_updates_in_place_without_embedding(tmp_path, program):
    with Library(make_settings(tmp_path), embedder=HashEmbedder()) as lib:
        first = lib.ingest([program])
        assert first.added == len(shapes.WEEK)
        assert [s.room for s in lib.paper("201").slots] == ["Hall A", "Exhibit Hall C,D,E"]
        hit = lib.search("preference optimization without a reference model").hits[0]
        assert hit.paper_id == "201" and len(hit.paper.slots) == 2
        embedded = lib.embedder.encoded
        moved = shapes.week_program()
        for entry in moved["results"]:
            if entry["id"] == 201 and entry["eventtype"] == "Oral":
                entry["room_name"] = "Hall C"
        shapes.write_json(program, moved)
        second = lib.ingest([program])
        assert (second.updated, second.unchanged, second.chunks_embedded) == (1, len(shapes.WEEK) - 1, 0)
        assert lib.embedder.encoded == embedded
        assert lib.paper("201").slots[0].room == "Hall C"


def test_a_store_from_before_slots_reads_as_no_slots():
    from paperbot.records import StoredChunk

    chunk = StoredChunk.from_metadata("p1:abc:0", "text", {"paper_id": "p1", "label": "x"})
    assert chunk.fields.slots == ()
    assert StoredChunk.from_metadata("p1:abc:0", "t", {"slots": "not json"}).fields.slots == ()


def test_citations_search_hits_and_the_paper_view_show_slots(program):
    from retrieval.types import Hit

    paper = next(p for p in parse_file(program) if p.paper_id == "202")
    field = embeds._hit_field(1, Hit(paper=paper, score=1.0, quotes=()), lang="zh")
    assert "🗓 Oral Session 2B · 周二 10:00 · Hall B" in field.value
    [page] = embeds.paper_pages(paper)
    when = next(f for c in page.cards for f in c.fields if f.name == "When and where")
    assert when.value.splitlines() == ["🗓 Oral Session 2B · Tue 10:00 · Hall B",
                                       "🗓 Poster Session 3 · Wed 11:00 · #1202"]


@pytest.mark.parametrize(("fields", "kind"), [
    ({"eventtype": "Spotlight Poster", "session": "Poster Session 1"}, "poster"),
    ({"eventtype": "Spotlight", "session": "Oral Session 1"}, "spotlight"),
    ({"session": "Oral Session 3A"}, "oral"),
    ({"session": "Session 5", "poster_position": "12"}, "poster"),
    ({"session": "Session 5"}, "spotlight"),  # the paper's own type
])
def test_a_slots_kind_is_its_entrys_own(tmp_path, fields, kind):
    path = tmp_path / "k.jsonl"
    path.write_text(json.dumps({"title": "T", "abstract": "An abstract that is long enough.", "type": "spotlight",
                                **fields}) + "\n", encoding="utf-8")
    [paper] = parse_file(path)
    assert [s.kind for s in paper.slots] == [kind]
