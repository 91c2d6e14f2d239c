"""Orchestration of a run: files looked up in the result cache or linted in the process pool,
the project pass's inputs, fixing, notebooks, the reach report and progress lines."""
