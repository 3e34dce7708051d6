"""EMBEDDING_DEVICE: a GPU when there is one, the CPU otherwise, and the same vectors on both."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from ingest.embed import Embedder
from paperbot.errors import ConfigError, ModelError
from paperbot.settings import EmbeddingSettings, Settings
from tests.conftest import make_settings


def gpu() -> str | None:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return None


def has_onnx_cuda() -> bool:
    import onnxruntime as ort

    return "CUDAExecutionProvider" in ort.get_available_providers()


def test_device_setting_is_read_and_checked(tmp_path):
    assert make_settings(tmp_path).embedding.device == "auto"
    assert make_settings(tmp_path, EMBEDDING_DEVICE="cuda").embedding.device == "cuda"
    with pytest.raises(ConfigError) as bad:
        Settings.from_env({"EMBEDDING_DEVICE": "gpu"})
    assert str(bad.value) == "EMBEDDING_DEVICE: must be one of auto, cpu, cuda, mps, got 'gpu'"


@pytest.mark.parametrize("backend", ["onnx", "torch"])
def test_auto_uses_the_cpu_when_there_is_no_gpu_and_says_why(tmp_path, backend, caplog):
    if (gpu() if backend == "torch" else has_onnx_cuda()):
        pytest.skip("this machine has a GPU for this backend")
    embedder = Embedder(make_settings(tmp_path, EMBEDDING_BACKEND=backend).embedding)
    with caplog.at_level(logging.INFO, logger="ingest.embed"):
        assert embedder.encode(["a sentence"]).shape == (1, 384)
    assert embedder.device == "cpu"
    why = "sees no GPU" if backend == "torch" else "has no CUDA provider: the GPU needs the onnxruntime-gpu package"
    assert "embedding on the CPU: " in caplog.text and why in caplog.text


@pytest.mark.parametrize("backend, device", [("onnx", "cuda"), ("torch", "cuda"), ("onnx", "mps")])
def test_an_explicit_gpu_that_cannot_be_used_is_a_clear_error(tmp_path, backend, device):
    if backend == "torch" and gpu() == device or backend == "onnx" and device == "cuda" and has_onnx_cuda():
        pytest.skip(f"this machine can embed on {device} with {backend}")
    embedder = Embedder(make_settings(tmp_path, EMBEDDING_BACKEND=backend, EMBEDDING_DEVICE=device).embedding)
    with pytest.raises(ModelError) as refused:
        embedder.encode(["a sentence"])
    message = str(refused.value)
    assert message.startswith(f"EMBEDDING_DEVICE={device}: ") and "set EMBEDDING_DEVICE=auto or cpu" in message
    assert "\n" not in message


def test_vectors_are_the_same_on_the_gpu_and_the_cpu(tmp_path):
    """A store ingested on the GPU workstation is served from a CPU box: same texts, cosine >= 0.999."""
    device = gpu()
    if device is None:
        pytest.skip("no GPU here (torch sees neither CUDA nor MPS): the cross-device check needs one")
    from paperbot.settings import BUNDLED_CORPUS

    texts = [p for f in sorted(BUNDLED_CORPUS.iterdir()) for p in f.read_text().split("\n\n")[1:] if p.strip()][:40]
    on_cpu = Embedder(EmbeddingSettings(backend="torch", device="cpu"))
    on_gpu = Embedder(EmbeddingSettings(backend="torch", device=device))
    a, b = on_cpu.encode(texts), on_gpu.encode(texts)
    assert on_gpu.device == device
    assert float(np.min(np.sum(a * b, axis=1))) >= 0.999
    spans = [[(0, min(80, len(t)))] for t in texts]
    (_, pa), (_, pb) = on_cpu.encode_spans(texts, spans), on_gpu.encode_spans(texts, spans)
    assert min(float(x[0] @ y[0]) for x, y in zip(pa, pb)) >= 0.999
