"""GradScaler facts: which names and `self.` attributes hold a scaler, and with what `enabled=`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from amplint.facts.names import resolve_expr
from amplint.facts.regions import Enabled, bound_arguments, literal_bool
from amplint.facts.tree import Collector, Frame

SCALER_APIS = {
    "torch.amp.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor",
                             "growth_interval", "enabled"),
    "torch.cuda.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor",
                                  "growth_interval", "enabled"),
    "torch.cpu.amp.GradScaler": ("init_scale", "growth_factor", "backoff_factor",
                                 "growth_interval", "enabled"),
    "torch.GradScaler": ("device", "init_scale", "growth_factor", "backoff_factor",
                         "growth_interval", "enabled"),
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": (
        "device", "init_scale", "backoff_factor", "growth_factor", "growth_interval", "enabled",
        "process_group"),
}

ScalerKey = Tuple[str, str]  # ("name", "scaler") or ("self", "scaler")


@dataclass(eq=False)
class Scaler:
    key: ScalerKey
    call: cst.Call
    frame: Frame
    enabled: Enabled


def scaler_key(target: cst.BaseExpression) -> Optional[ScalerKey]:
    if isinstance(target, cst.Name):
        return ("name", target.value)
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        if target.value.value == "self":
            return ("self", target.attr.value)
    return None


class ScalerAnalysis:
    def __init__(self, tree: Collector) -> None:
        self.scalers: Dict[ScalerKey, Scaler] = {}
        self.constructions = []
        for site in tree.calls:
            qualified = resolve_expr(site.node.func, site.frame)
            if qualified in SCALER_APIS:
                self.constructions.append(site)
        by_call = {id(site.node): site for site in self.constructions}
        for assign in tree.assigns:
            site = by_call.get(id(assign.value))
            if site is None:
                continue
            qualified = resolve_expr(site.node.func, site.frame)
            args = bound_arguments(site.node, SCALER_APIS[qualified])  # type: ignore[index]
            flag = literal_bool(args.get("enabled")) if "enabled" in args else True
            enabled = Enabled.MAYBE if flag is None else (Enabled.TRUE if flag else Enabled.FALSE)
            for target in assign.targets:
                key = scaler_key(target)
                if key is not None:
                    self.scalers[key] = Scaler(key, site.node, assign.frame, enabled)

    @property
    def any(self) -> bool:
        return bool(self.constructions)
