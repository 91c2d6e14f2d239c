"""Shared test setup: the CLI's cache goes to a temporary folder, never into the trees the
tests lint (and tests that exercise the cache set their own --cache-dir)."""

import pytest


@pytest.fixture(autouse=True)
def _amplint_cache_elsewhere(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AMPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("amplint-cache")))
