"""BibTeX: the source's entry kept verbatim, else one generated from the paper's fields that BibTeX reads back."""

from __future__ import annotations

import re

import pytest

from paperbot.bibtex import citation_key, entry, generate, year_of
from paperbot.records import Paper


def paper(**kw) -> Paper:
    base = dict(paper_id="p1", source="s.json", position=1, abstract="We study things.", label="T")
    return Paper(**{**base, **kw})


def fields(bib: str) -> dict[str, str]:
    return dict(re.findall(r"^\s+(\w+) = \{(.*)\},?$", bib, re.MULTILINE))


def test_the_sources_entry_is_kept_verbatim():
    source = "@inproceedings{NEURIPS2018_8b16,\n author = {Zhang, Lijun},\n year = {2018}\n}"
    assert entry(paper(bibtex=source, title="Other")) == source


def test_generated_entry_has_title_authors_year_url_and_venue_without_presentation_word():
    bib = entry(paper(title="Cycle-Consistent Merging", authors=("Donato Crisostomi", "Emanuele Rodolà"),
                      venue="NeurIPS 2024 poster", url="https://openreview.net/forum?id=x"))
    assert bib.startswith("@inproceedings{crisostomi2024cycle,\n") and bib.endswith("\n}")
    assert fields(bib) == {"title": "Cycle-Consistent Merging", "author": "Donato Crisostomi and Emanuele Rodolà",
                           "booktitle": "NeurIPS 2024", "year": "2024", "url": "https://openreview.net/forum?id=x"}


@pytest.mark.parametrize("kw, year", [
    (dict(venue="NeurIPS 2024 oral"), "2024"),
    (dict(site_url="https://nips.cc/virtual/2018/poster/11127"), "2018"),
    (dict(bibtex="@misc{k,\n year = {2019}\n}"), "2019"),
    (dict(url="https://openreview.net/forum?id=2024abc"), ""),
])
def test_year_comes_from_venue_bibtex_or_page_path(kw, year):
    assert year_of(paper(**kw)) == year


@pytest.mark.parametrize("title", ["Unbalanced {brace", "50% & #1 results", "Closing} first {then", "$\\ell_1$ {X}"])
def test_field_values_keep_braces_balanced_and_specials_escaped(title):
    value = fields(generate(title=title, authors=("A B",)))["title"]
    depth = 0
    for ch in value:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    assert not re.search(r"(?<!\\)[&%#]", value)


def test_citation_key_is_ascii_and_falls_back_to_the_id():
    assert citation_key(("Søren Ødegaard",), "2025", "Équivariant flows") == "odegaard2025equivariant"
    assert citation_key((), "", "", fallback="site_735cd8db79") == "site735cd8db79"


def test_json_output_and_the_paper_card_carry_the_bibtex():
    from bot.app.embeds import paper_pages
    from retrieval.types import paper_json

    source = "@inproceedings{k,\n title = {Evil ``` @everyone},\n year = {2018}\n}"
    generated = paper(title="Masks", authors=("Ada Lovelace",), venue="NeurIPS 2026 oral")
    assert paper_json(generated)["bibtex"] == entry(generated)
    assert paper_json(paper(bibtex=source))["bibtex"] == source
    [page] = paper_pages(paper(bibtex=source, title="T", title_zh="掩码"))
    fields = {f.name: f.value for f in page.cards[0].fields}
    block = fields["BibTeX"]
    assert block.startswith("```bibtex\n@inproceedings{k,") and block.endswith("\n```")
    assert block.count("```") == 2  # the entry's own backticks cannot close the block early
    assert fields["Chinese title"] == "掩码"
    long = paper(bibtex="@misc{k,\n note = {" + "x" * 3000 + "}\n}")
    assert len({f.name: f.value for f in paper_pages(long)[0].cards[0].fields}["BibTeX"]) <= 1024
