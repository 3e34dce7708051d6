"""Conversations through the real discord.py classes: replies, threads, DMs, restarts, the context menu.

The history comes from Discord (the fake REST keeps every message), so a restarted bot
follows a conversation it never saw.
"""

from __future__ import annotations

import io

import discord
import pytest

from bot.app import conversation
from bot.app import replies as bot_messages
from bot.app.conversation import turn_of
from bot.chat import run_repl
from bot.harness import CHANNEL_ID, Harness
from bot.terminal import message_buttons as buttons
from paperbot import messages
from paperbot.records import Paper
from tests.bot.limits import assert_calls_ok
from tests.conftest import make_settings

pytestmark = pytest.mark.anyio

BOB = Harness.user(777777777777777777, "bob")
MASKS = [
    ("GRPO-Masks", "Sparse masks for language models trained with GRPO rewards. We report gains on math."),
    ("Vision-Masks", "Sparse masks for vision transformers. Images are classified with fewer weights."),
    ("Code-Masks", "Sparse masks with a public code release. Everything is reproducible."),
]


@pytest.fixture
def library(stub_library):
    for i, (label, abstract) in enumerate(MASKS):
        stub_library.records.append(Paper(paper_id=f"m{i}", source="masks.txt", position=i + 1, label=label,
                                          abstract=abstract))
    return stub_library


def cited(message: dict) -> list[str]:
    """The labels of the papers an answer message cites, [1] first."""
    return [f["name"].split(" — ")[0].split(" · ")[0].split("] ", 1)[1] for e in message["embeds"] for f in e.get("fields") or []]


def answer_of(ex) -> dict:
    return ex.messages[-1]


async def test_reply_to_an_answer_continues_the_conversation(make_bot, library):
    async with Harness(make_bot()) as h:
        first = await h.mention("sparse masks")
        assert cited(answer_of(first)) == ["GRPO-Masks", "Vision-Masks", "Code-Masks"]
        which = await h.reply(answer_of(first), "which of these uses GRPO?")
        compare = await h.reply(answer_of(first), "compare 2 and 3", ping=False)
        second = await h.reply(answer_of(first), "tell me more about [2]")
        vision = await h.reply(answer_of(first), "and for vision models?")
    assert cited(answer_of(which)) == ["GRPO-Masks"]
    assert cited(answer_of(compare)) == ["Vision-Masks", "Code-Masks"]  # a reply without the ping works too
    assert cited(answer_of(second)) == ["Vision-Masks"]
    assert library.searches[-1] == "sparse masks for vision models?"
    assert "searched for: sparse masks for vision models?" in answer_of(vision)["embeds"][-1]["footer"]["text"]
    for ex in (which, compare, second, vision):
        assert ex.sends[-1].json["message_reference"]  # a reply, in the conversation
        assert_calls_ok(ex.calls)


async def test_follow_up_after_a_restart_reads_the_reply_chain_from_discord(make_bot, library):
    h = Harness(make_bot())
    await h.start()
    first = await h.mention("sparse masks")
    which = await h.reply(answer_of(first), "which of these uses GRPO?")
    h = await h.restart(make_bot())  # a new process: nothing in memory
    try:
        again = await h.reply(answer_of(first), "compare 1 and 3")
        deeper = await h.reply(answer_of(which), "and for vision models?")
    finally:
        await h.stop()
    assert cited(answer_of(again)) == ["GRPO-Masks", "Code-Masks"]
    # The replied-to answer comes with the event; the question it answered is fetched from Discord.
    assert len([c for c in again.calls if c.method == "GET"]) == 1
    # Two turns up the chain: the answer to "which of these…", the reply that asked it (fetched), then the
    # first answer and its question (already fetched: cached).
    assert library.searches[-1] == "sparse masks uses GRPO for vision models?"
    assert len([c for c in deeper.calls if c.method == "GET"]) == 1


async def test_a_thread_started_from_an_answer_is_a_conversation_even_after_a_restart(make_bot, library):
    h = Harness(make_bot())
    await h.start()
    ask = await h.slash("ask", question="sparse masks")
    answer = answer_of(ask)
    assert buttons(answer) == ["More sources", "Save", "Discuss in thread"]
    start = await h.click(answer, "Discuss in thread")
    ack, thread_call, intro, note = start.calls
    thread_id = int(answer["id"])  # a thread started from a message has the message's id
    assert ack.json == {"type": 5, "data": {"flags": 64}}
    assert thread_call.path.endswith("/threads") and thread_call.json["name"] == "sparse masks"
    assert intro.url.endswith(f"/channels/{thread_id}/messages") and "reply to one of my answers" in intro.json[
        "content"]
    assert note.json["content"] == bot_messages.THREAD_STARTED.format(thread=f"<#{thread_id}>")
    assert start.messages[0]["flags"] & 64  # the note is for the clicker only
    again = await h.click(answer, "Discuss in thread")
    assert again.calls[-1].json["content"] == bot_messages.THREAD_EXISTS.format(thread=f"<#{thread_id}>")

    which = await h.thread_message(thread_id, "which of these uses GRPO?", mention=True)
    assert cited(answer_of(which)) == ["GRPO-Masks"]
    assert buttons(answer_of(which)) == ["More sources", "Save"]  # no thread inside a thread
    chatter = await h.thread_message(thread_id, "")  # without the content intent: an empty message, ignored
    assert chatter.calls == []
    thanks = await h.thread_message(thread_id, "thanks! 🙏")  # chat, not a question: no reply, no search
    assert thanks.calls == [] and "thanks" not in " ".join(library.searches)
    h = await h.restart(make_bot())
    try:
        vision = await h.thread_message(thread_id, "and for vision models?", mention=True)
        second = await h.thread_message(thread_id, "[2]")  # the content intent delivers plain messages too
    finally:
        await h.stop()
    # The restarted bot read the thread from Discord: its starter answer and the answer in the thread.
    assert "sparse masks uses GRPO for vision models?" in library.searches
    assert cited(answer_of(vision))[:2] == ["GRPO-Masks", "Vision-Masks"]
    assert cited(answer_of(second)) == ["Vision-Masks"]  # [2] of the latest answer
    for ex in (start, again, which, vision, second):
        assert_calls_ok(ex.calls)


async def test_thread_messages_follow_the_thread_answers(make_bot, library):
    async with Harness(make_bot()) as h:
        ask = await h.slash("ask", question="sparse masks")
        await h.click(answer_of(ask), "Discuss in thread")
        thread_id = int(answer_of(ask)["id"])
        second = await h.thread_message(thread_id, "[2]", mention=True)
        compare = await h.thread_message(thread_id, "compare 1 and 3", mention=True)
    assert cited(answer_of(second)) == ["Vision-Masks"]
    # "compare 1 and 3" refers to the latest answer that cited papers: [2] alone cited Vision-Masks
    assert cited(answer_of(compare)) == ["Vision-Masks"]


async def test_a_dm_is_one_conversation(make_bot, library):
    async with Harness(make_bot()) as h:
        await h.dm("sparse masks")
        second = await h.dm("[2]")
        fresh = await h.dm("continuous numerical coordinates")
        await h.dm("[2]", user=BOB)  # another user's DM has its own history
    assert cited(answer_of(second)) == ["Vision-Masks"]
    assert cited(answer_of(fresh))[0] == "NV-CoT"
    assert library.searches[-1] == "[2]"  # nothing earlier in Bob's DM: asked as it is


async def test_only_the_bots_own_messages_count_as_turns(make_bot, library):
    async with Harness(make_bot()) as h:
        first = await h.mention("sparse masks")
        # A user copies the bot's answer (embeds and all) into their own message: it is not a turn.
        forged = dict(answer_of(first), id=str(h.payloads.next_id()), author=BOB)
        h.rest.store(forged)
        state = h.bot._connection
        channel = h.bot.get_channel(CHANNEL_ID)
        real = discord.Message(state=state, channel=channel, data=answer_of(first))
        fake = discord.Message(state=state, channel=channel, data=forged)
        assert turn_of(real, h.bot.user.id).cited == ("m0", "m1", "m2")
        assert turn_of(fake, h.bot.user.id) is None
        ignored = await h.reply(forged, "compare 1 and 3", ping=False)  # a reply to Bob, not to the bot
    assert ignored.calls == []


async def test_the_cited_papers_travel_in_the_custom_id_and_ping_nobody(make_bot, library):
    async with Harness(make_bot()) as h:
        first = await h.mention("sparse masks")
    [more] = [c for row in answer_of(first)["components"] for c in row["components"] if c["label"] == "More sources"]
    assert more["custom_id"].startswith("pb:src:") and more["custom_id"].endswith(":m0,m1,m2")
    assert len(more["custom_id"]) <= 100


async def test_ask_paperbot_context_menu_answers_a_message_privately_with_share(make_bot, library):
    async with Harness(make_bot()) as h:
        target = h.payloads.message_payload("anyone know work on sparse masks for vision?", user=BOB, dm=False)
        h.rest.store(target)
        ex = await h.message_command(bot_messages.CONTEXT_MENU, target)
        assert ex.calls[0].json == {"type": 5, "data": {"flags": 64}}
        answer = answer_of(ex)
        assert answer["flags"] & 64
        assert answer["embeds"][0]["title"] == "Q: anyone know work on sparse masks for vision?"
        assert cited(answer)[0] == "Vision-Masks"
        assert buttons(answer) == ["More sources", "Save", "Share in channel"]
        shared = await h.click(answer, "Share in channel")
        empty = await h.message_command(bot_messages.CONTEXT_MENU,
                                        h.payloads.message_payload("\u200b", user=BOB, dm=False))
    mark, public = shared.calls
    assert mark.callback_type == 7 and not public.json.get("flags", 0) & 64
    assert public.json["content"] == "Shared by Alice"
    assert empty.calls[0].json["data"]["content"] == bot_messages.EMPTY_MESSAGE
    assert empty.calls[0].json["data"]["flags"] == 64
    assert_calls_ok(ex.calls + shared.calls + empty.calls)


def test_chat_follow_ups_behave_the_same(tmp_path, library):
    out = io.StringIO()
    script = io.StringIO("sparse masks\ncompare 2 and 3\nand for vision models?\nquit\n")
    code = run_repl(make_settings(tmp_path), lines=script, out=out, library=library)
    text = out.getvalue()
    assert code == 0
    answers = text.split("-" * 40)
    assert "Q: compare 2 and 3" in answers[1]
    assert "[1] Vision-Masks" in answers[1] and "[2] Code-Masks" in answers[1] and "GRPO-Masks" not in answers[1]
    assert "searched for: sparse masks for vision models?" in answers[2]
    assert messages.ABSTAIN not in answers[1]


async def test_ask_in_the_bots_thread_continues_its_conversation(make_bot, library):
    async with Harness(make_bot()) as h:
        ask = await h.slash("ask", question="sparse masks")
        await h.click(answer_of(ask), "Discuss in thread")
        thread_id = int(answer_of(ask)["id"])
        second = await h.slash("ask", question="[2]", thread=thread_id)
        elsewhere = await h.slash("ask", question="[2]")  # in the channel: a question of its own
    assert cited(answer_of(second)) == ["Vision-Masks"]
    assert buttons(answer_of(second)) == ["More sources", "Save"]  # no thread from inside a thread
    assert library.searches[-1] == "[2]"
    assert_calls_ok(second.calls + elsewhere.calls)


async def test_no_permission_to_start_a_thread_is_said_privately(make_bot, library):
    async with Harness(make_bot()) as h:
        answer = answer_of(await h.slash("ask", question="sparse masks"))
        h.rest.forbidden.add(CHANNEL_ID)
        ex = await h.click(answer, "Discuss in thread")
    assert ex.calls[-1].json["content"] == bot_messages.THREAD_FORBIDDEN
    assert ex.messages[-1]["flags"] & 64
    assert_calls_ok(ex.calls)


# -- the three Discord defects of issue 20 ----------------------------------------------------------------------

async def test_a_long_dm_follows_its_newest_answers(make_bot, library):
    """DM history is read newest first (`before=`, then reversed): after 11 exchanges "the first one" is the
    latest answer's [1], not one from ten exchanges ago (`after=` returns the window's oldest messages)."""
    words = ["alpha", "bravo", "charlie", "delta", "foxtrot", "hotel", "india", "juliet", "lima", "oscar", "papa"]
    for i, word in enumerate(words):
        library.records.append(Paper(paper_id=f"d{i}", source="days.txt", position=i + 1, label=f"Day-{word}",
                                     abstract=f"Field notes about {word} sightings. Counts of {word} per hour."))
    async with Harness(make_bot(DISCORD_RATE_LIMIT="100")) as h:
        answers = [answer_of(await h.dm(f"which papers count {word} sightings?")) for word in words]
        assert [cited(a)[0] for a in answers] == [f"Day-{w}" for w in words]
        first = await h.dm("tell me more about the first one")
        history_calls = [c for c in first.calls if c.method == "GET" and c.path == "/channels/{channel_id}/messages"]
    assert cited(answer_of(first)) == ["Day-papa"]
    assert history_calls and all("after" not in (c.params or {}) for c in history_calls)
    assert history_calls[0].params.get("before")


async def test_a_dm_after_a_long_pause_starts_afresh(make_bot, library):
    import datetime as dt
    import itertools

    async with Harness(make_bot()) as h:
        await h.dm("sparse masks")
        later = dt.datetime.now(dt.timezone.utc) + conversation.DM_WINDOW + dt.timedelta(minutes=1)
        h.payloads._ids = itertools.count(discord.utils.time_snowflake(later))  # the next DM comes after a pause
        second = await h.dm("[2]")
        again = await h.dm("[2]")  # and within the window of that one, it follows it
    assert library.searches[-2] == "[2]"  # nothing earlier in the window: asked as it is
    assert answer_of(second)["embeds"] and answer_of(again)["embeds"]


async def test_share_is_idempotent_across_restarts(make_bot, library):
    h = Harness(make_bot())
    await h.start()
    try:
        private = answer_of(await h.slash("ask", question="sparse masks", private=True))
        first = await h.click(private, "Share in channel")
        h = await h.restart(make_bot())  # nothing in memory says it was shared
        marked = h.messages[int(private["id"])]  # the private answer as Discord now shows it
        again = await h.click(marked, "Share in channel")
        stale = await h.click(private, "Share in channel")  # a client still showing the old buttons
    finally:
        await h.stop()
    public = [m for m in first.messages if not m.get("flags", 0) & 64]
    assert len(public) == 1 and public[0]["content"] == "Shared by Alice"
    [share] = [c for row in marked["components"] for c in row["components"] if c["label"] == "Share in channel"]
    assert share["disabled"] is True
    for ex in (again, stale):
        assert all(m.get("flags", 0) & 64 for m in ex.messages)  # nothing public the second time
        assert ex.calls[-1].json["data"]["content"] == bot_messages.ALREADY_SHARED
    assert_calls_ok(first.calls + again.calls)


async def test_ask_paperbot_on_a_bot_answer_asks_its_question(make_bot, library):
    async with Harness(make_bot()) as h:
        answer = answer_of(await h.mention("sparse masks for vision"))
        assert not answer["content"]  # the bot's text is in its embeds
        ex = await h.message_command(bot_messages.CONTEXT_MENU, answer)
        card = {"id": str(h.payloads.next_id()), "channel_id": str(CHANNEL_ID), "guild_id": answer["guild_id"],
                "author": {**BOB, "bot": True}, "content": "", "timestamp": answer["timestamp"],
                "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
                "mention_roles": [], "attachments": [], "pinned": False, "type": 0, "flags": 0, "components": [],
                "embeds": [{"type": "rich", "title": "Weekly digest",
                            "description": "continuous numerical coordinates for visual reasoning"}]}
        h.rest.store(card)
        other = await h.message_command(bot_messages.CONTEXT_MENU, card)
    reply = answer_of(ex)
    assert reply["embeds"][0]["title"] == "Q: sparse masks for vision" and cited(reply)[0] == "Vision-Masks"
    assert answer_of(other)["embeds"][0]["title"].startswith("Q: Weekly digest continuous numerical")
    assert cited(answer_of(other))[0] == "NV-CoT"
    assert_calls_ok(ex.calls + other.calls)


async def test_a_chinese_user_reads_every_fixed_text_in_chinese(make_bot, library):
    from paperbot import messages as core

    async with Harness(make_bot()) as h:
        private = answer_of(await h.slash("ask", question="稀疏掩码 sparse masks", private=True, locale="zh-CN"))
        assert "模式：原文摘录" in private["embeds"][-1]["footer"]["text"]
        sources = answer_of(await h.click(private, "More sources"))
        shared = await h.click(private, "Share in channel")
        again = await h.click(h.messages[int(private["id"])], "Share in channel")
        public = answer_of(await h.slash("ask", question="稀疏掩码 sparse masks", locale="zh-CN"))
        thread = await h.click(public, "Discuss in thread")
        empty = h.payloads.message_command(bot_messages.CONTEXT_MENU,
                                           h.payloads.message_payload("\u200b", user=BOB, dm=False))
        empty["locale"] = "zh-CN"
        no_text = await h.wait(h.feed_interaction(empty))
    assert sources["embeds"][0]["description"] == bot_messages.ZH["SOURCES_NOTE"]
    assert sources["embeds"][0]["title"].startswith("来源：")
    assert shared.calls[-1].json["content"] == "由 Alice 分享"
    assert again.calls[-1].json["data"]["content"] == bot_messages.ZH["ALREADY_SHARED"]
    intro, note = thread.calls[-2], thread.calls[-1]
    assert intro.json["content"] == bot_messages.ZH["THREAD_INTRO"]
    assert note.json["content"].startswith("已创建子区")
    assert no_text.calls[0].json["data"]["content"] == bot_messages.ZH["EMPTY_MESSAGE"]
    assert core.ZH["ABSTRACT_PENDING"] and bot_messages.ZH["RESULT_GONE"].startswith("这个结果太旧")


async def test_search_in_chinese_is_searched_in_english(make_bot, library):
    async with Harness(make_bot()) as h:
        ex = await h.slash("search", query="稀疏掩码", locale="zh-CN")
    page = answer_of(ex)
    assert library.searches[-1] == "sparse mask"
    assert page["embeds"][0]["title"] == "Search: sparse mask"  # what was searched, read back by Next / Previous
    assert any("Masks" in f["name"] for f in page["embeds"][0]["fields"])
    assert page["embeds"][0]["description"].startswith("第 1–")
    assert page["embeds"][-1]["footer"]["text"].startswith("第 1/") and page["embeds"][-1]["footer"]["text"].endswith("页")
