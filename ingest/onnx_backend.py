"""The ONNX export of the embedding model, made once with torch, served without it (ingest/onnx_light.py).

The transformer is exported once from the model's local files to ONNX in fp32
(EMBEDDING_BACKEND=onnx, the default: the same vectors as torch) and a copy with
its MatMul weights quantized to int8 per output channel (EMBEDDING_BACKEND=onnx-int8;
dynamic quantization: activations are quantized at run time, no calibration
data). Both are kept under PAPERBOT_CACHE_DIR/onnx in a folder keyed by the model
files and the export config. Later loads reuse it; nothing is ever downloaded.

An export is written to a temporary folder and renamed into place only when
complete, under a file lock, so a killed export never leaves a half-written
model for the next run and two processes never export the same model at once.

The returned object is the model's own ``SentenceTransformer`` (tokenizer,
pooling and normalization unchanged) whose transformer module forwards to an
ONNX Runtime session. sentence-transformers' own ``backend="onnx"`` is not used:
it needs ``optimum-onnx``, whose releases require transformers < 4.58, while
sentence-transformers 6 needs transformers 5.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
import warnings
from pathlib import Path

import torch

from ingest.onnx_light import (
    FP32_FILE,
    MANIFEST,
    ONNX_FILE,
    QUANTIZATION,
    export_dir,
    is_complete,
    local_model_folder,
    session_options,
)
from paperbot.errors import ModelError

log = logging.getLogger(__name__)

INSTALL_HINT = "the ONNX embedding backends need the onnx and onnxruntime packages: pip install onnx onnxruntime"


def load_quantized(model_path: str, cache_dir: Path):
    """The sentence-transformers model at `model_path` with its transformer running int8 in ONNX Runtime."""
    try:
        import onnx  # noqa: F401  (needed by the export and the quantizer)
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelError(f"{INSTALL_HINT} ({exc})") from None
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    folder = local_model_folder(model_path)
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    transformer = model[0]
    if not hasattr(transformer, "tokenizer") or not hasattr(getattr(transformer, "model", None), "config"):
        raise ModelError(f"EMBEDDING_BACKEND=onnx-int8 supports text models whose first module is a "
                         f"Transformer; {model_path} starts with {type(transformer).__name__}")

    target = ensure_exported(model, folder, cache_dir)

    options = session_options(ort)
    session = ort.InferenceSession(str(target / ONNX_FILE), options, providers=["CPUExecutionProvider"])
    config = transformer.model.config  # type: ignore[union-attr]  # a Hugging Face model: torch types its attributes loosely
    transformer.model = _OnnxTransformer(session, config)
    return model


def ensure_exported(model, folder: Path, cache_dir: Path) -> Path:
    """The export folder of `model` (loaded from `folder`), exporting it first if needed (once, locked)."""
    from filelock import FileLock

    target = export_dir(folder, cache_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not is_complete(target):
            _export(model[0], folder, target)
        else:
            log.debug("reusing the int8 ONNX export at %s", target)
    return target


def _export(transformer, folder: Path, target: Path) -> None:
    """Export + quantize into a temporary folder beside `target`, then rename it into place (lock held)."""
    root = target.parent
    for stale in root.glob(f".tmp-{target.name}-*"):  # left by a killed export of this model
        shutil.rmtree(stale, ignore_errors=True)
    if target.exists():  # incomplete: not written by this module's rename
        shutil.rmtree(target, ignore_errors=True)
    tmp = root / f".tmp-{target.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    t0 = time.perf_counter()
    log.info("exporting %s to ONNX, fp32 and int8 (once), into %s", folder, target)
    try:
        inputs = _export_fp32(transformer, tmp / FP32_FILE)
        _quantize(tmp / FP32_FILE, tmp / ONNX_FILE)
        _write_manifest(tmp, folder, inputs)
        os.rename(tmp, target)
    except Exception as exc:
        log.debug("ONNX export failed", exc_info=True)
        raise ModelError(f"cannot export {folder} to ONNX ({type(exc).__name__}: {exc}); "
                         "use EMBEDDING_BACKEND=torch") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("ONNX export done in %.1f s", time.perf_counter() - t0)


def _export_fp32(transformer, path: Path) -> list[str]:
    """Trace the transformer (eager attention, dynamic batch and sequence axes) to an fp32 ONNX file."""
    hf_model = transformer.model
    set_attn = getattr(hf_model, "set_attn_implementation", None)
    if set_attn is not None:
        set_attn("eager")  # sdpa and flash attention do not trace
    else:
        hf_model.config._attn_implementation = "eager"
    sample = transformer.tokenizer(["paperbot exports this model once", "and reuses it"],
                                   padding=True, return_tensors="pt")
    names = list(sample.keys())

    class _Traced(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            return self.inner(**dict(zip(names, args)), return_dict=True).last_hidden_state

    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Traced(hf_model).eval(), tuple(sample[n] for n in names), str(path), dynamo=False,
                          input_names=names, output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=QUANTIZATION["opset"])
    return names


def _quantize(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer reports every skipped tensor through the root logger; that is not news to anyone.
    root = logging.getLogger()
    root.addFilter(_drop_root_records)
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=QUANTIZATION["per_channel"],
                         op_types_to_quantize=QUANTIZATION["operators"])
    finally:
        root.removeFilter(_drop_root_records)


def _drop_root_records(record: logging.LogRecord) -> bool:
    return record.name != "root" or record.levelno >= logging.ERROR


def _write_manifest(tmp: Path, folder: Path, inputs: list[str]) -> None:
    import onnxruntime

    manifest = {
        "model": str(folder),
        "quantization": QUANTIZATION,
        "inputs": inputs,
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")


class _OnnxTransformer(torch.nn.Module):
    """Stands in for the Hugging Face model inside sentence-transformers' Transformer module."""

    def __init__(self, session, config) -> None:
        super().__init__()
        self.session = session
        self.config = config
        self.device = torch.device("cpu")
        self.input_names = [i.name for i in session.get_inputs()]

    def forward(self, **features) -> dict:
        feed = {n: features[n].cpu().numpy() for n in self.input_names}
        (hidden,) = self.session.run(["last_hidden_state"], feed)
        return {"last_hidden_state": torch.from_numpy(hidden)}
