"""The week's plan: matching papers' talks and posters in time order, clashes, days, and the .ics calendar."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import icalendar
import pytest

from benchmarks import shapes
from bot.terminal import render_plan_text
from ingest.parse import parse_file
from paperbot.ics import calendar, fold
from paperbot.records import Paper, Slot
from retrieval.library import Library
from retrieval.plan import build_plan, check_day, plan_events, plan_for, slot_uid, slots_out_of_range
from tests.conftest import make_settings
from tests.test_cli import run

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def week(tmp_path_factory, embedder):
    """The generated week's program, ingested with the real model (eight papers)."""
    tmp = tmp_path_factory.mktemp("week")
    program = shapes.write_json(tmp / "c" / "program.json", shapes.week_program())
    with Library(make_settings(tmp, PAPERBOT_CORPUS=str(program)), embedder=embedder) as lib:
        lib.ingest()
        yield lib


def papers_of(tmp_path) -> dict[str, Paper]:
    program = shapes.write_json(tmp_path / "program.json", shapes.week_program())
    return {p.paper_id: p for p in parse_file(program)}


def test_a_topic_plans_its_papers_talks_and_posters_in_time_order_with_clashes(week):
    plan = plan_for(week, "preference optimization", k=10)
    assert not plan.abstained
    starts = [s.slot.starts for s in plan.slots]
    assert starts == sorted(starts)
    found = {p.paper.paper_id for s in plan.slots for p in s.papers}
    assert {"201", "202", "203"} <= found and "205" not in found  # weather forecasting is not about preferences
    by_session = {(s.session, s.start): s for s in plan.slots}
    a = by_session[("Oral Session 2A", "2026-12-08T10:00:00-08:00")]
    b = by_session[("Oral Session 2B", "2026-12-08T10:00:00-08:00")]
    assert a.clashes == ("Oral Session 2B",) and b.clashes == ("Oral Session 2A",)
    spot = by_session[("Oral Session 2A", "2026-12-08T10:15:00-08:00")]
    assert spot.kind == "spotlight" and spot.clashes == ()  # after the clash, same room
    posters = by_session[("Poster Session 3", "2026-12-09T11:00:00-08:00")]
    assert posters.clashes == () and {p.poster_position for p in posters.papers} >= {"1201", "1202"}
    scores = [p.score for p in posters.papers]
    assert scores == sorted(scores, reverse=True)


def test_plan_json_shape(week):
    out = plan_for(week, "preference optimization").to_json()
    assert out["query"] == "preference optimization"
    slot = out["slots"][0]
    assert set(slot) == {"session", "start", "end", "room", "kind", "papers", "clash", "clashes_with"}
    assert slot["start"] == "2026-12-08T10:00:00-08:00"  # as in the source
    paper = slot["papers"][0]
    assert {"paper_id", "title", "url", "slots", "poster_position", "score"} <= set(paper)
    assert json.loads(json.dumps(out)) == out


def test_a_day_keeps_that_local_day_only(tmp_path):
    papers = papers_of(tmp_path)
    plan = build_plan("x", [(p, 1.0) for p in papers.values()], day="2026-12-09")
    assert plan.slots and {s.day for s in plan.slots} == {"2026-12-09"}
    assert {s.session for s in plan.slots} == {"Poster Session 3", "Oral Session 4C", "Poster Session 4"}
    late = Paper(paper_id="n", source="s", position=1, abstract="", label="Late",
                 slots=(Slot("Night Session", "2026-12-09T23:30:00-08:00", "2026-12-10T00:30:00-08:00", "R", "",
                             "oral"),))
    assert [s.session for s in build_plan("x", [(late, 1.0)], day="2026-12-09").slots] == ["Night Session"]
    assert build_plan("x", [(late, 1.0)], day="2026-12-10").slots == []  # Thursday in UTC, Wednesday locally
    with pytest.raises(ValueError, match="2026-12-08"):
        check_day("tuesday")


def test_plan_text_groups_by_day_and_marks_clashes(tmp_path):
    papers = papers_of(tmp_path)
    plan = build_plan("alignment", [(papers["201"], 0.9), (papers["202"], 0.8)])
    text = render_plan_text(plan)
    assert text.splitlines()[:4] == ["Plan for: alignment", "2 papers in 3 slots", "", "Tue 2026-12-08"]
    assert "  10:00–10:15 · Oral Session 2A · Hall A · ⚠ clashes with Oral Session 2B" in text
    assert "      #1201 Direct Preference Optimization Without a Reference Model  (score 0.90)" in text
    zh = render_plan_text(plan, "zh")
    assert "周二 2026-12-08" in zh and "与 Oral Session 2B 时间冲突" in zh


def test_the_calendar_parses_with_one_event_per_paper_slot_in_utc(tmp_path):
    papers = papers_of(tmp_path)
    plan = build_plan("alignment", [(papers[i], 1.0) for i in ("201", "202", "203", "205")])
    text = calendar(plan_events(plan), name="paperbot: alignment", now=NOW)
    cal = icalendar.Calendar.from_ical(text)
    events = list(cal.walk("VEVENT"))
    assert len(events) == sum(len(papers[i].slots) for i in ("201", "202", "203", "205")) == 7
    first = events[0]
    assert str(first["SUMMARY"]) == "Direct Preference Optimization Without a Reference Model"
    assert first.decoded("DTSTART") == datetime(2026, 12, 8, 18, 0, tzinfo=timezone.utc)  # 10:00 at UTC-8
    assert first.decoded("DTEND") == datetime(2026, 12, 8, 18, 15, tzinfo=timezone.utc)
    assert "DTSTART:20261208T180000Z\r\n" in text
    assert str(first["URL"]) == "https://openreview.net/forum?id=Wk01"
    poster = next(e for e in events if "1201" in str(e["LOCATION"]))
    assert str(poster["LOCATION"]) == "Exhibit Hall C,D,E, poster #1201"  # commas escaped in the file, read back
    assert "LOCATION:Exhibit Hall C\\,D\\,E\\, poster #1201\r\n" in text
    uids = [str(e["UID"]) for e in events]
    assert len(set(uids)) == len(uids)
    again = calendar(plan_events(build_plan("other words", [(papers["201"], 0.1)])), now=NOW)
    assert str(next(iter(icalendar.Calendar.from_ical(again).walk("VEVENT")))["UID"]) == uids[0]  # stable


def test_calendar_lines_are_crlf_folded_at_75_octets_and_text_is_escaped():
    slot = Slot("Oral Session 1", "2026-12-08T10:00:00-08:00", "2026-12-08T10:15:00-08:00", "Hall A; upstairs", "",
                "oral")
    title = "对齐：偏好优化, 奖励模型; 以及 \\ 反斜杠 " * 4
    paper = Paper(paper_id="zh1", source="s", position=1, abstract="", label=title, title=title, slots=(slot,))
    text = calendar(plan_events(build_plan("q", [(paper, None)])), now=NOW)
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    for line in text.split("\r\n")[:-1]:
        assert len(line.encode("utf-8")) <= 75
        line.encode("utf-8").decode("utf-8")  # never a split character
    [event] = icalendar.Calendar.from_ical(text).walk("VEVENT")
    assert str(event["SUMMARY"]) == title
    assert str(event["LOCATION"]) == "Hall A; upstairs"
    assert fold("x" * 80) == "x" * 75 + "\r\n " + "x" * 5 + "\r\n"
    assert slot_uid("zh1", slot) == str(event["UID"])


@pytest.mark.slow
def test_plan_command_prints_the_plan_and_writes_the_calendar(tmp_path, embedder):
    program = shapes.write_json(tmp_path / "program.json", shapes.week_program())
    with Library(make_settings(tmp_path), embedder=embedder) as lib:  # the commands below are what is tested
        lib.ingest([program])
    proc = run(tmp_path, "plan", "preference optimization", "--ics", "plan.ics")
    assert proc.returncode == 0, proc.stderr
    assert "⚠ clashes with Oral Session 2B" in proc.stdout and "Tue 2026-12-08" in proc.stdout
    events = list(icalendar.Calendar.from_ical((tmp_path / "plan.ics").read_bytes()).walk("VEVENT"))
    assert events and all(e.decoded("DTSTART").tzinfo is not None for e in events)
    day = run(tmp_path, "plan", "preference optimization", "--day", "2026-12-09", "--json", "-k", "3")
    out = json.loads(day.stdout)
    assert out["day"] == "2026-12-09" and all(s["start"].startswith("2026-12-09") for s in out["slots"])
    abstract = Path(tmp_path / "mine.txt")
    abstract.write_text("We build robots that manipulate objects. " * 10, encoding="utf-8")
    mine = json.loads(run(tmp_path, "plan", str(abstract), "--json", "-k", "1").stdout)
    assert mine["slots"][0]["papers"][0]["paper_id"] == "207"
    hit = json.loads(run(tmp_path, "search", "preference optimization without a reference model", "--json",
                         "-k", "1").stdout)["hits"][0]
    assert hit["paper_id"] == "201" and [s["start"] for s in hit["slots"]] == ["2026-12-08T10:00:00-08:00",
                                                                              "2026-12-09T11:00:00-08:00"]
    cited = json.loads(run(tmp_path, "ask", "how to do preference optimization without a reference model?",
                           "--json").stdout)["citations"]
    [c201] = [c for c in cited if c["paper_id"] == "201"]
    assert [s["session"] for s in c201["slots"]] == ["Oral Session 2A", "Poster Session 3"]
    text = run(tmp_path, "search", "reward models that know when they are wrong", "-k", "1").stdout
    assert "    Oral Session 2B · Tue 10:00 · Hall B" in text and "    Poster Session 3 · Wed 11:00 · #1202" in text
    bad = run(tmp_path, "plan", "x", "--day", "Tuesday")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "--day: day must be a date" in bad.stderr


EDGE_OF_TIME = [("9999-12-31T23:30:00+00:00", ""),  # an hour's default length is past the last date
                ("9999-12-31T20:00:00-12:00", "9999-12-31T21:00:00-12:00")]  # UTC is in year 10000


@pytest.mark.parametrize("start, end", EDGE_OF_TIME)
def test_a_time_no_calendar_can_hold_is_planned_but_left_out_of_the_calendar(tmp_path, start, end):
    papers = papers_of(tmp_path)
    edge = Slot("Oral Session 9", start, end, "Hall Z", "", "oral")
    late = Paper(paper_id="late", source="s", position=1, abstract="", label="Late", title="Late", slots=(edge,))
    plan = build_plan("alignment", [(papers["201"], 0.9), (late, 0.5)])
    assert [s.session for s in slots_out_of_range(plan)] == ["Oral Session 9"]
    assert "Oral Session 9" in render_plan_text(plan)
    events = plan_events(plan)
    assert [e.summary for e in events] == ["Direct Preference Optimization Without a Reference Model"] * 2
    assert len(list(icalendar.Calendar.from_ical(calendar(events, now=NOW)).walk("VEVENT"))) == 2


@pytest.mark.slow
def test_plan_command_says_which_slot_the_calendar_leaves_out(tmp_path, embedder):
    program = tmp_path / "program.jsonl"
    program.write_text(json.dumps({
        "id": "q1", "title": "Quantum annealing for scheduling", "type": "oral", "session": "Oral Session 9",
        "starttime": "9999-12-31T23:30:00+00:00", "room": "Hall Z",
        "abstract": "We study quantum annealing for scheduling problems and find better schedules than classical "
                    "heuristics on many benchmarks."}) + "\n", encoding="utf-8")
    with Library(make_settings(tmp_path), embedder=embedder) as lib:
        lib.ingest([program])
    proc = run(tmp_path, "plan", "quantum annealing", "--ics", "q.ics")
    assert proc.returncode == 0, proc.stderr
    assert "Quantum annealing for scheduling" in proc.stdout
    assert proc.stderr.splitlines() == ["paperbot: warning: q.ics: Oral Session 9 left out: its time "
                                        "(9999-12-31T23:30:00+00:00) is out of the range a calendar can hold"]
    assert "VEVENT" not in (tmp_path / "q.ics").read_text(encoding="utf-8")


def test_slots_without_a_time_come_last_under_a_heading_that_says_so(tmp_path):
    from bot.app.embeds import plan_page, plan_page_count

    papers = papers_of(tmp_path)
    untimed = Slot("Poster Session 9", "", "", "Hall Z", "", "poster")
    tba = Paper(paper_id="tba", source="s", position=1, abstract="", label="TBA", title="Reward shaping, later",
                slots=(untimed,))
    plan = build_plan("alignment", [(papers["201"], 0.9), (tba, 0.5)])
    assert render_plan_text(plan).splitlines()[-3:] == ["Time not announced", "  Poster Session 9 · Hall Z",
                                                        "      Reward shaping, later  (score 0.50)"]
    assert "\n时间未公布\n" in render_plan_text(plan, "zh")
    last = plan_page(plan, plan_page_count(plan) - 1)  # Discord's /plan, its last day
    assert "**Time not announced**" in last.cards[0].description
