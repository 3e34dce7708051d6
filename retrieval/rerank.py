"""An optional listwise rerank by the LLM (LLM_RERANK, off by default): the model reorders the fused candidates.

The model sees each candidate under a short opaque id ([1]…[20], never a paper id), with its title and the
start of its abstract (retrieval/prompts.py `rerank_messages`: document and question text are quoted data),
and replies with the ids in order. Its reply is validated, never trusted: ids it was not shown and repeats
are ignored; a reply with too few valid ids, an endpoint failure or no reply within the timeout leaves the
fused order as it was. Otherwise the papers it named come first in its order, then the others in fused
order: nothing is dropped and nothing added. `rerank` never raises (its caller's cancellation aside).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence

from paperbot import messages
from paperbot.errors import LLMError
from paperbot.protocols import ChatModel
from retrieval import prompts
from retrieval.types import Hit

log = logging.getLogger(__name__)

DEPTH = 20  # candidates shown to the model; those below keep their place after them
MIN_IDS = 3  # valid ids a reply must name (all of them when fewer are shown) to be used
ABSTRACT_CHARS = 300  # of each abstract shown
MAX_TOKENS = 128  # "[12] " is about four tokens: twenty ids and some slack

_BRACKETED = re.compile(r"\[\s*(\d{1,3})\s*\]")
_BARE_LIST = re.compile(r"[\d\s,;>.\-]+")  # "3, 1, 2" or "3 > 1 > 2": a reply of numbers alone
_THINKING = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)  # a reasoning model's notes, not its answer


def parse_ids(reply: str, shown: int) -> list[int]:
    """The ids 1..`shown` that `reply` names, in its order, each once; bare numbers only in a reply of numbers."""
    reply = _THINKING.sub(" ", reply)
    found = _BRACKETED.findall(reply)
    if not found and _BARE_LIST.fullmatch(reply.strip()):
        found = re.findall(r"\d+", reply)
    ids: list[int] = []
    for raw in found:
        n = int(raw)
        if 1 <= n <= shown and n not in ids:
            ids.append(n)
    return ids


async def rerank(llm: ChatModel, question: str, ranked: Sequence[Hit], *, depth: int = DEPTH,
                 timeout: float) -> list[Hit]:
    """`ranked` with its first `depth` papers in the order the model gives, or unchanged when it gives none."""
    fused = list(ranked)
    shown = fused[:depth]
    if len(shown) < 2:
        return fused
    candidates = [(n, h.paper.title or h.label, h.paper.abstract or messages.ABSTRACT_PENDING)
                  for n, h in enumerate(shown, start=1)]
    try:
        completion = await asyncio.wait_for(
            llm.chat(prompts.rerank_messages(question, candidates, ABSTRACT_CHARS), max_tokens=MAX_TOKENS,
                     temperature=0.0, stream=False),
            timeout)
    except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11, two before
        log.warning("rerank: no reply within %g s; the fused order stands", timeout)
        return fused
    except LLMError as exc:
        log.warning("rerank: the LLM failed (%s); the fused order stands", exc.detail)
        return fused
    ids = parse_ids(completion.text, len(shown))
    need = min(MIN_IDS, len(shown))
    if len(ids) < need:
        log.info("rerank: the reply names %d of the %d papers shown (at least %d needed); the fused order stands",
                 len(ids), len(shown), need)
        return fused
    chosen = [shown[n - 1] for n in ids]
    rest = [h for n, h in enumerate(shown, start=1) if n not in ids]
    log.debug("rerank: the model ordered %d of %d papers: %s", len(ids), len(shown), " ".join(map(str, ids)))
    return chosen + rest + fused[depth:]
