"""The ONNX backends: exported once into the cache, offline; onnx gives torch's vectors, onnx-int8 its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from paperbot.errors import ModelError, ModelMismatchError
from paperbot.settings import EmbeddingSettings
from tests.conftest import REPO, make_settings, seed_store

SENTENCES = [
    "Aspirin lowers the risk of a second heart attack.",
    "We train a graph neural network to predict molecular properties.",
    "Transformers handle long documents poorly because attention is quadratic in length.",
    "Vitamin D supplementation did not reduce fracture risk in older adults.",
]


def _require_onnx():
    pytest.importorskip("onnx", reason="onnx is not installed")
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")


def _onnx_embedder(cache: Path, backend: str = "onnx-int8"):
    from ingest.embed import Embedder

    return Embedder(EmbeddingSettings(backend=backend, cache_dir=cache))


def _exports(cache: Path) -> list[Path]:
    root = cache / "onnx"
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.exists() else []


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def onnx_embedder(onnx_cache):
    _require_onnx()
    e = _onnx_embedder(onnx_cache)
    e.encode(["warm up"])
    return e


def test_settings_pin_the_backend_and_carry_the_cache(tmp_path):
    s = make_settings(tmp_path, EMBEDDING_BACKEND="onnx-int8", EMBEDDING_CACHE_DIR="")
    assert s.embedding.pinned_name == "all-MiniLM-L6-v2+onnx-int8"
    assert s.embedding.cache_dir == tmp_path / "cache" == s.cache_dir
    assert make_settings(tmp_path, EMBEDDING_CACHE_DIR=str(tmp_path / "x")).embedding.cache_dir == tmp_path / "x"
    for backend in ("onnx", "torch"):  # the model's own vectors either way: one pin, one store
        assert make_settings(tmp_path, EMBEDDING_BACKEND=backend).embedding.pinned_name == "all-MiniLM-L6-v2"
    assert make_settings(tmp_path).embedding.backend == "onnx"


def test_missing_optional_packages_say_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    e = _onnx_embedder(tmp_path / "cache")
    with pytest.raises(ModelError, match=r"pip install onnx onnxruntime"):
        e.encode(["x"])


@pytest.mark.slow
def test_export_happens_once_and_is_reused(tmp_path, monkeypatch):
    _require_onnx()
    from ingest import onnx_backend

    calls = []
    real_export = onnx_backend._export
    monkeypatch.setattr(onnx_backend, "_export", lambda *a: calls.append(a) or real_export(*a))
    cache = tmp_path / "cache"

    first = _onnx_embedder(cache).encode(SENTENCES)
    (folder,) = _exports(cache)
    assert (folder / onnx_backend.MANIFEST).is_file() and (folder / onnx_backend.ONNX_FILE).is_file()
    stamp = (folder / onnx_backend.ONNX_FILE).stat().st_mtime_ns
    assert len(calls) == 1

    second = _onnx_embedder(cache).encode(SENTENCES)
    assert len(calls) == 1, "the second load exported again instead of reusing the cache"
    assert _exports(cache) == [folder]
    assert (folder / onnx_backend.ONNX_FILE).stat().st_mtime_ns == stamp
    np.testing.assert_allclose(first, second, atol=1e-6)
    assert not list((cache / "onnx").glob(".tmp-*"))


@pytest.mark.slow
def test_vectors_close_to_fp32(onnx_embedder, embedder):
    q, f = onnx_embedder.encode(SENTENCES), embedder.encode(SENTENCES)
    assert q.dtype == np.float32 and q.shape == (len(SENTENCES), embedder.dimension)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    cosines = (q * f).sum(axis=1)
    assert cosines.min() >= 0.98, cosines
    # Same tokenizer and window, so chunking is identical under both backends.
    assert onnx_embedder.dimension == embedder.dimension
    assert onnx_embedder.max_tokens == embedder.max_tokens
    assert [onnx_embedder.count_tokens(s) for s in SENTENCES] == [embedder.count_tokens(s) for s in SENTENCES]
    assert onnx_embedder.encode([]).shape == (0, embedder.dimension)


@pytest.fixture(scope="module")
def torch_embedder():
    from ingest.embed import Embedder

    e = Embedder(EmbeddingSettings(backend="torch"))
    e.encode(["warm up"])
    return e


@pytest.mark.slow
def test_onnx_fp32_gives_the_vectors_of_torch(embedder, torch_embedder):
    assert embedder.settings.backend == "onnx"  # the default
    o, t = embedder.encode(SENTENCES), torch_embedder.encode(SENTENCES)
    assert (o * t).sum(axis=1).min() >= 0.9999
    assert embedder.name == torch_embedder.name == "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_store_built_with_torch_is_served_by_the_default_backend(tmp_path, embedder, torch_embedder, corpus_dir):
    """A lab upgrading from the torch default keeps its store: nothing to migrate, nothing re-embedded."""
    from retrieval.library import Library

    one_file = sorted(corpus_dir.iterdir())[0]  # a third of the corpus: torch embeds it on the CPU
    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(one_file))
    with Library(settings, embedder=torch_embedder) as lib:
        lib.ingest()
        expected = [h.paper_id for h in lib.search("graph neural networks", 5).hits]
    with Library(settings, embedder=embedder) as lib:
        assert [h.paper_id for h in lib.search("graph neural networks", 5).hits] == expected
        assert lib.ingest().chunks_embedded == 0


@pytest.fixture(scope="module")
def int8_home(tmp_path_factory, onnx_embedder, corpus_dir) -> Path:
    """A folder whose store holds the bundled corpus embedded by the int8 backend."""
    from retrieval.library import Library

    home = tmp_path_factory.mktemp("int8")
    with Library(make_settings(home, PAPERBOT_CORPUS=str(corpus_dir)), embedder=onnx_embedder) as lib:
        lib.ingest()
    return home


@pytest.mark.slow
def test_store_built_with_torch_refuses_onnx_int8(tmp_path, embedder, onnx_embedder, corpus_dir, bundled_store,
                                                  int8_home):
    from retrieval.library import Library

    settings = make_settings(tmp_path, PAPERBOT_CORPUS=str(corpus_dir))
    seed_store(bundled_store, tmp_path)  # built with the default backend, whose vectors are torch's
    with pytest.raises(ModelMismatchError) as err:  # refused when the library opens the store
        Library(settings, embedder=onnx_embedder)
    message = str(err.value)
    assert "'all-MiniLM-L6-v2'" in message and "'all-MiniLM-L6-v2+onnx-int8'" in message
    assert "CHROMA_COLLECTION" in message and "paperbot ingest" in message
    # ...and the other way round.
    with pytest.raises(ModelMismatchError, match=r"\+onnx-int8"):
        Library(make_settings(int8_home, PAPERBOT_CORPUS=str(corpus_dir)), embedder=embedder)


@pytest.mark.slow
def test_int8_store_answers_like_fp32(library, onnx_embedder, corpus_dir, int8_home):
    from retrieval.library import Library

    with Library(make_settings(int8_home, PAPERBOT_CORPUS=str(corpus_dir)), embedder=onnx_embedder) as lib:
        assert lib.stats().model == "all-MiniLM-L6-v2+onnx-int8"
        for paper in library.papers()[:5]:
            question = paper.title or paper.abstract[:200]
            int8, fp32 = lib.search(question, 3).hits, library.search(question, 3).hits
            assert int8 and fp32 and int8[0].paper_id == fp32[0].paper_id == paper.paper_id


@pytest.mark.slow
def test_offline_export_with_no_reachable_hub(tmp_path):
    """A fresh export in a process whose hub endpoint is unreachable and which never asked for offline mode."""
    _require_onnx()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(REPO))
    code = textwrap.dedent(f"""
        import os
        from ingest.embed import Embedder
        from paperbot.settings import EmbeddingSettings
        e = Embedder(EmbeddingSettings(backend="onnx-int8", cache_dir={str(tmp_path / "cache")!r}))
        assert e.encode(["offline"]).shape == (1, 384)
        print("offline", os.environ.get("HF_HUB_OFFLINE"))
    """)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "offline None" in out.stdout  # loaded from local files, without switching the process to offline mode
    assert len(_exports(tmp_path / "cache")) == 1
    assert not (tmp_path / "hf" / "hub").exists() or not any((tmp_path / "hf" / "hub").iterdir())


@pytest.mark.slow
def test_failed_export_leaves_no_cache(tmp_path, monkeypatch):
    _require_onnx()
    from ingest import onnx_backend

    def broken(src, dst):
        Path(dst).write_bytes(b"half a model")
        raise OSError("disk full")

    monkeypatch.setattr(onnx_backend, "_quantize", broken)
    cache = tmp_path / "cache"
    with pytest.raises(ModelError, match="disk full.*EMBEDDING_BACKEND=torch"):
        _onnx_embedder(cache).encode(["x"])
    assert _exports(cache) == []
    assert not list((cache / "onnx").glob(".tmp-*"))


@pytest.mark.slow
def test_killed_export_leaves_no_broken_cache(tmp_path):
    """SIGKILL in the middle of an export: the next load ignores the leftovers and exports afresh."""
    _require_onnx()
    cache = tmp_path / "cache"
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from ingest import onnx_backend
        from ingest.embed import Embedder
        from paperbot.settings import EmbeddingSettings

        def stuck(src, dst):
            Path(dst).write_bytes(b"half a model")
            print("quantizing", flush=True)
            time.sleep(600)

        onnx_backend._quantize = stuck
        Embedder(EmbeddingSettings(backend="onnx-int8", cache_dir={str(cache)!r})).encode(["x"])
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 300
        line = ""
        while "quantizing" not in line and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
        assert "quantizing" in line, proc.stderr.read()[-3000:] if proc.poll() is not None else "timed out"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list((cache / "onnx").glob(".tmp-*")), "the killed export should have left its temporary folder"
    assert _exports(cache) == [], "a killed export must not leave a folder that looks finished"

    vectors = _onnx_embedder(cache).encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384)
    assert len(_exports(cache)) == 1
    assert not list((cache / "onnx").glob(".tmp-*")), "leftovers of the killed export were not cleaned up"


def test_an_existing_export_is_served_without_torch(onnx_embedder, onnx_cache):
    """A bot process serving the int8 export loads neither torch nor sentence-transformers, same vectors."""
    from ingest.embed import resolve_model
    from ingest.onnx_backend import load_quantized

    served = onnx_embedder.encode(SENTENCES)
    reference = load_quantized(resolve_model("all-MiniLM-L6-v2"), onnx_cache).encode(SENTENCES, normalize_embeddings=True)
    assert np.allclose((served * reference).sum(axis=1), 1.0, atol=1e-4)
    code = textwrap.dedent(f"""
        import sys
        from ingest.embed import Embedder
        from paperbot.settings import EmbeddingSettings
        from pathlib import Path
        e = Embedder(EmbeddingSettings(backend="onnx-int8", cache_dir=Path({str(onnx_cache)!r})))
        v = e.encode(["bit masks over weights"])
        assert v.shape == (1, 384) and abs(float((v ** 2).sum()) - 1) < 1e-4
        assert e.count_tokens("hello world") == 4 and e.max_tokens == 256
        print(sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.slow
@pytest.mark.parametrize("which", ["onnx", "torch"])
def test_span_vectors_read_a_sentence_in_its_context(embedder, torch_embedder, which):
    """Pooled from the text's own forward pass: close to the sentence on its own, closer to itself than to others."""
    e = embedder if which == "onnx" else torch_embedder
    text = " ".join(SENTENCES)
    spans, start = [], 0
    for s in SENTENCES:
        spans.append((start, start + len(s)))
        start += len(s) + 1
    whole, [pooled] = e.encode_spans([text], [spans])
    assert whole.shape == (1, e.dimension) and pooled.shape == (len(SENTENCES), e.dimension)
    np.testing.assert_allclose(np.linalg.norm(pooled, axis=1), 1.0, atol=1e-5)
    alone = e.encode(SENTENCES)
    similarity = pooled @ alone.T
    assert (similarity.argmax(axis=1) == np.arange(len(SENTENCES))).all()
    assert np.diag(similarity).min() >= 0.6


def test_onnx_runtime_threads_sleep_between_runs_instead_of_spinning(embedder, onnx_embedder):
    for e in (embedder, onnx_embedder):  # fp32 served by onnx_light, int8 by the sentence-transformers wrapper
        model = e.model
        session = getattr(model, "session", None) or model[0].model.session
        assert session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"
