"""The bot over a conference program (real Chroma, hashed vectors): filters, titles and links, browsing, similar papers."""

from __future__ import annotations

import pytest

from benchmarks import shapes
from bot.app import replies as bot_messages
from bot.app.commands import RELATED_MAX_BYTES
from bot.harness import Harness, Upload
from paperbot import messages
from retrieval.library import Library
from tests.bot.limits import assert_calls_ok
from tests.conftest import make_settings
from tests.fakes import HashEmbedder

pytestmark = pytest.mark.anyio

THEORY = [{"id": f"t{i:02d}", "title": f"Bounds for problem {i:02d}", "authors": ["Ana Lima"], "area": "Theory",
           "type": "poster", "abstract": f"We prove regret bounds for online problem number {i} with bandit feedback."}
          for i in range(23)]


@pytest.fixture
def program_library(tmp_path):
    folder = tmp_path / "corpus"
    shapes.write_json(folder / "program.json", shapes.program())
    shapes.write_json(folder / "theory.json", THEORY)
    with Library(make_settings(tmp_path, PAPERBOT_CORPUS=str(folder)), embedder=HashEmbedder()) as lib:
        lib.ingest()
        yield lib


def fields(ex) -> list[dict]:
    return [f for e in ex.messages[-1]["embeds"] for f in e.get("fields", [])]


async def test_search_with_filters_and_titles_linking_to_the_paper(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("search", query="preference optimization alignment", type="oral")
        by_author = await h.slash("search", query="sparse masks", author="Zoe Muller")
    assert_calls_ok(ex.calls + by_author.calls)
    [only] = fields(ex)
    assert only["name"].startswith("[1] β-DPO: Preference Optimization with a Dynamic β · score")
    assert "[OpenReview](https://openreview.net/forum?id=Xb7Q2rTz01)" in only["value"]
    assert "program.json #1 · oral · Main · Deep Learning" in only["value"]
    assert "Only papers matching type “oral”" in ex.messages[-1]["embeds"][0]["description"]
    assert [f["name"].split(" · ")[0] for f in fields(by_author)] == ["[1] Sparse Masks for Protein Folding"]


async def test_ask_with_an_author_filter_cites_only_that_authors_papers(make_bot, program_library, stub_library):
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("ask", question="how do policies plan ahead with diffusion?", author="wei zhang")
        nothing = await h.slash("ask", question="preference optimization", author="Rodolfo")
    names = [f["name"] for f in fields(ex)]
    assert names and all(n.split("] ")[1] in ("Diffusion Policies That Plan Ahead", "Sparse Masks for Protein Folding")
                         for n in names)
    pending = next(f for f in fields(ex) if "Diffusion Policies" in f["name"])
    assert messages.ABSTRACT_PENDING in pending["value"]
    embed = nothing.messages[-1]["embeds"][0]
    assert "No paper matches author “Rodolfo”." in embed["description"]
    assert "Emanuele Rodolà" in embed["description"]
    assert_calls_ok(ex.calls + nothing.calls)


async def test_filter_options_autocomplete_from_the_corpus(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        authors = await h.autocomplete("search", "author", "rodo", query="x")
        areas = await h.autocomplete("ask", "area", "", question="x")
        browse = await h.autocomplete("author", "author", "wei")
    assert authors.calls[0].json["data"]["choices"] == [{"name": "Emanuele Rodolà", "value": "Emanuele Rodolà"}]
    area_names = [c["value"] for c in areas.calls[0].json["data"]["choices"]]
    assert area_names[0] == "Theory" and "Deep Learning" in area_names and "Alignment" in area_names
    assert browse.calls[0].json["data"]["choices"][0]["value"] == "Wei Zhang"


async def test_author_lists_papers_and_area_pages_through_them(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        by_author = await h.slash("author", author="wei zhang")
        area = await h.slash("area", area="theory")
        first = dict(area.messages[-1]["embeds"][0])
        nxt = await h.click(area.messages[-1], "Next")
        missing = await h.slash("author", author="Rodolfo")
    assert_calls_ok(by_author.calls + area.calls + nxt.calls + missing.calls)
    desc = by_author.messages[-1]["embeds"][0]["description"]
    assert "[Sparse Masks for Protein Folding](https://openreview.net/forum?id=Kq8Lm3Vn02)" in desc
    assert desc.index("Sparse Masks") < desc.index("Diffusion Policies")  # the spotlight before the poster
    assert "Papers 1–10 of 23" in first["description"] and first["footer"]["text"] == "page 1/3"
    second = nxt.calls[0].json["data"]["embeds"][0]
    assert "Papers 11–20 of 23" in second["description"]
    assert "Emanuele Rodolà" in missing.messages[-1]["content"]


async def test_about_counts_areas_and_types(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("about")
    by_name = {f["name"]: f["value"] for f in fields(ex)}
    assert by_name["Types"] == "poster: 25, oral: 1, spotlight: 1"
    assert by_name["Areas"].startswith("Theory: 23")


async def test_similar_and_related_give_reasons(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        auto = await h.autocomplete("similar", "paper", "bounds for problem 03")
        sim = await h.slash("similar", paper="t03")
        rel = await h.slash("related", text="Regret bounds for online problems with bandit feedback.")
        empty = await h.slash("related")
    assert auto.calls[0].json["data"]["choices"][0]["value"] == "t03"
    assert_calls_ok(sim.calls + rel.calls + empty.calls)
    sim_fields = fields(sim)
    assert sim.messages[-1]["embeds"][0]["title"] == "Papers like: Bounds for problem 03"
    assert sim_fields and all("Bounds for problem 03" not in f["name"] for f in sim_fields)
    assert sim_fields[0]["value"].startswith("Shared terms: ") and "bandit" in sim_fields[0]["value"]
    assert fields(rel)[0]["name"].startswith("[1] Bounds for problem")
    assert empty.calls[0].json["data"]["flags"] == 64


async def test_paper_without_abstract_is_shown_as_pending(make_bot, program_library):
    async with Harness(make_bot(program_library)) as h:
        ex = await h.slash("paper", paper="104")
    embed = ex.calls[0].json["data"]["embeds"][0]
    assert embed["title"] == "Diffusion Policies That Plan Ahead"
    assert messages.ABSTRACT_PENDING in embed["description"]


async def test_related_reads_an_attached_text_file(make_bot, program_library):
    text = "Regret bounds for online problems with bandit feedback.".encode()
    async with Harness(make_bot(program_library)) as h:
        attached = await h.slash("related", file=Upload("our-project.txt", b"\xef\xbb\xbf" + text))
        both = await h.slash("related", text="Sparse binary masks for protein folding.", file=Upload("more.txt", text))
        binary = await h.slash("related", file=Upload("notes.txt", b"\x89PNG\r\n\x1a\n\xff\xfe"))
        image = await h.slash("related", file=Upload("figure.png", b"\x89PNG\r\n\x1a\n", "image/png"))
        big = await h.slash("related", file=Upload("thesis.txt", b"bandit " * (RELATED_MAX_BYTES // 7 + 1)))
        reads = list(h.rest.cdn_reads)
    assert_calls_ok(attached.calls + both.calls + binary.calls + image.calls + big.calls)
    assert fields(attached)[0]["name"].startswith("[1] Bounds for problem")  # the file's text was searched
    names = [f["name"] for f in fields(both)]  # the pasted text and the file are read together
    assert any("Sparse Masks for Protein Folding" in n for n in names[:2])
    assert any("Bounds for problem" in n for n in names[:3])
    assert [u.rsplit("/", 1)[-1] for u in reads] == ["our-project.txt", "more.txt", "notes.txt"]  # not the image nor the big one
    bad = bot_messages.RELATED_BAD_FILE.format(kb=RELATED_MAX_BYTES // 1024)
    assert binary.messages[-1]["content"] == bad  # known to be unreadable only once read
    for refused in (image, big):
        assert refused.calls[0].json["data"]["content"] == bad and refused.calls[0].json["data"]["flags"] == 64
