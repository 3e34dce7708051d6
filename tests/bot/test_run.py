"""`paperbot run` before it reaches Discord: token problems become instructions, not tracebacks."""

from __future__ import annotations

import discord
import pytest

from bot.app import replies as messages
from bot.app.guard import token_problem
from bot.cli import main
from tests.conftest import seed_store

# Shaped like a bot token (base64 user id . timestamp . hmac), not a real one.
FAKE_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GabcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"


@pytest.mark.parametrize(("token", "expected"), [
    ("", messages.TOKEN_MISSING),
    ("123456789012345678", messages.TOKEN_MALFORMED),  # an application id
    ("not a token at all", messages.TOKEN_MALFORMED),
    (FAKE_TOKEN, None),
])
def test_token_problem(token, expected):
    assert token_problem(token) == expected


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "DISCORD_TOKEN is not set"),
    ({"DISCORD_TOKEN": "abc123"}, "does not look like a bot token"),
])
def test_run_without_a_usable_token_explains_how_to_create_and_invite_a_bot(monkeypatch, capsys, env, expected):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    code = main(["run"])
    err = capsys.readouterr().err
    assert code == 2
    assert expected in err and "discord.com/developers/applications" in err
    assert "Traceback" not in err
    if not env:
        assert "scope=bot+applications.commands" in err and "permissions=" in err


def test_run_with_a_rejected_token_says_so(monkeypatch, capsys, tmp_path, bundled_store):
    seed_store(bundled_store, tmp_path)  # a deployed bot's store: start-up has nothing to ingest
    async def rejected(self, token):
        raise discord.LoginFailure("Improper token has been passed.")

    monkeypatch.setattr(discord.http.HTTPClient, "static_login", rejected)
    monkeypatch.setenv("DISCORD_TOKEN", FAKE_TOKEN)
    code = main(["run"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Discord rejected DISCORD_TOKEN" in err and "Traceback" not in err
    assert FAKE_TOKEN not in err
