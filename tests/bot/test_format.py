"""Formatting without Discord: limits, splitting, escaping, citations."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import embeds as fmt

from bot.app import markdown

from bot.app import autocomplete
from paperbot import messages
from paperbot.records import Paper
from retrieval.types import Answer, Citation, Hit, Quote, SearchResult
from tests.bot.limits import LIVE_MENTION, message_problems, visible_text

NO_MENTIONS = {"parse": []}


def body(page: fmt.Page) -> dict:
    """The JSON a page becomes, as discord.py would send it."""
    out = {"embeds": [fmt.to_embed(c).to_dict() for c in page.cards], "allowed_mentions": NO_MENTIONS}
    if page.content:
        out["content"] = page.content
    return out


def hit(n: int, label: str = "BMT", quote: str = "Zeroing weights matches fine-tuning.", score: float = 0.9) -> Hit:
    return Hit(paper=paper(n, label), score=score, quotes=(Quote(quote, 0, len(quote)),))


def paper(n: int, label: str, **fields) -> Paper:
    return Paper(paper_id=f"p{n}", source="a.txt", position=n, label=label, abstract=fields.pop("abstract", "x"),
                 **fields)


def answer(text: str, quotes: list[str], question: str = "how?", **kw) -> Answer:
    cites = [Citation(n=i, paper=paper(i, f"L{i}"), quote=q)
             for i, q in enumerate(quotes, start=1)]
    return Answer(question=question, text=text, abstained=False, citations=cites,
                  hits=[hit(i, f"L{i}", q) for i, q in enumerate(quotes, start=1)], **kw)


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("short", 10, ["short"]),
    ("one two three four", 9, ["one two", "three", "four"]),
    ("First sentence. Second one here.", 20, ["First sentence.", "Second one here."]),
    ("line one\nline two", 12, ["line one", "line two"]),
    ("x" * 25, 10, ["x" * 10, "x" * 10, "x" * 5]),
    ("  padded  ", 10, ["padded"]),
    ("", 10, []),
])
def test_split_text_table(text, limit, expected):
    assert markdown.split_text(text, limit) == expected


def test_split_never_separates_an_escape_from_its_character():
    text = "a" * 9 + "\\*" + "b" * 10
    pieces = markdown.split_text(text, 10)
    assert all(not p.endswith("\\") for p in pieces)
    assert "".join(pieces) == text


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("short title", 256, "short title"),
    ("alpha beta gamma delta", 12, "alpha beta…"),
    ("a   b\n c", 10, "a b c"),
])
def test_clip_table(text, limit, expected):
    assert markdown.clip(text, limit) == expected


def test_answer_has_one_field_per_citation_with_verbatim_quote_and_footer():
    a = answer("Masks work [1]. Coordinates too [2].", ["Masks work.", "Coordinates too."],
               mode="llm", model="llama3", latency_ms=1234.0, tokens=42)
    [page] = fmt.answer_pages(a)
    [card] = page.cards
    assert card.title == "Q: how?"
    assert card.description == "Masks work [1]. Coordinates too [2]."
    assert [f.name for f in card.fields] == ["[1] L1", "[2] L2"]
    assert [f.value for f in card.fields] == ["\u201cMasks work.\u201d\na.txt #1", "\u201cCoordinates too.\u201d\na.txt #2"]
    assert card.footer == "mode: llm · model: llama3 · 1.2 s · 42 tokens"


def test_abstention_says_so_and_lists_closest_papers():
    a = Answer(question="weather on mars?", text=messages.ABSTAIN, abstained=True, citations=[],
               hits=[hit(1, "BMT", score=0.1), hit(2, "NV-CoT", score=0.05)])
    [page] = fmt.answer_pages(a)
    card = page.cards[0]
    assert messages.ABSTAIN in card.description and messages.ABSTAIN_CLOSEST in card.description
    assert [f.name.split(" · ")[0] for f in card.fields] == ["[1] BMT", "[2] NV-CoT"]


def test_long_quote_continues_in_next_field_instead_of_being_cut():
    quote = " ".join(f"word{i}." for i in range(400))  # ~3000 characters
    [page] = fmt.answer_pages(answer("See [1].", [quote]))
    fields = page.cards[0].fields
    assert fields[0].name == "[1] L1" and fields[1].name.endswith("(cont.)")
    joined = " ".join(f.value for f in fields)
    assert joined.replace("\u201c", "").replace("\u201d", "") == quote + "\na.txt #1"
    assert not message_problems(body(page))


def test_huge_answer_is_split_between_sentences_and_markers_stay_whole():
    sentences = [f"Finding number {i} holds under condition {i} [{i % 3 + 1}]." for i in range(600)]
    pages = fmt.answer_pages(answer(" ".join(sentences), ["q1", "q2", "q3"]))
    assert len(pages) > 1
    text = "\n".join(c.description for p in pages for c in p.cards if c.description)
    for chunk in text.split("\n"):
        assert re.fullmatch(r".*\\\]\.?|.*\]\.?", chunk.strip()) or chunk == ""
    for p in pages:
        assert not message_problems(body(p))


def test_mentions_and_markdown_are_inert():
    a = answer("@everyone look <@123456789012345678> **bold** [1]", ["<@&123456789012345678> @here _x_"],
               question="@here ping <@!123456789012345678>?")
    text = visible_text(body(fmt.answer_pages(a)[0]))
    assert not LIVE_MENTION.search(text)
    assert "\\*\\*bold\\*\\*" in text and "\\_x\\_" in text


def test_search_page_paginates_and_snippets_are_short():
    result = SearchResult(query="q", hits=[hit(i, f"P{i}", "long " * 200) for i in range(12)], abstained=False)
    assert fmt.search_page_count(result, 5) == 3
    page = fmt.search_page(result, 2, 5)
    card = page.cards[0]
    assert [f.name.split(" ")[0] for f in card.fields] == ["[11]", "[12]"]
    assert all(len(f.value.split("\n")[0]) <= fmt.SNIPPET + 2 for f in card.fields)
    assert card.footer == "page 3/3"


def test_paper_shows_the_whole_abstract():
    abstract = "Sentence. " * 700  # longer than one description
    pages = fmt.paper_pages(Paper(paper_id="p1", source="a.txt", position=2, label="BMT", abstract=abstract,
                                  url="https://example.org/p1"))
    text = " ".join(c.description for p in pages for c in p.cards if c.description)
    assert " ".join(text.split()) == " ".join(abstract.split())
    assert pages[0].cards[0].url == "https://example.org/p1"


@pytest.mark.parametrize(("typed", "first"), [("bmt", "p1"), ("p3", "p3"), ("", "p1"), ("coord", "p2")])
def test_paper_choices_rank_exact_then_prefix_then_substring(typed, first):
    papers = [paper(i, lab, title=title)
              for i, (lab, title) in enumerate([("BMT", "Bit masks"), ("NV-CoT", "Coordinates"), ("X", "")],
                                               start=1)]
    choices = autocomplete.paper_choices(papers, typed)
    assert choices[0][1] == first


def test_paper_choices_are_capped_at_25():
    papers = [paper(i, "L" * 150)
              for i in range(60)]
    choices = autocomplete.paper_choices(papers, "")
    assert len(choices) == 25
    assert all(len(name) <= 100 for name, _ in choices)


# -- properties ---------------------------------------------------------------------------

TOKENS = ["@everyone", "@here", "<@123456789012345678>", "<@!123456789012345678>", "<@&987654321098765432>",
          "**", "__", "`", "```", "\\", "||", "~~", "> ", "# ", "[x](http://a.b)", "\n", " ", ". "]
odd_text = st.lists(st.one_of(st.text(st.characters(codec="utf-8"), max_size=12), st.sampled_from(TOKENS)),
                    max_size=40).map("".join)
huge_text = st.one_of(odd_text, st.builds(lambda t, n: t * n, odd_text, st.integers(20, 200)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(question=huge_text, text=huge_text, quotes=st.lists(huge_text, max_size=8),
       labels=st.lists(odd_text, min_size=8, max_size=8))
def test_every_answer_page_respects_limits_and_pings_nobody(question, text, quotes, labels):
    cites = [Citation(n=i, paper=paper(i, labels[i - 1]), quote=q)
             for i, q in enumerate(quotes, start=1)]
    a = Answer(question=question, text=text, abstained=False, citations=cites,
               hits=[hit(i, labels[i - 1], q or "x") for i, q in enumerate(quotes, start=1)],
               fallback_reason=text[:3000] or None)
    for pages in (fmt.answer_pages(a), fmt.sources_pages(a), fmt.preview_pages(question, text)):
        for page in pages:
            b = body(page)
            assert not message_problems(b)
            assert not LIVE_MENTION.search(visible_text(b))


@settings(max_examples=100, deadline=None)
@given(text=huge_text, limit=st.integers(20, 4096))
def test_split_text_keeps_every_word_and_respects_the_limit(text, limit):
    pieces = markdown.split_text(text, limit)
    assert all(0 < len(p) <= limit for p in pieces)
    # a piece starting mid-line may escape its first marker ("\\# …", "12\\. …"): the text shown is the same
    assert "".join("".join(pieces).split()).replace("\\", "") == "".join(text.split()).replace("\\", "")


# -- paper metadata, titles and links ------------------------------------------------------------------


BETA = Paper(paper_id="Xb7", source="notes.json", position=3, label=r"$\beta$-DPO: Dynamic $\beta$",
             title=r"$\beta$-DPO: Dynamic $\beta$", abstract=r"We tune $\beta$ per pair, in $O(n^2)$ time.",
             authors=("Émilie Durand", "Emanuele Rodolà"), affiliations=("Université de Montréal", ""),
             url="https://openreview.net/forum?id=Xb7", pdf_url="https://openreview.net/pdf?id=Xb7",
             keywords=("alignment",), area="Deep Learning", subarea="Alignment", presentation="oral", track="Main",
             tldr="A dynamic $\\beta$.")


def test_citation_shows_the_title_read_well_and_links_the_paper():
    a = Answer(question="q", text=r"We tune $\beta$ per pair [1]", abstained=False,
               citations=[Citation(n=1, paper=BETA, quote=r"We tune $\beta$ per pair, in $O(n^2)$ time.")], hits=[])
    [card] = fmt.answer_pages(a)[0].cards
    assert card.description.startswith("We tune β per pair")
    [field] = card.fields
    assert field.name == "[1] β-DPO: Dynamic β"
    quote, detail = field.value.split("\n")
    assert quote == "\u201cWe tune β per pair, in O(n²) time.\u201d"
    assert detail == "notes.json #3 · oral · Main · Deep Learning · [OpenReview](https://openreview.net/forum?id=Xb7)"


def test_paper_page_shows_metadata_links_and_details():
    [page] = fmt.paper_pages(BETA)
    [card] = page.cards
    assert card.title == "β-DPO: Dynamic β" and card.url == "https://openreview.net/forum?id=Xb7"
    fields = {f.name: f.value for f in card.fields}
    assert fields["Authors"] == "Émilie Durand (Université de Montréal), Emanuele Rodolà"
    assert fields["Type"] == "oral · Main" and fields["Area"] == "Deep Learning → Alignment"
    assert "https://openreview.net/pdf?id=Xb7" in fields["Links"]
    assert fields["Details"] == "notes.json #3 · `Xb7`"


def test_paper_without_abstract_is_shown_as_pending_and_never_quoted():
    pending = Paper(paper_id="p9", source="program.json", position=9, label="Plans", title="Plans", abstract="")
    [card] = fmt.paper_pages(pending)[0].cards
    assert messages.ABSTRACT_PENDING in card.description
    result = SearchResult(query="plans", hits=[Hit(paper=pending, score=1.0, quotes=())], abstained=False)
    field = fmt.search_page(result, 0, 5).cards[0].fields[0]
    assert field.name.startswith("[1] Plans") and messages.ABSTRACT_PENDING in field.value


def test_autocomplete_shows_titles_and_matches_without_accents():
    choices = autocomplete.paper_choices([BETA], "dynamic")
    assert choices == [("β-DPO: Dynamic β — Émilie Durand et al.", "Xb7")]
    assert autocomplete.paper_choices([BETA], "β-dpo") == choices


@pytest.mark.parametrize(("source", "shown"), [
    (r"$\beta$-DPO", "β-DPO"),
    (r"$O(n^2)$ and $\mathbb{R}^d$", "O(n²) and ℝ^d"),
    (r"$\ell_1$ loss at 50\% cost", "ℓ₁ loss at 50% cost"),
    (r"$\alpha \leq \epsilon$", "α ≤ ε"),
    (r"\textbf{Bold} claim", "Bold claim"),
    ("prices of $5 and $6", "prices of $5 and $6"),
    ("plain", "plain"),
])
def test_latex_reads_well(source, shown):
    from paperbot.text import readable

    assert readable(source) == shown


def test_buttons_under_an_answer_speak_the_answer_s_language():
    from bot.app.views import answer_view, search_view
    from bot.harness.rest import find_button

    zh = answer_view("0123abcd", ("p1", "p2"), hits=True, ephemeral=True, thread=False, lang="zh")
    en = answer_view("0123abcd", ("p1", "p2"), hits=True, ephemeral=True, thread=False)
    assert [b.item.label for b in zh.children] == ["更多来源", "收藏", "分享到频道"]
    assert [b.item.label for b in en.children] == ["More sources", "Save", "Share in channel"]
    assert [b.item.custom_id for b in zh.children] == [b.item.custom_id for b in en.children]  # the same buttons
    message = {"components": [{"type": 1, "components": [{"type": 2, "label": b.item.label, "custom_id": b.item.custom_id}
                                                         for b in zh.children]}]}
    assert find_button(message, "More sources")["custom_id"].startswith("pb:src:")  # found by its English label
    assert search_view("0123abcd", _result_with(12), 0, 5, 1, lang="zh").children[1].item.label == "下一页"


def _result_with(n: int):
    """A search result of `n` hits, for paging (only their number matters here)."""
    from retrieval.types import SearchResult

    return SearchResult(query="q", hits=[None] * n, abstained=False)
