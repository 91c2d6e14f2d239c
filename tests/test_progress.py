"""What a long run shows while it works (issue 34): where stderr is not a terminal, a line
every ~10 s (`amplint: 812/5409 files, 41 s`); with --verbose, the name of a file still being
analysed after 10 s. A fake clock and a fake timer stand in for waiting."""

from __future__ import annotations

import io

import pytest

from amplint.run import progress as progress_module
from amplint.workspace.config import Config
from amplint.analysis.engine import Settings
from amplint.run.progress import Progress, naming_slow_file
from amplint.run.runner import RunOptions, run


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_line_every_ten_seconds_where_stderr_is_not_a_terminal():
    clock, stream = Clock(), io.StringIO()
    meter = Progress(stream, 5409, clock=clock, thread=False)
    meter.update(300)
    clock.now += 9.5
    meter.tick()
    assert stream.getvalue() == ""  # not yet 10 s: a quick run prints nothing
    clock.now += 0.5
    meter.update(812)
    meter.tick()
    assert stream.getvalue() == "amplint: 812/5409 files, 10 s\n"
    clock.now += 4
    meter.tick()
    assert stream.getvalue().count("\n") == 1  # 10 s between two lines
    meter.update(5409)
    meter.set_stage("project pass")
    clock.now += 31
    meter.tick()
    meter.close()
    assert stream.getvalue().splitlines()[-1] == "amplint: 5409/5409 files, project pass, 45 s"
    assert "\r" not in stream.getvalue()


def test_one_slow_file_still_gets_its_lines():
    # a single file: no terminal line for so few, but a log line once it has taken 10 s
    clock, stream = Clock(), io.StringIO()
    meter = Progress(stream, 1, clock=clock, thread=False)
    clock.now += 25
    meter.tick()
    assert stream.getvalue() == "amplint: 0/1 files, 25 s\n"


def test_a_terminal_gets_the_line_redrawn_and_no_log_lines():
    clock, stream = Clock(), Terminal()
    meter = Progress(stream, 60, clock=clock, thread=False)
    meter.update(30)
    clock.now += 20
    meter.tick()
    meter.update(60)
    meter.close()
    assert stream.getvalue() == "\ramplint: 30/60 files\ramplint: 60/60 files\r\x1b[K"


def test_the_log_thread_stops_with_the_run():
    meter = Progress(io.StringIO(), 10)
    assert meter._thread is not None and meter._thread.is_alive()
    meter.close()
    assert not meter._thread.is_alive()


class FakeTimer:
    made = []

    def __init__(self, seconds, function) -> None:
        self.seconds, self.function, self.cancelled = seconds, function, False
        FakeTimer.made.append(self)

    def start(self) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled = True


def test_verbose_names_a_file_taking_over_ten_seconds():
    clock, stream = Clock(), io.StringIO()
    FakeTimer.made.clear()
    with naming_slow_file("models/huge_table.py", stream, clock=clock, timer=FakeTimer):
        timer = FakeTimer.made[-1]
        assert timer.seconds == 10
        clock.now += 10
        timer.function()  # what the timer thread does after 10 s
        assert stream.getvalue() == (
            "amplint: models/huge_table.py: still being analysed after 10 s\n"
        )
        clock.now += 4.25
    assert timer.cancelled
    assert stream.getvalue().splitlines()[-1] == "amplint: models/huge_table.py: took 14.2 s"


def test_a_quick_file_is_not_named():
    clock, stream = Clock(), io.StringIO()
    FakeTimer.made.clear()
    with naming_slow_file("a.py", stream, clock=clock, timer=FakeTimer):
        clock.now += 2
    assert FakeTimer.made[-1].cancelled
    assert stream.getvalue() == ""
    with naming_slow_file("a.py", None, clock=clock, timer=FakeTimer):  # without --verbose
        clock.now += 60
    assert stream.getvalue() == ""


@pytest.mark.parametrize("verbose", [True, False])
def test_the_run_names_slow_files_only_with_verbose(tmp_path, monkeypatch, capsys, verbose):
    monkeypatch.setattr(progress_module, "SLOW_FILE_SECONDS", 0.0)  # every file is "slow"
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(3).half()\n")
    options = RunOptions(jobs=1, project=False, name_slow_files=verbose)
    run([str(tmp_path / "train.py")], Settings.default(), options, Config())
    err = capsys.readouterr().err
    assert ("train.py: took" in err) is verbose
