"""Question → cited answer, for async front ends (the Discord bot, the chat harness, `ask`).

Retrieval runs in a worker thread so the event loop stays free.
"""

from __future__ import annotations

import asyncio

from retrieval.answer import extractive_answer
from retrieval.library import Library
from retrieval.types import Answer


async def answer_question(library: Library, question: str, *, llm=None, k: int | None = None,
                          on_text=None) -> Answer:
    """The answer to `question`; `llm` (optional) summarizes, `on_text` receives streamed text."""
    result = await asyncio.to_thread(library.search, question, k)
    return extractive_answer(result)
