"""The GradScaler protocol's value questions in one cold `-j 1` run of the CLI: how many value
calls `_value_target` asks the class flow, how many the event-method test leaves out
(scaler_methods.EventMethods), the CPU of each, how many callee files' `protocol_keys` were
read (scaler_inputs.keys_file) and the project pass's scaler phase.

    python benchmarks/scaler_questions.py --no-cache -j 1 --exit-zero [CLI ARGS] TREE
"""

from __future__ import annotations

import sys
import time

import amplint.analysis.project.scaler_methods as methods
import amplint.analysis.project.scaler_resolution as resolution
import amplint.run.project_inputs as project_inputs
import amplint.run.runner as runner
import amplint.run.scaler_inputs as scaler_inputs

spent = {"questions": 0.0, "test": 0.0, "scaler_entries": 0.0, "keys": 0.0}
counts = {"questions": 0, "left out": 0, "keys": 0}


def _timed(function, slot, count=None):
    def wrapped(*args, **kwargs):
        begin = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[slot] += time.process_time() - begin
            if count:
                counts[count] += 1
    return wrapped


def main() -> None:
    resolution._value_target = _timed(resolution._value_target, "questions", "questions")
    decide = methods.EventMethods._decide
    methods.EventMethods._decide = _timed(decide, "test")
    inner = methods.EventMethods.may_have_events

    def may_have_events(self, name):
        found = inner(self, name)
        counts["left out"] += not found
        return found
    methods.EventMethods.may_have_events = may_have_events
    scaler_inputs.keys_file = _timed(scaler_inputs.keys_file, "keys", "keys")
    project_inputs.scaler_entries = _timed(project_inputs.scaler_entries, "scaler_entries")
    runner.project_entries = project_inputs.project_entries
    from amplint.cli.main import main as cli
    sys.argv = ["amplint"] + sys.argv[1:]
    try:
        cli()
    finally:
        print(f"value questions asked {counts['questions']} ({spent['questions']:.2f} s), "
              f"left out {counts['left out']} (test {spent['test']:.2f} s), "
              f"keys files read {counts['keys']} ({spent['keys']:.2f} s), "
              f"scaler_entries {spent['scaler_entries']:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
