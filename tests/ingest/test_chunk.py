from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.chunk import approx_tokens, chunk_text
from paperbot.text import split_sentences


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("One sentence here.", ["One sentence here."]),
        ("First one. Second one! Third one?", ["First one.", "Second one!", "Third one?"]),
        ("We use e.g. masks and i.e. gates. Then we stop.", ["We use e.g. masks and i.e. gates.", "Then we stop."]),
        ("Results of Smith et al. show this. Fine.", ["Results of Smith et al. show this.", "Fine."]),
        ("Accuracy is 87.43% on X. It rises by 4.2%.", ["Accuracy is 87.43% on X.", "It rises by 4.2%."]),
        ("A claim (see Fig. 2). Another claim.", ["A claim (see Fig. 2).", "Another claim."]),
        ("We set $k=3$. $\\alpha$ is small.", ["We set $k=3$.", "$\\alpha$ is small."]),
        ("no terminal punctuation", ["no terminal punctuation"]),
    ],
)
def test_sentences_are_verbatim_spans(text, sentences):
    spans = split_sentences(text)
    assert [text[s.start:s.end] for s in spans] == sentences


def test_chunks_respect_the_budget_and_overlap_by_one_sentence():
    text = " ".join(f"Sentence number {i} talks about topic {i} in some detail." for i in range(40))
    chunks = chunk_text(text, max_tokens=60, overlap=1)
    assert len(chunks) > 3
    for c in chunks:
        assert c.text == text[c.start:c.end]
        assert approx_tokens(c.text) <= 60
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end, "consecutive chunks share a sentence"
        assert b.start > a.start


def test_a_sentence_longer_than_the_window_is_cut_at_words():
    text = "word " * 2000 + "end."
    chunks = chunk_text(text.strip(), max_tokens=100)
    assert len(chunks) > 10
    assert all(approx_tokens(c.text) <= 100 for c in chunks)


def test_empty_text_has_no_chunks():
    assert chunk_text("") == []
    assert chunk_text("   ") == []


words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
texts = st.lists(st.tuples(words, st.sampled_from([" ", ". ", "! ", "? ", ".\n", " e.g. "])), max_size=120).map(
    lambda parts: "".join(w + sep for w, sep in parts)
)


@settings(max_examples=150, deadline=None)
@given(text=texts, max_tokens=st.integers(min_value=8, max_value=300), overlap=st.integers(min_value=0, max_value=2))
def test_chunks_cover_every_word_verbatim(text, max_tokens, overlap):
    chunks = chunk_text(text, max_tokens=max_tokens, overlap=overlap)
    covered = [False] * len(text)
    for c in chunks:
        assert text[c.start:c.end] == c.text
        assert c.text == c.text.strip()
        for i in range(c.start, c.end):
            covered[i] = True
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
    assert [c.index for c in chunks] == list(range(len(chunks)))
