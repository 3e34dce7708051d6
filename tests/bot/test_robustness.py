"""Defects found driving the real client, each through the real discord.py classes."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from bot.app import client
from bot.app import replies as bot_messages
from bot.app.markdown import escape
from bot.harness import BOT_ROLE_ID, CHANNEL_ID, Harness
from bot.display import duration
from paperbot import messages
from paperbot.text import clean_question
from tests.bot.limits import assert_calls_ok, visible_text

pytestmark = pytest.mark.anyio

QUESTION = "fine-tuning by masking weights"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"


def scripted(monkeypatch, texts, pause=0.0):
    """answer_question replaced by one that streams `texts` (each the whole clean text so far), then answers."""
    real = client.answer_question

    async def streaming(library, question, *, llm=None, k=None, on_text=None, max_chars=None, history=(),
                        filters=None, language=None, rerank_timeout=None):
        for text in texts:
            on_text(text)
            await asyncio.sleep(pause)
        return await real(library, question, llm=llm, k=k, history=history)

    monkeypatch.setattr(client, "answer_question", streaming)


async def test_preview_shows_the_current_clean_text_never_a_concatenation(make_bot, monkeypatch):
    # The cleaned stream does not always extend the previous text: a link is removed, a citation filtered.
    texts = ["Masks match full fine-tuning [1]. See [the code](http",
             "Masks match full fine-tuning [1]. See the code",
             "Masks match full fine-tuning [1]. See the code and",
             "Masks match full fine-tuning [1].",
             "Masks match full fine-tuning [1]. Binary masks work."]
    scripted(monkeypatch, texts, pause=0.35)
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question=QUESTION)
    previews = [c.json["embeds"][0]["description"] for c in ex.calls
                if c.method == "PATCH" and c.json["embeds"][0].get("footer", {}).get("text") == bot_messages.WRITING]
    assert previews
    assert all(p in {escape(t) for t in texts} for p in previews), previews
    assert_calls_ok(ex.calls)


async def test_no_orphan_preview_when_the_answer_beats_the_preview_request(make_bot, monkeypatch):
    scripted(monkeypatch, ["Masks match full fine-tuning [1]."])  # the answer is ready at once
    async with Harness(make_bot()) as h:
        # Discord is slow to answer the preview's POST: the request has arrived, the reply has not.
        h.rest.latency = lambda call: 0.3 if call.method == "POST" and call.path.endswith("/messages") else 0.0
        dm = await h.dm(QUESTION)
        mention = await h.mention(QUESTION)
    for ex in (dm, mention):
        created = [m for m in ex.messages]
        assert len(created) == 1, "one answer, one message"
        assert created[0]["embeds"][0]["footer"]["text"].startswith("mode: extractive")
        assert_calls_ok(ex.calls)


# Invisible characters only, or a message only checking the bot is there: nothing to search, the hint instead.
@pytest.mark.parametrize("question", [INVISIBLE, f"  {INVISIBLE} \n ", BIDI, "\u200b" * 50, "test", "testing 1 2 3",
                                      "ping", "@everyone are you there?", "<:wave:123> hi!", "is this working?", "在吗？"])
async def test_questions_with_nothing_to_search_get_the_hint_not_a_paper(make_bot, stub_library, question):
    async with Harness(make_bot()) as h:
        ask = await h.slash("ask", question=question)
        dm = await h.dm(question)
        mention = await h.mention(question)
        search = await h.slash("search", query=question)
    assert stub_library.searches == []
    hint = messages.ZH["EMPTY_QUESTION"] if question == "在吗？" else messages.EMPTY_QUESTION
    assert ask.calls[-1].json["content"] == hint
    assert dm.sends[-1].json["content"] == hint
    assert mention.sends[-1].json["content"] == hint
    assert search.calls[-1].json["content"] in (messages.EMPTY_QUESTION, messages.ZH["EMPTY_QUESTION"])


@pytest.mark.parametrize("text, expected", [
    ("hello", "hello"),
    (f"mask{INVISIBLE}ing weights", "masking weights"),
    (f"\u202eevil{BIDI} text", "evil text"),
    ("  many   spaces\n\tand lines ", "many spaces and lines"),
    ("emoji 👩\u200d🔬 stays readable", "emoji 👩🔬 stays readable"),
])
def test_clean_question_table(text, expected):
    assert clean_question(text) == expected


async def test_bidi_controls_are_neutralized_wherever_user_text_is_echoed(make_bot):
    nasty = Harness.user(888888888888888888, "eve")
    nasty["global_name"] = f"\u202eEve{BIDI}"
    async with Harness(make_bot()) as h:
        ask = await h.slash("ask", question=f"masking \u202eweights{BIDI} please", private=True)
        shared = await h.click(ask.messages[-1], "Share in channel", user=nasty)
        missing = await h.slash("paper", paper=f"\u202enothing{BIDI} here")
        search = await h.slash("search", query="\u2067masking\u2069 weights")
    for call in ask.calls + shared.calls + missing.calls + search.calls:
        if call.message is not None:
            text = visible_text(call.message)
            assert not re.search(f"[{BIDI}]", text), text
    assert shared.calls[-1].json["content"] == "Shared by Eve"


async def test_lookups_do_not_use_up_the_question_budget(make_bot):
    async with Harness(make_bot(DISCORD_RATE_LIMIT="2", DISCORD_RATE_WINDOW="60")) as h:
        search = await h.slash("search", query="paper studies topic method", k=4)
        page = search.messages[-1]
        lookups = [await h.slash("paper", paper="bmt") for _ in range(3)]
        pages = [await h.click(page, "Next") for _ in range(3)]
        await h.autocomplete("paper", "paper", "p")
        first = await h.slash("ask", question=QUESTION)
        limited = await h.slash("ask", question=QUESTION)
    assert all(ex.calls[0].json["data"]["embeds"][0]["title"] == "BMT" for ex in lookups)
    assert all(ex.calls[0].callback_type == 7 for ex in pages)
    assert first.calls[0].callback_type == 5  # /search used one question; /paper, paging, autocomplete none
    assert limited.calls[0].json["data"]["content"].startswith("You're asking faster")


async def test_lookups_have_their_own_limit(make_bot):
    async with Harness(make_bot(DISCORD_RATE_LIMIT="1", DISCORD_RATE_WINDOW="60")) as h:
        lookups = [await h.slash("paper", paper="bmt") for _ in range(client.LOOKUP_FACTOR + 1)]
        ask = await h.slash("ask", question=QUESTION)
    assert all(ex.calls[0].callback_type == 4 for ex in lookups)
    assert lookups[-1].calls[0].json["data"]["content"].startswith("You're asking faster")
    assert ask.calls[0].callback_type == 5


async def test_missing_permissions_log_one_warning_per_channel_and_post_nothing(make_bot, monkeypatch, caplog):
    async with Harness(make_bot()) as h:
        h.rest.forbidden.add(CHANNEL_ID)
        with caplog.at_level(logging.WARNING):
            first = await h.mention(QUESTION)
            second = await h.mention("another question")
            empty = await h.mention("   ")
        dm = await h.dm(QUESTION)  # other channels are unaffected
    for ex in (first, second, empty):
        assert ex.messages == []
        assert all(c.path != "/channels/{channel_id}/messages" for c in ex.calls[1:])  # no error message tried
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and str(CHANNEL_ID) in warnings[0].getMessage()
    assert not any(r.exc_info for r in warnings)
    assert dm.messages and dm.messages[-1]["embeds"]


async def test_a_mention_of_the_bots_managed_role_is_a_mention(make_bot, stub_library):
    async with Harness(make_bot()) as h:
        ex = await h.role_mention("what about continuous coordinates?")
        other_role = h.payloads.message_payload("<@&444444444444444444> hello", dm=False)
        other_role["mention_roles"] = ["444444444444444444"]
        ignored = await h.wait(h.feed_message(other_role))
    assert stub_library.searches == ["what about continuous coordinates?"]
    assert f"<@&{BOT_ROLE_ID}>" not in ex.sends[-1].json["embeds"][0]["title"]
    assert ex.sends[-1].json["embeds"][0]["fields"][0]["name"].startswith("[1] NV-CoT")
    assert ignored.calls == []
    assert_calls_ok(ex.calls)


@pytest.mark.parametrize("ms, shown", [(0.0, "1 ms"), (0.4, "1 ms"), (42.3, "42 ms"), (999.4, "999 ms"),
                                       (1000.0, "1.0 s"), (2345.0, "2.3 s")])
def test_duration_table(ms, shown):
    assert duration(ms) == shown


async def test_a_fast_answer_never_says_zero_seconds(make_bot):
    async with Harness(make_bot()) as h:
        ex = await h.slash("ask", question=QUESTION)
        again = await h.slash("ask", question=QUESTION)
    for e in (ex, again):
        footer = e.calls[-1].json["embeds"][0]["footer"]["text"]
        assert "0.0 s" not in footer and re.search(r"· \d+ ms|· \d+\.\d s", footer), footer
