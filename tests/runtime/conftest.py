"""Runtime tests: they need torch; without it every torch test module is left uncollected (and
each also calls pytest.importorskip), while test_no_torch.py still runs."""

import importlib.util

if importlib.util.find_spec("torch") is None:
    collect_ignore_glob = ["test_[!n]*.py"]
else:
    from amplint.runtime.pytest_plugin import amp_monitor  # noqa: F401  (the fixture)
