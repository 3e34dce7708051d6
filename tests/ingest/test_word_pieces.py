"""Ingest tokenizes each abstract once: its sentences are sized, and its chunks fed to the model, from its pieces."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.pipeline import batch_chunks, load_papers
from paperbot.records import Paper, indexed_text

# Text that tests where a tokenizer might not split: accents it strips, Chinese it spaces, control characters it
# drops, a sentence longer than the window, formulas, no whitespace after a Chinese full stop.
HOSTILE = [
    "Café naïve résumé: we re-examine Ångström-scale models. Results improve by 3.5% (p<0.01).",
    "我们提出一种新方法。它在三个基准上取得最好结果！Our code is public.",
    "Control\x07characters\x1fhide here. Zero\u200bwidth joiners too. Tabs\tand\r\nbreaks.",
    " ".join(f"token{i}-x^{i}" for i in range(400)) + ". A short sentence ends it.",
    "".join(f"w{i}" + ("\x1f" if i % 127 > 115 else " ") for i in range(600)) + "end. BERT drops \x1f.",
    "We use $\\mathcal{O}(n \\log n)$ attention, e.g. sparse; cf. Sec. 3. “Quoted” sentences start here.",
    "",
]


class _SentenceBySentence:
    """The real embedder without word pieces: ingest then tokenizes each sentence and chunk on its own."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder

    def __getattr__(self, name):
        return getattr(self._embedder, name)

    def word_pieces(self, texts: list[str]) -> None:
        return None


def _papers(corpus_dir) -> list[Paper]:
    papers = load_papers([corpus_dir]).papers
    hostile = [Paper(paper_id=f"h{i}", source="hostile.jsonl", position=i + 1, abstract=text, label=f"Hostile {i}",
                     title=f"Hostile {i}: ümlauts & 中文" if i % 2 else "", keywords=("kw", "中文"))
               for i, text in enumerate(HOSTILE)]
    return papers + hostile


@pytest.mark.slow
def test_chunks_are_those_of_tokenizing_each_sentence_alone(embedder, corpus_dir):
    papers = _papers(corpus_dir)
    by_pieces = batch_chunks(papers, embedder)
    alone = batch_chunks(papers, _SentenceBySentence(embedder))
    assert all(c.pieces is None for c in alone)
    assert [c.pieces is None for c in by_pieces] == ["\x1f" in p.abstract for p in papers]
    assert [c.rows for c in by_pieces] == [c.rows for c in alone]
    assert sum(len(c.rows) for c in by_pieces) > len(papers)  # some abstracts take several chunks


@pytest.mark.slow
def test_a_chunk_is_fed_the_word_pieces_of_its_own_text(embedder, corpus_dir):
    checked = 0
    for c in batch_chunks(_papers(corpus_dir), embedder):
        if "\x1f" in c.paper.abstract:  # BERT drops it, joining the words Python splits there
            assert c.pieces is None
            continue
        for row, pieces in zip(c.rows, c.pieces):
            text = indexed_text(c.paper.title, row.text, c.paper.keywords)
            [own] = embedder.word_pieces([text])
            assert pieces.ids.tolist() == own.ids.tolist(), text
            assert pieces.offsets.tolist() == own.offsets.tolist(), text
            checked += 1
    assert checked > 100


@pytest.mark.slow
def test_vectors_from_word_pieces_are_those_from_the_texts(embedder, corpus_dir):
    chunked = [c for c in batch_chunks(_papers(corpus_dir)[-12:], embedder) if c.pieces is not None]
    longer = " ".join(HOSTILE[:2] + HOSTILE[3:4])  # longer than the window: cut to it
    texts = [indexed_text(c.paper.title, row.text, c.paper.keywords) for c in chunked for row in c.rows] + [longer]
    spans = [[(0, min(len(t), 40))] if t else [] for t in texts]
    pieces = [p for c in chunked for p in c.pieces] + embedder.word_pieces([longer])
    assert len(pieces[-1].ids) > embedder.max_tokens
    vectors, pooled = embedder.encode_spans(texts, spans, pieces=pieces)
    expected, expected_pooled = embedder.encode_spans(texts, spans)
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    for got, want in zip(pooled, expected_pooled):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_only_a_tokenizer_that_splits_at_whitespace_first_gives_word_pieces(embedder):
    from tokenizers import Tokenizer, models, pre_tokenizers

    from ingest.onnx_light import _bert_specials

    bundled = embedder.model._plain
    assert _bert_specials(bundled) == ([101], [102])
    other = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Metaspace()  # sentencepiece-style: a piece carries the space before it
    assert _bert_specials(other) is None
