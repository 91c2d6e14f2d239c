"""IPython's own rules for a notebook cell that is not Python as written, used to tell a cell
IPython runs from one with a real syntax error.

Lines that IPython's escapes turn into calls (`%magic`, `!cmd`, `obj?`, `x = !cmd`) are masked
line by line (`is_escaped`, used by notebooks). Two other input rules (IPython >= 7,
`IPython.core.inputtransformer2` and `IPython.core.prefilter`) make cells that no line-by-line
masking can turn into Python:

- `leading_indent` (a cleanup transform, applied to every cell): when the first non-blank line
  is indented, that indentation is removed from every line that starts with it, so
  ` !tts --text ...` or `  x = 1` run;
- automagic (on by default): a cell that is one line, starting with the name of a line magic
  (`ls /data/`, `cd ..`, `pip install x`), runs that magic unless a Python name shadows it (a
  variable, import, function, ... of that name in the user's namespace, or a builtin), or the
  rest of the line starts with `=` or `,` (an assignment), or `%automagic` turned it off.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Iterable, List, Optional, Set

_INDENT = re.compile(r"[ \t]+")
_MAGIC_ASSIGN = re.compile(r"[\w.\[\]()*, \t]+=[ \t]*[%!]")
_HELP = re.compile(r"[\w.\[\]()]+\?{1,2}\Z")
_MAGIC_LINE = re.compile(r"(?P<name>[^\W\d]\w*)(?:[ \t]+(?P<rest>.*))?\Z", re.S)

# The line magics automagic runs without the `%`: IPython 9.18's (checked against
# `InteractiveShell.magics_manager`), with the shell aliases it defines on POSIX systems
# (`ls`, `cp`, ...), and those ipykernel adds in a notebook (`autosave`, `clear`, `less`, ...).
LINE_MAGICS = frozenset("""
alias alias_magic autoawait autocall automagic autosave bookmark cd code_wrap colors conda
config connect_info debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts load
load_ext loadpy logoff logon logstart logstate logstop lsmagic macro magic mamba matplotlib
micromamba notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision
prun psearch psource pushd pwd pycat pylab qtconsole quickref recall rehashx reload_ext rep
rerun reset reset_selective run save sc set_env sx system tb time timeit unalias
unload_ext uv who who_ls whos xdel xmode
cat clear cp less ldir lf lk ll ls lx man mkdir more mv rm rmdir
""".split())


def is_escaped(stripped: str) -> bool:
    """A line (without its indentation) that IPython's escapes make a call: `%magic`, `!cmd`,
    `?obj`, `obj?`, `x = !cmd`, `x = %magic`."""
    if not stripped or stripped.startswith("#"):
        return False
    if stripped[0] in "%!?":
        return True
    if _HELP.match(stripped):
        return True
    return _MAGIC_ASSIGN.match(stripped) is not None


def dedented(text: str) -> Optional[str]:
    """The cell as IPython's `leading_empty_lines` + `leading_indent` leave it, or None when its
    first non-blank line is not indented (nothing to remove)."""
    lines = text.splitlines(True)
    while lines and (not lines[0].strip()):
        lines.pop(0)
    if not lines:
        return None
    match = _INDENT.match(lines[0])
    if not match:
        return None
    space = match.group(0)
    return "".join(line[len(space):] if line.startswith(space) else line for line in lines)


def automagic_name(text: str, shadowing: Set[str]) -> Optional[str]:
    """The line magic a one-line cell runs through automagic (`ls /data/`), else None."""
    lines = text.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if len(lines) != 1:  # IPython applies automagic to a one-line cell only
        return None
    match = _MAGIC_LINE.match(lines[0].strip())
    if not match or match.group("name") not in LINE_MAGICS:
        return None
    name, rest = match.group("name"), match.group("rest") or ""
    if rest[:1] in ("=", ",") or name in shadowing or hasattr(builtins, name):
        return None
    return name


def bound_names(trees: Iterable[ast.AST]) -> Set[str]:
    """Every name a cell binds anywhere (an over-approximation of the user namespace: a name
    bound only inside a function still stops automagic for it, so a real error is reported)."""
    names: Set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
    return names


def assigned_by_magics(magic_lines: List[str]) -> Set[str]:
    """The names `x = !cmd` / `x, y = %magic` lines bind (masked, so no parse sees them)."""
    names: Set[str] = set()
    for line in magic_lines:
        match = _MAGIC_ASSIGN.match(line.lstrip(" \t"))
        if match:
            names.update(re.findall(r"[^\W\d]\w*", match.group(0).rsplit("=", 1)[0]))
    return names


def turns_automagic_off(magic_lines: List[str]) -> bool:
    """`%automagic` (a toggle, or off) anywhere in the notebook: automagic is not assumed."""
    return any(re.match(r"[ \t]*%+automagic\b", line) for line in magic_lines)
