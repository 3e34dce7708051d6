"""`paperbot doctor`: check a deployment and say, one line per check, what is wrong and how to fix it.

    ✓ configuration      the settings parsed (the CLI reports invalid ones before we get here)
    ✓ embedding model    loads from local files only and encodes a sentence
    ✓ store              opens, was built with the configured model, and its vector index reads
                         every chunk back and finds a sample of them
    ✓ contents           papers and chunks, every paper complete
    ✓ keyword index      built from the store, covering every chunk at a stable content version
    ✓ serving view       the view saved beside the store (retrieval/view.py) is this content version's and
                         equals the one just built; ! (a warning) when it is missing, stale or damaged: the
                         next start rebuilds it
    ✓ LLM endpoint       answers GET {base}/models and lists its models (when LLM_BASE_URL is set);
                         ! (a warning, not a failure) when LLM_MODEL is not among them: many servers
                         (llama-server) answer under any name
    ✓ users file         saved papers and watches (SQLite beside the store): intact, a schema this version
                         knows (read-only; not there yet is fine: the bot makes it)
    ✓ Discord token      has the shape of a bot token (never printed)

The store is opened in a child process (``python -m bot.doctor --probe-store``),
so a crash or a hang in Chroma's native code becomes a ✗ line instead of taking
the caller down. Exit code 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.app.guard import bot_token, token_problem
from paperbot.errors import PaperbotError
from paperbot.messages import count
from paperbot.logs import public_url
from paperbot.settings import Settings, child_environment
from retrieval.integrity import inspect_store

log = logging.getLogger(__name__)

OK, FAIL, WARN = "✓", "✗", "!"
PROBE_MIN_TIMEOUT = 30.0  # seconds the store check may go without progress (a cold start imports chromadb)
LLM_CHECK_TIMEOUT = 5.0
REBUILD = "move it aside and run `paperbot ingest` to rebuild it"
_READ_ONLY = re.compile(r"read-?only|permission denied|operation not permitted|errno 1[3]\b|EROFS|EACCES",
                        re.IGNORECASE)
# The folder holding the project's packages, for the probe's child process (a source checkout or site-packages).
PACKAGES_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    hint: str = ""
    warning: bool = False  # passes, but worth a look (shown with "!" and its hint)

    def line(self) -> str:
        mark = FAIL if not self.ok else WARN if self.warning else OK
        text = f"{mark} {self.name}: {self.detail}"
        return f"{text} → {self.hint}" if self.hint and (not self.ok or self.warning) else text


def run_doctor(settings: Settings, *, embedder=None, out: Callable[[str], None] | None = None) -> int:
    """Run every check, print one line each; 0 when all pass. `embedder` may be an already loaded one."""
    say = out or (lambda line: print(line, flush=True))
    checks = [check_configuration(settings)]
    say(checks[-1].line())
    model_check, embedder = check_model(settings, embedder)
    checks.append(model_check)
    say(model_check.line())
    for c in check_store(settings, embedder if model_check.ok else None):
        checks.append(c)
        say(c.line())
    for c in (check_llm(settings), check_users(settings), check_token(settings)):
        checks.append(c)
        say(c.line())
    running = check_running_bot(settings)
    if running is not None:
        checks.append(running)
        say(running.line())
    failed = [c.name for c in checks if not c.ok]
    say(f"{len(checks) - len(failed)} of {len(checks)} checks passed"
        + (f"; fix: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


# -- a running bot ---------------------------------------------------------------------------


def check_running_bot(settings: Settings) -> Check | None:
    """What the heartbeat of a bot running now says (its store's child restarting, how often it was); None
    when no bot has written a fresh one."""
    from bot.health import problem, read_beat

    path = settings.heartbeat_path
    if problem(path) is not None:
        return None
    beat = read_beat(path)
    where = f"running (pid {beat.pid}, {beat.state})"
    if beat.store == "restarting":
        return Check("bot", True, f"{where}; its store's child process died and is being started again",
                     f"see {settings.store.path / 'paperbot-chroma.previous.log'}", warning=True)
    if beat.store_restarts:
        return Check("bot", True, f"{where}; its store's child process was started again {beat.store_restarts} "
                     "times", f"see {settings.store.path / 'paperbot-chroma.previous.log'}", warning=True)
    return Check("bot", True, where)


# -- configuration and model ----------------------------------------------------------------


def check_configuration(settings: Settings) -> Check:
    s = settings.store
    where = f"Chroma server {s.host}:{s.port}" if s.is_server else f"embedded store at {s.path}"
    missing = [str(p) for p in settings.corpus if not p.exists()]
    detail = f"valid ({where}, collection {s.collection!r}, model {settings.embedding.model!r})"
    if missing:
        return Check("configuration", False, f"corpus not found: {', '.join(missing)}",
                     "set PAPERBOT_CORPUS to your abstract files or folders")
    if settings.env_note:
        return Check("configuration", True, f"{detail}; {settings.env_note}",
                     "fix PAPERBOT_ENV_FILE, or set it to none to read no file", warning=True)
    return Check("configuration", True, detail)


def check_model(settings: Settings, embedder=None):
    """(check, embedder): the model must load from local files and encode a sentence."""
    start = time.perf_counter()
    try:
        if embedder is None:
            from ingest.embed import Embedder

            embedder = Embedder(settings.embedding)
        embedder.encode(["does the embedding model load?"])
        dim = embedder.dimension
    except PaperbotError as exc:
        return Check("embedding model", False, str(exc),
                     "unset EMBEDDING_MODEL to use the bundled model, or point it at a local folder"), None
    except Exception as exc:  # a broken model folder raises anything
        log.debug("model check failed", exc_info=True)
        return Check("embedding model", False, f"{settings.embedding.model!r} failed: {type(exc).__name__}: {exc}",
                     "unset EMBEDDING_MODEL to use the bundled model"), None
    took = time.perf_counter() - start
    return Check("embedding model", True, f"{embedder.name!r} loads offline ({dim} dimensions, on {embedder.device}, "
                 f"{took:.1f} s)"), embedder


# -- the store, checked in a child process ----------------------------------------------------


def check_store(settings: Settings, embedder) -> list[Check]:
    """Store, contents and keyword-index lines, from a probe that runs in a child process."""
    if embedder is None:
        return [Check("store", False, "not checked: the embedding model did not load",
                      "fix the embedding model first")]
    s = settings.store
    from retrieval.view import view_file

    saved = view_file(s, settings.cache_dir)
    request = {"store": s.to_wire(), "model": embedder.name, "dimension": embedder.dimension,
               "view_file": str(saved)}
    timeout = max(PROBE_MIN_TIMEOUT, 3 * s.timeout)
    where = f"Chroma server {s.host}:{s.port}" if s.is_server else f"the store at {s.path}"
    returncode, last, stderr = run_probe(request, timeout)
    if returncode is None:
        return [Check("store", False, f"the check of {where} made no progress for {timeout:g} s ({last or 'opening'})",
                      "is the disk or the server stuck? If the store is damaged, " + REBUILD)]
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:
            sig = f"signal {-returncode}"
        return [Check("store", False, f"the check of {where} crashed the checking process ({sig}"
                      f"{', ' + last if last else ''})", "the store is probably damaged: " + REBUILD)]
    try:
        report = json.loads(last)
    except ValueError:
        report = None
    if not isinstance(report, dict) or "kind" not in report:  # no report: the probe failed before the end
        log.debug("store probe exited %s: %s", returncode, stderr[-2000:])
        return [Check("store", False, f"the check of {where} failed (exit code {returncode})",
                      "see the log; if the store is damaged, " + REBUILD)]
    return _store_checks(report, where, embedder.name)


def run_probe(request: dict, stall: float) -> tuple[int | None, str, str]:
    """Run the store probe; stop it when it prints nothing for `stall` seconds.

    The probe prints a progress line now and then (a 20,000-paper store takes about a minute
    to read), so only a stuck probe runs out of time. Returns (exit code, or None when it was
    stopped; its last line, or the last step it reported when stopped; its stderr).
    """
    try:
        err = tempfile.TemporaryFile("w+")
    except OSError:  # no writable temporary folder (--read-only without a tmpfs): the probe's stderr is lost
        err = open(os.devnull, "w+")  # noqa: SIM115 - closed by the with below
    with err:
        proc = subprocess.Popen(probe_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                text=True, env=_child_env(), cwd=str(PACKAGES_ROOT))
        lines: queue.Queue[str | None] = queue.Queue()
        stdin, stdout = proc.stdin, proc.stdout
        if stdin is None or stdout is None:  # both are pipes: Popen was asked for them
            raise RuntimeError("the probe's pipes were not opened")

        def read() -> None:
            for line in stdout:
                lines.put(line.strip())
            lines.put(None)

        threading.Thread(target=read, daemon=True, name="doctor-probe").start()
        try:
            stdin.write(json.dumps(request))
            stdin.close()
        except OSError:  # the probe is gone already; its exit code says why
            pass
        last, step = "", ""
        while True:
            try:
                line = lines.get(timeout=stall)
            except queue.Empty:
                proc.kill()
                proc.wait()
                return None, step, ""
            if line is None:
                break
            if line:
                last = line
                step = _progress_of(line) or step
        proc.wait()
        err.seek(0)
        return proc.returncode, (step if _progress_of(last) else last), err.read()


def _progress_of(line: str) -> str:
    """The step a progress line reports, or "" for any other line."""
    try:
        return str(json.loads(line).get("progress", ""))
    except (ValueError, AttributeError):
        return ""


def probe_command() -> list[str]:
    return [sys.executable, "-m", "bot.doctor", "--probe-store"]


def _child_env() -> dict[str, str]:
    """The probe's environment: the bot's without its secrets (paperbot.settings.child_environment); the store's
    credentials reach it on its stdin."""
    env = child_environment()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGES_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def _store_checks(r: dict, where: str, model: str) -> list[Check]:
    kind = r.get("kind")
    if kind == "missing":
        return [Check("store", False, f"there is no store yet at {where.removeprefix('the store at ')}"
                      if "server" not in where else f"{where} has no collection {r.get('collection')!r}",
                      "run `paperbot ingest`")]
    if kind == "unusable":
        return [Check("store", False, r["error"], "set CHROMA_PATH to a folder paperbot may create and write")]
    if kind == "mismatch":
        return [Check("store", False, r["error"], "use the same EMBEDDING_MODEL, or re-ingest into another "
                      "CHROMA_COLLECTION")]
    if kind == "locked":
        return [Check("store", False, f"{where} is in use by another process (the bot?)",
                      "stop it to check an embedded store, or run a Chroma server and set CHROMA_HOST")]
    if kind == "unavailable":
        return [Check("store", False, r["error"], "start the server, or fix CHROMA_HOST/CHROMA_PORT/CHROMA_SSL")]
    if kind and _READ_ONLY.search(str(r.get("error", ""))):  # not damaged: the folder or its files are read-only
        return [Check("store", False, f"{where} cannot be written ({r['error'].split('. If it is damaged', 1)[0]})",
                      "give the bot's user write access to CHROMA_PATH (a read-only mount or file?); "
                      "do not rebuild: the store is not damaged")]
    if kind:
        detail = r["error"].split(". If it is damaged", 1)[0]
        return [Check("store", False, detail, "if it is damaged, " + REBUILD)]
    if r["vector_problem"]:
        return [Check("store", False, f"{where} has a damaged vector index: {r['vector_problem']}", REBUILD)]
    checks = [Check("store", True, f"{where} opens; built with {model!r} ({r['dimension']} dimensions)")]
    papers, chunks, incomplete = r["papers"], r["chunks"], r["incomplete"]
    if chunks == 0:
        checks.append(Check("contents", False, "the store holds no papers", "run `paperbot ingest`"))
    elif incomplete:
        have = "has" if len(incomplete) == 1 else "have"
        checks.append(Check("contents", False, f"{count(papers, 'paper')}, {count(chunks, 'chunk')}; "
                            f"{count(len(incomplete), 'paper')} {have} missing chunks (an ingest was interrupted), "
                            f"e.g. {', '.join(incomplete[:3])}", "run `paperbot ingest` again to finish it"))
    else:
        checks.append(Check("contents", True, f"{count(papers, 'paper')}, {count(chunks, 'chunk')}"))
    if r["indexed"] == chunks and r["version_stable"]:
        checks.append(Check("keyword index", True, f"in sync with the store (content version {r['version']}, "
                            f"{count(r['indexed'], 'chunk')} indexed)"))
    else:
        checks.append(Check("keyword index", False, f"{count(r['indexed'], 'chunk')} indexed of {chunks}; content "
                            f"version {'stable' if r['version_stable'] else 'changed during the check'}",
                            "an ingest may be running; check again when it has finished"))
    saved = r.get("view")
    if saved and chunks:
        if saved["state"] == "current":
            checks.append(Check("serving view", True, f"saved at {saved['path']}, current "
                                f"({count(saved['papers'], 'paper')}; a start reads it instead of rebuilding)"))
        elif saved["state"] == "different":
            checks.append(Check("serving view", False, f"saved at {saved['path']} for this content version, but it "
                                f"differs from the store ({saved['problem']})",
                                f"delete {saved['path']}; the next start rebuilds it"))
        else:
            checks.append(Check("serving view", True, f"{saved['path']}: {saved['problem']}",
                                "the next start builds it from the store and saves it (once)", warning=True))
    return checks


# -- LLM endpoint and Discord token ---------------------------------------------------------------


def check_llm(settings: Settings) -> Check:
    cfg = settings.llm
    if not cfg.enabled:
        return Check("LLM endpoint", True, "not configured (answers are the verbatim best sentences)")
    import httpx


    models_url = cfg.models_url
    shown = public_url(models_url)
    headers = {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}
    timeout = httpx.Timeout(min(LLM_CHECK_TIMEOUT, cfg.read_timeout), connect=min(cfg.connect_timeout,
                                                                                   LLM_CHECK_TIMEOUT))
    try:
        resp = httpx.get(models_url, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        return Check("LLM endpoint", False, f"{shown} did not answer within {timeout.read:g} s",
                     "is the server up and LLM_BASE_URL right?")
    except httpx.HTTPError as exc:
        return Check("LLM endpoint", False, f"cannot reach {shown} ({type(exc).__name__})",
                     "start the server, or fix LLM_BASE_URL")
    if resp.status_code in (401, 403):
        return Check("LLM endpoint", False, f"{shown} refused the credentials (HTTP {resp.status_code})",
                     "check LLM_API_KEY")
    if resp.status_code != 200:
        return Check("LLM endpoint", False, f"{shown} answered HTTP {resp.status_code}",
                     "LLM_BASE_URL should be the OpenAI-compatible base, e.g. http://localhost:11434/v1")
    try:
        ids = [m.get("id") for m in resp.json().get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError):
        ids = []
    served = ", ".join(map(str, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    if ids and cfg.model not in ids:
        return Check("LLM endpoint", True, f"{shown} answers and serves {served}; LLM_MODEL={cfg.model!r} is not "
                     "among them", "servers such as llama-server answer under any name; others refuse it "
                     "(HTTP 404): if answers fall back, set LLM_MODEL to one of those", warning=True)
    listed = f"; it serves {served}" if ids else ""
    return Check("LLM endpoint", True, f"{public_url(cfg.base_url or '')} answers; model {cfg.model!r}{listed}")


def check_users(settings: Settings) -> Check:
    from paperbot.userdata import inspect

    target = settings.user_db_target
    name = "users database" if isinstance(target, str) else "users file"
    if isinstance(target, Path) and not target.exists():
        return Check(name, True, f"{target} not created yet (the bot makes it when it starts)")
    try:
        found = inspect(target)
    except PaperbotError as exc:
        fix = ("check that PostgreSQL runs and PAPERBOT_USER_DB's URL (user, password, host, database) is right"
               if isinstance(target, str) else "restore it from a backup, or move it aside (saved papers and "
               "watches are lost) and restart the bot; PAPERBOT_USER_DB chooses another file")
        return Check(name, False, str(exc), fix)
    if found.version < 1:
        return Check(name, True, f"{found.where}: reachable, no paperbot tables yet (the bot makes them when it "
                     f"starts; {found.journal})")
    return Check(name, True, f"{found.where}: schema {found.version}, {count(found.users, 'user')}, "
                 f"{count(found.saved, 'saved paper')}, {count(found.watches, 'watch', 'watches')} ({found.journal})")


def check_token(settings: Settings) -> Check:
    """The token's shape only; the token itself never reaches output or logs."""
    token = bot_token(str(settings.discord.token))
    if not token:
        return Check("Discord token", False, "DISCORD_TOKEN is not set (needed for `paperbot run`)",
                     "see docs/discord.md to create a bot and copy its token")
    if token_problem(token):
        return Check("Discord token", False, f"DISCORD_TOKEN is not shaped like a bot token ({len(token)} "
                     "characters)", "copy it again from the developer portal → Bot → Reset Token")
    return Check("Discord token", True, "well-formed (whether Discord accepts it shows at `paperbot run`)")


def _probe_main() -> int:
    request = json.loads(sys.stdin.read())
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    def progress(step: str) -> None:
        print(json.dumps({"progress": step}), flush=True)

    print(json.dumps(inspect_store(request, progress)), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe-store"]:
        sys.exit(_probe_main())
    sys.exit("usage: python -m bot.doctor --probe-store  (run `paperbot doctor` instead)")
