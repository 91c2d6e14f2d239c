"""Reflective lookup for the class flow (issue 26): `getattr(models, "Net")`,
`getattr(models, args.arch)`, `models.__dict__[args.arch]`, `globals()[args.arch]`,
`vars(models)[args.arch]` (flowvalues' ("lookup", ...) value):
the namespace's attribute a literal names (the name itself, or, for a parameter of a
module-level function, the literals every call site gives it: string_params.py). A project
namespace looked up by any other name holds every class and function it can give, narrowed by
the key's `choices=` (namespace_members.py); any other namespace: the names its argparse
`default=` or a config value of that key give (string_classes.StringConfigs), one of them
deciding; otherwise an `unnamed` value says why."""

from __future__ import annotations

from typing import List, Optional

from amplint.analysis.project.flowindex import Hold, Things
from amplint.analysis.project.namespace_members import (
    as_set, choices_filter, member_value, members, namespace_files, star_ref,
)
from amplint.analysis.project.string_classes import StringConfigs, attr_path, several
from amplint.analysis.project.flowvalues import plain_local


def lookup(strings: "StringConfigs", cv, path: str, key: str, val, depth: int) -> Things:
    """("lookup", namespace, name, text, line) held in function `key` of `path`: the
    namespace's attributes named by the literals the configs give for the name (an argparse
    `default=`, a yacs/YAML value), each exactly; none: an `unnamed` value."""
    _, base, name, text, _line = val
    flow = cv._flow(path)
    function = flow.functions.get(key) if flow is not None else None
    given = _given(strings, path, key, function, name)
    if isinstance(name, str):  # a literal
        keys, values = (name,), [(name, path, 0)]
    elif given is not None:  # a parameter every call site gives a literal (string_params.py)
        keys, values = (name[1],), given
    else:
        found = _members(cv, path, key, function, val, depth)
        if found:
            return found
        keys = attr_path(_val_text(name), function)
        defaults = strings.defaults(keys[-1]) if keys else []
        # a script's own parser decides its `args.arch` (dino: main_dino.py's `vit_small`, not
        # eval_linear.py's `vit_base`); a parser in another file only where the script has none
        defaults = [d for d in defaults if d[1] == path] or defaults
        values = defaults + strings.scalars(keys) if keys else []
    if not keys:
        return {("unnamed", text, "it is looked up by a name that is not a literal and that no "
                 "config key gives (`getattr(models, args.arch)` with a `default=` is followed)"): Hold("")}
    out: Things = {}
    for value, vpath, line in values:
        if not value.isidentifier():
            continue
        if base == ("ref", "@"):  # `globals()[name]`: this module's own names
            held = member_value(cv, path, value, depth)
        elif base[0] == "ref":
            held = cv._ref(path, f"{base[1]}.{value}", depth)
            if not any(thing[0] in ("class", "func") for thing in held):
                held = star_ref(cv, path, base[1], value, depth)
        else:
            held = cv._attr_of(cv.values(path, key, base, depth), value, depth)
        for thing in held:
            if thing[0] in ("class", "func"):
                cite = f"{'.'.join(keys)} = {value!r} at {strings.p.display(vpath)}:{line}" if line else ""
                out.setdefault(thing, Hold(cite))
    if len(out) > 1 and given is None:  # the configs must decide; every call site's literal runs
        names = sorted(thing[2] for thing in out)
        return {("unnamed", text, several(names, f"the configs give `{'.'.join(keys)}` as")): Hold("")}
    if not out and isinstance(name, str):  # `getattr(torch.nn, "ReLU")`: what the reference is
        return member_value(cv, path, name, depth) if base == ("ref", "@") else cv._ref(path, f"{base[1]}.{name}", depth)
    if not out:
        given = sorted({v for v, _, _ in values})
        why = (f"it is looked up by `{'.'.join(keys)}`, " + (
            f"whose given values ({', '.join(given[:3])}) name no project class or function there" if given
            else "which no `default=` or config of the project gives"))
        return {("unnamed", text, why): Hold("")}
    return out


def _members(cv, path: str, key: str, function, val, depth: int) -> Things:
    """A project namespace looked up by a name no literal decides: every class and function
    it can give (namespace_members.py), narrowed by the key's argparse `choices=`."""
    _, base, name, text, _line = val
    files = namespace_files(cv, path, key, base, depth)
    if not files:
        return {}
    key_text = _val_text(name) or "the name"
    keys = attr_path(key_text, function) if key_text != "the name" else None
    dest = keys[-1] if keys else (plain_local(name[1]) if name[0] == "local" else None)
    keep, _ = choices_filter(cv, path, dest)
    found = members(cv, files, keep, depth)
    if not found:
        return {}
    namespace = "globals()" if base == ("ref", "@") else (base[1] if base[0] == "ref" else _val_text(base) or "it")
    return as_set(found, key_text, namespace, text)


def _given(strings: "StringConfigs", path: str, key: str, function, name):
    """The literals the call sites of module-level function `key` give its parameter `name`
    (("local", param) value); None where it is no such parameter or they are not all literals."""
    if (isinstance(name, str) or name is None or name[0] != "local" or function is None
            or name[1] not in function.params or name[1] in function.assigns):
        return None
    found = strings.params.literals(path, key, name[1])
    return found or None


def _val_text(val) -> Optional[str]:
    """`args.arch` for ("attr", ("local", "args"), "arch"); `arch` for ("local", "arch")."""
    parts: List[str] = []
    while val is not None and val[0] == "attr":
        parts.append(val[2])
        val = val[1]
    if val is None or val[0] not in ("local", "self"):
        return None
    parts.append(plain_local(val[1]) if val[0] == "local" else f"self.{val[1]}")
    return ".".join(reversed(parts))
