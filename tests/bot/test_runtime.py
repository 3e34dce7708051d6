"""The builder and the seams around it: services opened and closed in one place, nothing hidden."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from bot.app import client
from bot.app.client import PaperBot
from bot.harness import Harness
from bot.runtime import Services, open_services
from paperbot.records import Paper
from tests.conftest import REPO, make_settings
from tests.llm_server import Endpoint

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@pytest.mark.anyio
async def test_services_without_an_llm_have_none(tmp_path, stub_library):
    settings = make_settings(tmp_path)
    async with open_services(settings, library=stub_library) as services:
        assert services.library is stub_library and services.llm is None


@pytest.mark.anyio
async def test_services_with_an_llm_share_one_http_client_closed_on_exit(tmp_path, stub_library):
    with Endpoint() as llm:
        settings = make_settings(tmp_path, LLM_BASE_URL=llm.base_url, LLM_MODEL="m")
        async with open_services(settings, library=stub_library) as services:
            assert services.llm is not None and services.llm.model == "m"
            http = services.llm._http
            assert not http.is_closed
        assert http.is_closed
        async with open_services(settings, library=stub_library, use_llm=False) as services:
            assert services.llm is None


@pytest.mark.anyio
async def test_autocomplete_notices_papers_ingested_by_another_process(tmp_path, stub_library, monkeypatch):
    monkeypatch.setattr(client, "PAPERS_RECHECK", 0.0)
    bot = PaperBot(Services(make_settings(tmp_path), stub_library))
    async with Harness(bot) as h:
        before = await h.autocomplete("paper", "paper", "quokka")
        stub_library.records.append(Paper(paper_id="q1", source="new.txt", position=1, label="Quokka",
                                          abstract="Quokkas are studied here."))
        stub_library.version = "v2"  # what a separate `paperbot ingest` does to the store
        after = await h.autocomplete("paper", "paper", "quokka")
    assert before.calls[0].json["data"]["choices"] == []
    assert [c["value"] for c in after.calls[0].json["data"]["choices"]] == ["q1"]


def test_loading_the_model_leaves_the_process_environment_alone():
    code = ("import os, json\n"
            "from ingest.embed import Embedder\nfrom paperbot.settings import EmbeddingSettings\n"
            "Embedder(EmbeddingSettings.from_env()).encode(['x'])\n"
            f"print(json.dumps([os.environ.get(name) for name in {OFFLINE_VARIABLES!r}]))")
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_VARIABLES}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                         check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [None, None]


@pytest.mark.anyio
async def test_lookups_are_answered_from_the_current_list_while_a_slow_reload_runs(tmp_path, stub_library,
                                                                                   monkeypatch):
    """After a change the view is rebuilt (seconds at conference scale): autocomplete must not wait for it."""
    import threading

    monkeypatch.setattr(client, "PAPERS_RECHECK", 0.0)
    release = threading.Event()
    slow = stub_library.papers

    def held_papers():
        release.wait(30)
        return slow()

    bot = PaperBot(Services(make_settings(tmp_path), stub_library))
    async with Harness(bot) as h:
        before = await h.autocomplete("paper", "paper", "quokka")
        stub_library.records.append(Paper(paper_id="q1", source="new.txt", position=1, label="Quokka",
                                          abstract="Quokkas are studied here."))
        stub_library.version = "v2"
        monkeypatch.setattr(stub_library, "papers", held_papers)
        # The reload is held for 1 s (the harness waits for it before returning): the current list answers.
        asyncio.get_running_loop().call_later(1.0, release.set)
        during = await h.autocomplete("paper", "paper", "quokka")
        release.set()
        while bot._papers_reload is not None:
            await asyncio.sleep(0.01)
        after = await h.autocomplete("paper", "paper", "quokka")
    assert before.calls[0].json["data"]["choices"] == during.calls[0].json["data"]["choices"] == []
    assert [c["value"] for c in after.calls[0].json["data"]["choices"]] == ["q1"]
