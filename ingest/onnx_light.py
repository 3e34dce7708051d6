"""Runs an ONNX export of the embedding model (fp32 or int8) with no torch in the process.

The export itself is made once by ingest/onnx_backend.py (which needs torch).
Serving it needs only the model's tokenizer (the `tokenizers` library), ONNX
Runtime and NumPy, which keeps a bot process several hundred MB smaller.
Pooling and normalization are those of all-MiniLM-L6-v2-style models: the mean
of the token vectors under the attention mask, scaled to unit length.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from paperbot.protocols import WordPieces

log = logging.getLogger(__name__)

ONNX_FILE = "model_qint8.onnx"
FP32_FILE = "model_fp32.onnx"
MODEL_FILES = {"int8": ONNX_FILE, "fp32": FP32_FILE}
MANIFEST = "manifest.json"
# Part of the cache key: changing any value exports again.
QUANTIZATION: dict[str, Any] = {
    "format": 2,  # 2: the fp32 export is kept beside the int8 one
    "opset": 17,
    "weights": "qint8",
    "activations": "dynamic-quint8",
    "per_channel": True,
    "operators": ["MatMul"],
}


def session_options(ort):
    """What every ONNX Runtime session here runs with: the whole graph optimized, and worker threads that
    sleep between runs instead of spinning. A bot shares two cores with its event loop and other processes;
    spinning threads took those cores (docs/benchmarks.md, "ONNX Runtime threads")."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def local_model_folder(model_path: str) -> Path:
    """The folder holding the model's files: `model_path` itself, or its snapshot in the Hugging Face cache."""
    from paperbot.errors import ModelError

    path = Path(model_path)
    if path.is_dir():
        return path.resolve()
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model_path, local_files_only=True))
    except Exception:  # the hub raises several types for "not in the local cache"
        log.debug("no local copy of %s", model_path, exc_info=True)
        raise ModelError(f"cannot load embedding model {model_path!r}: it is neither a local folder nor a model in "
                         "the Hugging Face cache. Set EMBEDDING_MODEL to a local sentence-transformers folder, or "
                         "unset it to use the bundled model.") from None


def export_dir(folder: Path, cache_dir: Path) -> Path:
    """Where the export of the model in `folder` lives under `cache_dir`: keyed by its path, files and the
    quantization config."""
    h = hashlib.sha256(json.dumps(QUANTIZATION, sort_keys=True).encode())
    h.update(str(folder).encode())
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f"\0{f.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return Path(cache_dir) / "onnx" / f"{folder.name}-{h.hexdigest()[:16]}"


def is_complete(target: Path, precision: str | None = None) -> bool:
    """The export at `target` is finished (its manifest is written last) and holds the `precision` model file.

    precision None asks for both files (what an export writes); a Docker image keeps only the one its
    default backend serves.
    """
    files = MODEL_FILES.values() if precision is None else [MODEL_FILES[precision]]
    return (target / MANIFEST).is_file() and all((target / f).is_file() for f in files)


class _TokenCounter:
    """Answers `tokenizer(text, ...)["input_ids"]` like a Hugging Face tokenizer, for token counting."""

    def __init__(self, tokenizer) -> None:
        self._tok = tokenizer

    def __call__(self, text: str, add_special_tokens: bool = True, **_: Any) -> dict:
        return {"input_ids": self._tok.encode(text, add_special_tokens=add_special_tokens).ids}


class OnnxEncoder:
    """The subset of SentenceTransformer that paperbot's Embedder uses, over ONNX Runtime."""

    def __init__(self, folder: Path, model_file: Path, providers: list[str] | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        config = folder / "sentence_bert_config.json"
        self.max_seq_length = int(json.loads(config.read_text()).get("max_seq_length") or 256) if config.is_file() else 256
        plain = Tokenizer.from_file(str(folder / "tokenizer.json"))
        plain.no_truncation()
        plain.no_padding()
        self._plain = plain
        self.tokenizer = _TokenCounter(plain)
        self._specials = _bert_specials(plain)
        self._cut = Tokenizer.from_file(str(folder / "tokenizer.json"))  # the model's input: special tokens, cut
        self._pad_id = int((self._cut.padding or {}).get("pad_id", 0))
        self._cut.enable_truncation(max_length=self.max_seq_length)
        self._cut.no_padding()
        options = session_options(ort)
        self.session = ort.InferenceSession(str(model_file), options, providers=providers or ["CPUExecutionProvider"])
        # What the session really runs on: ONNX Runtime falls back to the CPU when the CUDA libraries are missing.
        self.device = "cuda" if self.session.get_providers()[0] == "CUDAExecutionProvider" else "cpu"
        self._inputs = [i.name for i in self.session.get_inputs()]
        self._dimension = int(self.encode(["dimension"])[0].shape[0])

    def get_embedding_dimension(self) -> int:
        return self._dimension

    def count_tokens(self, text: str) -> int:
        """Word pieces of `text` with the special tokens, untruncated (chunks are sized with it)."""
        return len(self.tokenizer(text)["input_ids"])

    def word_pieces(self, texts: list[str]) -> list[WordPieces | None] | None:
        """Each text's word pieces (no special tokens, untruncated), when its tokenizer is BERT's: it splits the
        text at every whitespace and punctuation before anything else, so a stretch of text between two
        whitespace characters has the pieces of the whole text there. None for other tokenizers, and None for
        a text holding a control character Python counts as whitespace but BERT drops (ingest's parsing
        removes them)."""
        if self._specials is None:
            return None
        return [None if _BERT_DROPS.search(text) else _pieces_of(e)
                for text, e in zip(texts, self._plain.encode_batch(texts, add_special_tokens=False))]

    def encode(self, texts: list[str], batch_size: int = 32, normalize_embeddings: bool = True, **_: Any) -> np.ndarray:
        return self.encode_spans(texts, [[] for _ in texts], batch_size, normalize_embeddings)[0]

    def _forward(self, texts: list[str], batch_size: int, pieces: list[WordPieces] | None = None):
        """(text indices, their `_Batch`, the model's token vectors) per batch, longest texts first: similar
        lengths share a batch, so there is little padding. With `pieces` (the texts' `word_pieces`) the
        texts are not tokenized again."""
        if pieces is None:
            inputs = [_pieces_of(e) for e in self._cut.encode_batch(texts)]
        else:
            if self._specials is None:
                raise ValueError("word pieces are fed only with BERT's tokenizer (word_pieces gives None otherwise)")
            head, tail = (np.asarray(ids, dtype=np.int64) for ids in self._specials)
            room = self.max_seq_length - len(head) - len(tail)
            inputs = [WordPieces(np.concatenate([head, p.ids[:room], tail]),
                                 np.concatenate([np.zeros((len(head), 2), np.int64), p.offsets[:room],
                                                 np.zeros((len(tail), 2), np.int64)])) for p in pieces]
        order = np.argsort([-len(p.ids) for p in inputs], kind="stable")
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            batch = _Batch.padded([inputs[i] for i in idx], self._pad_id)
            feed = {"input_ids": batch.ids, "attention_mask": batch.attention,
                    "token_type_ids": np.zeros_like(batch.ids)}
            (hidden,) = self.session.run(["last_hidden_state"], {n: feed[n] for n in self._inputs})
            yield idx, batch, hidden

    def encode_spans(self, texts: list[str], spans: list[list[tuple[int, int]]], batch_size: int = 32,
                     normalize_embeddings: bool = True,
                     pieces: list[WordPieces] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """Text vectors, and for each text the mean of its token vectors over each character span.

        A span vector is a sentence read in the context of its chunk, from the same
        forward pass: snippets cost nothing extra at ingest. A span with no token
        inside the model's window gets a zero vector. `pieces`: see `_forward`.
        """
        out = np.zeros((len(texts), 0), dtype=np.float32)
        span_out: list[np.ndarray] = [np.zeros((0, 0), dtype=np.float32)] * len(texts)
        for idx, batch, hidden in self._forward(texts, batch_size, pieces):
            mask = batch.attention.astype(np.float32)[..., None]
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            if out.shape[1] == 0:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled
            for row, i in enumerate(idx):
                span_out[i] = pool_spans(hidden[row], batch.offsets[row], batch.attention[row], spans[i])
        if normalize_embeddings:
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
            span_out = [_unit(v) for v in span_out]
        return out, span_out


    def encode_tokens(self, texts: list[str], batch_size: int = 32) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
        """Per text: the character span of each real token (no padding, no special token) and its unit vector.

        The token vectors are those the sentence vector is pooled from, from one forward pass.
        """
        out: list[tuple[list[tuple[int, int]], np.ndarray]] = [([], np.zeros((0, 0), dtype=np.float32))] * len(texts)
        for idx, batch, hidden in self._forward(texts, batch_size):
            for row, i in enumerate(idx):
                out[i] = real_tokens(hidden[row], batch.offsets[row], batch.attention[row])
        return out


# Whitespace to Python's str.split and re's \s, but control characters BERT's normalizer removes, joining the words
# around them: the one place where "between two whitespace characters" differs (`OnnxEncoder.word_pieces`).
_BERT_DROPS = re.compile("[\x0b\x0c\x1c-\x1f\x85]")


def _pieces_of(encoding) -> WordPieces:
    """A `tokenizers` Encoding's ids and offsets as arrays."""
    return WordPieces(np.asarray(encoding.ids, dtype=np.int64),
                      np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2))


class _Batch(NamedTuple):
    """One batch of the model's input: ids and attention (texts × tokens), each token's characters."""

    ids: np.ndarray
    attention: np.ndarray
    offsets: np.ndarray  # texts × tokens × 2; special tokens and padding at 0, 0

    @classmethod
    def padded(cls, inputs: list[WordPieces], pad_id: int) -> _Batch:
        """Texts given as their model input (special tokens included, at offsets 0, 0), padded to the longest."""
        width = max(len(ids) for ids, _ in inputs)
        ids = np.full((len(inputs), width), pad_id, dtype=np.int64)
        attention = np.zeros((len(inputs), width), dtype=np.int64)
        offsets = np.zeros((len(inputs), width, 2), dtype=np.int64)
        for row, (text_ids, text_offsets) in enumerate(inputs):
            ids[row, :len(text_ids)] = text_ids
            attention[row, :len(text_ids)] = 1
            offsets[row, :len(text_ids)] = text_offsets
        return cls(ids, attention, offsets)


def _bert_specials(tokenizer) -> tuple[list[int], list[int]] | None:
    """The special tokens BERT's tokenizer puts before and after a text, when `tokenizer` is BERT's (its
    normalizer and pre-tokenizer; see `OnnxEncoder.word_pieces`), else None."""
    from tokenizers import normalizers, pre_tokenizers

    if not (isinstance(tokenizer.normalizer, normalizers.BertNormalizer)
            and isinstance(tokenizer.pre_tokenizer, pre_tokenizers.BertPreTokenizer)):
        return None
    bare, full = tokenizer.encode("a", add_special_tokens=False).ids, tokenizer.encode("a").ids
    at = next((k for k in range(len(full) - len(bare) + 1) if full[k:k + len(bare)] == bare), None)
    return None if at is None else (full[:at], full[at + len(bare):])


def real_tokens(hidden: np.ndarray, offsets, attention) -> tuple[list[tuple[int, int]], np.ndarray]:
    """(spans, unit vectors) of the tokens that cover text: padding and special tokens left out."""
    bounds = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    real = np.asarray(attention[:len(bounds)]) > 0
    keep = np.flatnonzero((bounds[:len(real), 1] > bounds[:len(real), 0]) & real)
    vectors = np.asarray(hidden[keep], dtype=np.float32) if keep.size else np.zeros((0, hidden.shape[-1]), np.float32)
    return [(int(a), int(b)) for a, b in bounds[keep]], _unit(vectors)


def pool_spans(hidden: np.ndarray, offsets, attention, spans: list[tuple[int, int]]) -> np.ndarray:
    """Mean of the token vectors (`hidden`, one row per token) whose characters lie inside each span."""
    if not spans:
        return np.zeros((0, hidden.shape[-1]), dtype=np.float32)
    bounds = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    starts, ends = bounds[:, 0], bounds[:, 1]
    real = (np.asarray(attention[:len(bounds)]) > 0) & (ends > starts)  # no padding, no special tokens
    lo, hi = np.asarray(spans, dtype=np.int64).reshape(-1, 2).T
    inside = real & (starts >= lo[:, None]) & (ends <= hi[:, None])  # span × token
    counts = inside.sum(axis=1, keepdims=True)
    sums = inside.astype(np.float32) @ np.asarray(hidden[:len(bounds)], dtype=np.float32)
    return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0).astype(np.float32)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True) if vectors.size else vectors
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32) if vectors.size else vectors


def providers_for(device: str) -> tuple[list[str], str]:
    """ONNX Runtime's execution providers for EMBEDDING_DEVICE, and why it is the CPU when a GPU was allowed."""
    import onnxruntime as ort

    if device == "cpu":
        return ["CPUExecutionProvider"], ""
    if device in ("auto", "cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
        return ["CUDAExecutionProvider", "CPUExecutionProvider"], ""
    if device == "mps":
        return ["CPUExecutionProvider"], "ONNX Runtime has no provider for Apple's MPS (EMBEDDING_BACKEND=torch has)"
    return ["CPUExecutionProvider"], (f"onnxruntime {ort.__version__} has no CUDA provider: the GPU needs the "
                                      "onnxruntime-gpu package in place of onnxruntime")


def load_exported(model_path: str, cache_dir: Path, precision: str = "int8",
                  providers: list[str] | None = None) -> OnnxEncoder | None:
    """The encoder over an existing export of `model_path` (`precision` fp32 or int8), or None before the export."""
    folder = local_model_folder(model_path)
    target = export_dir(folder, cache_dir)
    if not is_complete(target, precision) or not (folder / "tokenizer.json").is_file():
        return None
    return OnnxEncoder(folder, target / MODEL_FILES[precision], providers)
