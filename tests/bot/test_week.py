"""The conference week through the real discord.py classes: slots, Save, /saved, /plan, /watch, /forget."""

from __future__ import annotations

import asyncio
import copy

import icalendar
import pytest

from benchmarks import shapes
from bot.harness import CHANNEL_ID, MANAGE_GUILD, Harness
from retrieval.library import Library
from tests.bot.limits import assert_calls_ok
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

pytestmark = pytest.mark.anyio

BOB = Harness.user(666666666666666666, "bob")


def week_papers(only: set[int] | None = None) -> dict:
    program = shapes.week_program()
    if only is not None:
        program["results"] = [e for e in program["results"] if e["id"] in only]
        program["count"] = len(program["results"])
    return program


@pytest.fixture
def corpus(tmp_path):
    return tmp_path / "corpus"


@pytest.fixture
def week_library(tmp_path, corpus):
    shapes.write_json(corpus / "program.json", week_papers())
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        yield lib


def fields(message: dict) -> list[dict]:
    return [f for e in message["embeds"] for f in e.get("fields", [])]


def description(message: dict) -> str:
    return "\n".join(e.get("description") or "" for e in message["embeds"])


async def test_paper_shows_its_slots_and_save_survives_a_restart(make_bot, week_library):
    h = Harness(make_bot(week_library))
    await h.start()
    try:
        shown = await h.slash("paper", paper="201")
        when = next(f for f in fields(shown.messages[-1]) if f["name"] == "When and where")
        assert when["value"] == "🗓 Oral Session 2A · Tue 10:00 · Hall A\n🗓 Poster Session 3 · Wed 11:00 · #1201"
        saved = await h.click(shown.messages[-1], "Save")
        assert saved.messages[-1]["flags"] & 64
        assert "Saved 1 of 1 paper; your list has 1." in saved.messages[-1]["content"]
        answer = await h.slash("ask", question="preference optimization reward models")
        save = next(c for r in answer.messages[-1]["components"] for c in r["components"] if c["label"] == "Save")
        cited = set(save["custom_id"].removeprefix("pb:save:").split(","))
        await h.click(answer.messages[-1], "Save")
        h = await h.restart(make_bot(week_library))  # nothing of the old process is left
        listed = await h.slash("saved list")
    finally:
        await h.stop()
    assert_calls_ok(shown.calls + saved.calls + listed.calls)
    text = description(listed.messages[-1])
    assert "Direct Preference Optimization Without a Reference Model" in text
    total = len(cited | {"201"})
    assert cited and f"Papers 1–{total} of {total}" in text
    assert listed.messages[-1]["flags"] & 64  # a private list
    assert [b["label"] for r in listed.messages[-1]["components"] for b in r["components"]] == ["BibTeX", "Calendar"]


async def test_saved_exports_bibtex_and_a_calendar_and_pages_after_a_restart(make_bot, week_library):
    ids = ["201", "202", "204", "205", "206", "207", "208", "203", "Wk-none"]
    async with Harness(make_bot(week_library)) as h:
        for pid in ids[:-1]:
            shown = await h.slash("paper", paper=pid)
            await h.click(shown.messages[-1], "Save")
        listed = await h.slash("saved list")
        bib = await h.click(listed.messages[-1], "BibTeX")
        ics = await h.slash("saved export", format="ics")
        bib_bytes = h.attachment(bib.messages[-1], ".bib")
        ics_bytes = h.attachment(ics.messages[-1], ".ics")
    assert_calls_ok(bib.calls + ics.calls)
    text = bib_bytes.decode()
    assert text.count("@inproceedings{") == 8 and "title = {Reward Models That Know When They Are Wrong}" in text
    events = list(icalendar.Calendar.from_ical(ics_bytes).walk("VEVENT"))
    assert len(events) == sum(len(p) for _, p in shapes.WEEK)  # every slot of the eight papers
    assert {str(e["SUMMARY"]) for e in events} >= {"Retrieval-Augmented Theorem Proving"}
    assert "[file: saved-papers.bib" in bib.text()


async def test_two_users_saving_at_once_each_keep_their_own_list(make_bot, week_library):
    async with Harness(make_bot(week_library)) as h:
        shown = [await h.slash("paper", paper=pid) for pid in ("201", "202", "203")]
        clicks = []
        for message in shown:  # every click in flight at once, both users
            for user in (None, BOB):
                payload = h.payloads.interaction(3, {"custom_id": next(
                    c["custom_id"] for r in message.messages[-1]["components"] for c in r["components"]),
                    "component_type": 2}, user=user, dm=False, roles=(), permissions=0,
                    message=message.messages[-1])
                clicks.append(h.feed_interaction(payload))
        await asyncio.gather(*(h.wait(c) for c in clicks))
        alice_list = await h.slash("saved list")
        bob_list = await h.slash("saved list", user=BOB)
        await h.slash("saved remove", paper="202", user=BOB)
        bob_after = await h.slash("saved list", user=BOB)
    for listed in (alice_list, bob_list):
        assert "Papers 1–3 of 3" in description(listed.messages[-1])
    assert "Papers 1–2 of 2" in description(bob_after.messages[-1])
    assert "Reward Models" not in description(bob_after.messages[-1])


async def test_plan_pages_by_day_marks_clashes_and_attaches_a_calendar(make_bot, week_library):
    async with Harness(make_bot(week_library)) as h:
        ex = await h.slash("plan", topic="preference optimization")
        first = copy.deepcopy(ex.messages[-1])  # the Next button edits the message in place
        nxt = await h.click(first, "Next")
        empty = await h.slash("plan")
        bad_day = await h.slash("plan", topic="x", day="Tuesday")
        ics = h.attachment(first, ".ics")
    assert_calls_ok(ex.calls + nxt.calls + empty.calls + bad_day.calls)
    names = [f["name"] for f in fields(first)]
    assert "10:00–10:15 · Oral Session 2A · Hall A · ⚠ clashes with Oral Session 2B" in names
    assert "**Tue 2026-12-08**" in description(first)
    assert first["embeds"][-1]["footer"]["text"].startswith("day 1/2")
    second = nxt.calls[0].json["data"]["embeds"]
    assert "Wed 2026-12-09" in second[0]["description"]
    assert any("Poster Session 3" in f["name"] for e in second for f in e.get("fields", []))
    events = list(icalendar.Calendar.from_ical(ics).walk("VEVENT"))
    assert events and all(str(e["DTSTART"].to_ical().decode()).endswith("Z") for e in events)
    assert "Give a topic" in empty.calls[0].json["data"]["content"]
    assert bad_day.calls[0].json["data"]["content"] == "`day` must be a date such as 2026-12-08."


async def test_plan_from_saved_papers(make_bot, week_library):
    async with Harness(make_bot(week_library)) as h:
        shown = await h.slash("paper", paper="206")
        await h.click(shown.messages[-1], "Save")
        ex = await h.slash("plan", saved=True, locale="zh-CN")
    msg = ex.messages[-1]
    assert msg["flags"] & 64
    assert msg["embeds"][0]["title"] == "日程：你收藏的论文"
    assert any(f["name"] == "15:30–15:45 · Oral Session 4C · Room 6E" for f in fields(msg))


async def test_watch_digest_after_a_reindex_once_per_paper_without_pings(make_bot, tmp_path, corpus):
    shapes.write_json(corpus / "program.json", week_papers({204, 205}))
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        bot = make_bot(lib)
        async with Harness(bot) as h:
            added = await h.slash("watch add", topic="preference optimization")
            channel = await h.slash("watch add", topic="theorem proving", channel=str(CHANNEL_ID))
            listed = await h.slash("watch list")
            shapes.write_json(corpus / "program.json", week_papers())  # the program gains six papers
            rebuilt = await h.slash("reindex", permissions=MANAGE_GUILD)
            again = await h.slash("reindex", permissions=MANAGE_GUILD)  # nothing new: no digest
            removed = await h.slash("watch remove", watch=1)
            after = await h.slash("watch list")
    assert "Watching “preference optimization” (#1)" in added.messages[-1]["content"]
    assert "Only server admins can point a watch at a channel" in channel.messages[-1]["content"]
    assert "#1 · preference optimization · DM" in listed.messages[-1]["content"]
    dms = [m for m in rebuilt.messages if "guild_id" not in m and m["embeds"]]
    [digest] = dms
    assert digest["embeds"][0]["title"] == "New papers for your watch: preference optimization"
    body = digest["embeds"][0]["description"]
    assert "Direct Preference Optimization Without a Reference Model" in body and "Weather" not in body
    assert "🗓 Oral Session 2A · Tue 10:00 · Hall A" in body
    assert_calls_ok(rebuilt.calls)  # AllowedMentions.none() on the digest too
    assert not [m for m in again.messages if "guild_id" not in m and m["embeds"]]
    assert "Stopped watching “preference optimization”." in removed.messages[-1]["content"]
    assert "You watch no topics" in after.messages[-1]["content"]


async def test_admin_watch_posts_in_a_channel_and_forget_deletes_everything(make_bot, tmp_path, corpus):
    shapes.write_json(corpus / "program.json", week_papers({204}))
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        async with Harness(make_bot(lib)) as h:
            ok = await h.slash("watch add", topic="theorem proving", channel=str(CHANNEL_ID), permissions=MANAGE_GUILD)
            shapes.write_json(corpus / "program.json", week_papers())
            rebuilt = await h.slash("reindex", permissions=MANAGE_GUILD)
            shown = await h.slash("paper", paper="206")
            await h.click(shown.messages[-1], "Save")
            gone = await h.slash("forget")
            empty = await h.slash("saved list")
    assert "to <#333333333333333333>" in ok.messages[-1]["content"]
    posted = [m for m in rebuilt.messages if m.get("guild_id") and m["embeds"]
              and m["embeds"][0].get("title", "").startswith("New papers")]
    assert len(posted) == 1 and "Retrieval-Augmented Theorem Proving" in posted[0]["embeds"][0]["description"]
    assert gone.messages[-1]["content"] == "Deleted everything I kept about you: 1 saved paper and 1 watch."
    assert "no saved papers" in empty.messages[-1]["content"]


async def test_digests_are_rate_limited_per_watch_and_queued_papers_come_next(make_bot, tmp_path, corpus):
    shapes.write_json(corpus / "program.json", week_papers({204}))
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        bot = make_bot(lib)
        async with Harness(bot) as h:
            await h.slash("watch add", topic="preference optimization")
            shapes.write_json(corpus / "program.json", week_papers({204, 201}))
            first = await h.slash("reindex", permissions=MANAGE_GUILD)
            shapes.write_json(corpus / "program.json", week_papers({204, 201, 202}))
            soon = await h.slash("reindex", permissions=MANAGE_GUILD)  # within the interval: queued, not sent
            bot.watcher.interval = 0  # the interval has passed
            later = await h.background(bot.watcher.run_once())
    dm = [m for m in first.messages if "guild_id" not in m and m["embeds"]]
    assert len(dm) == 1 and "Direct Preference Optimization" in dm[0]["embeds"][0]["description"]
    assert not [m for m in soon.messages if "guild_id" not in m and m["embeds"]]
    [queued] = later.messages
    body = queued["embeds"][0]["description"]
    assert "Reward Models That Know When They Are Wrong" in body and "Direct Preference" not in body


def test_the_week_commands_have_chinese_names_and_descriptions(make_bot):
    from discord import app_commands

    from bot.app import replies as bot_messages
    from bot.app.week import COMMANDS

    missing = []
    for command in COMMANDS:
        walk = [command, *command.walk_commands()] if isinstance(command, app_commands.Group) else [command]
        for c in walk:
            missing += [t for t in (c.name, c.description) if t not in bot_messages.COMMANDS_ZH]
            if isinstance(c, app_commands.Command):
                missing += [t for p in c.parameters for t in (p.name, p.description)
                            if t not in bot_messages.COMMANDS_ZH]
    assert not missing, missing


async def test_papers_ingested_while_the_bot_was_down_reach_the_watch_at_the_next_start(make_bot, tmp_path, corpus):
    shapes.write_json(corpus / "program.json", week_papers({205}))
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        h = Harness(make_bot(lib))
        await h.start()
        try:
            await h.slash("watch add", topic="diffusion policies")
            await h.slash("watch add", topic="@everyone <@123456789012345678> **bold**")
            await h.stop()
            shapes.write_json(corpus / "program.json", week_papers({205, 207}))
            lib.ingest()  # the bot is down
            bot = make_bot(lib)
            h = Harness(bot, rest=h.rest)
            await h.start()
            digest = await h.background(bot.watcher.run_once())
            listed = await h.slash("watch list")
        finally:
            await h.stop()
    [message] = digest.messages
    assert message["embeds"][0]["title"] == "New papers for your watch: diffusion policies"
    assert "Diffusion Policies for Dexterous Manipulation" in message["embeds"][0]["description"]
    hostile = listed.messages[-1]["content"].splitlines()[-1]
    assert "\\*\\*bold\\*\\*" in hostile and "<@123456789012345678>" not in hostile and "@everyone" not in hostile
    assert_calls_ok(digest.calls + listed.calls)


def test_a_crowded_day_fits_one_message_and_sends_the_rest_to_the_calendar():
    from bot.app import embeds
    from paperbot.records import Paper, Slot
    from retrieval.plan import build_plan
    from tests.bot.limits import message_problems

    papers = [Paper(paper_id=f"c{i}", source="s", position=i, abstract="", label="x", title="A long title " * 12,
                    url=f"https://openreview.net/forum?id=c{i:04d}" + "x" * 60,
                    slots=tuple(Slot(f"Oral Session {i}-{j}", f"2026-12-08T{8 + j:02d}:00:00-08:00",
                                     f"2026-12-08T{8 + j:02d}:30:00-08:00", f"Room {j}", "", "oral") for j in range(4)))
              for i in range(25)]
    page = embeds.plan_page(build_plan("crowded", [(p, 1.0) for p in papers]), 0)
    body = {"embeds": [embeds.to_embed(c).to_dict() for c in page.cards], "allowed_mentions": {"parse": []}}
    assert not message_problems(body)
    text = "\n".join(c.description for c in page.cards)
    assert "more slots this day: the calendar file has them all" in text
    assert page.cards[-1].footer.startswith("day 1/1")


async def test_a_fresh_paper_list_is_hashed_off_the_event_loop(make_bot, tmp_path, corpus, monkeypatch):
    """After a /reindex the watcher hashes every paper of the new list (90 ms at 6,000 papers): not on the loop."""
    import threading

    from bot.app import watcher

    shapes.write_json(corpus / "program.json", week_papers({204}))
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        bot = make_bot(lib)
        async with Harness(bot) as h:
            await h.slash("watch add", topic="preference optimization")
            hashed_in: set[str] = set()
            real = watcher.paper_version

            def version(paper):
                hashed_in.add(threading.current_thread().name)
                return real(paper)

            monkeypatch.setattr(watcher, "paper_version", version)
            shapes.write_json(corpus / "program.json", week_papers({204, 201}))
            first = await h.slash("reindex", permissions=MANAGE_GUILD)
    assert [m for m in first.messages if "guild_id" not in m and m["embeds"]]  # the digest still came
    assert hashed_in and threading.main_thread().name not in hashed_in
