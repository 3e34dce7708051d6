"""Fixtures for tests that need a running Chroma server."""

from __future__ import annotations

import pytest

from .servers import start_chroma


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """One server per test module; each test uses its own collection on it."""
    server = start_chroma(tmp_path_factory.mktemp("chroma-server") / "data")
    yield server
    server.stop()
