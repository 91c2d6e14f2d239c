"""Framework vocabularies of the GradScaler protocol: which framework calls amount to which
protocol events, each entry with the line of the framework's own code that does it.

A call matches an entry when its method is the entry's `method` and the last part of its
receiver contains one of the entry's `receivers` (`accelerator.clip_grad_norm_(...)`,
`self.accelerator.unscale_gradients(opt)`, `optim_wrapper.update_params(loss)`), and, for an
entry that is not `distinctive`, the file imports the framework (`module`). The receiver `self`
matches only an entry that names it (Lightning's methods of the module itself): elsewhere a
`self.clip_grad_norm_(...)` is the framework's own code.

Event names (amplint.facts.framework_verbs turns them into scaler events):
- `backward`: a backward pass (scaled by the framework's scaler when mixed precision is on);
- `unscale`: unscales the gradients of the optimizer passed as `optimizer` (every prepared
  optimizer when none is passed);
- `unscale_all`: unscales the gradients of every optimizer the framework prepared;
- `clip`: clips gradients;
- `step_update`: steps the optimizer through the scaler and updates the scale (a scaler's
  per-optimizer unscale state is reset);
- `region`: a context manager whose body runs under autocast.
Rules read only the events they need; entries whose events no rule reads yet are here so that
what the framework does is written down once, with its source.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class Verb:
    framework: str
    module: str  # the top-level import that names the framework
    receivers: Tuple[str, ...]  # tokens of the receiver's last name, lower case
    method: str
    events: Tuple[str, ...]
    source: str  # "<package version>, <path>:<line>: <the line>"
    optimizer: Optional[str] = None  # keyword of the optimizer argument (also positional 0)
    distinctive: bool = False  # the method name is the framework's own: no import needed


_ACC = "accelerate 1.15.0, accelerate/"
_MME = "mmengine 0.10.7, mmengine/optim/optimizer/"
_PL = "lightning (GitHub HEAD, 2026-11), src/lightning/pytorch/"
_DS = "deepspeed 0.19.8, deepspeed/runtime/engine.py:"
_FS = "fairseq (GitHub HEAD), fairseq/optim/fp16_optimizer.py:"

VERBS: Tuple[Verb, ...] = (
    # -- accelerate: Accelerator and AcceleratedOptimizer ------------------------------------
    Verb("accelerate", "accelerate", ("accelerator",), "backward", ("backward",),
         _ACC + "accelerator.py:2857: self.scaler.scale(loss).backward(**kwargs)"),
    Verb("accelerate", "accelerate", ("accelerator",), "unscale_gradients", ("unscale",),
         _ACC + "accelerator.py:2955: self.scaler.unscale_(opt)  (every prepared optimizer "
         "when `optimizer` is None, 2948)", optimizer="optimizer", distinctive=True),
    Verb("accelerate", "accelerate", ("accelerator",), "clip_grad_norm_",
         ("unscale_all", "clip"),
         _ACC + "accelerator.py:3047: self.unscale_gradients()  (FSDP path: 3015)"),
    Verb("accelerate", "accelerate", ("accelerator",), "clip_grad_value_",
         ("unscale_all", "clip"), _ACC + "accelerator.py:3074: self.unscale_gradients()"),
    Verb("accelerate", "accelerate", ("accelerator",), "accumulate", (),
         _ACC + "accelerator.py:1256: def accumulate(self, *models)  (the prepared "
         "optimizer steps only when sync_gradients: optimizer.py:169)"),
    Verb("accelerate", "accelerate", ("accelerator",), "autocast", ("region",),
         _ACC + "accelerator.py:4219: def autocast(self, autocast_handler: AutocastKwargs = None)"),
    Verb("accelerate", "accelerate", ("optimizer", "optim", "opt"), "step", ("step_update",),
         _ACC + "optimizer.py:173-174: self.scaler.step(self.optimizer, closure); "
         "self.scaler.update()"),
    # -- mmengine: OptimWrapper / AmpOptimWrapper -------------------------------------------
    Verb("mmengine", "mmengine", ("optim_wrapper", "optimizer_wrapper"), "update_params",
         ("backward", "step_update"),
         _MME + "optimizer_wrapper.py:196: self.backward(loss); 201-202: self.step(**step_kwargs); "
         "self.zero_grad(**zero_kwargs)", distinctive=True),
    Verb("mmengine", "mmengine", ("optim_wrapper", "optimizer_wrapper"), "backward",
         ("backward",),
         _MME + "amp_optimizer_wrapper.py:126: self.loss_scaler.scale(loss).backward(**kwargs)  "
         "(OptimWrapper: optimizer_wrapper.py:220: loss.backward(**kwargs))"),
    Verb("mmengine", "mmengine", ("optim_wrapper", "optimizer_wrapper"), "step",
         ("unscale", "clip", "step_update"),
         _MME + "amp_optimizer_wrapper.py:137-140: self.loss_scaler.unscale_(self.optimizer); "
         "self._clip_grad(); self.loss_scaler.step(...); self.loss_scaler.update(...)"),
    Verb("mmengine", "mmengine", ("optim_wrapper", "optimizer_wrapper"), "optim_context",
         ("region",),
         _MME + "amp_optimizer_wrapper.py:189: with super().optim_context(model), "
         "autocast(dtype=self.cast_dtype):", distinctive=True),
    # -- Lightning: LightningModule (manual optimization) and the AMP precision plugin ------
    Verb("lightning", "lightning", ("self",), "manual_backward", ("backward",),
         _PL + "core/module.py:1125: self.trainer.strategy.backward(loss, None, ...); "
         "plugins/precision/amp.py:83: tensor = self.scaler.scale(tensor)", distinctive=True),
    Verb("lightning", "lightning", ("self",), "clip_gradients", ("clip",),
         _PL + "core/module.py:1299: self.trainer.precision_plugin.clip_gradients(...)  "
         "(plugins/precision/amp.py:121; the unscale_ is in optimizer_step, amp.py:108)"),
    Verb("lightning", "lightning", ("opt", "optimizer"), "step", ("unscale", "step_update"),
         _PL + "plugins/precision/amp.py:108: self.scaler.unscale_(optimizer); 115-116: "
         "self.scaler.step(optimizer, **kwargs); self.scaler.update()"),
    # -- DeepSpeed: the engine scales, clips and steps by itself -----------------------------
    Verb("deepspeed", "deepspeed", ("engine", "model_engine"), "backward", ("backward",),
         _DS + "3382: def backward(self, loss, retain_graph=False, scale_wrt_gas=True)"),
    Verb("deepspeed", "deepspeed", ("engine", "model_engine"), "step", ("step_update",),
         _DS + "3567: def step(self, lr_kwargs=None)  (_take_model_step at the "
         "accumulation boundary)"),
    # -- fairseq: FP16Optimizer / MemoryEfficientFP16Optimizer -------------------------------
    Verb("fairseq", "fairseq", ("optimizer",), "backward", ("backward",),
         _FS + "107-108 (FP16Optimizer), 400-401 (MemoryEfficientFP16Optimizer): "
         "loss = self.scaler.scale(loss); loss.backward()"),
    # Its unscale (`_unscale_grads`, 172) multiplies by a factor it then resets to 1.0: calling
    # it twice is harmless, so no `unscale` event is recorded for it.
    Verb("fairseq", "fairseq", ("optimizer",), "clip_grad_norm", ("clip",),
         _FS + "191 / 421: def clip_grad_norm(...)  (multiplies by the inverse scale, "
         "updates the dynamic loss scaler)"),
    Verb("fairseq", "fairseq", ("optimizer",), "step", ("step_update",),
         _FS + "222 / 449: self._unscale_grads()"),
)

BY_METHOD: Dict[str, Tuple[Verb, ...]] = {}
for _verb in VERBS:
    BY_METHOD[_verb.method] = BY_METHOD.get(_verb.method, ()) + (_verb,)

# The methods whose call may hold one of these events: the facts look no further on others.
METHODS = frozenset(BY_METHOD)
