""".env.example and Settings.from_env agree: the example shows every variable, and its values are the defaults."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from paperbot.settings import (
    BUNDLED_CORPUS,
    DiscordSettings,
    EmbeddingSettings,
    LLMSettings,
    RetrievalSettings,
    Settings,
    StoreSettings,
    child_environment,
    default_cache_dir,
    default_data_dir,
    url_passwords,
)
from paperbot.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent
# OpenAI-style aliases of LLM_BASE_URL and LLM_API_KEY: named in the example's comments, not given lines of their own.
ALIASES = {"OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"}
# Read by the entry point before settings are built (bot/cli.py loads the .env file it names).
READ_BEFORE_SETTINGS = {"PAPERBOT_ENV_FILE"}


def example_text() -> str:
    return (REPO / ".env.example").read_text(encoding="utf-8")


# A documented setting: `NAME=value`, or `# NAME=value` for one the Docker image sets and .env must not undo.
SETTING_LINE = r"^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$"


def example_values() -> dict[str, str]:
    """Every NAME=value line of .env.example, commented out or not; other comments and blank lines are skipped."""
    return {m[1]: m[2].strip() for m in re.finditer(SETTING_LINE, example_text(), flags=re.M)}


def env_file_values() -> dict[str, str]:
    """What a .env copied from .env.example sets, read as paperbot reads it (python-dotenv)."""
    from dotenv import dotenv_values

    return {k: v or "" for k, v in dotenv_values(REPO / ".env.example").items()}


def image_env() -> dict[str, str]:
    """The ENV of the Dockerfile's last stage, with its build args at their defaults."""
    text = re.sub(r"\\\n\s*", " ", (REPO / "Dockerfile").read_text(encoding="utf-8"))
    stage = text[text.rindex("\nFROM "):]
    args = dict(re.findall(r"^ARG (\w+)=(\S*)", stage, flags=re.M))
    env: dict[str, str] = {}
    for line in re.findall(r"^ENV (.+)$", stage, flags=re.M):
        for name, value in re.findall(r"(\w+)=(\S+)", line):
            env[name] = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], value)
    return env


class RecordingEnv(Mapping[str, str]):
    """A mapping that remembers every name looked up, found or not."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.read.add(name)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def names_read_by_from_env() -> set[str]:
    """The variables from_env looks up, with nothing set and with the example's values set."""
    read = set()
    for values in ({}, example_values()):
        env = RecordingEnv(values)
        Settings.from_env(env)
        read |= env.read
    return read


def test_example_parses_and_has_no_duplicates():
    names = [m[0] for m in re.findall(SETTING_LINE, example_text(), flags=re.M)]
    assert names and len(names) == len(set(names))


def test_copying_the_example_to_env_changes_no_default():
    values = env_file_values()
    assert values, ".env.example sets nothing"
    assert Settings.from_env(values) == Settings.from_env({})


def test_an_env_file_copied_from_the_example_leaves_the_image_settings_alone():
    """compose's env_file and `docker run --env-file` put every line over the image's ENV."""
    image = image_env()
    assert image["CHROMA_PATH"] == "/data/chroma" and image["PAPERBOT_CACHE_DIR"] == "/opt/paperbot-cache"
    assert Settings.from_env(image | env_file_values()) == Settings.from_env(image)


@pytest.mark.parametrize("name", ["CHROMA_PATH", "PAPERBOT_CACHE_DIR", "PAPERBOT_LOG_DIR", "EMBEDDING_CACHE_DIR",
                                  "PAPERBOT_CORPUS", "PAPERBOT_HEARTBEAT_FILE", "CHROMA_HOST", "LLM_BASE_URL"])
def test_an_empty_value_means_unset(name):
    assert Settings.from_env({name: ""}) == Settings.from_env({name: "  "}) == Settings.from_env({})


@pytest.mark.parametrize("name, value", sorted((n, v) for n, v in example_values().items() if v))
def test_example_value_is_the_default(name, value):
    assert Settings.from_env({name: value}) == Settings.from_env({}), f"{name}={value} in .env.example is not the default"


def test_every_variable_read_is_in_the_example():
    read, values = names_read_by_from_env(), example_values()
    missing = sorted(read - set(values) - ALIASES)
    assert not missing, f"read by Settings.from_env but not in .env.example: {missing}"
    unmentioned = sorted(name for name in ALIASES & read if name not in example_text())
    assert not unmentioned, f"aliases not mentioned in .env.example: {unmentioned}"


def test_every_variable_in_the_example_is_read():
    unread = sorted(set(example_values()) - names_read_by_from_env() - READ_BEFORE_SETTINGS)
    assert not unread, f"in .env.example but never read: {unread}"


def test_defaults_are_the_dataclass_defaults():
    s = Settings.from_env({})
    assert s.store == StoreSettings(path=default_data_dir() / "chroma")
    assert s.embedding == EmbeddingSettings(cache_dir=default_cache_dir())
    assert s.retrieval == RetrievalSettings()
    assert s.discord == DiscordSettings()
    assert s.llm == LLMSettings()
    assert (s.corpus, s.cache_dir, s.log_dir, s.log_level) == ((BUNDLED_CORPUS,), default_cache_dir(), None, "INFO")


def test_bundled_corpus_is_package_data():
    import paperbot

    assert BUNDLED_CORPUS.parent == Path(paperbot.__file__).resolve().parent
    files = sorted(p.name for p in BUNDLED_CORPUS.iterdir())
    assert files, "the bundled corpus is empty"
    tomllib = pytest.importorskip("tomllib")
    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    shipped = [f for f in files if any(fnmatch.fnmatch(f"corpus/{f}", g) for g in globs["paperbot"])]
    assert shipped == files, "pyproject.toml [tool.setuptools.package-data] leaves corpus files out of the wheel"


# -- bounds and shapes of values ------------------------------------------------------------------

from paperbot.errors import ConfigError  # noqa: E402
from paperbot.settings import load_env_file  # noqa: E402


@pytest.mark.parametrize("variable, value, allowed", [
    ("CHROMA_TIMEOUT", "inf", "finite number (between 0.1 and 600.0)"),
    ("CHROMA_TIMEOUT", "1e30", "between 0.1 and 600.0"),
    ("LLM_TIMEOUT", "inf", "finite number"),
    ("LLM_TIMEOUT", "1e30", "between 0.1 and 600.0"),
    ("LLM_CONNECT_TIMEOUT", "-inf", "finite number"),
    ("LLM_COOLDOWN", "1e30", "between 0.0 and 86400.0"),
    ("DISCORD_RATE_WINDOW", "inf", "finite number"),
    ("DISCORD_GUILD_ID", "-5", "between 1 and"),
    ("DISCORD_GUILD_ID", str(2**64), "between 1 and"),
    ("DISCORD_GUILD_ALLOWLIST", "12, -5", "whole numbers from 1 to"),
    ("DISCORD_GUILD_ALLOWLIST", "0", "whole numbers from 1 to"),
    ("LLM_BASE_URL", "http://exa mple.com/v1", "without spaces"),
    ("LLM_BASE_URL", "http://localhost:99999/v1", "port from 1 to 65535"),
    ("LLM_BASE_URL", "http://:8000/v1", "http(s) URL"),
    ("CHROMA_HOST", "localhost:8000", "the port goes in CHROMA_PORT"),
    ("CHROMA_HOST", "chroma server", "host name"),
    ("CHROMA_HOST", "http://chroma:8000/api/v2", "without a path"),
    ("CHROMA_HOST", "http://chroma:70000", "port from 1 to 65535"),
])
def test_out_of_bounds_values_are_refused_naming_the_variable(tmp_path, variable, value, allowed):
    env = {"CHROMA_PATH": str(tmp_path), variable: value}
    if variable.startswith("LLM_"):
        env.setdefault("LLM_BASE_URL", "http://localhost:11434/v1")
        env["LLM_MODEL"] = "m"
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    assert err.value.variable == variable and allowed in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("host, port, ssl", [("http://localhost:8000", 8000, False),
                                             ("https://chroma.lab:9443", 9443, True),
                                             ("https://chroma.lab", 8000, True), ("chroma.lab", 8000, False),
                                             ("::1", 8000, False)])
def test_chroma_host_given_as_a_url_is_read_as_host_port_and_scheme(tmp_path, host, port, ssl):
    store = Settings.from_env({"CHROMA_PATH": str(tmp_path), "CHROMA_HOST": host}).store
    assert (store.port, store.ssl) == (port, ssl) and "/" not in store.host and store.host
    explicit = Settings.from_env({"CHROMA_HOST": host, "CHROMA_PORT": "7000", "CHROMA_SSL": "false"}).store
    assert (explicit.port, explicit.ssl) == (7000, False)


def test_env_file_missing_is_noted_not_a_crash_and_none_reads_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_env_file({"PAPERBOT_ENV_FILE": str(tmp_path / "gone.env")}) == (
        None, f"PAPERBOT_ENV_FILE={tmp_path / 'gone.env'} does not exist; settings come from the environment alone")
    (tmp_path / ".env").write_text("PAPERBOT_TEST_SETTING=from-dotenv\n", encoding="utf-8")
    assert load_env_file({"PAPERBOT_ENV_FILE": "none"}) == (None, "")
    monkeypatch.delenv("PAPERBOT_TEST_SETTING", raising=False)
    assert load_env_file({}) == (tmp_path / ".env", "")
    import os

    assert os.environ["PAPERBOT_TEST_SETTING"] == "from-dotenv"
    monkeypatch.delenv("PAPERBOT_TEST_SETTING")


def test_env_file_that_is_not_utf8_is_one_line(tmp_path):
    bad = tmp_path / "latin1.env"
    bad.write_bytes("DISCORD_ADMIN_ROLE=Café\n".encode("latin-1"))
    with pytest.raises(ConfigError) as err:
        load_env_file({"PAPERBOT_ENV_FILE": str(bad)})
    assert str(err.value) == f"PAPERBOT_ENV_FILE: {bad} is not UTF-8 (byte 0xe9 on line 1); re-save it as UTF-8"


def test_cli_exits_2_with_one_line_for_a_non_utf8_env_file(tmp_path):
    import os
    import subprocess
    import sys

    bad = tmp_path / "latin1.env"
    bad.write_bytes("DISCORD_ADMIN_ROLE=Café\n".encode("latin-1"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_", "DISCORD_", "LLM_"))}
    env.update(PAPERBOT_ENV_FILE=str(bad), CHROMA_PATH=str(tmp_path / "c"), PAPERBOT_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "doctor"], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"paperbot: configuration error: PAPERBOT_ENV_FILE: {bad} is not "
                                                "UTF-8 (byte 0xe9 on line 1); re-save it as UTF-8"]


def test_doctor_does_not_advise_a_rebuild_for_a_read_only_store():
    from bot.doctor import REBUILD, _store_checks

    report = {"kind": "error", "error": "attempt to write a readonly database"}
    [check] = _store_checks(report, "the store at /data/chroma", "m")
    assert not check.ok and "cannot be written" in check.detail and REBUILD not in check.hint
    assert "write access to CHROMA_PATH" in check.hint
    [damaged] = _store_checks({"kind": "error", "error": "database disk image is malformed"}, "the store", "m")
    assert REBUILD in damaged.hint


def test_a_child_process_environment_keeps_everything_but_secrets():
    from paperbot.settings import child_environment

    env = child_environment({"PATH": "/usr/bin", "HOME": "/home/lab", "CHROMA_PATH": "/data/chroma",
                             "DISCORD_TOKEN": "t", "LLM_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_API_KEY": "k",
                             "HF_TOKEN": "h", "CHROMA_AUTH_TOKEN": "c", "aws_secret_access_key": "s",
                             "PGPASSWORD": "p", "PAPERBOT_DATABASE_URL": "postgresql://u:p@h/db"})
    assert env == {"PATH": "/usr/bin", "HOME": "/home/lab", "CHROMA_PATH": "/data/chroma"}


def test_store_settings_cross_to_a_child_process_and_back_whole():
    from pathlib import Path

    from paperbot.settings import Secret, StoreSettings

    for s in (StoreSettings(path=Path("/data/chroma")),
              StoreSettings(path=Path("/x"), host="chroma.lab", port=8443, ssl=True, auth_token=Secret("tok-123"),
                            collection="neurips", timeout=3.5, child=False)):
        wire = json.loads(json.dumps(s.to_wire()))
        assert StoreSettings.from_wire(wire) == s


def test_shards_and_shard_ids_are_read_and_checked():
    assert _shards({}) == (False, None, ())
    assert _shards({"DISCORD_SHARDS": "auto"}) == (True, None, ())
    assert _shards({"DISCORD_SHARDS": "4", "DISCORD_SHARD_IDS": "3, 1,1"}) == (True, 4, (1, 3))
    for env, problem in [({"DISCORD_SHARDS": "0"}, "DISCORD_SHARDS: must be auto or a whole number"),
                         ({"DISCORD_SHARD_IDS": "0"}, "DISCORD_SHARD_IDS: needs the total number of shards"),
                         ({"DISCORD_SHARDS": "2", "DISCORD_SHARD_IDS": "-1"}, "DISCORD_SHARD_IDS: must be a comma"),
                         ({"DISCORD_SHARDS": "2", "DISCORD_SHARD_IDS": "5"}, "from 0 to 1 with 2 shards, got 5")]:
        with pytest.raises(ConfigError, match=re.escape(problem)):
            Settings.from_env(env)


def _shards(env: dict[str, str]) -> tuple:
    d = Settings.from_env(env).discord
    return d.sharded, d.shard_count, d.shard_ids


def test_a_postgresql_users_database_is_a_secret_url_and_other_schemes_are_refused(tmp_path):
    url = "postgresql://bot:s3cr3t-pw@db:5432/paperbot"
    s = Settings.from_env({"PAPERBOT_USER_DB": url, "CHROMA_PATH": str(tmp_path)})
    assert s.user_db_target == url and s.user_db is None
    assert "s3cr3t-pw" not in repr(s)
    assert url_passwords(url) == ["s3cr3t-pw", "s3cr3t-pw"] and url_passwords("postgresql://db/x") == []
    assert "PAPERBOT_USER_DB" not in child_environment({"PAPERBOT_USER_DB": url, "HOME": "/h"})
    assert Settings.from_env({"PAPERBOT_USER_DB": str(tmp_path / "u.db")}).user_db_target == tmp_path / "u.db"
    with pytest.raises(ConfigError, match=re.escape("PAPERBOT_USER_DB: must be a file path or a postgresql:// URL")):
        Settings.from_env({"PAPERBOT_USER_DB": "mysql://db/x"})


@pytest.mark.parametrize("env", [
    {"LLM_BASE_URL": "http://user:sk-SECRET1@127.0.0.1:9/v1 x"},
    {"LLM_BASE_URL": "http://127.0.0.1:9/v1 ?key=sk-SECRET1"},
    {"CHROMA_HOST": "http://u:SECRET1@host:99999"},
    {"CHROMA_HOST": "http://host:8000/x?token=SECRET1"},
])
def test_a_refused_url_is_shown_without_its_password_or_query(env):
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    assert "SECRET1" not in str(err.value) and "…" in str(err.value)
    if "CHROMA_HOST" in env:
        assert "11434" not in str(err.value)  # the example is a Chroma server's, not the LLM's


@pytest.mark.parametrize("name", ["LLM_API_KEY", "OPENAI_API_KEY", "CHROMA_AUTH_TOKEN"])
@pytest.mark.parametrize("value", ["sk-abc€", "“sk-abc”", "sk abc", "sk-\u00a0abc"])
def test_a_credential_an_http_header_cannot_carry_is_refused_without_showing_it(name, value):
    with pytest.raises(ConfigError) as err:
        Settings.from_env({name: value})
    shown = "LLM_API_KEY" if name == "OPENAI_API_KEY" else name
    assert str(err.value).startswith(f"{shown}: holds a character an HTTP header cannot carry")
    assert "sk" not in str(err.value).split("carry", 1)[1]
