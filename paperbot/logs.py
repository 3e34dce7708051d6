"""Secrets never reach a log line or a user: one redaction used by the log filter and by error messages."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

REDACTED = "***"

# Credential-looking strings, even when they are not configured here: Discord bot tokens, OpenAI-style keys
# (sk-…, sk-proj-…), GitHub/Slack/AWS/Google keys, JWTs, "Bearer …"/"Basic …" credentials, and the value
# after key=, api_key:, token=, password=, secret= …
_TOKEN_SHAPES = re.compile(
    r"\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}\b"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"
    r"|\b(?:ghp|gho|ghu|ghs|ghr|github_pat|xox[abpors]|hf)_[A-Za-z0-9_-]{8,}"
    r"|\bxox[abpors]-[A-Za-z0-9-]{8,}"
    r"|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{20,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
)
_CREDENTIAL = re.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{4,}", re.I)
_KEY_VALUE = re.compile(
    r"""((?:["']?)\b(?:[a-z0-9]*[_-])?(?:api[_-]?key|apikey|key|token|access[_-]?token|secret|password|passwd|"""
    r"""auth|authorization|credentials?)["']?\s*[:=]\s*["']?)(?!\*\*\*|Bearer\b|Basic\b|Token\b)([^\s"',;&}]{4,})""", re.I)
# user:password@ after "//"; the password may hold a raw "/" or "@" (up to the last "@" of the URL: a path with
# one loses its host in the log, never a password its end)
_URL_USERINFO = re.compile(r"(//)[^/@\s:]+:\S*@")


def public_url(url: str) -> str:
    """A URL without credentials or query string (where keys hide), fit for logs and error messages."""
    return re.sub(r"//[^?#]*@", "//", url.split("?", 1)[0].split("#", 1)[0])


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each of `secrets` (≥ 4 characters) and anything shaped like a credential replaced by ***."""
    for s in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(str(s), REDACTED)
    text = _CREDENTIAL.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _KEY_VALUE.sub(lambda m: m.group(1) + REDACTED, text)
    text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)
    return _TOKEN_SHAPES.sub(REDACTED, text)


_SCHEME_CREDENTIAL = re.compile(r"\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}")


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`redact` for prose a user reads (a model's answer): each of `secrets` whatever its shape, and strings
    shaped like credentials, but not the loose key=value and "token …" patterns that plain prose matches
    ("categorical token policies")."""
    for s in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(str(s), REDACTED)
    text = _SCHEME_CREDENTIAL.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)
    return _TOKEN_SHAPES.sub(REDACTED, text)


class RedactSecrets(logging.Filter):
    """Replaces known secrets, and anything shaped like a credential, with ***."""

    def __init__(self, secrets) -> None:
        super().__init__()
        self._secrets = [str(s) for s in secrets if s and len(s) >= 4]

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        clean = self.redact(message)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        return True
