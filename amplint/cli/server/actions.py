"""Code actions (each fix, fix all safe in the file, add `# noqa: CODE`) and hover (the
rule's `--explain` page). Both answer from the buffer's text as the editor has it."""

from __future__ import annotations

from typing import List, Optional

from lsprotocol import types
from pygls.uris import to_fs_path

from amplint.analysis.diagnostics import Applicability
from amplint.report.docs import explain
from amplint.analysis.engine import analyze
from amplint.analysis.fix_text import apply_fixes
from amplint.workspace.noqa import add_noqa
from amplint.analysis.parsing import parse, valid_python
from amplint.cli.server import convert
from amplint.cli.server.analysis import norm

KINDS = [types.CodeActionKind.QuickFix, convert.FIX_ALL, types.CodeActionKind.SourceFixAll]


def _wanted(only: Optional[List[str]], kind: str) -> bool:
    """LSP's `only` filter: a kind matches its own prefix ("source.fixAll" asks for ours)."""
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") for k in only)


def _fixes(state, path: str, text: str, rng: types.Range):
    """(finding, its fix's text) for the findings in `rng` whose fix the buffer can take."""
    try:
        module = parse(text)
    except Exception:
        return []
    spelled = state.spell(path)
    settings = state.file_settings(path, unsafe=True)
    diags = analyze(spelled, text, module, settings.rules(), state.entries.get(norm(path), ()),
                    torch=settings.torch)
    lines = text.splitlines()
    found = []
    for diag in diags:
        if diag.fix is None or not convert.overlaps(convert.span(diag, lines), rng):
            continue
        new = apply_fixes(module, [diag.fix])
        if new != text and valid_python(new):
            found.append((diag, new))
    return found


def register(server) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                   types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=False)
                   )(code_action)
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)


async def code_action(ls, params: types.CodeActionParams):
    uri = params.text_document.uri
    path = to_fs_path(uri)
    if not path or not path.endswith((".py", ".pyi")):
        return None
    state = await ls.project(path)
    document = ls.workspace.get_text_document(uri)
    text, version = document.source, document.version
    only = params.context.only
    sent = {(d.code, d.range.start.line, d.range.start.character): d
            for d in params.context.diagnostics or []}

    def lsp_diag(diag, lines):
        span = convert.span(diag, lines)
        return sent.get((diag.code, span.start.line, span.start.character)) or \
            convert.to_lsp(diag, uri, state.locate, lines)

    def job():
        found: List[types.CodeAction] = []
        lines = text.splitlines()
        if _wanted(only, types.CodeActionKind.QuickFix):
            for diag, new in _fixes(state, path, text, params.range):
                safe = diag.fix.applicability is Applicability.SAFE
                found.append(convert.action(
                    convert.fix_title(diag), types.CodeActionKind.QuickFix, uri, text, new,
                    version, [lsp_diag(diag, lines)], preferred=safe))
            result, _ = state.lint(path, text)
            for diag in result.diagnostics:
                if not convert.overlaps(convert.span(diag, lines), params.range):
                    continue
                new, added, _ = add_noqa(text, [diag])
                if added:
                    found.append(convert.action(
                        f"{diag.code}: add `# noqa: {diag.code}`", types.CodeActionKind.QuickFix,
                        uri, text, new, version, [lsp_diag(diag, lines)]))
        if _wanted(only, convert.FIX_ALL):
            fixed, _ = state.lint(path, text, fix=True, unsafe=False)
            if fixed.fixed_source is not None and fixed.fixed_source != text:
                found.append(convert.action("amplint: fix all safe in file", convert.FIX_ALL,
                                            uri, text, fixed.fixed_source, version))
        return found

    return await ls.off_loop(job)


def hover(ls, params: types.HoverParams) -> Optional[types.Hover]:
    point = types.Range(start=params.position, end=params.position)
    found = ls.findings_at(params.text_document.uri, point)
    if not found:
        return None
    pages, seen = [], set()
    for diag, _ in found:
        if diag.code not in seen:
            seen.add(diag.code)
            pages.append(explain(diag.code))
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n---\n\n".join(pages)),
        range=found[0][1],
    )
