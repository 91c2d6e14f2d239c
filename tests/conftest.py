"""Shared test setup: the CLI's cache goes to a temporary folder, never into the trees the
tests lint (and tests that exercise the cache set their own --cache-dir)."""

import pytest

# tests/projects holds the multi-file projects the tests lint, laid out like real repositories,
# with their own `tests/test_*.py` files: data, never collected
collect_ignore = ["projects"]


@pytest.fixture(autouse=True)
def _amplint_cache_elsewhere(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AMPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("amplint-cache")))
