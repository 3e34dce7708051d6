"""The bot over the real model and Chroma (the session `library`), driven through the harness."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app.client import PaperBot
from bot.chat import run_repl
from bot.harness import Harness
from bot.runtime import Services
from tests.bot.limits import LIVE_MENTION, assert_calls_ok, visible_text
from tests.conftest import make_settings

pytestmark = pytest.mark.slow

# Close to a sentence of the BMT abstract, so retrieval answers whatever its thresholds.
QUESTION = "zeroing fewer than 0.05% of the weights matches full fine-tuning"


@pytest.fixture
def bot(tmp_path, library):
    return PaperBot(Services(make_settings(tmp_path, DISCORD_RATE_LIMIT="1000"), library))


@pytest.mark.anyio
async def test_ask_dm_and_mention_cite_verbatim_sentences(bot, library):
    abstracts = {p.paper_id: p.abstract for p in library.papers()}
    labels = {p.label for p in library.papers()}
    async with Harness(bot) as h:
        slash = await h.slash("ask", question=QUESTION)
        dm = await h.dm(QUESTION)
        mention = await h.mention(QUESTION)
    assert slash.calls[0].callback_type == 5
    for ex in (slash, dm, mention):
        assert_calls_ok(ex.calls)
        embed = ex.messages[-1]["embeds"][0]
        assert "[1]" in embed["description"]
        first = embed["fields"][0]
        assert first["name"] == "[1] BMT"
        label = re.match(r"\[1\] (.+)$", first["name"]).group(1)
        assert label.replace("\\", "") in labels
        quoted, detail = first["value"].rsplit("\n", 1)
        assert detail.replace("\\", "").startswith("000_deadc23a40f1a47e.txt #6")
        quote = quoted.strip("\u201c\u201d").replace("\\", "")
        assert any(part.strip() in a for a in abstracts.values() for part in quote.split("…"))
    # the same answer whichever way it was asked
    assert slash.messages[-1]["embeds"][0]["fields"] == dm.messages[-1]["embeds"][0]["fields"]


@pytest.mark.anyio
async def test_a_too_general_question_says_so_in_the_asker_s_language(bot):
    from paperbot import messages

    async with Harness(bot) as h:
        slash = await h.slash("ask", question="model")
        dm = await h.dm("模型")
    for ex, lang in ((slash, "en"), (dm, "zh")):
        assert_calls_ok(ex.calls)
        embed = ex.messages[-1]["embeds"][0]
        assert embed["description"] == messages.text("TOO_GENERAL", lang) and not embed.get("fields")


@pytest.mark.anyio
async def test_a_misspelt_question_cites_the_paper_and_says_what_was_searched(bot):
    from paperbot import messages

    async with Harness(bot) as h:
        slash = await h.slash("ask", question="How do discrimnators help flow maching models?")
        search = await h.slash("search", query="model")
    assert_calls_ok(slash.calls + search.calls)
    embed = slash.messages[-1]["embeds"][0]
    assert embed["fields"][0]["name"] == "[1] DRL"
    assert "How do discriminators help flow matching models?" in embed["footer"]["text"]
    async with Harness(bot) as h:
        absent = await h.dm("is there any paper on bathymetry from sonar?")
    assert_calls_ok(absent.calls)
    assert "no paper here says “bathymetry”, “sonar”" in absent.messages[-1]["embeds"][0]["footer"]["text"]
    # a search too general to answer still lists papers, under the reason none answers
    listed = search.messages[-1]["embeds"][0]
    assert listed["description"].startswith(messages.text("TOO_GENERAL")[:40]) and listed["fields"]


@pytest.mark.anyio
async def test_search_and_paper_autocomplete_over_real_labels(bot, library):
    first = library.papers()[0]
    async with Harness(bot) as h:
        search = await h.slash("search", query="reinforcement learning for reasoning", k=3)
        auto = await h.autocomplete("paper", "paper", first.label[:3])
        paper = await h.slash("paper", paper=first.label)
    assert_calls_ok(search.calls + auto.calls + paper.calls)
    assert len(search.messages[-1]["embeds"][0]["fields"]) == 3
    choices = auto.calls[0].json["data"]["choices"]
    assert 1 <= len(choices) <= 25 and first.paper_id in [c["value"] for c in choices]
    description = paper.calls[0].json["data"]["embeds"][0]["description"].replace("\\", "")
    assert description == first.abstract.replace("\\", "")


def test_chat_answers_like_the_bot(tmp_path, library):
    out = io.StringIO()
    first = library.papers()[0]
    script = io.StringIO(f"{QUESTION}\nmore\n/search masking weights\n/about\n/similar {first.paper_id}\n"
                         "/related We fine-tune language models by learning binary masks over their weights.\n"
                         "quit\nnever read\n")
    code = run_repl(make_settings(tmp_path), lines=script, out=out, library=library)
    text = out.getvalue()
    assert code == 0
    assert f"Q: {QUESTION}" in text
    assert "[1] " in text and "mode: extractive" in text and "[More sources]" in text
    assert "Sources for: " in text
    assert "Search: masking weights" in text and "Papers 1–5 of" in text
    assert "Embedding model" in text
    assert f"Papers like: {first.label}" in text and "Shared terms: " in text
    assert "Papers related to your text" in text


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(question=st.lists(st.one_of(
    st.text(max_size=30),  # any unicode
    st.sampled_from(["@everyone", "@here", "<@123456789012345678>", "<@&123456789012345678>", "**bold**",
                     "`code`", "||spoiler||", "[link](http://x.y)", "masking weights", "\n", "#"])),
    min_size=1, max_size=60).map("".join).filter(lambda q: q.strip()).map(lambda q: q[:1000]))
def test_odd_questions_through_the_bot_respect_limits_and_ping_nobody(tmp_path, library, question):
    import asyncio

    async def scenario():
        bot = PaperBot(Services(make_settings(tmp_path, DISCORD_RATE_LIMIT="1000"), library))
        async with Harness(bot) as h:
            dm = await h.dm(question)
        return dm.calls

    calls = asyncio.run(scenario())
    assert_calls_ok(calls)
    for call in calls:
        if call.message is not None:
            assert not LIVE_MENTION.search(visible_text(call.message))
