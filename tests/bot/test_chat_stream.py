"""`paperbot chat` with an LLM: the answer appears in the terminal while it is written."""

from __future__ import annotations

import io
from dataclasses import replace

from bot.chat import run_repl
from tests.conftest import make_settings
from tests.llm_server import Endpoint, Reply
from tests.retrieval.test_llm import llm_settings


def test_chat_prints_the_llm_answer_as_it_streams(library, tmp_path, capsys):
    endpoint = Endpoint()
    try:
        endpoint.enqueue(Reply.stream(["Bit masks over ", "the weights ", "match full fine-tuning [1]. ", "Zeroing ",
                                       "fewer than 0.05% of the weights ", "is enough [1]."], pause=0.2))
        settings = replace(make_settings(tmp_path), llm=llm_settings(endpoint, stream=True))
        out = io.StringIO()
        code = run_repl(settings, lines=io.StringIO("how do people fine-tune by masking weights?\nquit\n"), out=out,
                        library=library)
    finally:
        endpoint.close()
    assert code == 0
    assert endpoint.requests and endpoint.requests[0]["body"]["stream"] is True
    streamed = capsys.readouterr().err
    assert "Bit masks over the weights match full fine-tuning [1]." in streamed, \
        "the terminal shows the answer while it is written, a checked sentence at a time"
    final = out.getvalue()
    assert "match full fine-tuning [1]" in final
    assert "BMT" in final, "the cited paper is shown with its verbatim quote"
