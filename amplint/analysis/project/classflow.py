"""The project's class flow, what the rules ask of it: the functions a call under a region
may run (with the chain to cite), why a call could not be resolved, and the project classes
made half anywhere. The values themselves: classvalues.py."""

from __future__ import annotations

from functools import partial
from typing import Dict, List, Optional, Tuple

from amplint.analysis.project import converters, halfspread
from amplint.analysis.project.classcalls import MAX_REGISTRY_BUILD
from amplint.analysis.project.classvalues import ClassValues
from amplint.analysis.project.flowindex import merge_things, thing_order
from amplint.analysis.project.half_inplace import undone_at_once
from amplint.analysis.project.text_tests import casts_half


class ClassFlow(ClassValues):
    def __init__(self, project) -> None:
        super().__init__(project)
        self._targets: Dict[tuple, list] = {}
        self.memberless = 0  # questions answered by the text alone (call_targets), for tests

    def call_targets(self, path: str, key: str, receiver, attr: str) -> List[Tuple[tuple, str, Optional[str], Optional[tuple]]]:
        """The functions a call may run: ((file, function key), "Net in models/net.py" or a
        function's name, the cite of the value's source, (file, class) of the instance or None).
        Kept once every value it read came from the memo (asking again gives the same)."""
        question = (path, key, receiver, attr)
        found = self._targets.get(question)
        if found is not None:
            return list(found)
        if attr and (path, key, receiver) not in self._memo and not self.site_files.member_anywhere(attr):
            # `image.astype(np.uint8)`, `label.fill_(0)`: a call of a method runs the `attr`
            # of a project instance the receiver holds (its method, or a module it stores under
            # that name); no project class has one, so what the receiver holds does not matter.
            # Asked only where the receiver is not known yet (the text search costs more than
            # reading the memo)
            self.memberless += 1
            self._targets[question] = []
            return []
        evaluations, cuts = self.evaluations, self._cuts
        found = self._call_targets(path, key, receiver, attr)
        if self.evaluations == evaluations and self._cuts == cuts:
            self._targets[question] = list(found)
        return found

    def _call_targets(self, path: str, key: str, receiver, attr: str):
        out = []
        held = dict(self.values(path, key, receiver))
        if not attr:  # calling a container (`nn.Sequential`) calls each module it holds
            for thing in [thing for thing in held if thing[0] == "tup"]:
                for item in thing[3]:
                    merge_things(held, self.values(thing[1], thing[2], item))
        for thing, hold in sorted(held.items(), key=thing_order):
            if thing[0] == "inst":
                cpath, cls = thing[1], thing[2]
                if attr:
                    hit = self.p.method(cpath, cls, attr)
                    if hit is not None:
                        out.append((hit, f"{cls} in {self.p.display(cpath)}", hold.cite, (cpath, cls)))
                        continue
                    for sub, subhold in sorted(self._stores(cpath, cls, attr, 0).items(), key=thing_order):
                        if sub[0] == "inst":
                            hit = self._forward(sub[1], sub[2])
                            if hit is not None:
                                out.append((hit, f"{sub[2]} in {self.p.display(sub[1])}", subhold.cite, (sub[1], sub[2])))
                    continue
                hit = self._forward(cpath, cls)
                if hit is not None:
                    out.append((hit, f"{cls} in {self.p.display(cpath)}", hold.cite, (cpath, cls)))
            elif thing[0] in ("func", "pfunc") and not attr:
                out.append(((thing[1], thing[2]), f"{thing[2]} in {self.p.display(thing[1])}", hold.cite, None))
            elif thing[0] == "bound" and not attr:  # a method held as a value (`fn = obj.method`, a partial of it)
                out.append(((thing[3], thing[4]), f"{thing[4]} in {self.p.display(thing[3])}", hold.cite,
                            (thing[1], thing[2])))
        return out

    def _forward(self, path: str, cls: str):
        return self.p.method(path, cls, "forward") or self.p.method(path, cls, "__call__")

    def unresolved_reason(self, path: str, key: str, receiver) -> Optional[str]:
        """Why a receiver holds no project class: said plainly for --show-regions; None when
        it only holds torch's own modules (`self.proj = nn.Linear(...)`), which is no gap."""
        held = dict(self.values(path, key, receiver))
        for thing in [thing for thing in held if thing[0] == "tup"]:
            for item in thing[3]:
                merge_things(held, self.values(thing[1], thing[2], item))
        if held and all(thing[0] in ("torch_inst", "tup") for thing in held):
            return None
        wide = sorted(thing for thing in held if thing[0] == "wide_build")
        if wide:
            _, registry, count = wide[0]
            if registry == "timm.create_model":
                return (f"it comes from `timm.create_model` with a name that is not a literal: it may "
                        f"build any of the {count} models the project registers with `@register_model` "
                        f"(more than {MAX_REGISTRY_BUILD})")
            return (f"it comes from a `{registry}` build that may make any of {count} registered "
                    f"classes (more than {MAX_REGISTRY_BUILD}): which one, the configs do not tie to this call")
        unnamed = sorted(thing for thing in held if thing[0] == "unnamed")
        if unnamed:  # a class named by a string that no config of the project decides
            return f"`{unnamed[0][1]}` makes a class named by a string: {unnamed[0][2]}"
        external = sorted(thing[1] for thing in held if thing[0] in ("ext", "ext_inst"))
        if external:
            return f"it comes from `{external[0]}` outside the linted files"
        if receiver[0] == "local":
            flow = self._flow(path)
            function = flow.functions.get(key) if flow is not None else None
            if function is not None and receiver[1] in function.params:
                return f"parameter `{receiver[1]}` of `{key}`: no call site in the linted files passes a project class"
        if receiver[0] == "self":
            return f"`self.{receiver[1]}`: no store of a project class found"
        return "its value could not be followed"

    def half_instances(self) -> Dict[Tuple[str, str], Tuple[str, str, str]]:
        """(file, class) -> (dtype, cite, file of the cast) for every instance of a project
        class that the linted files turn half (`m.cuda().half()`, `.to(torch.bfloat16)`,
        `model.half()`), and every module it holds (halfspread.py)."""
        out: Dict[Tuple[str, str], Tuple[str, str, str]] = {}
        converting = converters.converting_files(self)
        casting = [path for path in self.p.python if casts_half(self.p, path) or path in converting]
        self._prefetch(casting)  # one batch across the pool, not a file at a time
        for statements in (False, True):
            for path in casting:
                flow = self._flow(path, optional=True)
                if flow is None:
                    continue
                applied = converters.applied(self, path, flow) if statements else ()  # `.apply(convert_module_to_f16)`
                undone = partial(undone_at_once, self.p, path)
                for key, value, dtype in (*halfspread.casts(flow, statements, undone), *applied):
                    for thing, hold, _ in halfspread.modules_held(self, self.values(path, key, value)):
                        cite = f"{hold.cite} made {dtype} in {self.p.display(path)}"
                        out.setdefault((thing[1], thing[2]), (dtype, cite, path))
        return halfspread.spread(self, out)
