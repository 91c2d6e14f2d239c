"""Which files the project pass needs linted before it runs (the runner's phase 1).

The project pass reads two things from the per-file lint: the portable summary of a file that
can open an autocast region or hold a framework setting (`needs_summary`), and the GradScaler
protocol summary of a caller (amplint.run.scaler_inputs.first_pass_plan), both made from the
parse that lints the file. Every other file is read by the project pass, if at all, through
its own summaries (`ast`, on demand), so the runner lints it once, after the pass, with the
entries the pass gave it. The test is made here in the main process from the text alone, and
the worker is handed its answer (`Need`) instead of making it again."""

from __future__ import annotations

from typing import Optional

from amplint.analysis.results import Settings
from amplint.analysis.prefilter import could_match
from amplint.analysis.project import needs_summary
from amplint.run.options import Need  # noqa: F401 (re-exported: defined with the run's options)
from amplint.run.scaler_inputs import first_pass_plan
from amplint.workspace.files import ReadError, read_source


def need_of(path: str, text: str, raw: bytes, settings: Settings, entries=()) -> Need:
    wanted = needs_summary(text)
    plan = first_pass_plan(path, text, raw) if path.endswith(".py") else None
    if plan and not (wanted or entries or could_match(text, settings.rules())):
        plan = None  # not parsed otherwise (nor its LibCST parse errors reported)
    return Need(wanted, plan)


def need_on_disk(path: str, settings: Settings) -> Optional[Need]:
    """The file's Need, from its text on disk; None: unreadable (the lint reports it)."""
    if not path.endswith((".py", ".pyi")):
        return Need(False, None)  # a notebook: read by no project pass
    try:
        source = read_source(path)
    except ReadError:
        return None
    return need_of(path, source.text, source.raw, settings)

