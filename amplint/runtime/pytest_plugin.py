"""pytest fixture ``amp_monitor``: a :class:`~amplint.runtime.Monitor` (record mode) active for
the whole test.  Enable it with ``pytest_plugins = ["amplint.runtime.pytest_plugin"]`` in a
conftest.py (no entry point is registered)::

    def test_train_step(amp_monitor):
        train_step(model, batch)
        amp_monitor.assert_clean()          # or inspect amp_monitor.findings
"""

from __future__ import annotations

import pytest

from .monitor import Monitor


@pytest.fixture
def amp_monitor():
    with Monitor("record") as m:
        yield m
