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


def test_run_with_shards_starts_a_sharded_bot_for_the_shards_named(monkeypatch, capsys, tmp_path, bundled_store):
    import bot.app.client as client

    seed_store(bundled_store, tmp_path)
    made = []

    def recording(services, **kwargs):
        made.append(real(services, **kwargs))
        return made[-1]

    async def rejected(self, token):
        raise discord.LoginFailure("Improper token has been passed.")

    real = client.make_bot
    monkeypatch.setattr(client, "make_bot", recording)
    monkeypatch.setattr(discord.http.HTTPClient, "static_login", rejected)
    monkeypatch.setenv("DISCORD_TOKEN", FAKE_TOKEN)
    monkeypatch.setenv("DISCORD_SHARDS", "auto")  # the flags win over the settings
    assert main(["run", "--shards", "4", "--shard-ids", "3,1"]) == 2
    assert "Discord rejected DISCORD_TOKEN" in capsys.readouterr().err
    [bot] = made
    assert isinstance(bot, client.ShardedPaperBot) and isinstance(bot, discord.AutoShardedClient)
    assert (bot.shard_count, bot.shard_ids) == (4, [1, 3])
    monkeypatch.delenv("DISCORD_SHARDS")
    assert main(["run"]) == 2
    assert type(made[-1]) is client.PaperBot  # unsharded unless asked


@pytest.mark.parametrize(("argv", "expected"), [
    (["--shards", "2", "--shard-ids", "2"], "--shard-ids: shard numbers run from 0 to 1 with 2 shards, got 2"),
    (["--shard-ids", "0"], "--shard-ids: needs the total number of shards (--shards=N)"),
    (["--shards", "two"], "--shards: must be auto or a whole number of shards"),
    (["--shards", "2", "--shard-ids", "0;1"], "--shard-ids: must be a comma-separated list of shard numbers"),
])
def test_wrong_shard_options_are_one_line_usage_errors(capsys, argv, expected):
    assert main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
