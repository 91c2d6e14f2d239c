"""The open world (issue 26): a call under a region on a parameter that no call site of the
linted files binds (`def train_one_epoch(model, ...)` in a library whose caller lives elsewhere:
a notebook, a CLI in another package). The parameter is taken as a MAYBE over the project
classes that have every attribute the function uses on it (`model(x)` needs `forward` or
`__call__`, `model.forward_features(x)` needs `forward_features`; `torch.nn.Module`'s own
methods come with a torch base), when there are at most MAX_CANDIDATES of them; with more,
none is taken and --show-regions says why.

Precision first, each test a reason to say nothing:
- unbound: the function's name appears in no other way than its own `def`, a plain
  `from m import name` and `__all__` in the linted files (a call, an attribute `x.name`, a
  string, an alias, a YAML mention: bound, or possibly bound);
- the parameter is not assigned in the function; attributes read under `hasattr(p, "a")` or
  `getattr(p, "a", default)` are optional, not required;
- the classes: those whose own code (or a project base's) defines the rarest required attribute,
  and their subclasses; a class with a base outside the tree may have what it does not show
  (a "maybe" class, found among all the project's classes from `ast`): while one exists, none
  is taken (on MAE's engine_finetune.py, `model` is models_vit's VisionTransformer, whose
  `forward` is timm's: MaskedAutoencoderViT alone has a `forward` in the tree);
- a call of the parameter under a region runs model code: a candidate for it derives from
  `torch.nn` (or defines `forward` under a base outside the tree). A plain class with
  `__call__` (MAE's loss scaler `NativeScalerWithGradNormCount`, a transform) is not one: on
  MAE's engine it was taken for `criterion` and gave a false AMP104.
Not counted: a class that would get that rarest attribute only from a base outside the tree.
`ast` only (the files the question reads), so it costs nothing where no such call exists."""

from __future__ import annotations

import ast
import re
import sys
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple

from amplint.analysis.data.module_attrs import MODULE_ATTRS, PLAIN_BASES
from amplint.analysis.project.light_index import light_file
from amplint.analysis.project.openworld_ast import (
    BUILTIN_BASES, functions, mentions, module_classes, own_attrs, param_uses, plain_module,
)

MAX_CANDIDATES = 3
MAX_DEFINING_FILES = 40  # files defining the rarest attribute read (summarised) for one question
MAX_NAME_FILES = 24  # files mentioning the function's name read to tell that none binds it
MAX_CLASS_FILES = 400  # files with classes read (`ast`) to find those with bases outside the tree
CALL = "()"  # the parameter itself is called: `forward` or `__call__`
_CALLABLE = ("forward", "__call__")

Cls = Tuple[str, str]


class OpenAnswer(NamedTuple):
    param: str
    function: str
    uses: Tuple[str, ...]  # sorted; CALL for a call of the parameter itself
    taken: Tuple[Cls, ...]  # classes that have every attribute used
    maybe: Tuple[Cls, ...]  # classes whose bases outside the tree may give the rest: none is taken then
    why: Optional[str]  # why none is taken

    def describe(self, project) -> str:
        """The guess, as findings and --show-regions say it: "open world: `model` of `train` ..."."""
        shown = ", ".join(f"{cls} in {project.display(path)}" for path, cls in self.taken)
        uses = ", ".join("a call" if use == CALL else f"`.{use}`" for use in self.uses)
        one = len(self.taken) == 1
        return (f"open world: `{self.param}` of `{self.function}` is bound by no call site in the linted "
                f"files, taken as {'the' if one else 'one of the'} {len(self.taken)} project "
                f"{'class that has' if one else 'classes that have'} every attribute `{self.function}` "
                f"uses on it ({uses}): {shown}")


class OpenWorld:
    def __init__(self, project) -> None:
        self.p = project
        self._trees: Dict[str, Optional[ast.Module]] = {}
        self._class_attrs: Dict[str, Dict[str, Tuple[FrozenSet[str], bool]]] = {}
        self._unbound: Dict[Tuple[str, str], Optional[str]] = {}
        self._answers: Dict[tuple, Optional[OpenAnswer]] = {}
        self._pools: Dict[tuple, object] = {}
        self._outside_classes: Optional[List[Cls]] = None
        self._outside_read = False

    # -- the question -----------------------------------------------------------------------
    def answer(self, path: str, key: str, receiver) -> Optional[OpenAnswer]:
        """None when the receiver is not an unbound parameter of `key` (not an open-world call)."""
        question = (path, key, receiver)
        if question not in self._answers:
            self._answers[question] = self._answer(path, key, receiver)
        return self._answers[question]

    def _answer(self, path: str, key: str, receiver) -> Optional[OpenAnswer]:
        if not key or receiver is None or receiver[0] != "local":
            return None
        name = receiver[1]
        summary = self.p.summary(path)
        flow = summary.flow if summary is not None else None
        function = flow.functions.get(key) if flow is not None else None
        if function is None or name not in function.params or name in function.assigns:
            return None
        parts = key.split(".")
        if len(parts) == 2 and parts[0] in summary.classes and function.params.index(name) == 0:
            return None  # `self`
        node = self._function(path, key)
        if node is None:
            return None
        uses = param_uses(node, name)
        if uses is None:
            return None
        if self._bound(path, key) is not None:
            return None
        attrs, called = uses
        used = tuple(sorted(attrs | ({CALL} if called else set())))
        short = parts[-1]
        taken, maybe, why = self._candidates(attrs, called)
        uses = ", ".join("a call" if use == CALL else f"`.{use}`" for use in used)
        if len(taken) + len(maybe) > MAX_CANDIDATES:
            every = sorted(taken + maybe)
            shown = ", ".join(f"{cls} in {self.p.display(where)}" for where, cls in every[:6])
            more = f" and {len(every) - 6} more" if len(every) > 6 else ""
            why = why or (f"{len(every)} project classes may hold it, having every attribute `{short}` uses "
                          f"on it ({uses}): {shown}{more}; more than {MAX_CANDIDATES}, none taken")
            taken, maybe = (), ()
        elif maybe and why is None:
            shown = ", ".join(f"{cls} in {self.p.display(where)}" for where, cls in sorted(maybe)[:6])
            why = (f"{len(taken)} project {'class has' if len(taken) == 1 else 'classes have'} every attribute "
                   f"`{short}` uses on it ({uses}), but {shown} (with bases outside the tree) may too: none taken")
            taken = ()
        elif not taken and why is None:
            why = f"no project class has every attribute `{short}` uses on it ({uses})"
        return OpenAnswer(name, short, used, tuple(sorted(taken)), tuple(sorted(maybe)), None if taken else why)

    # -- unbound ----------------------------------------------------------------------------
    def _bound(self, path: str, key: str) -> Optional[str]:
        """Where the function's name is written other than as its def, a plain import or in
        `__all__` (None: nowhere, it is unbound)."""
        memo = (path, key)
        if memo not in self._unbound:
            self._unbound[memo] = self._find_binding(path, key)
        return self._unbound[memo]

    def _find_binding(self, path: str, key: str) -> Optional[str]:
        name = key.split(".")[-1]
        method = "." in key
        if name in _CALLABLE or (name.startswith("__") and name.endswith("__")):
            return "called implicitly"
        word = re.compile(r"\b%s\b" % re.escape(name))
        hits = []
        for other in self.p.files:
            text = self.p.files[other]
            if name in text and word.search(text):
                if not other.endswith((".py", ".pyi")):
                    return other
                hits.append(other)
        if len(hits) > MAX_NAME_FILES:
            return f"{len(hits)} files"
        for other in hits:
            tree = self._tree(other)
            if tree is None or mentions(tree, name, method, own=other == path):
                return other
        return None

    # -- candidates -------------------------------------------------------------------------
    def _candidates(self, attrs: FrozenSet[str], called: bool):
        wanted = sorted(a for a in attrs if a not in MODULE_ATTRS) + ([CALL] if called else [])
        if not wanted:
            return [], [], "it is used only through `torch.nn.Module`'s own methods"
        counted = []
        for attr in wanted:
            counted.append((len(self._defining(attr)), attr))
        count, rarest = min(counted)
        if count > MAX_DEFINING_FILES:
            what = "`forward` or `__call__`" if rarest == CALL else f"`{rarest}`"
            return [], [], f"{count} files define {what}: too many classes to tell apart, none taken"
        roots: List[Cls] = []
        files = self._defining(rarest)
        self.p.summarise(files)
        for where in files:
            summary = self.p.summaries.get(where)
            for cls, (own, _) in sorted(self._attrs(where).items()):
                if summary is not None and cls in summary.classes and (
                    own & set(_CALLABLE) if rarest == CALL else rarest in own
                ):
                    roots.append((where, cls))
        pool: List[Cls] = []
        for root in roots:
            for cls in [root] + list(self.p.dispatch.subclasses(*root)):
                if cls not in pool:
                    pool.append(cls)
        taken: List[Cls] = []
        maybe: List[Cls] = []
        for cls in pool:
            verdict = self._verdict(cls, attrs, called)
            if verdict == "yes":
                taken.append(cls)
            elif verdict == "maybe":
                maybe.append(cls)
        if len(taken) + len(maybe) > MAX_CANDIDATES or not taken:
            return taken, maybe, None
        outside = self._outside()
        if outside is None:
            return [], [], (f"the tree has more than {MAX_CLASS_FILES} files with classes: too many to rule "
                            f"out classes with bases outside it, none taken")
        for cls in outside:  # a base outside the tree may give them what `pool` was found by
            if cls not in pool and self.p.summary(cls[0]) is not None and self._verdict(cls, attrs, called) == "maybe":
                maybe.append(cls)
        return taken, maybe, None

    def _outside(self) -> Optional[List[Cls]]:
        """The project's classes with a base outside the tree (not torch, not the standard
        library; through project bases too, matched by name), from `ast` alone; None when the
        tree has too many files with classes to read for this."""
        if self._outside_classes is not None or self._outside_read:
            return self._outside_classes
        self._outside_read = True
        files = [path for path in self.p.python if "class " in self.p.files[path]]
        if len(files) > MAX_CLASS_FILES:
            return None
        heads: List[Tuple[str, str, List[str]]] = []  # (file, class, kinds of its bases)
        for path in files:
            info = light_file(path, self.p.files[path])
            if info is None:
                continue
            for cls in info.classes:
                heads.append((path, cls.name, [self._base_kind(path, info, base) for base in cls.bases]))
        outside = {(path, name) for path, name, kinds in heads if "outside" in kinds}
        names = {name for _, name in outside}
        grew = True
        while grew:  # `class A(B)` where B (a project class) has a base outside: A too
            grew = False
            for path, name, kinds in heads:
                if (path, name) not in outside and any(k.startswith("project:") and k[8:] in names for k in kinds):
                    outside.add((path, name))
                    names.add(name)
                    grew = True
        self._outside_classes = sorted(outside)
        return self._outside_classes

    def _base_kind(self, path: str, info, base) -> str:
        if base is None:
            return "outside"
        head, last = base[0], base[-1]
        if head in info.local or head in info.relative:
            return "project:" + last
        targets = info.imports.get(head)
        if not targets:
            return "plain" if head in BUILTIN_BASES else "outside"
        for target in sorted(targets):
            ref = ".".join((target,) + base[1:])
            if any(True for _ in self.p._module_candidates(path, ref)):
                return "project:" + last
            top = ref.split(".")[0]
            if top == "torch" or top in sys.stdlib_module_names:
                return "plain"
        return "outside"

    def _defining(self, attr: str) -> List[str]:
        memo = self._pools.get(attr)
        if memo is None:
            if attr == CALL:
                pattern = re.compile(r"^[ \t]+def (?:forward|__call__)\(", re.M)
                needles = ("def forward(", "def __call__(")
            else:
                a = re.escape(attr)
                pattern = re.compile(r"^[ \t]+(?:def %s\(|%s\s*[:=])|\bself\.%s\s*(?::|=(?!=))" % (a, a, a), re.M)
                needles = (attr,)
            memo = [
                path for path in self.p.python
                if any(n in self.p.files[path] for n in needles) and pattern.search(self.p.files[path])
            ]
            self._pools[attr] = memo
        return memo

    def _verdict(self, cls: Cls, attrs: FrozenSet[str], called: bool) -> str:
        own: Set[str] = set()
        state = {"torch": False, "torch_callable": False, "unknown": False}
        self._chain(cls, own, state, 0, set())
        unknown = state["unknown"]
        verdict = "yes"
        for attr in sorted(attrs) + ([CALL] if called else []):
            if attr == CALL:  # a module's: a plain class with `__call__` (a loss scaler, a transform) is none
                has = state["torch_callable"] or (bool(own & set(_CALLABLE)) and state["torch"])
                if not has and own & set(_CALLABLE) and unknown and "forward" in own:
                    has = True  # `forward` under a base outside the tree: a model
            else:
                has = attr in own or (attr in MODULE_ATTRS and (state["torch"] or (unknown and "forward" in own)))
            if has:
                continue
            if not unknown:
                return "no"
            verdict = "maybe"
        return verdict

    def _chain(self, cls: Cls, own: Set[str], state: dict, depth: int, seen: Set[Cls]) -> None:
        path, name = cls
        summary = self.p.summary(path)
        if summary is None or name not in summary.classes or depth > 8 or cls in seen:
            state["unknown"] = True
            return
        seen.add(cls)
        attrs, dynamic = self._attrs(path).get(name, (frozenset(), True))
        own.update(attrs)
        if dynamic:
            state["unknown"] = True
        for base in summary.classes[name].bases:
            found = self.p.resolve_ref(path, base)
            if found is not None and len(found[1]) == 1:
                self._chain((found[0], found[1][0]), own, state, depth + 1, seen)
            elif base.startswith("torch.nn."):
                state["torch"] = True
                if base not in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                    state["torch_callable"] = True  # nn.Linear, nn.Sequential: torch's forward
            elif base not in PLAIN_BASES and not plain_module(base):
                state["unknown"] = True

    # -- files --------------------------------------------------------------------------------
    def _tree(self, path: str) -> Optional[ast.Module]:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.p.files[path])
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[path] = None
        return self._trees[path]

    def _function(self, path: str, key: str):
        tree = self._tree(path)
        if tree is None:
            return None
        for qual, node in functions(tree):
            if qual == key:
                return node
        return None

    def _attrs(self, path: str) -> Dict[str, Tuple[FrozenSet[str], bool]]:
        """class -> (the attributes its own body defines: methods, class attributes, `self.x`
        stores; whether it may have others: `__getattr__`, `setattr(self, name, ...)`)."""
        found = self._class_attrs.get(path)
        if found is None:
            found = {}
            tree = self._tree(path)
            for node in (module_classes(tree) if tree is not None else ()):
                if node.name not in found:
                    found[node.name] = own_attrs(node)
            self._class_attrs[path] = found
        return found


def open_targets(project, path: str, key: str, receiver, attr: str):
    """(answer, [((file, function key), (file, class))]) for a call under a region on
    `receiver` that the class flow left unresolved; (None, []) when it is no open-world call."""
    world = getattr(project, "open_world", None)
    answer = world.answer(path, key, receiver) if world is not None else None
    if answer is None:
        return None, []
    out = []
    for cpath, cls in answer.taken:
        if attr:
            hit = project.method(cpath, cls, attr)
        else:
            hit = project.method(cpath, cls, "forward") or project.method(cpath, cls, "__call__")
        if hit is not None:
            out.append((hit, (cpath, cls)))
    return answer, out
