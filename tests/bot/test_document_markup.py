"""Document and user text stays inert wherever the bot shows it (code blocks, split cards, choices, digests),
lookups are acknowledged in time, and server-library papers keep their buttons."""

from __future__ import annotations

import pytest

from bot.app import embeds
from bot.app.markdown import split_text
from bot.harness import MANAGE_GUILD, Harness
from bot.harness.payloads import Upload
from paperbot.records import Paper
from tests.bot.test_server_library import LAB_PAPERS, program_library  # noqa: F401 - the fixture
from tests.conftest import jsonl

pytestmark = pytest.mark.anyio


def fields(message: dict) -> dict[str, str]:
    return {f["name"]: f["value"] for e in message["embeds"] for f in e.get("fields") or []}


async def test_a_title_with_four_backticks_cannot_close_the_bibtex_block(make_bot, stub_library):
    stub_library.records.append(Paper(paper_id="evil1", source="stub.txt", position=99, label="Evil",
                                      abstract="An abstract long enough to be one, about masking weights.",
                                      title="Evil ```` [click](https://evil.example) **bold** ````"))
    async with Harness(make_bot()) as h:
        ex = await h.slash("paper", paper="evil1")
    value = fields(ex.messages[-1])["BibTeX"]
    assert value.startswith("```bibtex\n") and value.endswith("```") and value.count("``") == 2


async def test_an_abstract_cut_in_two_does_not_start_a_card_with_live_markdown(make_bot, stub_library):
    abstract = ("word " * 810).strip() + ". # HEADING injected from an abstract " + "tail " * 50
    stub_library.records.append(Paper(paper_id="long1", source="stub.txt", position=98, label="Long",
                                      abstract=abstract, title="Long"))
    async with Harness(make_bot()) as h:
        ex = await h.slash("paper", paper="long1")
    descriptions = [e.get("description") or "" for m in ex.messages for e in m["embeds"]]
    assert len(descriptions) >= 2 and any(d.startswith("\\# HEADING") for d in descriptions)
    assert not any(d.startswith(("#", ">", "-")) for d in descriptions)


def test_pieces_cut_mid_line_escape_what_a_line_start_would_render_and_keep_the_limit():
    for marker, shown in [("# ", "\\# "), ("> ", "\\> "), ("-# ", "\\-# "), ("- ", "\\- "), ("12. ", "12\\. ")]:
        pieces = split_text("word " * 20 + "end. " + marker + "tail of the text", 104)
        assert pieces[1].startswith(shown) and all(len(p) <= 104 for p in pieces)
    assert split_text("line one\n# Heading", 12) == ["line one", "# Heading"]  # a line's own start is kept


async def test_lookups_in_a_dm_are_acknowledged_within_3_s_when_discord_is_slow(make_bot):
    bob = Harness.user(777777777777777777, "bob")
    async with Harness(make_bot()) as h:
        await h.slash("library dms", allowed=True, permissions=MANAGE_GUILD)
        h.rest.latency = lambda call: 3.5 if "/members/" in call.path else 0.0
        shown = await h.slash("paper", paper="p0000", dm=True, user=bob)
    first = next(c for c in shown.calls if c.callback_type is not None)
    assert first.at - shown.started < 3.0
    assert shown.messages and shown.messages[-1]["embeds"]  # the paper came into the deferred response


async def test_watch_choices_have_no_bidirectional_controls(make_bot):
    async with Harness(make_bot()) as h:
        await h.slash("watch add", topic="\u202edeif gninrael\u202c masking")
        ex = await h.autocomplete("watch remove", "watch", "")
    names = [c["name"] for c in ex.calls[-1].json["data"]["choices"]]
    assert names == ["#1 deif gninrael masking"]


def test_a_digest_s_search_hint_is_the_topic_as_typed_inside_its_code_span():
    paper = Paper(paper_id="p1", source="s.txt", position=1, label="P", abstract="An abstract long enough.")
    [page] = embeds.digest_pages(7, "fine_tuning *masks* a`b", [paper], 4, "en")
    text = "".join(c.description for c in page.cards)
    assert "`/search fine_tuning *masks* a'b`" in text


async def test_a_server_library_paper_gets_a_save_button_and_a_forged_one_saves_nothing(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        await h.slash("library add", file=Upload("lab.jsonl", jsonl(LAB_PAPERS)), permissions=MANAGE_GUILD)
        shown = await h.slash("paper", paper="Quantum origami folding with lattice robots")
        saved = await h.click(shown.messages[-1], "Save")
        # the same custom_id sent from a DM, where this server's library is not searched
        forged = await h.click(shown.messages[-1], "Save", user=Harness.user(888888888888888888, "eve"), dm=True)
    assert "Saved 1 of 1 paper; your list has 1." in saved.text()
    assert "Saved 0 of 1 paper; your list has 0." in forged.text()
