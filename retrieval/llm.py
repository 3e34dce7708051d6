"""An async client for any OpenAI-compatible ``/v1/chat/completions`` endpoint.

OpenAI, Ollama, vLLM, llama.cpp's server and LM Studio all speak this dialect.
The client never creates its HTTP client: the entry point opens one
``httpx.AsyncClient`` per process, passes it in, and closes it on exit.

Failure policy (every failure ends in LLMError, and callers fall back):

* connection errors, 408, 429 and 5xx are retried ``LLM_RETRIES`` times with
  exponential backoff, or after the server's Retry-After when it sends one; a
  Retry-After longer than ``LLM_MAX_RETRY_WAIT`` is not waited for;
* a read timeout, another 4xx, a malformed or empty reply, or a stream that
  breaks off after text arrived fails at once (retrying would only make the
  user wait longer, or repeat text already shown);
* after ``LLM_FAILURE_THRESHOLD`` failed requests in a row the endpoint is
  skipped for ``LLM_COOLDOWN`` seconds (a circuit breaker); one request is let
  through afterwards, and a success closes the breaker again.

The API key goes into the Authorization header only. Every error message is
redacted (the configured key, and anything shaped like a credential, since an
error body may echo the key) and comes in two forms: the log's, which names the
endpoint and quotes the server, and `LLMError.detail`, which names neither and
may be shown to an operator.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx

from paperbot.errors import LLMError
from paperbot.logs import public_url, redact
from paperbot.settings import LLMSettings

log = logging.getLogger(__name__)

BACKOFF_BASE = 0.5  # seconds before the first retry; doubled for each further one
MAX_REPLY_CHARS = 32_000  # a reply is cut here, whatever the server keeps sending
_ERROR_SNIPPET = 200  # characters of an error body quoted in the log
_ERROR_READ = 4000  # characters of it read (and redacted) before cutting

OnDelta = Callable[[str], "Awaitable[None] | None"]


@dataclass(frozen=True)
class Completion:
    """One reply of the model, with the usage the endpoint reported (None when it did not)."""

    text: str
    model: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    streamed: bool = False
    attempts: int = 1
    latency_ms: float = 0.0

    @property
    def tokens(self) -> int | None:
        if self.total_tokens is not None:
            return self.total_tokens
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class _Retry(Exception):
    """An attempt failed in a way another attempt may fix; `wait` is the server's Retry-After."""

    def __init__(self, reason: str, wait: float | None = None, server_text: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.server_text = server_text


class _StreamRejected(Exception):
    """The server refused a streaming request (400); it may accept the same request unstreamed."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None if absent or invalid."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class LLMClient:
    """Chat completions over one shared ``httpx.AsyncClient``, with retries and a circuit breaker."""

    def __init__(self, settings: LLMSettings, http: httpx.AsyncClient, *,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 clock: Callable[[], float] = time.monotonic, breaker: bool = True) -> None:
        """`breaker=False` for a one-shot run (`paperbot ask`): no cool-down, and no talk of one."""
        if not settings.enabled:
            raise LLMError("LLM_BASE_URL is not set", detail="LLM_BASE_URL is not set")
        self.settings = settings
        self.breaker = breaker
        self._http = http
        self._sleep = sleep
        self._clock = clock
        self._failures = 0
        self._open_until = 0.0

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def secrets(self) -> tuple[str, ...]:
        """The configured key, redacted from replies as from errors (whatever its shape)."""
        return (self.settings.api_key,) if self.settings.api_key else ()

    @property
    def endpoint(self) -> str:
        return public_url(self.settings.chat_url)

    def cooldown_left(self) -> float:
        """Seconds until the endpoint is tried again; 0 when it is available."""
        return max(0.0, self._open_until - self._clock())

    @property
    def available(self) -> bool:
        return self.cooldown_left() <= 0.0

    async def chat(self, messages: list[dict], *, on_delta: OnDelta | None = None, max_tokens: int | None = None,
                   temperature: float | None = None, stream: bool | None = None) -> Completion:
        """The model's reply to `messages`; `on_delta` gets the growing text while it streams.

        Raises LLMError when the endpoint is cooling down or the request fails.
        """
        left = self.cooldown_left()
        if left > 0:
            raise LLMError(f"{self.endpoint} skipped for {left:.0f} s more after {self._failures} failed requests",
                           detail=f"skipped for {left:.0f} s after {self._failures} failures in a row",
                           paused=True)
        try:
            completion = await self._chat(messages, on_delta, max_tokens, temperature, stream)
        except LLMError as exc:
            self._failed(exc)
            raise
        self._failures = 0
        self._open_until = 0.0
        log.info("LLM reply from %s: model=%s streamed=%s attempts=%d tokens=%s latency=%.0f ms finish=%s",
                 self.endpoint, completion.model or self.model, completion.streamed, completion.attempts,
                 completion.tokens, completion.latency_ms, completion.finish_reason)
        return completion

    def _failed(self, exc: LLMError) -> None:
        self._failures += 1
        if not self.breaker:
            log.warning("LLM request failed: %s", exc)
        elif self._failures >= self.settings.failure_threshold:
            self._open_until = self._clock() + self.settings.cooldown
            log.warning("LLM endpoint %s failed %d times in a row (last: %s); skipping it for %.0f s",
                        self.endpoint, self._failures, exc, self.settings.cooldown)
        else:
            log.warning("LLM request failed (%d/%d before cool-down): %s",
                        self._failures, self.settings.failure_threshold, exc)

    # -- one request, with retries --------------------------------------------------------

    async def _chat(self, messages, on_delta, max_tokens, temperature, stream) -> Completion:
        cfg = self.settings
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": messages,
            "max_tokens": cfg.max_tokens if max_tokens is None else max_tokens,
            "temperature": cfg.temperature if temperature is None else temperature,
            "stream": cfg.stream if stream is None else stream,
        }
        if body["stream"]:
            body["stream_options"] = {"include_usage": True}
        attempts = cfg.retries + 1
        attempt = 0
        start = time.perf_counter()
        last = "no attempt made"
        server_text = ""
        while attempt < attempts:
            attempt += 1
            try:
                completion = await self._attempt(body, on_delta)
            except _StreamRejected:
                log.info("%s refused a streaming request; asking again without streaming", self.endpoint)
                body = {k: v for k, v in body.items() if k != "stream_options"} | {"stream": False}
                attempt -= 1
                continue
            except _Retry as r:
                last, server_text = r.reason, r.server_text
                if attempt >= attempts:
                    break
                wait = r.wait if r.wait is not None else self._backoff(attempt)
                if wait > cfg.max_retry_wait:
                    raise self._error(f"{r.reason}; the server asks to wait {wait:.0f} s, "
                                      f"more than LLM_MAX_RETRY_WAIT={cfg.max_retry_wait:g}", r.server_text) from None
                log.info("LLM attempt %d/%d failed (%s); retrying in %.1f s", attempt, attempts, r.reason, wait)
                await self._sleep(wait)
                continue
            return replace(completion, attempts=attempt, latency_ms=(time.perf_counter() - start) * 1000)
        raise self._error(f"{last} (after {attempts} attempt{'s' if attempts > 1 else ''})", server_text)

    def _error(self, detail: str, server_text: str = "") -> LLMError:
        """An LLMError: the log's message names the endpoint and quotes the server; `detail` does neither."""
        secrets = [self.settings.api_key]
        quoted = redact(server_text, secrets)[:_ERROR_SNIPPET]  # cut after redacting: no half key survives
        message = redact(f"{self.endpoint}: {detail}", secrets) + (f": {quoted}" if quoted else "")
        return LLMError(message, detail=redact(detail, secrets))

    def _backoff(self, attempt: int) -> float:
        return min(self.settings.max_retry_wait, BACKOFF_BASE * 2 ** (attempt - 1) * (1 + random.random() / 4))

    async def _attempt(self, body: dict, on_delta: OnDelta | None) -> Completion:
        cfg = self.settings
        headers = {"Accept": "text/event-stream" if body["stream"] else "application/json"}
        if cfg.api_key:
            headers["Authorization"] = f"Bearer {cfg.api_key}"
        timeout = httpx.Timeout(cfg.read_timeout, connect=cfg.connect_timeout)
        try:
            async with self._http.stream("POST", cfg.chat_url, json=body, headers=headers, timeout=timeout) as resp:
                if not 200 <= resp.status_code < 300:
                    await self._raise_for_status(resp, streaming=body["stream"])
                ctype = resp.headers.get("content-type", "")
                if body["stream"] and "text/event-stream" in ctype:
                    return await self._read_stream(resp, on_delta)
                return self._parse_reply(await resp.aread())
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise _Retry(f"cannot connect ({type(exc).__name__})") from None
        except httpx.TimeoutException as exc:
            raise self._error(f"no reply within {cfg.read_timeout:g} s ({type(exc).__name__}; LLM_TIMEOUT)") from None
        except httpx.TransportError as exc:
            # The connection broke before any text arrived (mid-stream breaks are handled in _read_stream).
            raise _Retry(f"connection failed ({type(exc).__name__})") from None

    async def _raise_for_status(self, resp: httpx.Response, streaming: bool) -> None:
        status = resp.status_code
        try:
            detail = (await resp.aread())[:_ERROR_READ].decode("utf-8", "replace").strip()
        except httpx.HTTPError:
            detail = ""
        detail = " ".join(detail.split())
        if status in (408, 429) or status >= 500:
            raise _Retry(f"HTTP {status}", wait=parse_retry_after(resp.headers.get("retry-after")), server_text=detail)
        if status == 400 and streaming:
            raise _StreamRejected()
        hint = {401: "; check LLM_API_KEY", 403: "; check LLM_API_KEY",
                404: "; check LLM_BASE_URL and LLM_MODEL"}.get(status, "")
        raise self._error(f"HTTP {status}{hint}", detail)

    # -- replies ----------------------------------------------------------------------------

    def _json_object(self, raw: bytes | str, what: str) -> dict:
        """`raw` parsed as a JSON object that is not an error report; LLMError otherwise."""
        try:
            data = json.loads(raw)
        except ValueError:
            raise self._error(f"{what} is not JSON") from None
        if not isinstance(data, dict):
            raise self._error(f"{what} is not a JSON object")
        self._raise_if_error(data)
        return data

    def _parse_reply(self, raw: bytes) -> Completion:
        data = self._json_object(raw, "the reply")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._error("the reply has no choices")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise self._error("the reply is empty")
        found = data.get("usage")
        usage: dict = found if isinstance(found, dict) else {}
        return Completion(
            text=content[:MAX_REPLY_CHARS],
            model=str(data.get("model") or ""),
            finish_reason=choices[0].get("finish_reason"),
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            total_tokens=_int_or_none(usage.get("total_tokens")),
        )

    async def _read_stream(self, resp: httpx.Response, on_delta: OnDelta | None) -> Completion:
        """Server-sent events: `data: {chunk}` lines, ended by `data: [DONE]` or a finish_reason."""
        parts: list[str] = []
        size = 0
        finish: str | None = None
        done = False
        usage: dict = {}
        model = ""
        try:
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue  # blank separators, `: comments`, `event:` and `id:` lines
                payload = line[5:].strip()
                if payload == "[DONE]":
                    done = True
                    break
                chunk = self._json_object(payload, "a streamed chunk")
                if isinstance(chunk.get("usage"), dict):
                    usage = chunk["usage"]
                model = str(chunk.get("model") or model)
                choices = chunk.get("choices")
                if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
                    continue  # e.g. the final usage-only chunk
                delta = choices[0].get("delta")
                piece = delta.get("content") if isinstance(delta, dict) else None
                finish = choices[0].get("finish_reason") or finish
                if isinstance(piece, str) and piece:
                    parts.append(piece)
                    size += len(piece)
                    if on_delta is not None:
                        result = on_delta("".join(parts))
                        if inspect.isawaitable(result):
                            await result
                    if size >= MAX_REPLY_CHARS:
                        finish = "length"
                        break
        except httpx.TimeoutException:
            raise self._error(f"the stream stalled for {self.settings.read_timeout:g} s (LLM_TIMEOUT)") from None
        except httpx.TransportError as exc:
            if not parts:
                raise _Retry(f"connection failed ({type(exc).__name__})") from None
            raise self._error(f"the stream broke off ({type(exc).__name__})") from None
        if not done and finish is None:
            raise self._error("the stream ended early (no finish_reason and no [DONE])")
        text = "".join(parts)[:MAX_REPLY_CHARS]
        if not text.strip():
            raise self._error("the reply is empty")
        return Completion(
            text=text, model=model, finish_reason=finish, streamed=True,
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            total_tokens=_int_or_none(usage.get("total_tokens")),
        )

    def _raise_if_error(self, data: dict) -> None:
        error = data.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else error
            text = " ".join(str(message).split())[:_ERROR_READ]
            raise self._error("the endpoint reported an error", text)

