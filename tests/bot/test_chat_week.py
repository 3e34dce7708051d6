"""`paperbot chat` has the week's commands: save, /saved, exports written as files, /plan, /watch, /forget."""

from __future__ import annotations

import io
from pathlib import Path

import icalendar

from benchmarks import shapes
from bot.chat import run_repl
from retrieval.library import Library
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

SCRIPT = """\
/paper 201
save
/paper 206
save
/saved
/saved bibtex
/saved calendar
/plan preference optimization
/watch preference optimization
/watch list
/saved remove 201
/watch remove 1
/forget
quit
"""


def test_chat_runs_the_week_commands_and_writes_attachments(tmp_path):
    program = shapes.write_json(tmp_path / "corpus" / "program.json", shapes.week_program())
    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(program))
    out = io.StringIO()
    with Library(settings, embedder=HashEmbedder()) as lib:
        lib.ingest()
        assert run_repl(settings, lines=io.StringIO(SCRIPT), out=out, library=lib) == 0
    text = out.getvalue()
    assert "Saved 1 of 1 paper; your list has 2." in text
    assert "Papers 1–2 of 2" in text and "Retrieval-Augmented Theorem Proving" in text
    assert "(wrote saved-papers.bib)" in text and "(wrote saved-papers.ics)" in text and "(wrote plan.ics)" in text
    assert Path("saved-papers.bib").read_text().count("@inproceedings{") == 2
    events = list(icalendar.Calendar.from_ical(Path("saved-papers.ics").read_bytes()).walk("VEVENT"))
    assert len(events) == 4  # two papers, a talk and a poster each
    assert "⚠ clashes with Oral Session 2B" in text
    assert "Watching “preference optimization” (#1)" in text and "#1 · preference optimization · DM" in text
    assert "Removed Direct Preference Optimization Without a Reference Model from your saved papers." in text
    assert "Stopped watching “preference optimization”." in text
    assert "Deleted everything I kept about you: 1 saved paper and 0 watches." in text


def test_a_command_typed_without_its_value_says_what_it_needs_and_starts_no_conversation(tmp_path):
    program = shapes.write_json(tmp_path / "corpus" / "program.json", shapes.week_program())
    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(program))
    out = io.StringIO()
    script = "/similar\n/plan\n/search\n/paper\n" + "\udcff bad bytes\n" + "quit\n"
    with Library(settings, embedder=HashEmbedder()) as lib:
        lib.ingest()
        assert run_repl(settings, lines=io.StringIO(script), out=out, library=lib) == 0
    lines = out.getvalue().splitlines()
    assert lines == ["(/similar needs a label or id; help lists the commands)",
                     "(/plan needs a topic (or saved); help lists the commands)",
                     "(/search needs a query; help lists the commands)",
                     "(/paper needs a label or id; help lists the commands)",
                     "(that line is not UTF-8 text)"]
