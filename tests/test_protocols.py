"""The seams: real parts and test fakes implement the same small Protocols (paperbot/protocols.py)."""

from __future__ import annotations

import httpx

from ingest.embed import Embedder
from paperbot.protocols import ChatModel, PaperLibrary, TextEmbedder
from paperbot.settings import EmbeddingSettings, LLMSettings
from retrieval.library import Library
from retrieval.llm import LLMClient
from tests.conftest import make_settings
from tests.fakes import HashEmbedder


def test_the_real_embedder_and_the_fake_are_text_embedders(embedder):
    assert isinstance(Embedder(EmbeddingSettings.from_env()), TextEmbedder)
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
    e = Embedder(EmbeddingSettings.from_env())
    assert e.dimension == e.dimension == 384
    assert len(calls) == 1


def _signature_problems(protocol: type, implementation: object) -> list[str]:
    """Where `implementation` does not take what `protocol` passes: each of the protocol's parameters, in order,
    by name and kind; any parameter it adds must have a default."""
    import inspect

    problems = []
    for name, member in vars(protocol).items():
        if name.startswith("_") or not callable(member):
            continue
        want = list(inspect.signature(member).parameters.values())[1:]  # without self
        impl = getattr(type(implementation), name, None)
        if impl is None:
            problems.append(f"{name}: missing")
            continue
        if isinstance(impl, property):
            continue
        have = list(inspect.signature(impl).parameters.values())[1:]
        for i, p in enumerate(want):
            if i >= len(have) or (have[i].name, have[i].kind) != (p.name, p.kind):
                problems.append(f"{name}: parameter {i + 1} should be {p.name} ({p.kind.description}), is "
                                f"{have[i].name if i < len(have) else 'missing'}")
                break
        problems += [f"{name}: extra parameter {p.name} has no default" for p in have[len(want):]
                     if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return problems


def test_real_parts_and_fakes_take_what_the_protocols_pass(tmp_path):
    """isinstance on a runtime_checkable Protocol checks member names only: the signatures are checked here."""
    from tests.bot.conftest import StubLibrary

    lib = Library(make_settings(tmp_path), embedder=HashEmbedder())
    try:
        found = {
            "Embedder": _signature_problems(TextEmbedder, Embedder(EmbeddingSettings.from_env())),
            "HashEmbedder": _signature_problems(TextEmbedder, HashEmbedder()),
            "Library": _signature_problems(PaperLibrary, lib),
            "StubLibrary (tests/bot)": _signature_problems(PaperLibrary, StubLibrary()),
            "LLMClient": _signature_problems(ChatModel, LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1",
                                                                             model="m"), httpx.AsyncClient())),
        }
    finally:
        lib.close()
    assert not {k: v for k, v in found.items() if v}, found


def test_the_signature_check_catches_a_fake_that_takes_other_arguments():
    class Wrong:
        def encode(self, items, size=None):  # `texts` renamed
            return None

    assert any("encode: parameter 1 should be texts" in p for p in _signature_problems(TextEmbedder, Wrong()))
