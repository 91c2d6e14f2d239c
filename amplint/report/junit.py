"""JUnit XML, as CI test-report viewers (GitLab, Jenkins, Azure) read it: one test suite per
file with findings, one failing test case per finding; unreadable files are test cases with an
`<error>`; a clean run is one passing test case."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Dict, List

from amplint.report import RunSummary, location, parse_error


def render(run: RunSummary, show_fixes: bool = False) -> str:
    by_file: Dict[str, List] = defaultdict(list)
    for diag in run.diagnostics:
        by_file[diag.filename].append(diag)
    root = ET.Element("testsuites", name="amplint", tests=str(len(run.diagnostics) + len(run.errors)
                      or 1), failures=str(len(run.diagnostics)), errors=str(len(run.errors)))
    for path in sorted(by_file):
        diags = by_file[path]
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(diags)),
                              failures=str(len(diags)), errors="0", skipped="0")
        for diag in diags:
            where = location(diag)
            case = ET.SubElement(suite, "testcase", name=f"{diag.code} {where}",
                                 classname=path, file=path, line=str(diag.line))
            text = f"{where}: {diag.code} {diag.message}"
            if diag.fix is not None:
                text += f"\nfix ({diag.fix.applicability.value}): {diag.fix.message}"
            failure = ET.SubElement(case, "failure", message=diag.message, type=diag.code)
            failure.text = text
    if run.errors:
        suite = ET.SubElement(root, "testsuite", name="amplint errors",
                              tests=str(len(run.errors)), failures="0",
                              errors=str(len(run.errors)), skipped="0")
        for error in run.errors:
            entry = parse_error(error)
            where = {}
            if entry.path is not None:
                where["file"] = entry.path
                if entry.line is not None and entry.cell is None:
                    where["line"] = str(entry.line)
            case = ET.SubElement(suite, "testcase", name=error.split(": ", 1)[0],
                                 classname="amplint", **where)
            ET.SubElement(case, "error", message=error, type="error").text = error
    if not run.diagnostics and not run.errors:
        suite = ET.SubElement(root, "testsuite", name="amplint", tests="1", failures="0",
                              errors="0", skipped="0")
        ET.SubElement(suite, "testcase", name="no findings", classname="amplint")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
