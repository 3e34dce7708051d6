"""The seams: real parts and test fakes implement the same small Protocols (paperbot/protocols.py)."""

from __future__ import annotations

import httpx

from ingest.embed import Embedder
from paperbot.protocols import ChatModel, PaperLibrary, TextEmbedder
from paperbot.settings import LLMSettings
from retrieval.library import Library
from retrieval.llm import LLMClient
from tests.conftest import make_settings
from tests.fakes import HashEmbedder


def test_the_real_embedder_and_the_fake_are_text_embedders(embedder):
    assert isinstance(Embedder(), TextEmbedder)
    fake = HashEmbedder()
    assert isinstance(fake, TextEmbedder)
    vectors, spans = fake.encode_spans(["one two", "three"], [[(0, 3)], []])
    assert vectors.shape == (2, fake.dimension) and spans[0].shape == (1, fake.dimension)


def test_the_llm_client_is_a_chat_model():
    client = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m"), httpx.AsyncClient())
    assert isinstance(client, ChatModel) and client.available


def test_the_library_is_a_paper_library(tmp_path):
    lib = Library(make_settings(tmp_path), embedder=HashEmbedder())
    try:
        assert isinstance(lib, PaperLibrary)
        assert isinstance(lib.embedder, TextEmbedder)
    finally:
        lib.close()


def test_the_embedder_reads_its_dimension_once(monkeypatch):
    import ingest.embed as embed

    calls = []
    real = embed.declared_dimension
    monkeypatch.setattr(embed, "declared_dimension", lambda folder: calls.append(folder) or real(folder))
    e = Embedder()
    assert e.dimension == e.dimension == 384
    assert len(calls) == 1
