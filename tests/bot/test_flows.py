"""The bot driven through real discord.py classes with gateway payloads; assertions on what it would send.

The library here is a small in-memory stand-in (retrieval is beside the point); see
test_end_to_end.py for the same flows over the real model and Chroma.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import pytest

from bot.app import client
from bot.app import replies as bot_messages
from bot.harness import ADMIN_ROLE_ID, GUILD_ID, MANAGE_GUILD, Harness
from bot.terminal import message_buttons as buttons
from paperbot import messages
from tests.bot.limits import assert_calls_ok

pytestmark = pytest.mark.anyio

QUESTION = "fine-tuning by masking weights"


async def test_ask_defers_first_then_answers_with_citations(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question=QUESTION)
    first = ex.calls[0]
    assert first.callback_type == 5  # deferred, "thinking…"
    assert not (first.json.get("data") or {}).get("flags", 0) & 64
    final = ex.calls[-1]
    assert final.method == "PATCH" and final.path.endswith("/messages/@original")
    [embed] = final.json["embeds"]
    assert embed["title"] == f"Q: {QUESTION}"
    assert "[1]" in embed["description"]
    assert embed["fields"][0]["name"] == "[1] BMT"
    assert embed["fields"][0]["value"].endswith("\nstub.txt #1")
    assert "learned binary mask" in embed["fields"][0]["value"]
    assert embed["footer"]["text"].startswith("mode: extractive")
    assert buttons(ex.messages[-1]) == ["More sources", "Save", "Discuss in thread"]  # public: nothing to share
    assert_calls_ok(ex.calls)


async def test_private_ask_is_ephemeral_and_can_be_shared(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question=QUESTION, private=True)
        assert ex.calls[0].json == {"type": 5, "data": {"flags": 64}}
        answer_msg = ex.messages[-1]
        assert answer_msg["flags"] & 64
        assert buttons(answer_msg) == ["More sources", "Save", "Share in channel"]

        shared = await h.click(answer_msg, "Share in channel")
        mark, call = shared.calls
        assert mark.callback_type == 7  # the private answer: its Share button disabled
        assert not call.json.get("flags", 0) & 64  # visible to the channel
        assert call.json["content"] == "Shared by Alice"
        assert call.json["embeds"] == answer_msg["embeds"]
        again = await h.click(answer_msg, "Share in channel")
    assert again.calls[0].json["data"]["content"] == bot_messages.ALREADY_SHARED
    assert again.calls[0].json["data"]["flags"] == 64
    assert_calls_ok(ex.calls + shared.calls + again.calls)


async def test_more_sources_lists_every_paper_privately(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question=QUESTION)
        more = await h.click(ex.messages[-1], "More sources")
    [call] = more.calls
    assert call.callback_type == 4 and call.json["data"]["flags"] == 64
    names = [f["name"] for e in call.json["data"]["embeds"] for f in e["fields"]]
    assert names[0].startswith("[1] BMT") and len(names) >= 2
    assert_calls_ok(more.calls)


async def test_abstention_says_so_and_lists_closest_papers(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question="zzzz qqqq")
    embed = ex.calls[-1].json["embeds"][0]
    assert messages.ABSTAIN in embed["description"] and messages.ABSTAIN_CLOSEST in embed["description"]
    assert len(embed["fields"]) == 3


async def test_rate_limit_is_per_user_and_friendly(make_bot):
    bob = Harness.user(777777777777777777, "bob")
    async with Harness(make_bot(DISCORD_RATE_LIMIT="2", DISCORD_RATE_WINDOW="60")) as h:
        done = [await h.slash("ask", question=QUESTION) for _ in range(2)]
        limited = await h.slash("ask", question=QUESTION)
        limited_dm = await h.dm(QUESTION)
        other = await h.slash("ask", question=QUESTION, user=bob)
    assert all(ex.calls[0].callback_type == 5 for ex in done)
    [call] = limited.calls
    assert call.callback_type == 4 and call.json["data"]["flags"] == 64
    assert call.json["data"]["content"].startswith("You're asking faster than I can read")
    assert "try again in 60 s" in call.json["data"]["content"]
    assert limited_dm.sends[0].json["content"].startswith("You're asking faster")
    assert other.calls[0].callback_type == 5
    assert_calls_ok(limited.calls + limited_dm.calls)


async def test_dm_is_a_question(make_bot, stub_library):
    async with Harness(make_bot()) as h:
        ex = await h.dm("  what about continuous coordinates?  ")
    assert stub_library.searches == ["what about continuous coordinates?"]
    assert ex.calls[0].path == "/channels/{channel_id}/typing"
    send = ex.sends[-1]
    assert send.path == "/channels/{channel_id}/messages"
    assert send.json["embeds"][0]["fields"][0]["name"].startswith("[1] NV-CoT")
    assert send.json["message_reference"]["message_id"]
    assert_calls_ok(ex.calls)


async def test_mention_is_a_question_and_other_chatter_is_ignored(make_bot, stub_library):
    async with Harness(make_bot()) as h:
        chatter = await h.channel_message("anyone read the coordinates paper?")
        ex = await h.mention("what about continuous coordinates?")
        empty = await h.mention("   ")
    assert chatter.calls == []
    assert stub_library.searches == ["what about continuous coordinates?"]
    assert ex.sends[-1].json["embeds"][0]["fields"][0]["name"].startswith("[1] NV-CoT")
    assert empty.sends[0].json["content"] == messages.EMPTY_QUESTION
    assert_calls_ok(ex.calls + empty.calls)


async def test_bots_own_messages_are_ignored(make_bot, stub_library):
    async with Harness(make_bot()) as h:
        ex = await h.dm("hello", user={**h.bot_user()})
    assert ex.calls == [] and stub_library.searches == []


async def test_search_pages_through_results_with_buttons(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("search", query="paper studies topic method", k=4)
        page1 = ex.messages[-1]
        assert ex.calls[0].callback_type == 5
        assert page1["embeds"][0]["footer"]["text"] == "page 1/7"
        assert [f["name"].split(" ")[0] for f in page1["embeds"][0]["fields"]] == ["[1]", "[2]", "[3]", "[4]"]
        nxt = await h.click(page1, "Next")
    [call] = nxt.calls
    assert call.callback_type == 7  # the same message, updated
    fields = call.json["data"]["embeds"][0]["fields"]
    assert [f["name"].split(" ")[0] for f in fields] == ["[5]", "[6]", "[7]", "[8]"]
    assert "score" in fields[0]["name"]
    prev_button = next(c for row in call.json["data"]["components"] for c in row["components"]
                       if c["label"] == "Previous")
    assert prev_button.get("disabled") is False
    assert_calls_ok(ex.calls + nxt.calls)


async def test_paper_autocomplete_is_capped_and_paper_shows_abstract(make_bot):
    async with Harness(make_bot()) as h:
        everything = await h.autocomplete("paper", "paper", "")
        narrow = await h.autocomplete("paper", "paper", "bm")
        shown = await h.slash("paper", paper=narrow.calls[0].json["data"]["choices"][0]["value"])
        by_label = await h.slash("paper", paper="nv-cot")
        missing = await h.slash("paper", paper="no such thing at all")
    choices = everything.calls[0].json["data"]["choices"]
    assert everything.calls[0].callback_type == 8 and len(choices) == 25
    assert narrow.calls[0].json["data"]["choices"][0] == {"name": "BMT — stub.txt #1", "value": "p0000"}
    embed = shown.calls[0].json["data"]["embeds"][0]
    assert embed["title"] == "BMT" and "Bit-Mask Tuning" in embed["description"]
    assert by_label.calls[0].json["data"]["embeds"][0]["title"] == "NV-CoT"
    assert missing.calls[0].json["data"]["flags"] == 64
    assert missing.calls[0].json["data"]["content"].startswith("No paper matches")
    assert_calls_ok(everything.calls + shown.calls + missing.calls)


async def test_about_reports_papers_model_and_llm(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("about")
    assert ex.calls[0].json == {"type": 5, "data": {"flags": 64}}  # acknowledged before reading the store
    embed = ex.calls[-1].json["embeds"][0]
    values = {f["name"]: f["value"] for f in embed["fields"]}
    assert values["Papers"].startswith("43 ")
    assert values["Language model"].startswith("not configured")  # what a user reads, not the constant itself
    assert ex.messages[-1]["flags"] & 64


async def test_reindex_refused_for_non_admins_and_in_dms(make_bot, stub_library):
    async with Harness(make_bot(DISCORD_ADMIN_ROLE="paper-admins")) as h:
        member = await h.slash("reindex")
        dm = await h.slash("reindex", dm=True)
    for ex, text in ((member, bot_messages.NOT_ADMIN.format(role="paper-admins")),
                     (dm, bot_messages.REINDEX_SERVERS_ONLY)):
        [call] = ex.calls
        assert call.json["data"]["flags"] == 64
        assert call.json["data"]["content"] == text
    assert stub_library.ingests == 0


@pytest.mark.parametrize("how", ["manage_guild", "role_name", "role_id"])
async def test_reindex_runs_for_admins_and_reports_summary(make_bot, stub_library, how):
    role = str(ADMIN_ROLE_ID) if how == "role_id" else "Paper-Admins"
    kwargs = {"permissions": MANAGE_GUILD} if how == "manage_guild" else {"roles": [ADMIN_ROLE_ID]}
    async with Harness(make_bot(DISCORD_ADMIN_ROLE=role)) as h:
        ex = await h.slash("reindex", **kwargs)
    assert ex.calls[0].json == {"type": 5, "data": {"flags": 64}}
    assert ex.calls[-1].json["content"].startswith("Index rebuilt: 0 added, 0 updated, 0 removed, 43 unchanged")
    assert stub_library.ingests == 1


async def test_second_reindex_while_one_runs_is_told_and_then_hears_the_result(make_bot, stub_library):
    stub_library.hold_ingest.clear()
    async with Harness(make_bot()) as h:
        first = h.feed_interaction(h.slash_payload("reindex", permissions=MANAGE_GUILD))
        await asyncio.to_thread(stub_library.ingest_started.wait, 10)
        second = h.feed_interaction(h.slash_payload("reindex", permissions=MANAGE_GUILD))
        while not second.calls:
            await asyncio.sleep(0.01)
        stub_library.hold_ingest.set()
        await h.wait(first)
        await h.wait(second)
    assert second.calls[0].json["data"]["content"] == bot_messages.REINDEX_RUNNING
    assert second.calls[0].json["data"]["flags"] == 64
    assert first.calls[-1].json["content"].startswith("Index rebuilt")
    [news] = second.sends[1:]  # the promise is kept: the second admin hears the result
    assert news.json["content"].startswith("Index rebuilt") and news.json["flags"] == 64
    assert stub_library.ingests == 1
    assert_calls_ok(first.calls + second.calls)


async def test_guild_allowlist_refuses_other_servers_but_not_dms(make_bot):
    async with Harness(make_bot(DISCORD_GUILD_ALLOWLIST="1234")) as h:
        in_guild = await h.slash("ask", question=QUESTION)
        mention = await h.mention(QUESTION)
        in_dm = await h.slash("ask", question=QUESTION, dm=True)
    assert in_guild.calls[0].json["data"] == {"content": bot_messages.GUILD_NOT_ALLOWED, "embeds": [], "flags": 64,
                                              "tts": False, "allowed_mentions": {"parse": []}}
    assert mention.calls == []
    assert in_dm.calls[0].callback_type == 5
    assert str(GUILD_ID) != "1234"


async def test_unexpected_error_shows_a_short_message_and_logs_the_traceback(make_bot, stub_library, monkeypatch,
                                                                             caplog):
    def broken(*_, **__):
        raise RuntimeError("chroma exploded at /secret/path/db.sqlite3")

    monkeypatch.setattr(stub_library, "search", broken)
    async with Harness(make_bot()) as h:
        with caplog.at_level(logging.ERROR, logger="bot.app"):
            ex = await h.slash("ask", question=QUESTION)
            dm = await h.dm(QUESTION)
    assert ex.calls[0].callback_type == 5
    final = ex.calls[-1]
    assert final.json["content"] == messages.INTERNAL_ERROR and final.json["embeds"] == []
    assert dm.sends[-1].json["content"] == messages.INTERNAL_ERROR
    for call in ex.calls + dm.calls:
        assert "secret" not in str(call.json) and "RuntimeError" not in str(call.json)
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 2 and "chroma exploded" in str(tracebacks[0].exc_info[1])
    assert_calls_ok(ex.calls + dm.calls)


async def test_streaming_answer_edits_at_most_once_per_second(make_bot, monkeypatch):
    """The preview's edits keep STREAM_INTERVAL apart (1 s; a tenth of it here, and of the model's pace)."""
    from bot.app import sending

    monkeypatch.setattr(sending, "STREAM_INTERVAL", 0.1)
    real = client.answer_question

    async def streaming(library, question, *, llm=None, k=None, on_text=None, max_chars=None, history=(),
                        filters=None, language=None, rerank_timeout=None):
        text = ""
        for word in ["Masks", " match", " full", " fine-tuning", " [1]."] * 4:
            text += word
            on_text(text)  # the whole clean text so far
            await asyncio.sleep(0.01)
        return await real(library, question, llm=llm, k=k)

    monkeypatch.setattr(client, "answer_question", streaming)
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question=QUESTION)
    edits = [c for c in ex.calls if c.method == "PATCH"]
    previews, final = edits[:-1], edits[-1]
    assert 1 <= len(previews) < 20  # 20 updates of the text, fewer edits: each at least an interval apart
    assert all(b.at - a.at >= 0.09 for a, b in zip(previews, previews[1:]))
    assert previews[0].json["embeds"][0]["description"].startswith("Masks")
    assert previews[-1].json["embeds"][0]["description"].startswith("Masks match full fine-tuning")
    assert previews[-1].json["embeds"][0]["footer"]["text"] == bot_messages.WRITING
    assert final.json["embeds"][0]["footer"]["text"].startswith("mode: extractive")
    assert_calls_ok(ex.calls)


async def test_commands_declare_dm_and_user_install_contexts_and_sync_to_the_dev_guild(make_bot):
    bot = make_bot(DISCORD_GUILD_ID="987654321098765432")
    async with Harness(bot) as h:
        await bot._sync_commands()
    [put] = [c for c in h.calls if c.method == "PUT"]
    assert put.url.endswith("/guilds/987654321098765432/commands")
    by_name = {c["name"]: c for c in put.json}
    assert set(by_name) == {"ask", "search", "paper", "author", "area", "similar", "related", "about", "reindex",
                            "plan", "saved", "watch", "forget", "library",
                            bot_messages.CONTEXT_MENU}
    assert by_name["library"]["contexts"] == [0]  # server libraries: servers only
    assert by_name[bot_messages.CONTEXT_MENU]["type"] == 3  # a message context menu
    assert by_name["ask"]["contexts"] == [0, 1, 2] and by_name["ask"]["integration_types"] == [0, 1]
    assert by_name["reindex"]["contexts"] == [0] and by_name["reindex"]["integration_types"] == [0]
    paper_opt = by_name["paper"]["options"][0]
    assert paper_opt["autocomplete"] is True


async def test_global_sync_without_a_dev_guild(make_bot):
    bot = make_bot()
    async with Harness(bot) as h:
        await bot._sync_commands()
    [put] = [c for c in h.calls if c.method == "PUT"]
    assert put.url.endswith(f"/applications/{bot.application_id}/commands")


async def test_reindex_shows_the_ingests_notes_a_folder_in_one_line_and_inert(make_bot, stub_library):
    from ingest.pipeline import FileReport

    stub_library.reports = [FileReport(name=f"p{i}.json", path=f"/data/papers/p{i}.json", records=1, papers=1,
                                       ignored=Counter({"citation_count": 1, "@everyone": 1})) for i in range(9)]
    async with Harness(make_bot()) as h:
        ex = await h.slash("reindex", permissions=MANAGE_GUILD)
    content = ex.calls[-1].json["content"]
    lines = content.split("\n")
    assert lines[0].startswith("Index rebuilt: 0 added")
    assert len(lines) == 2 and lines[1].startswith("• papers/: ignored in 9 files (p0.json, p1.json")
    assert "and 4 more" in lines[1] and "citation\\_count ×9" in lines[1]
    assert "@everyone" not in content.replace("@\u200beveryone", "")  # the field name cannot ping
