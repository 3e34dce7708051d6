"""The LLM seen from Discord and `paperbot chat`: answering without it for one question, footers, languages."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest

from bot.chat import run_repl
from bot.harness import Harness
from bot.display import without_llm_prefix
from paperbot import messages
from tests.conftest import make_settings
from tests.llm_server import Endpoint, Reply
from tests.retrieval.test_llm import llm_settings

pytestmark = pytest.mark.anyio

QUESTION = "fine-tuning by masking weights"
GOOD = "Zeroing fewer than 0.05% of the weights matches full-parameter fine-tuning [1]."


@pytest.fixture
def endpoint():
    e = Endpoint()
    yield e
    e.close()


def llm_bot(make_bot, endpoint, library=None):
    import httpx

    from bot.app.client import PaperBot
    from bot.runtime import Services
    from retrieval.llm import LLMClient

    bot = make_bot(library)
    http = httpx.AsyncClient()
    services = Services(replace(bot.settings, llm=llm_settings(endpoint)), bot.library,
                        LLMClient(llm_settings(endpoint), http))
    return PaperBot(services), http


@pytest.mark.parametrize("text, question, use_llm", [
    ("!nollm how do masks work?", "how do masks work?", False),
    ("!no-llm how do masks work?", "how do masks work?", False),
    ("/ask --no-llm how do masks work?", "how do masks work?", False),
    ("--no-llm how?", "how?", False),
    ("how do masks work?", "how do masks work?", True),
    ("!nollmish question", "!nollmish question", True),
])
def test_without_llm_prefix(text, question, use_llm):
    assert without_llm_prefix(text) == (question, use_llm)


async def test_ask_with_llm_false_never_calls_the_endpoint(make_bot, endpoint):
    bot, http = llm_bot(make_bot, endpoint)
    try:
        async with Harness(bot) as h:
            ex = await h.slash("ask", question=QUESTION, llm=False)
            endpoint.enqueue(Reply.answer(GOOD, model="served-model"))
            with_llm = await h.slash("ask", question=QUESTION)
    finally:
        await http.aclose()
    footer = ex.calls[-1].json["embeds"][0]["footer"]["text"]
    assert footer.startswith("mode: extractive") and "fell back" not in footer
    assert len(endpoint.requests) == 1  # only the second question reached it
    footer = with_llm.calls[-1].json["embeds"][0]["footer"]["text"]
    assert footer.startswith("mode: llm · model: served-model")


async def test_a_failed_llm_shows_a_short_reason_in_the_public_footer(make_bot, endpoint):
    bot, http = llm_bot(make_bot, endpoint)
    endpoint.enqueue(Reply.error(500, "upstream http://10.0.0.5:11434 failed, key sk-abcdefghijklmnop1234"))
    try:
        async with Harness(bot) as h:
            ex = await h.slash("ask", question=QUESTION)
    finally:
        await http.aclose()
    footer = ex.calls[-1].json["embeds"][0]["footer"]["text"]
    assert footer.endswith(f"fell back: {messages.LLM_FAILED}")
    for leak in ("127.0.0.1", "10.0.0.5", "HTTP", "sk-", "chat/completions"):
        assert leak not in str(ex.calls[-1].json)


async def test_chinese_locale_and_chinese_question_get_chinese_fixed_text(make_bot):
    async with Harness(make_bot()) as h:
        empty = await h.slash("ask", question="   ", locale="zh-CN")
        chinese = await h.slash("ask", question="蛋糕怎么做？")
        english = await h.slash("ask", question="what is the best chocolate cake?", locale="zh-CN")
    assert empty.calls[-1].json["content"] == messages.ZH["EMPTY_QUESTION"]
    embed = chinese.calls[-1].json["embeds"][0]
    assert embed["description"].startswith(messages.ZH["ABSTAIN"])
    assert embed["footer"]["text"].startswith("模式：原文摘录")
    # An English question gets English text whatever the client's language.
    assert english.calls[-1].json["embeds"][0]["description"].startswith(messages.ABSTAIN)


def test_chat_nollm_prefix_answers_without_the_llm(library, tmp_path, endpoint):
    settings = replace(make_settings(tmp_path), llm=llm_settings(endpoint))
    out = io.StringIO()
    code = run_repl(settings, lines=io.StringIO("!nollm how do people fine-tune by masking weights?\nquit\n"),
                    out=out, library=library)
    assert code == 0 and endpoint.requests == []
    assert "mode: extractive" in out.getvalue() and "fell back" not in out.getvalue()


async def test_commands_are_translated_into_chinese(make_bot):
    import discord

    from bot.app import replies as bot_messages
    from bot.app.command_names import PaperTranslator

    bot = make_bot()
    translator = PaperTranslator()
    await bot.tree.set_translator(translator)
    payloads = {c.name: await c.get_translated_payload(bot.tree, translator) for c in bot.tree.get_commands()}
    ask = payloads["ask"]
    assert ask["name_localizations"] == {"zh-CN": "提问", "zh-TW": "提问"}
    assert ask["description_localizations"]["zh-CN"] == bot_messages.COMMANDS_ZH[ask["description"]]
    options = {o["name"]: o for o in ask["options"]}
    assert options["llm"]["name_localizations"]["zh-CN"] == "语言模型"
    assert options["question"]["description_localizations"]["zh-CN"] == "关于论文的问题"
    for name, payload in payloads.items():  # every command and option is covered, and names are valid
        assert "zh-CN" in payload["name_localizations"], name
        if payload.get("type", 1) == 1:  # slash commands have descriptions; context menus only a name
            assert "zh-CN" in payload["description_localizations"], name
        for option in payload.get("options", []):
            assert "zh-CN" in option["name_localizations"] and "zh-CN" in option["description_localizations"]
    assert discord.Locale.chinese.value == "zh-CN"


async def test_errors_follow_the_locale_and_the_question(make_bot, stub_library, monkeypatch):
    def broken(query, k=None):
        raise RuntimeError("chroma exploded")

    monkeypatch.setattr(stub_library, "search", broken)
    async with Harness(make_bot()) as h:
        by_locale = await h.slash("ask", question="12345", locale="zh-CN")
        by_question = await h.dm("掩码微调怎么做？")
        english = await h.slash("ask", question=QUESTION, locale="zh-TW")
    assert by_locale.calls[-1].json["content"] == messages.ZH["INTERNAL_ERROR"]
    assert by_question.sends[-1].json["content"] == messages.ZH["INTERNAL_ERROR"]
    assert english.calls[-1].json["content"] == messages.INTERNAL_ERROR
