"""Log filters: secrets never reach a log line."""

from __future__ import annotations

import logging
import re

# Discord bot tokens and OpenAI-style keys, even when they are not configured here.
_TOKEN_SHAPES = re.compile(r"\b[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}\b|\bsk-[A-Za-z0-9_-]{16,}\b")


class RedactSecrets(logging.Filter):
    """Replaces known secrets, and anything shaped like a token, with ***."""

    def __init__(self, secrets) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s and len(s) >= 4]

    def redact(self, text: str) -> str:
        for s in self._secrets:
            text = text.replace(s, "***")
        return _TOKEN_SHAPES.sub("***", text)

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
