"""Buttons are persistent: their state is in the custom_id, so they work after a restart and never time out."""

from __future__ import annotations

import logging

import pytest

from bot.app import replies as bot_messages
from bot.harness import Harness
from bot.terminal import message_buttons as buttons
from paperbot import messages
from tests.bot.limits import assert_calls_ok

pytestmark = pytest.mark.anyio

QUESTION = "fine-tuning by masking weights"
BOB = Harness.user(777777777777777777, "bob")


def custom_ids(message: dict) -> list[str]:
    return [c["custom_id"] for row in message.get("components") or [] for c in row["components"]]


def field_numbers(message: dict) -> list[str]:
    return [f["name"].split(" ")[0] for e in message["embeds"] for f in e.get("fields") or []]


async def test_every_button_works_after_a_restart(make_bot):
    h = Harness(make_bot())
    await h.start()
    public = (await h.slash("ask", question=QUESTION)).messages[-1]
    private = (await h.slash("ask", question=QUESTION, private=True)).messages[-1]
    search = (await h.slash("search", query="paper studies topic method", k=4)).messages[-1]
    assert all(cid.startswith("pb:") for m in (public, private, search) for cid in custom_ids(m))
    h = await h.restart(make_bot())  # nothing of the first process is left in memory
    try:
        more = await h.click(public, "More sources")
        shared = await h.click(private, "Share in channel")
        nxt = await h.click(search, "Next")
    finally:
        await h.stop()
    # More sources: rebuilt from the question in the answer's title
    assert more.calls[0].callback_type == 5 and more.calls[0].json["data"]["flags"] == 64
    sources = more.messages[-1]
    assert sources["embeds"][0]["title"] == f"Sources for: {QUESTION}"
    assert field_numbers(sources)[:2] == ["[1]", "[2]"] and "BMT" in sources["embeds"][0]["fields"][0]["name"]
    # Share: the private answer marked as shared (its Share button disabled), then posted in the channel
    mark, share = shared.calls
    assert mark.callback_type == 7
    [share_button] = [c for row in mark.json["data"]["components"] for c in row["components"]
                      if c["label"] == "Share in channel"]
    assert share_button["disabled"] is True
    assert share.method == "POST" and not share.json.get("flags", 0) & 64
    assert share.json["content"] == "Shared by Alice"
    assert share.json["embeds"] == private["embeds"]
    assert buttons(shared.messages[-1]) == ["More sources", "Save", "Discuss in thread"]
    # Next: acknowledged at once, the search run again from its title, and the same message moves to page 2
    ack, page = nxt.calls
    assert ack.callback_type == 6
    assert page.method == "PATCH" and page.path.endswith("/messages/@original")
    assert nxt.messages[-1]["id"] == search["id"]
    assert field_numbers(page.json) == ["[5]", "[6]", "[7]", "[8]"]
    assert page.json["embeds"][0]["footer"]["text"] == "page 2/7"
    assert_calls_ok(more.calls + shared.calls + nxt.calls)


async def test_another_users_click_after_a_restart_gets_a_private_copy(make_bot):
    h = Harness(make_bot())
    await h.start()
    search = (await h.slash("search", query="paper studies topic method", k=4)).messages[-1]
    h = await h.restart(make_bot())
    try:
        theirs = await h.click(search, "Next", user=BOB)
    finally:
        await h.stop()
    ack, copy = theirs.calls
    assert ack.json == {"type": 5, "data": {"flags": 64}}
    assert field_numbers(copy.json) == ["[5]", "[6]", "[7]", "[8]"]
    assert theirs.messages[-1]["id"] != search["id"] and theirs.messages[-1]["flags"] & 64
    assert h.messages[int(search["id"])]["embeds"] == search["embeds"]
    assert_calls_ok(theirs.calls)


async def test_a_result_that_cannot_be_rebuilt_gets_a_clear_note(make_bot):
    long_question = "masking weights " + "and more words " * 30  # longer than an embed title
    h = Harness(make_bot())
    await h.start()
    answer = (await h.slash("ask", question=long_question)).messages[-1]
    assert answer["embeds"][0]["title"].endswith("…")
    h = await h.restart(make_bot())
    try:
        more = await h.click(answer, "More sources")
    finally:
        await h.stop()
    [call] = more.calls
    assert call.callback_type == 4 and call.json["data"]["flags"] == 64
    assert call.json["data"]["content"] == bot_messages.RESULT_GONE


async def test_a_failing_button_tells_the_clicker(make_bot, stub_library, monkeypatch, caplog):
    h = Harness(make_bot())
    await h.start()
    answer = (await h.slash("ask", question=QUESTION)).messages[-1]
    h = await h.restart(make_bot())

    def broken(*_, **__):
        raise RuntimeError("store exploded")

    monkeypatch.setattr(stub_library, "search", broken)
    try:
        with caplog.at_level(logging.ERROR, logger="bot.app"):
            more = await h.click(answer, "More sources")
    finally:
        await h.stop()
    assert more.calls[-1].json["content"] == messages.INTERNAL_ERROR  # never "This interaction failed"
    assert any("store exploded" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


async def test_another_users_click_on_a_search_gets_a_private_copy(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("search", query="paper studies topic method", k=4)
        mine = ex.messages[-1]
        before = [dict(e) for e in mine["embeds"]]
        theirs = await h.click(mine, "Next", user=BOB)
        [call] = theirs.calls
        assert call.callback_type == 4 and call.json["data"]["flags"] == 64  # a new, private message
        assert field_numbers(call.json["data"]) == ["[5]", "[6]", "[7]", "[8]"]
        assert h.messages[int(mine["id"])]["embeds"] == before  # the asker's message did not move
        copy = theirs.messages[-1]
        onward = await h.click(copy, "Next", user=BOB)  # Bob pages his own copy in place
        assert onward.calls[0].callback_type == 7
        assert field_numbers(onward.calls[0].json["data"]) == ["[9]", "[10]", "[11]", "[12]"]
        own = await h.click(mine, "Next")  # the asker still pages their own message
    assert own.calls[0].callback_type == 7
    assert_calls_ok(theirs.calls + onward.calls + own.calls)


async def test_views_never_time_out(make_bot):
    async with Harness(make_bot()) as h:
        await h.slash("ask", question=QUESTION)
        await h.slash("search", query="paper studies topic method", k=4)
        store = h.bot._connection._view_store
        # Nothing waits in memory for a timeout: every button is matched by its custom_id alone.
        assert all(getattr(v, "timeout", None) is None for v in store.persistent_views)
        assert not store._views


async def test_a_follow_ups_sources_are_rebuilt_from_its_conversation(make_bot, stub_library):
    h = Harness(make_bot())
    await h.start()
    first = (await h.mention("paper studies topic method")).messages[-1]
    compare = (await h.reply(first, "compare 1 and 3")).messages[-1]
    h = await h.restart(make_bot())
    try:
        more = await h.click(compare, "More sources")
    finally:
        await h.stop()
    labels = [f["name"].split(" — ")[0].split(" · ")[0] for e in more.messages[-1]["embeds"] for f in e.get("fields") or []]
    assert labels == ["[1] P00", "[2] P02"]  # the papers the follow-up was about, not a search for "compare 1 and 3"
