"""Output formats through the CLI: github annotations (checked against the documented workflow
command syntax), SARIF 2.1.0 (validated against the vendored OASIS schema, plus what GitHub code
scanning needs), junit, --statistics, --show-fixes, --output-file, and the progress line."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from amplint.cli.main import cli
from amplint.analysis.rules import all_rules

FACTORY = """\
import torch
def step(x, idx, n):
    model = torch.nn.Linear(8, 8)
    with torch.autocast('cuda'):
        h = model(x)
        out = torch.zeros(n, h.shape[-1], device=h.device)
        out[idx] = h
"""
BACKWARD = """\
import torch
def step(model, x, opt):
    with torch.autocast('cuda'):
        loss = model(x).mean()
        loss.backward()
        opt.step()
"""
HALF_INPUT = """\
import torch
def train(model, loader, opt):
    for x, y in loader:
        x = x.cuda().half()
        with torch.autocast('cuda'):
            loss = model(x, y)
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(FACTORY + "\n" + BACKWARD.replace("import torch\n", ""))
    (tmp_path / "src" / "h.py").write_text(HALF_INPUT)
    return tmp_path


# -- github ---------------------------------------------------------------------------------
# "Workflow commands for GitHub Actions": ::COMMAND key=value,key=value::MESSAGE. In values
# %, CR, LF, ':' and ',' are escaped as %25 %0D %0A %3A %2C; in the message %, CR and LF.
ANNOTATION = re.compile(
    r"^::(?P<level>error|warning|notice)"
    r"(?: (?P<props>[A-Za-z]+=[^,:\r\n]*(?:,[A-Za-z]+=[^,:\r\n]*)*))?"
    r"::(?P<message>[^\r\n]*)$"
)
PROPERTIES = {"title", "file", "col", "endColumn", "line", "endLine"}
ESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape(value: str) -> str:
    assert re.fullmatch(r"(?:[^%]|%25|%0D|%0A|%3A|%2C)*", value), f"bad escape in {value!r}"
    return re.sub(r"%25|%0D|%0A|%3A|%2C", lambda m: ESCAPES[m.group(0)], value)


def annotations(output: str):
    out = []
    for line in output.splitlines():
        match = ANNOTATION.match(line)
        assert match, f"not a workflow command: {line!r}"
        props = {}
        for pair in (match["props"] or "").split(","):
            if pair:
                key, value = pair.split("=", 1)
                assert key in PROPERTIES, key
                props[key] = unescape(value)
        out.append((match["level"], props, unescape(match["message"])))
    return out


def test_github_annotations_follow_the_documented_syntax(project):
    result = invoke("--output-format", "github", "src")
    assert result.exit_code == 1
    found = annotations(result.stdout)
    assert [(lvl, p["file"], p["line"], p["title"]) for lvl, p, _ in found] == [
        ("error", "src/a.py", "6", "amplint (AMP101)"),
        ("warning", "src/a.py", "12", "amplint (AMP104)"),
        ("warning", "src/h.py", "4", "amplint (AMP103)"),
    ]
    level, props, message = found[0]
    assert props["col"] == "15" and props["endLine"] == "6" and int(props["endColumn"]) > 15
    assert message.startswith("src/a.py:6:15: AMP101 `torch.zeros` without `dtype=`")


def test_github_escapes_paths_and_messages(project):
    odd = project / "we,ird:100%"
    odd.mkdir()
    (odd / "x.py").write_text(FACTORY)
    (odd / "bad.py").write_bytes(b"\xff\n")
    result = invoke("--output-format", "github", str(odd.name))
    found = annotations(result.stdout)
    files = [p.get("file") for _, p, _ in found]
    assert "we,ird:100%/x.py" in files
    assert any("we,ird:100%/bad.py: not valid UTF-8" in message for _, _, message in found)
    assert "%2C" in result.stdout and "%3A" in result.stdout and "%25" in result.stdout


def test_github_notebook_annotation_names_the_cell(project):
    (project / "nb.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                   "source": FACTORY.splitlines(True)}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    (level, props, message), = annotations(invoke("--output-format", "github", "nb.ipynb").stdout)
    assert message.startswith("nb.ipynb:cell 1:6:15: AMP101")
    text = (project / "nb.ipynb").read_text().splitlines()
    assert "torch.zeros" in text[int(props["line"]) - 1]


# -- sarif ----------------------------------------------------------------------------------

def sarif(*args: str):
    result = invoke("--output-format", "sarif", *args)
    return result, json.loads(result.stdout)


def validate(document, schema) -> None:
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_sarif_validates_against_the_2_1_0_schema(project, sarif_schema):
    (project / "src" / "bad.py").write_bytes(b"\xff\n")
    result, document = sarif("src")
    assert result.exit_code == 1
    validate(document, sarif_schema)
    assert document["version"] == "2.1.0"
    (run,) = document["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["AMP101", "AMP104", "AMP103", "amplint-error"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "error" and "not valid UTF-8" in notes[0]["message"]["text"]
    error = run["results"][-1]
    assert run["tool"]["driver"]["rules"][error["ruleIndex"]]["id"] == "amplint-error"
    assert error["level"] == "error" and "not valid UTF-8" in error["message"]["text"]
    assert error["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "src/bad.py", "uriBaseId": "%SRCROOT%"}


def test_errors_are_results_in_every_machine_format(project, sarif_schema):
    (project / "src" / "bad.py").write_bytes(b"\xff\n")
    (project / "src" / "syn.py").write_text("x = 1\ndef f(:\n    pass\n")
    as_json = json.loads(invoke("--output-format", "json", "src").stdout)
    errors = [item for item in as_json if item["code"] is None]
    assert [(e["filename"], e["line"], e["column"], e["severity"]) for e in errors] == [
        ("src/bad.py", None, None, "error"), ("src/syn.py", 2, 7, "error")]
    assert errors[1]["message"].startswith("syntax error")
    result, document = sarif("src")
    validate(document, sarif_schema)
    located = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]:
               r["locations"][0]["physicalLocation"].get("region")
               for r in document["runs"][0]["results"] if r["ruleId"] == "amplint-error"}
    assert located == {"src/bad.py": None, "src/syn.py": {"startLine": 2, "startColumn": 7}}
    junit = ET.fromstring(invoke("--output-format", "junit", "src").stdout)
    cases = {c.get("file"): c.get("line") for c in junit.iter("testcase") if c.find("error") is not None}
    assert cases == {"src/bad.py": None, "src/syn.py": "2"}
    github = invoke("--output-format", "github", "src").stdout.splitlines()
    assert "::error title=amplint,file=src/syn.py,line=2,col=7::src/syn.py:2:7: syntax error" \
        in "\n".join(github)
    assert any(line.startswith("::error title=amplint,file=src/bad.py,line=1::") for line in github)


def test_sarif_uri_outside_the_working_directory_is_an_absolute_file_uri(
        project, tmp_path_factory, monkeypatch, sarif_schema):
    # the project and the outside file side by side in a folder of their own: the CLI reads
    # their common parent as context, and pytest's shared temporary folder holds every test's files
    base = tmp_path_factory.mktemp("sarif_outside")
    shutil.copytree(project, base / "project")
    monkeypatch.chdir(base / "project")
    outside = base / "elsewhere" / "train.py"
    outside.parent.mkdir()
    outside.write_text(FACTORY)
    result, document = sarif(str(outside), "src/a.py")
    validate(document, sarif_schema)
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"]
                 for r in document["runs"][0]["results"]]
    assert {"uri": outside.as_uri()} in locations
    assert all(loc.get("uriBaseId") == "%SRCROOT%" for loc in locations if loc != {"uri": outside.as_uri()})


def test_sarif_clean_run_validates(project, sarif_schema):
    (project / "ok.py").write_text("import torch\n")
    result, document = sarif("ok.py")
    assert result.exit_code == 0
    validate(document, sarif_schema)
    assert document["runs"][0]["results"] == []


def test_sarif_meets_github_code_scanning(project):
    _, document = sarif("src")
    (run,) = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "amplint"
    assert [r["id"] for r in rules] == list(all_rules())
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert "## What it does" in rule["help"]["text"]
        assert rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert rule["properties"]["fixSafety"] == all_rules()[rule["id"]].fix_safety
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        uri = location["artifactLocation"]["uri"]
        assert uri.startswith("src/") and "://" not in uri and "\\" not in uri
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        region = location["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert result["partialFingerprints"]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    fixes = {r["ruleId"]: r["properties"]["fix"]["applicability"] for r in run["results"]}
    assert fixes == {"AMP101": "safe", "AMP104": "safe", "AMP103": "unsafe"}


def test_sarif_fingerprints_survive_shifted_lines_and_are_unique(project):
    _, before = sarif("src")
    source = project / "src" / "a.py"
    source.write_text("# a new header comment\n\n\n" + source.read_text())
    _, after = sarif("src")

    def prints(document):
        return [(r["ruleId"], r["partialFingerprints"]["amplintFingerprint/v1"],
                 r["locations"][0]["physicalLocation"]["region"]["startLine"])
                for r in document["runs"][0]["results"]]

    old, new = prints(before), prints(after)
    assert [(c, f) for c, f, _ in old] == [(c, f) for c, f, _ in new]
    assert [line for _, _, line in new[:2]] == [line + 3 for _, _, line in old[:2]]
    (project / "src" / "twice.py").write_text(FACTORY + FACTORY.replace("import torch\n", "", 1))
    _, doubled = sarif("src/twice.py")
    values = [r["partialFingerprints"]["amplintFingerprint/v1"] for r in doubled["runs"][0]["results"]]
    assert len(values) == 2 and len(set(values)) == 2


# -- junit ----------------------------------------------------------------------------------

def test_junit_report(project):
    (project / "src" / "a&b.py").write_text(FACTORY)
    (project / "src" / "bad.py").write_bytes(b"\xff\n")
    result = invoke("--output-format", "junit", "src")
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    assert (root.get("failures"), root.get("errors")) == ("4", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"src/a&b.py", "src/a.py", "src/h.py", "amplint errors"}
    cases = suites["src/a.py"].findall("testcase")
    assert [c.find("failure").get("type") for c in cases] == ["AMP101", "AMP104"]
    assert cases[0].get("line") == "6" and cases[0].get("file") == "src/a.py"
    assert "src/a.py:6:15: AMP101" in cases[0].find("failure").text
    error = suites["amplint errors"].find("testcase/error")
    assert "not valid UTF-8" in error.get("message")


def test_junit_clean_run_is_one_passing_case(project):
    (project / "ok.py").write_text("import torch\n")
    root = ET.fromstring(invoke("--output-format", "junit", "ok.py").stdout)
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1 and list(cases[0]) == []
    assert root.get("failures") == "0"


# -- statistics, show-fixes, output file ------------------------------------------------------

def test_statistics(project):
    (project / "src" / "b.py").write_text(BACKWARD)
    result = invoke("--statistics", "src")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "2\tAMP104\t[*] backward-in-autocast",
        "1\tAMP101\t[*] factory-default-dtype",
        "1\tAMP103\t[ ] half-with-autocast",
    ]
    as_json = json.loads(invoke("--statistics", "--output-format", "json", "src").stdout)
    assert as_json[0] == {"code": "AMP104", "name": "backward-in-autocast", "count": 2,
                          "fixable": True}
    assert [row["code"] for row in as_json] == ["AMP104", "AMP101", "AMP103"]


def test_show_fixes(project):
    check = invoke("--show-fixes", "src/h.py")
    lines = check.stdout.splitlines()
    assert lines[0].startswith("src/h.py:4:")
    assert lines[1].startswith("    fix (unsafe): ")
    fixed = invoke("--fix", "--show-fixes", "src")
    assert fixed.exit_code == 1  # AMP103's fix is unsafe and stays
    text = fixed.stdout
    assert re.search(r"Applied 2 fixes:\n- src/a\.py:\n    line \d+: AMP101 \(factory-default-dtype\): "
                     r".+\n    line \d+: AMP104 \(backward-in-autocast\): .+\n", text), text
    assert "Found 3 findings (2 fixed, 1 remaining)." in text


def test_output_file(project):
    result = invoke("--output-format", "sarif", "-o", "out/amplint.sarif", "src")
    assert result.exit_code == 2  # the folder does not exist
    assert "cannot write" in result.stderr
    (project / "out").mkdir()
    result = invoke("--output-format", "sarif", "--output-file", "out/amplint.sarif", "src")
    assert result.exit_code == 1 and result.stdout == ""
    assert json.loads((project / "out" / "amplint.sarif").read_text())["version"] == "2.1.0"


# -- progress -------------------------------------------------------------------------------

def many_files(root: Path, count: int = 60) -> None:
    for i in range(count):
        (root / "src" / f"m{i:03d}.py").write_text("import torch\nx = torch.zeros(3)\n")


def test_no_progress_output_when_stderr_is_not_a_terminal(project):
    many_files(project)
    proc = subprocess.run([sys.executable, "-m", "amplint", "src"], capture_output=True,
                          text=True, cwd=project)
    assert proc.returncode == 1
    assert "\r" not in proc.stderr  # nothing redrawn in place
    # a run still working after ~10 s (a loaded machine) says so, one line at a time
    assert all(re.fullmatch(r"amplint: \d+/62 files.*, \d+ s", line)
               for line in proc.stderr.splitlines())


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_on_a_terminal_for_many_files(project):
    many_files(project)
    leader, follower = os.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "amplint", "src"], stdout=subprocess.PIPE,
                              stderr=follower, cwd=project, timeout=120)
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    text = seen.decode()
    assert proc.returncode == 1
    assert "amplint: 62/62 files" in text
    assert text.endswith("\r\x1b[K")  # the line is cleared when done
    assert b"\r" not in proc.stdout  # the report itself is untouched
    # Few files: no progress line even on a terminal.
    leader, follower = os.openpty()
    try:
        subprocess.run([sys.executable, "-m", "amplint", "src/a.py"], stdout=subprocess.PIPE,
                       stderr=follower, cwd=project, timeout=120)
        os.close(follower)
        follower = -1
        try:
            rest = os.read(leader, 65536)
        except OSError:
            rest = b""
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert b"amplint:" not in rest
