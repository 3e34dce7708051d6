"""Server libraries through the real discord.py classes: /library add, list, remove; each server sees its own."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.app import library_commands
from bot.harness import MANAGE_GUILD, Harness
from bot.harness.payloads import GUILD_ID, Payloads, Upload
from paperbot.records import Reach
from retrieval.server_library import library_prefix
from tests.bot.limits import assert_calls_ok
from tests.conftest import hashed_library, jsonl

pytestmark = pytest.mark.anyio

OTHER_GUILD = 333333333333333333
PROGRAM = [{"id": f"prog{i}", "title": f"Program paper {i}",
            "abstract": f"Program paper {i} studies graph neural networks for molecule {i}. It reports results "
                        f"on benchmark {i} and releases code for others to build on."} for i in range(6)]
LAB_PAPERS = [{"id": "lab1", "title": "Quantum origami folding with lattice robots",
               "abstract": "We fold quantum origami sheets with lattice robots. The robots align creases by "
                           "measuring entangled photons at every vertex."},
              {"id": "prog0", "title": "The lab's own take on molecule graphs",  # the same id as a program paper
               "abstract": "We revisit origami-inspired molecule graphs and show that crease patterns predict "
                           "binding affinity better than fingerprints."}]


@pytest.fixture
def program_library(tmp_path):
    with hashed_library(tmp_path, PROGRAM) as lib:
        yield lib


async def search_text(h: Harness, query: str, **where) -> str:
    return (await h.slash("search", query=query, **where)).text()


async def test_an_upload_in_one_server_is_found_there_and_nowhere_else(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        added = await h.slash("library add", file=Upload("lab papers.jsonl", jsonl(LAB_PAPERS)),
                              permissions=MANAGE_GUILD)
        here = await search_text(h, "quantum origami folding lattice robots")
        elsewhere = await search_text(h, "quantum origami folding lattice robots", guild=OTHER_GUILD)
        in_dm = await search_text(h, "quantum origami folding lattice robots", dm=True)
        choices_there = await h.autocomplete("paper", "paper", "Quantum origami", guild=OTHER_GUILD)
        choices_here = await h.autocomplete("paper", "paper", "Quantum origami")
        listed = await h.slash("library list")
        about_here = await h.slash("about")
        about_there = await h.slash("about", guild=OTHER_GUILD)
    assert_calls_ok(added.calls + listed.calls)
    assert "lab papers.jsonl" in about_here.text() and "lab papers.jsonl" not in about_there.text()
    assert f"{len(PROGRAM) + 2}" in about_here.text() and f"{len(PROGRAM) + 2}" not in about_there.text()
    final = added.messages[-1]["content"]
    assert "lab papers.jsonl is in this server's library: 2 added" in final
    assert "Quantum origami folding" in here
    assert "Quantum origami" not in elsewhere and "Quantum origami" not in in_dm
    assert "Quantum origami" not in json.dumps(choices_there.calls[-1].json)
    assert "Quantum origami" in json.dumps(choices_here.calls[-1].json)
    # the lab's paper with a program paper's id is a paper of its own: the program's is untouched
    assert program_library.paper("prog0").title == "Program paper 0"
    assert sum(p.library == str(GUILD_ID) for p in program_library.papers()) == 2
    text = listed.text()
    assert "lab papers.jsonl" in text and "2 papers" in text and f"<@{Payloads.user()['id']}>" in text


async def test_remove_and_upload_again(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), permissions=MANAGE_GUILD)
        again = await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS[:1])),
                              permissions=MANAGE_GUILD)
        after_again = len([p for p in program_library.papers() if p.library])
        choices = await h.autocomplete("library remove", "source", "la")
        removed = await h.slash("library remove", source="lab.jsonl", permissions=MANAGE_GUILD)
        gone = await search_text(h, "quantum origami folding lattice robots")
        listed = await h.slash("library list")
    assert "1 removed" in again.messages[-1]["content"] and after_again == 1  # the same name replaces its papers
    assert [c["value"] for c in choices.calls[-1].json["data"]["choices"]] == ["lab.jsonl"]
    assert "Removed lab.jsonl from this server's library (1 paper)" in removed.text()
    assert "Quantum origami" not in gone
    assert "library is empty" in listed.text()
    assert not [p for p in program_library.papers() if p.library]
    assert len(program_library.papers()) == len(PROGRAM)


async def test_only_editors_change_the_library(make_bot, program_library):
    async with Harness(make_bot(program_library, LIBRARY_ROLE="librarians")) as h:
        refused = await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)))
        in_dm = await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), dm=True)
    assert "Only members with Manage Server or the librarians role" in refused.text()
    assert refused.calls[-1].json["data"]["flags"] & 64  # only the member sees it
    assert in_dm.calls and not [p for p in program_library.papers() if p.library]


HOSTILE = [
    ("fifty.json", b" " * (50 * 2**20), "is 50.0 MB; this server's library takes files of at most 1.0 MB"),
    ("big.jsonl", b"{}" * (1024 * 1024 + 1), "is 2.0 MB; this server's library takes files of at most 1.0 MB"),
    ("latin.csv", "title,abstract\nCaf\xe9,".encode("latin-1") + b"x" * 200, "not valid UTF-8"),
    ("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested"),
    ("tool.exe", b"MZ\x90\x00", "unsupported file type '.exe'"),
    ("empty.jsonl", b"\n\n", "file is empty"),
]


@pytest.mark.parametrize(("name", "data", "says"), HOSTILE, ids=[h[0] for h in HOSTILE])
async def test_a_hostile_upload_gets_one_line_and_stores_nothing(make_bot, program_library, name, data, says):
    async with Harness(make_bot(program_library, LIBRARY_MAX_MB="1")) as h:
        before = program_library.store.content_version()
        ex = await h.slash("library add", file=Upload(name, data), permissions=MANAGE_GUILD)
    assert_calls_ok(ex.calls)
    shown = ex.calls[-1].json
    text = shown.get("content") or shown.get("data", {}).get("content", "")
    assert says in text and "\n" not in text and "Traceback" not in text and "/tmp" not in text
    assert program_library.store.content_version() == before  # nothing written
    assert not [p for p in program_library.papers() if p.library]


async def test_control_characters_and_a_path_in_the_name_are_made_harmless(make_bot, program_library):
    records = [{**LAB_PAPERS[0], "title": "Quantum\x07 origami\x1b[31m folding"}]
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("library add", file=Upload("../../etc/lab\x00.jsonl", jsonl(records)),
                           permissions=MANAGE_GUILD)
    [paper] = [p for p in program_library.papers() if p.library]
    assert "\x07" not in paper.title and "\x1b" not in paper.title
    assert paper.source.endswith(":lab_.jsonl") and "/" not in paper.source and ".." not in paper.source
    assert "control characters removed from 1 records" in ex.messages[-1]["content"]


async def test_progress_is_one_message_edited_in_place(make_bot, program_library, monkeypatch):
    monkeypatch.setattr(library_commands, "PROGRESS_EVERY", 0.01)
    many = [{"id": f"n{i}", "title": f"Lab note {i}",
             "abstract": f"Lab note {i} measures the drift of sensor {i} over a week of field recordings."}
            for i in range(300)]
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("library add", file=Upload("notes.jsonl", jsonl(many)), permissions=MANAGE_GUILD)
    assert_calls_ok(ex.calls)
    edits = [c for c in ex.calls if c.method == "PATCH" and c.path.endswith("/messages/@original")]
    posts = [c for c in ex.calls if c.method == "POST" and "/messages" in c.path]
    assert not posts  # no second message: the first is edited
    assert edits and "300 added" in edits[-1].json["content"]
    assert any(" of 300 papers embedded" in e.json["content"] for e in edits[:-1])  # how far, while it runs
    assert len(ex.messages) == 1


async def test_a_dm_sees_a_server_library_only_when_the_server_allows_it(make_bot, program_library):
    bot = make_bot(program_library)
    async with Harness(bot) as h:
        await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), permissions=MANAGE_GUILD)
        closed = await search_text(h, "quantum origami folding lattice robots", dm=True)
        opened = await h.slash("library dms", allowed=True, permissions=MANAGE_GUILD)
        in_dm = await search_text(h, "quantum origami folding lattice robots", dm=True)
        asked = await bot.dm_reach(int(Payloads.user()["id"]))
        await h.slash("library dms", allowed=False, permissions=MANAGE_GUILD)
        shut = await search_text(h, "quantum origami folding lattice robots", dm=True)
    assert "Quantum origami" not in closed and "Quantum origami" not in shut
    assert "searched from DMs" in opened.text()
    assert "Quantum origami folding" in in_dm and asked == Reach.server(GUILD_ID)


async def test_a_5000_paper_upload_leaves_every_interaction_acknowledged_in_time(make_bot, program_library):
    """Discord drops an interaction not acknowledged within 3 s: lookups arriving during a large upload are
    answered within that (the lag itself is measured by `python -m benchmarks.loop_lag --upload 5000`)."""
    many = [{"id": f"n{i}", "title": f"Field note {i} on sensor drift",
             "abstract": f"Field note {i} measures the drift of sensor {i % 97} over {i % 13 + 2} weeks of recordings "
                         f"and corrects it with a reference channel."} for i in range(5000)]
    h = Harness(make_bot(program_library, LIBRARY_MAX_PAPERS="5000", DISCORD_RATE_LIMIT="10000"))
    await h.start()
    acks: list[float] = []
    try:
        upload = h.feed_interaction(h.slash_payload("library add", file=Upload("notes.jsonl", jsonl(many)),
                                                    permissions=MANAGE_GUILD))
        finished = asyncio.ensure_future(h.wait(upload, timeout=600))
        while not finished.done():
            ex = await h.wait(h.feed_interaction(h.slash_payload("paper", paper="Program paper 1")))
            acks.append(ex.calls[0].at - ex.started)
            await asyncio.sleep(0.2)
        await finished
    finally:
        await h.stop()
    assert "5000 added" in upload.messages[-1]["content"]
    assert len(acks) >= 3 and max(acks) < 3.0, acks


async def test_a_watch_sees_its_own_server_s_uploads_only(make_bot, program_library):
    bob = Payloads.user(666666666666666666, "bob")
    bot = make_bot(program_library)
    async with Harness(bot) as h:
        await h.background(bot.watcher.run_once())  # the watcher's first look: the program as it is
        await h.slash("watch add", topic="quantum origami folding lattice robots")
        await h.slash("watch add", topic="quantum origami folding lattice robots", guild=OTHER_GUILD, user=bob)
        added = await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), permissions=MANAGE_GUILD)
        later = await h.background(bot.watcher.run_once())
    calls = added.calls + later.calls  # the upload wakes the watcher itself
    assert_calls_ok(calls)
    opened = [str(c.json["recipient_id"]) for c in calls if c.method == "POST" and c.path == "/users/@me/channels"]
    assert opened == [Payloads.user()["id"]]  # alice's watch, made in the lab's server; bob's, made elsewhere: none
    digests = [m for m in added.messages + later.messages if m.get("embeds")
               and m["embeds"][0].get("title", "").startswith("New papers for your watch")]
    assert len(digests) == 1 and "Quantum origami folding" in digests[0]["embeds"][0]["description"]


async def test_a_store_refusal_is_one_line_without_its_paths(make_bot, program_library, monkeypatch, caplog):
    from paperbot.errors import StoreLockedError

    def locked(*_, **__):
        raise StoreLockedError("/srv/secret/chroma is locked by process 4242")

    monkeypatch.setattr(program_library, "add_upload", locked)
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), permissions=MANAGE_GUILD)
    text = ex.messages[-1]["content"]
    assert text == "lab.jsonl was not added: the library could not store it now (the bot's log says why)."
    assert "/srv/secret" in caplog.text  # the log has it


async def test_an_upload_reusing_an_id_of_another_upload_keeps_the_first_paper_and_says_so(make_bot, program_library):
    clashing = {"id": "lab1", "title": "Sea ice forecasting with graph networks",
                "abstract": "We forecast sea ice with graph networks over the Arctic. Forecasts beat persistence by "
                            "a wide margin at every lead time."}
    async with Harness(make_bot(program_library)) as h:
        await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), permissions=MANAGE_GUILD)
        second = await h.slash("library add", file=Upload("ice.jsonl", jsonl([clashing])), permissions=MANAGE_GUILD)
    final = second.messages[-1]["content"]
    assert "ice.jsonl #1 skipped: its id 'lab1' is stored from lab.jsonl #1 with another title or abstract" in final
    assert library_prefix(str(GUILD_ID)) not in final  # named as the server names them, not as stored
    titles = {p.title for p in program_library.papers() if p.library}
    assert "Quantum origami folding with lattice robots" in titles and clashing["title"] not in titles
