"""benchmarks/parse_floor.py counts the parses of every process of a run (issue 34's floor of
the project pass's share). On a test project laid out like detectron2, the full run reads
files the isolated run skips, so it parses more of them with `ast`; with -j 2 the pool's
workers are counted too."""

import importlib.util
import os

import pytest

from project_files import PROJECTS

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _floor():
    spec = importlib.util.spec_from_file_location("parse_floor", os.path.join(ROOT, "benchmarks", "parse_floor.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_full_run_parses_what_the_isolated_run_skips(jobs):
    floor = _floor()
    tree = os.path.join(PROJECTS, "d2_roi_heads")
    full_cpu, full = floor.measured(ROOT, tree, jobs, isolated=False)
    alone_cpu, alone = floor.measured(ROOT, tree, jobs, isolated=True)
    assert full_cpu > 0 and alone_cpu > 0
    assert full["ast"][0] > alone["ast"][0]
    assert full["libcst"][0] >= 1
