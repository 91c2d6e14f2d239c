"""`.apply(fn)` as a half cast (issue 26 "Functions and classes as values"): guided-diffusion's
`UNetModel.convert_to_fp16` runs `self.input_blocks.apply(convert_module_to_f16)`, with the
converter defined in another module (fp16_util.py: `l.weight.data = l.weight.data.half()`).
`module.apply(fn)` calls `fn` on the module and on every submodule, so when `fn` is a project
function that casts the module it is given (`l.half()`, `l.weight.data.half()`,
`l.to(torch.float16)` on its first parameter), the module tree `.apply` is called on becomes
half, as after `module.half()`. The converter is found through the class flow wherever it is
defined; one outside the linted files is not guessed from its name. Like the statement
`model.half()`, a call in a method body counts whether or not the method is called."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from amplint.analysis.project.halfspread import STATEMENT_CASTS


def applied(flow, path: str, facts) -> Iterator[Tuple[str, tuple, str]]:
    """(function key, module value, dtype) for each `value.apply(fn)` of the file's flow facts
    whose `fn` may be a project function casting the module it is given to half."""
    for key in sorted(facts.functions):
        for last, callee, args, _line in facts.functions[key].calls:
            if last != "apply" or callee[0] != "attr" or callee[2] != "apply" or len(args) != 1 or args[0][0] != 0:
                continue
            dtypes = sorted({
                dtype for thing in flow.values(path, key, args[0][1])
                if thing[0] == "func" for dtype in [converter_dtype(flow, thing[1], thing[2])] if dtype
            })
            if dtypes:
                yield key, callee[1], "float16" if "float16" in dtypes else dtypes[0]


def converter_dtype(flow, path: str, key: str) -> Optional[str]:
    """The half dtype function `key` of `path` casts its first parameter (or an attribute of
    it: `l.weight.data.half()`) to, written as a statement; None when it casts none."""
    facts = flow._flow(path)
    function = facts.functions.get(key) if facts is not None else None
    if function is None or not function.params:
        return None
    param = ("local", function.params[0])
    for receiver, attr, _text, _line in function.dynamic:
        if attr in STATEMENT_CASTS and _root(receiver) == param:
            return STATEMENT_CASTS[attr]
    return None


def _root(value):
    while type(value) is tuple and value and value[0] in ("attr", "sub"):
        value = value[1]
    return value
