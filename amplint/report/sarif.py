"""SARIF 2.1.0, as GitHub code scanning accepts it (`github/codeql-action/upload-sarif`).

One run; `tool.driver.rules` describes every rule (short and full description, help text in
plain text and Markdown, default level, fix safety); each result names its rule by id and
index, its file by a URI relative to the working directory (`uriBaseId` %SRCROOT%), its region
(1-based lines and columns, Unicode code points), and carries `partialFingerprints` that do not
change when unrelated edits shift lines. A file outside the working directory is named by an
absolute `file://` URI with no `uriBaseId`. A file that could not be checked (read, encoding or
syntax error) is a result of the rule `amplint-error` (level error, at the error's line when
known), and a tool execution notification as well.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List

from amplint import __version__
from amplint.report import RunSummary, cell_of, fixable, parse_error
from amplint.analysis.rules import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "amplintFingerprint/v1"
ERROR_RULE = {
    "id": "amplint-error",
    "name": "unchecked-file",
    "shortDescription": {"text": "unchecked-file: amplint could not read or parse this file."},
    "fullDescription": {"text": "The file could not be read, decoded or parsed (a syntax "
                                "error), so amplint could not check it for AMP hazards."},
    "help": {"text": "Fix the error the message names; amplint then checks the file.",
             "markdown": "Fix the error the message names; amplint then checks the file."},
    "defaultConfiguration": {"level": "error", "enabled": True},
    "properties": {"tags": ["amp", "tool-error"]},
}


def artifact_location(path: str, root: str) -> dict:
    """Relative to %SRCROOT% (`root`) when the file lies inside it, else an absolute file URI."""
    from pathlib import Path

    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return {"uri": Path(absolute).as_uri()}
    from urllib.parse import quote

    return {"uri": quote(relative.replace(os.sep, "/"), safe="/:@!$&'()*+,;=-._~"),
            "uriBaseId": "%SRCROOT%"}


def _rule_descriptor(rule) -> dict:
    docs = rule.docs()
    summary = " ".join(rule.summary().split())
    first_sentence = summary.split(". ")[0].rstrip(".") + "."
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": f"{rule.name}: {first_sentence}"},
        "fullDescription": {"text": summary},
        "help": {"text": docs, "markdown": docs},
        "defaultConfiguration": {
            "level": LEVELS.get(rule.severity.value, "warning"),
            "enabled": bool(rule.default),
        },
        "properties": {
            "fixSafety": rule.fix_safety,
            "severity": rule.severity.value,
            "tags": ["amp", "mixed-precision", "pytorch", "correctness"],
            "precision": "high",
        },
    }


def document(run: RunSummary, root: str = "") -> dict:
    root = os.path.abspath(root or os.getcwd())
    rules = all_rules()
    codes = list(rules)
    index: Dict[str, int] = {code: i for i, code in enumerate(codes)}
    results: List[dict] = []
    for diag in run.diagnostics:
        cell = cell_of(diag)
        if cell is None:
            region = {"startLine": diag.line, "startColumn": diag.column,
                      "endLine": max(diag.end_line, diag.line),
                      "endColumn": max(diag.end_column, 1)}
            text = diag.message
        else:
            file_line = getattr(diag, "file_line", None) or 1
            region = {"startLine": file_line}
            text = f"cell {cell}, line {diag.line}: {diag.message}"
        result = {
            "ruleId": diag.code,
            "level": LEVELS.get(diag.severity.value, "warning"),
            "message": {"text": text},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": artifact_location(diag.filename, root),
                    "region": region,
                },
            }],
        }
        if diag.code in index:
            result["ruleIndex"] = index[diag.code]
        fingerprint = getattr(diag, "fingerprint", None)
        if fingerprint:
            result["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint}
        properties: dict = {"fixable": fixable(diag, run.unsafe_fixes)}
        if diag.fix is not None:
            properties["fix"] = {"applicability": diag.fix.applicability.value,
                                 "message": diag.fix.message}
        if cell is not None:
            properties["cell"] = cell
            properties["cellLine"] = diag.line
            properties["cellColumn"] = diag.column
        result["properties"] = properties
        results.append(result)
    for error in run.errors:
        results.append(_error_result(error, root, len(codes)))
    notifications = [
        {"level": "error", "message": {"text": error}} for error in run.errors
    ]
    invocation = {"executionSuccessful": True}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "amplint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule_descriptor(rules[code]) for code in codes]
                + ([ERROR_RULE] if run.errors else []),
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _file_uri(root)}},
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": results,
        }],
    }


def _error_result(error: str, root: str, index: int) -> dict:
    entry = parse_error(error)
    result: dict = {"ruleId": ERROR_RULE["id"], "ruleIndex": index, "level": "error",
                    "message": {"text": error}}
    if entry.path is not None:
        physical: dict = {"artifactLocation": artifact_location(entry.path, root)}
        if entry.line is not None and entry.cell is None:
            physical["region"] = {"startLine": entry.line, "startColumn": entry.column or 1}
        result["locations"] = [{"physicalLocation": physical}]
    return result


def _file_uri(directory: str) -> str:
    from pathlib import Path

    uri = Path(directory).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def render(run: RunSummary, show_fixes: bool = False) -> str:
    return json.dumps(document(run), indent=2, ensure_ascii=False) + "\n"
