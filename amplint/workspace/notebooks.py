"""Jupyter notebooks: the code cells of an `.ipynb` file, linted and fixed as one Python module.

The code cells are joined into one module (so an `import torch` in the first cell binds `torch`
in the later ones), each cell introduced by a marker comment line. IPython syntax that is not
Python (`%magic`, `!shell`, `x = !cmd`, `obj?`) is replaced by a placeholder statement with the
same indentation, and restored verbatim afterwards; a cell that starts with a cell magic
(`%%bash`, `%%time`, ...) is not Python at all and is left out. A cell that still does not
parse is a syntax error unless IPython runs it anyway (a one-line automagic call such as
`ls /data/`, or a cell whose first line is indented: see ipython_input); those are left out
too, with a warning when they hold Python that is therefore not linted. Findings are reported
with the cell's number (counting every cell of the notebook from 1, markdown ones too, as
Jupyter shows them top to bottom) and the line within the cell.

Writing fixes back never re-serialises the notebook: only the JSON text of each edited cell's
`"source"` value is replaced, in the layout the file already uses, so outputs, metadata and
formatting stay byte for byte as they were.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from amplint.workspace import ipython_input
from amplint.workspace.files import ReadError, SourceFile, read_text_utf8

MARKER = "# __amplint_cell_{}__"
_MARKER_RE = re.compile(r"# __amplint_cell_(\d+)__\Z")
_PLACEHOLDER = "pass  # __amplint_magic_{}__"
_PLACEHOLDER_RE = re.compile(r"(?P<indent>[ \t]*)pass  # __amplint_magic_(?P<id>\d+)__\Z")
_WS = re.compile(r"[ \t\n\r]*")


class NotebookError(Exception):
    """A fix or noqa edit that cannot be written back into the notebook's cells."""


@dataclass
class Cell:
    number: int  # 1-based among all the notebook's cells
    text: str  # the cell's source as one string
    span: Tuple[int, int]  # of the "source" value in the notebook's JSON text
    is_list: bool  # "source" stored as a list of lines (the usual layout)
    python: bool = True  # False for a cell magic (`%%bash`): left out of the module
    added_newline: bool = False


@dataclass
class Notebook:
    source: SourceFile
    cells: List[Cell]
    module: str  # the joined Python module
    # placeholder id -> (the placeholder's indentation, the original line)
    magics: Dict[int, Tuple[str, str]] = field(default_factory=dict)
    errors: List[Tuple[int, int, int, str]] = field(default_factory=list)  # cell, line, col, msg
    notes: List[Tuple[int, str]] = field(default_factory=list)  # cell, why it is not linted

    @property
    def path(self) -> str:
        return self.source.path

    def cell_texts(self, module: str) -> Dict[int, str]:
        """The source of each Python cell (by number) in a (fixed) joined module, magics
        restored. Raises NotebookError when the edit moved code out of its cells."""
        buckets: Dict[int, List[str]] = {}
        current: Optional[List[str]] = None
        order: List[int] = []
        by_index = {i: cell for i, cell in enumerate(self.cells)}
        for line in _lines(module):
            match = _MARKER_RE.match(line.rstrip("\r\n"))
            if match:
                index = int(match.group(1))
                if index not in by_index or index in buckets:
                    raise NotebookError("fixes not applied: they disturbed the cell boundaries")
                current = buckets.setdefault(index, [])
                order.append(index)
                continue
            if current is None:
                if line.strip():
                    raise NotebookError("fixes not applied: an edit landed before the first cell")
                continue
            current.append(self._restore(line))
        if order != sorted(order) or len(order) != len(self.cells):
            raise NotebookError("fixes not applied: an edit moved code across cells")
        texts: Dict[int, str] = {}
        for index, cell in by_index.items():
            if not cell.python:
                if "".join(buckets[index]).strip():
                    raise NotebookError(
                        f"fixes not applied: an edit landed in cell {cell.number}, which is not "
                        "linted (a cell magic or a syntax error)")
                texts[cell.number] = cell.text
                continue
            text = "".join(buckets[index])
            if cell.added_newline and text.endswith("\n"):
                text = text[:-1]
            texts[cell.number] = text
        return texts

    def _restore(self, line: str) -> str:
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        match = _PLACEHOLDER_RE.match(body)
        if not match:
            return line
        placed, original = self.magics[int(match.group("id"))]
        indent = match.group("indent")
        if original.startswith(placed):  # shift by as much as the placeholder moved
            return indent + original[len(placed):] + ending
        return indent + original.lstrip(" \t") + ending

    def render(self, module: str) -> Tuple[str, List[int]]:
        """(the notebook's new JSON text, numbers of the cells that changed)."""
        texts = self.cell_texts(module)
        raw = self.source.text
        ascii_only = _escapes_non_ascii(raw)
        indent_unit = _indent_unit(raw)
        pieces: List[str] = []
        last = 0
        changed: List[int] = []
        for cell in self.cells:
            new = texts[cell.number]
            if new == cell.text:
                continue
            start, end = cell.span
            pieces.append(raw[last:start])
            pieces.append(_serialize(new, raw, cell, ascii_only, indent_unit))
            last = end
            changed.append(cell.number)
        pieces.append(raw[last:])
        return "".join(pieces), changed


def _lines(text: str) -> List[str]:
    """Split after each "\n" only (as nbformat stores lines), keeping the ends."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def _escapes_non_ascii(raw: str) -> bool:
    return not any(ord(ch) > 127 for ch in raw) and re.search(r"\\u[0-9a-fA-F]{4}", raw) is not None


def _indent_unit(raw: str) -> str:
    match = re.match(r"\s*\{\s*?\n([ \t]+)\"", raw)
    return match.group(1) if match else " "


def _serialize(text: str, raw: str, cell: Cell, ascii_only: bool, unit: str) -> str:
    if not cell.is_list:
        return json.dumps(text, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in _lines(text)]
    start, end = cell.span
    original = raw[start:end]
    line_start = raw.rfind("\n", 0, start) + 1
    key_indent = re.match(r"[ \t]*", raw[line_start:start]).group(0)
    if "\n" in original:
        first = re.match(r"\[(\s*)", original).group(1)
        closing = re.search(r"(\s*)\]\Z", original).group(1)
        lead, close = first, closing
    elif original.replace(" ", "") == "[]":
        lead, close = "\n" + key_indent + unit, "\n" + key_indent
    else:
        return "[" + _inline_separator(original, raw).join(items) + "]"
    if not items:
        return "[]"
    return "[" + lead + ("," + lead).join(items) + close + "]"


def _inline_separator(original: str, raw: str) -> str:
    """The separator between items of a list written on one line: as in the original list,
    else as the file writes them elsewhere (`,` in compact files, `, ` otherwise)."""
    try:
        _, end = json.JSONDecoder().raw_decode(original, _skip_ws(original, 1))
    except ValueError:
        end = -1
    if 0 < end < len(original):
        match = re.match(r"\s*,\s*", original[end:])
        if match:
            return match.group(0)
    return "," if re.search(r'",\s', raw) is None else ", "


# -- reading --------------------------------------------------------------------------------

def _skip_ws(text: str, index: int) -> int:
    return _WS.match(text, index).end()


def _cells_with_spans(text: str) -> List[Tuple[dict, Dict[str, Tuple[int, int]]]]:
    """The notebook's cells, each with the JSON text span of every key's value."""
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    if text[i:i + 1] != "{":
        raise ValueError("not a JSON object")
    i += 1
    cells: List[Tuple[dict, Dict[str, Tuple[int, int]]]] = []
    while True:
        i = _skip_ws(text, i)
        if text[i:i + 1] == "}":
            return cells
        key, i = decoder.raw_decode(text, i)
        i = _skip_ws(text, i)
        if text[i:i + 1] != ":":
            raise ValueError("expected ':'")
        i = _skip_ws(text, i + 1)
        if key == "cells":
            cells, i = _array_of_cells(text, i, decoder)
        else:
            _, i = decoder.raw_decode(text, i)
        i = _skip_ws(text, i)
        if text[i:i + 1] == ",":
            i += 1


def _array_of_cells(text: str, i: int, decoder: json.JSONDecoder):
    if text[i:i + 1] != "[":
        raise ValueError("`cells` is not a list")
    i = _skip_ws(text, i + 1)
    cells = []
    while text[i:i + 1] != "]":
        if text[i:i + 1] != "{":
            raise ValueError("a cell is not an object")
        i += 1
        cell: dict = {}
        spans: Dict[str, Tuple[int, int]] = {}
        while True:
            i = _skip_ws(text, i)
            if text[i:i + 1] == "}":
                i += 1
                break
            key, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i:i + 1] != ":":
                raise ValueError("expected ':'")
            i = _skip_ws(text, i + 1)
            start = i
            cell[key], i = decoder.raw_decode(text, i)
            spans[key] = (start, i)
            i = _skip_ws(text, i)
            if text[i:i + 1] == ",":
                i += 1
        cells.append((cell, spans))
        i = _skip_ws(text, i)
        if text[i:i + 1] == ",":
            i = _skip_ws(text, i + 1)
    return cells, i + 1


def _is_python(document: dict) -> bool:
    metadata = document.get("metadata") or {}
    if not isinstance(metadata, dict):
        return True
    for key in ("language_info", "kernelspec"):
        info = metadata.get(key)
        if isinstance(info, dict):
            language = info.get("name") if key == "language_info" else info.get("language")
            if isinstance(language, str) and language:
                return language.lower() == "python"
    return True


def _parses(text: str) -> Optional[SyntaxError]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as exc:
        return exc
    except (ValueError, MemoryError, RecursionError) as exc:  # pragma: no cover
        return SyntaxError(str(exc))
    return None


def load(path: str) -> Optional[Notebook]:
    """The notebook at `path`, or None when it is not a Python notebook (another kernel)."""
    source = read_text_utf8(path)
    try:
        document = json.loads(source.text)
        if not isinstance(document, dict) or not isinstance(document.get("cells", []), list):
            raise ValueError("not a notebook (no `cells` list)")
        cells_spans = _cells_with_spans(source.text)
    except ValueError as exc:  # JSONDecodeError included
        raise ReadError(f"not a valid notebook: {exc}") from None
    if not _is_python(document):
        return None
    notebook = Notebook(source, [], "")
    lines: List[str] = []
    failed: List[Tuple[Cell, SyntaxError]] = []
    trees: List[ast.AST] = []
    for number, (cell, spans) in enumerate(cells_spans, start=1):
        if cell.get("cell_type") != "code" or "source" not in spans:
            continue
        raw_source = cell["source"]
        is_list = isinstance(raw_source, list)
        text = "".join(raw_source) if is_list else raw_source
        if not isinstance(text, str):
            raise ReadError(f"not a valid notebook: cell {number} has a bad `source`")
        entry = Cell(number, text, spans["source"], is_list)
        lines.append(MARKER.format(len(notebook.cells)) + "\n")
        notebook.cells.append(entry)
        if text.lstrip().startswith("%%"):
            entry.python = False
            continue
        body = _python_of(text, notebook.magics)
        error = _parses(body)
        if error is not None:
            failed.append((entry, error))
            entry.python = False
            continue
        trees.append(ast.parse(body))
        if not body.endswith("\n"):
            body += "\n"
            entry.added_newline = True
        lines.extend(_lines(body))
    notebook.module = "".join(lines)
    _judge_failed_cells(notebook, failed, trees)
    return notebook


def _judge_failed_cells(notebook: Notebook, failed, trees) -> None:
    """A cell that does not parse even with its magics masked: one IPython runs anyway (by
    `leading_indent` or automagic, see ipython_input) is left out without an error, with a
    note when it holds Python that is therefore not linted; any other is a syntax error."""
    magic_lines = [original for _, original in notebook.magics.values()]
    shadowing = (set() if not ipython_input.turns_automagic_off(magic_lines)
                 else set(ipython_input.LINE_MAGICS))
    shadowing |= ipython_input.bound_names(trees) | ipython_input.assigned_by_magics(magic_lines)
    for entry, error in failed:
        if ipython_input.automagic_name(entry.text, shadowing):
            continue
        dedented = ipython_input.dedented(entry.text)
        scratch: Dict[int, Tuple[str, str]] = {}
        body = _python_of(dedented, scratch) if dedented is not None else None
        if body is not None and _parses(body) is None:
            if _has_python(body):
                notebook.notes.append((entry.number, "not linted: its first line is indented "
                                       "(IPython removes that indentation before running it)"))
            continue
        notebook.errors.append(
            (entry.number, error.lineno or 1, (error.offset or 1), error.msg or "invalid syntax"))


def _has_python(body: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#")
               and not _PLACEHOLDER_RE.match(line.rstrip("\r\n")) for line in _lines(body))


def _python_of(text: str, magics: Dict[int, Tuple[str, str]]) -> str:
    """The cell's text with IPython-only lines replaced by placeholders (when it needs it)."""
    if _parses(text) is None:
        return text
    out: List[str] = []
    continuing: Optional[str] = None  # indentation of the magic being continued
    for line in _lines(text):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        stripped = body.lstrip(" \t")
        indent = body[: len(body) - len(stripped)]
        if continuing is not None or ipython_input.is_escaped(stripped):
            use = indent if continuing is None else continuing
            ident = len(magics)
            magics[ident] = (use, body)
            out.append(use + _PLACEHOLDER.format(ident) + ending)
            continuing = use if body.endswith("\\") else None
        else:
            out.append(line)
    return "".join(out)


def cell_diff(path: str, before: Dict[int, str], after: Dict[int, str]) -> str:
    """A unified diff per changed cell, headed `path:cell N`."""
    import difflib

    chunks = []
    for number in sorted(after):
        old, new = before.get(number, ""), after[number]
        if old == new:
            continue
        old_lines = (old if old.endswith("\n") or not old else old + "\n").splitlines(True)
        new_lines = (new if new.endswith("\n") or not new else new + "\n").splitlines(True)
        chunks.append("".join(difflib.unified_diff(
            old_lines, new_lines, fromfile=f"{path}:cell {number}", tofile=f"{path}:cell {number}",
        )))
    return "".join(chunks)


def file_lines(text: str) -> Dict[int, List[int]]:
    """For each code cell (by number), the line of the notebook's JSON text on which each of
    its source lines is stored (one list item per line in the usual layout; a cell stored as
    one string has all its lines on the string's first line)."""
    out: Dict[int, List[int]] = {}
    try:
        cells = _cells_with_spans(text)
    except ValueError:
        return out
    decoder = json.JSONDecoder()
    for number, (cell, spans) in enumerate(cells, start=1):
        if cell.get("cell_type") != "code" or "source" not in spans:
            continue
        start, end = spans["source"]
        if not isinstance(cell["source"], list):
            first = text.count("\n", 0, start) + 1
            out[number] = [first] * (str(cell["source"]).count("\n") + 1)
            continue
        rows: List[int] = []
        i = _skip_ws(text, start + 1)
        while i < end and text[i] == '"':
            rows.append(text.count("\n", 0, i) + 1)
            _, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i:i + 1] == ",":
                i = _skip_ws(text, i + 1)
        out[number] = rows
    return out
