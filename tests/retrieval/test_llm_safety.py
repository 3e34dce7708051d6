"""No secret and no endpoint in what users see; truthful footers; base URLs that keep their query string.

The scripted server echoes the API key in its error bodies (as OpenAI's 401 does:
"Incorrect API key provided: sk-…"), and in an error event inside a stream.
"""

from __future__ import annotations

import json
import logging

import pytest

from bot import cli
from bot.app import embeds
from bot.terminal import render_answer_text
from bot.display import answer_footer
from paperbot import messages
from paperbot.logs import RedactSecrets, redact
from paperbot.settings import LLMSettings, Secret, Settings
from tests.llm_server import Endpoint, Reply
from tests.retrieval.test_llm import GOOD_1, QUESTION, ask, lend

KEY = "sk-proj-Zq8e1TGv0pYcQ4mN7sLwX2bA"
PLAIN_KEY = "local-key-5f0e9d"  # a configured key that does not look like one
OTHER = "sk-live-0123456789abcdefghij"  # a credential that is not ours, echoed all the same


@pytest.fixture
def endpoint():
    e = Endpoint()
    yield e
    e.close()


def echo(key: str) -> str:
    return (f"Incorrect API key provided: {key}. Authorization: Bearer {key}. "
            f"You can find your API key at https://platform.example/account/api-keys. Also {OTHER}, api_key={key}")


FAULTS = {
    "401": lambda key: Reply.error(401, echo(key)),
    "403": lambda key: Reply.error(403, echo(key)),
    "429": lambda key: Reply.error(429, echo(key)),
    "500": lambda key: Reply.error(500, echo(key)),
    "sse": lambda key: Reply.stream_error(echo(key)),
}


def visible(answer) -> str:
    """Everything a user can see of an answer: JSON, the terminal, the Discord footer."""
    return "\n".join([json.dumps(answer.to_json(), ensure_ascii=False), render_answer_text(answer),
                      embeds.footer_for(answer)])


@pytest.mark.parametrize("key", [KEY, PLAIN_KEY])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_key_echoed_by_the_endpoint_never_reaches_users_or_the_log(library, endpoint, caplog, fault, key):
    caplog.set_level(logging.DEBUG)
    endpoint.enqueue(FAULTS[fault](key))
    answer = ask(library, endpoint, retries=0, api_key=key, stream=fault == "sse")
    assert answer.mode == "extractive" and answer.citations
    assert answer.fallback_reason == messages.LLM_FAILED
    shown = visible(answer)
    logged = caplog.text
    for secret in (key, OTHER, key[-12:]):
        assert secret not in shown and secret not in logged
    assert "127.0.0.1" not in shown and "/chat/completions" not in shown  # no endpoint in user text
    assert "Incorrect API key" not in shown  # server text goes to the log only, redacted
    assert "127.0.0.1" in logged and "***" in logged  # the log keeps the details
    assert endpoint.requests[0]["headers"]["Authorization"] == f"Bearer {key}"


def test_public_footer_has_a_short_reason_and_the_terminal_adds_the_detail(library, endpoint):
    endpoint.enqueue(Reply.error(401, echo(KEY)))
    answer = ask(library, endpoint, api_key=KEY)
    assert embeds.footer_for(answer).endswith(f"fell back: {messages.LLM_FAILED}")
    assert answer_footer(answer, detail=True).endswith(
        f"fell back: {messages.LLM_FAILED} (HTTP 401; check LLM_API_KEY)")
    assert answer.to_json()["fallback_detail"] == "HTTP 401; check LLM_API_KEY"


def test_ask_json_with_an_echoing_endpoint(library, endpoint, monkeypatch, capsys):
    monkeypatch.setattr(cli, "open_services", lend(library))
    monkeypatch.setenv("LLM_BASE_URL", endpoint.url)
    monkeypatch.setenv("LLM_MODEL", "scripted")
    monkeypatch.setenv("LLM_API_KEY", KEY)
    endpoint.enqueue(Reply.error(401, echo(KEY)))
    assert cli.main(["ask", QUESTION, "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["fallback_reason"] == messages.LLM_FAILED and out["fallback_detail"].startswith("HTTP 401")
    for secret in (KEY, OTHER):
        assert secret not in captured.out and secret not in captured.err
    assert "cool-down" not in captured.err and "skipping it" not in captured.err  # one-shot: no breaker talk


@pytest.mark.parametrize("text, secret", [
    ("Incorrect API key provided: sk-abc123def456ghi", "sk-abc123def456ghi"),
    ("Authorization: Bearer eyJhbGciOi.abc", "eyJhbGciOi.abc"),
    ('{"api_key": "hunter2hunter2"}', "hunter2hunter2"),
    ("https://user:pa55word@host/v1", "pa55word"),
    ("token=abcd1234efgh&x=1", "abcd1234efgh"),
    ("github ghp_abcdefghijklmnop1234", "ghp_abcdefghijklmnop1234"),
    ("MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhIjKl.abcdefghijklmnopqrstuvwxyz12", "abcdefghijklmnopqrstuvwxyz12"),
])
def test_redact_credential_shapes(text, secret):
    assert secret not in redact(text)


def test_redact_keeps_ordinary_text_and_configured_secrets_go():
    assert redact("the keyword index has 3 tokens; HTTP 401") == "the keyword index has 3 tokens; HTTP 401"
    assert redact("key is mysecretvalue!", ["mysecretvalue"]) == "key is ***!"
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "failed: %s", ("Bearer abcdef123",), None)
    RedactSecrets([]).filter(record)
    assert record.getMessage() == "failed: Bearer ***"


# -- truthful reporting ------------------------------------------------------------------------------


def test_the_model_that_answered_is_reported(library, endpoint):
    endpoint.enqueue(Reply.answer(GOOD_1, model="SmolLM2-135M-Instruct-Q4_1.gguf"))
    answer = ask(library, endpoint, model="local")  # llama-server answers under any configured name
    assert answer.mode == "llm" and answer.model == "SmolLM2-135M-Instruct-Q4_1.gguf"
    assert "model: SmolLM2-135M-Instruct-Q4_1.gguf" in embeds.footer_for(answer)
    endpoint.enqueue(Reply.stream([GOOD_1], model="gemma-3-270m"))
    assert ask(library, endpoint, model="local", stream=True).model == "gemma-3-270m"


def test_a_server_that_names_no_model_reports_the_configured_one(library, endpoint):
    endpoint.enqueue(Reply.answer(GOOD_1, model=""))
    assert ask(library, endpoint, model="configured").model == "configured"


def test_abstention_without_an_llm_did_not_fall_back(library):
    import asyncio

    from retrieval.qa import answer_question

    answer = asyncio.run(answer_question(library, "what is the best recipe for chocolate cake?"))
    assert answer.abstained and answer.fallback_reason is None
    assert "fallback_reason" not in answer.to_json()
    assert "fell back" not in render_answer_text(answer) and "fell back" not in embeds.footer_for(answer)


# -- base URLs --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("base, chat, models", [
    ("http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions", "http://localhost:11434/v1/models"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions", "http://127.0.0.1:8080/v1/models"),
    ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/models"),
    ("http://h:1/openai/v1/chat/completions", "http://h:1/openai/v1/chat/completions", "http://h:1/openai/v1/models"),
    ("https://r.example/openai/deployments/gpt/v1?api-version=2024",
     "https://r.example/openai/deployments/gpt/v1/chat/completions?api-version=2024",
     "https://r.example/openai/deployments/gpt/v1/models?api-version=2024"),
    ("http://h:1/v1/?api-version=2024&x=1", "http://h:1/v1/chat/completions?api-version=2024&x=1",
     "http://h:1/v1/models?api-version=2024&x=1"),
    ("http://h:1?api-version=2024", "http://h:1/v1/chat/completions?api-version=2024",
     "http://h:1/v1/models?api-version=2024"),
])
def test_base_urls_join_with_paths_and_query_strings(base, chat, models):
    llm = Settings.from_env({"LLM_BASE_URL": base, "LLM_MODEL": "m", "CHROMA_PATH": "c"}).llm
    assert (llm.chat_url, llm.models_url) == (chat, models)


def test_the_query_string_reaches_the_server(library, endpoint):
    endpoint.enqueue(Reply.answer(GOOD_1))
    answer = ask(library, endpoint, base_url=endpoint.url + "?api-version=2024")
    assert answer.mode == "llm"
    assert endpoint.requests[0]["path"] == "/v1/chat/completions?api-version=2024"


def test_llm_settings_repr_hides_the_key():
    assert KEY not in repr(LLMSettings(base_url="http://h/v1", api_key=Secret(KEY)))


def test_a_url_password_holding_a_slash_or_an_at_never_reaches_a_log():
    from paperbot.logs import public_url, redact

    for url in ("http://u:p/w-SECRET@host:8000/v1?key=k", "http://u:p@w-SECRET@host/v1",
                "postgresql://bot:a/b-SECRET@db:5432/x"):
        assert "SECRET" not in public_url(url) and "SECRET" not in redact(f"connecting to {url} now")
        assert public_url(url).endswith(("host:8000/v1", "host/v1", "db:5432/x"))
