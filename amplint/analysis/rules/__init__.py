"""The rule registry. Each rule is one module `amplint/analysis/rules/ampNNN_<name>.py` defining one
subclass of `Rule`; its docstring is its documentation (`amplint --explain CODE`), and it carries
the examples that must be flagged and those that must stay clean (run by tests/test_rules.py)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from amplint.analysis.data.rule_defaults import OFF_BY_DEFAULT
from amplint.analysis.diagnostics import Applicability, Diagnostic, Fix, Severity

if TYPE_CHECKING:
    import libcst as cst

    from amplint.analysis.context import FileContext
    from amplint.analysis.diagnostics import Replacement


@dataclass
class Flag:
    """Code that must be flagged `count` times; `fixed` is the expected result of `--fix`
    (with `--unsafe-fixes` when `unsafe`), None when no edit is expected."""

    code: str
    fixed: Optional[str] = None
    unsafe: bool = False
    count: int = 1


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    fix_safety: ClassVar[str]  # "safe", "unsafe", "safe / unsafe", "suggestion", ...
    default: ClassVar[bool] = True
    # Cheap prefilter: the rule can only fire in a file containing one of these substrings.
    triggers: ClassVar[Tuple[str, ...]] = ()
    flag: ClassVar[List[Flag]] = []
    clean: ClassVar[List[str]] = []

    def check(self, ctx: "FileContext") -> Iterable[Diagnostic]:
        raise NotImplementedError

    # -- helpers for subclasses -----------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Optional[Fix] = None,
        severity: Optional[Severity] = None,
        related: Optional[Mapping[str, cst.CSTNode]] = None,
        through: Union[None, cst.CSTNode, Tuple[str, int]] = None,
    ) -> Diagnostic:
        """`through`: the event a finding at a call reaches through it (Diagnostic.through)."""
        return Diagnostic(
            self.code, message, severity or self.severity, node, fix, dict(related or {}), through
        )

    @staticmethod
    def fix(
        applicability: Applicability,
        message: str,
        edits: Mapping[cst.CSTNode, Replacement],
        imports: Tuple[str, ...] = (),
    ) -> Fix:
        return Fix(applicability, message, dict(edits), imports)

    @classmethod
    def docs(cls) -> str:
        return textwrap.dedent(inspect.getdoc(cls) or "").strip()

    @classmethod
    def summary(cls) -> str:
        return cls.docs().split("\n\n", 1)[0].replace("## What it does", "").strip()


_REGISTRY: Optional[Dict[str, Rule]] = None


def rule_codes() -> Dict[str, bool]:
    """Every rule's code -> whether it is on by default, sorted, without importing the rules (a
    run that lints nothing, a warm one, selects its codes from this): each rule module's name
    starts with its code (`amp101_factory_default_dtype` holds AMP101), and the rules off by
    default are listed in data/rule_defaults.py. tests/test_rules.py checks both against
    all_rules()."""
    if _REGISTRY is not None:
        return {code: rule.default for code, rule in _REGISTRY.items()}
    codes = sorted(info.name.split("_", 1)[0].upper() for info in pkgutil.iter_modules(__path__)
                   if info.name.startswith("amp"))
    return {code: code not in OFF_BY_DEFAULT for code in codes}


def all_rules() -> Dict[str, Rule]:
    """Every rule by code, discovered from the modules of this package (sorted by code)."""
    global _REGISTRY
    if _REGISTRY is None:
        found: Dict[str, Rule] = {}
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("amp"):
                continue
            module = importlib.import_module(f"{__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, Rule)
                    and value is not Rule
                    and value.__module__ == module.__name__
                ):
                    found[value.code] = value()
        _REGISTRY = dict(sorted(found.items()))
    return _REGISTRY
