"""Framework vocabularies of the GradScaler protocol: which framework calls amount to which
protocol events, each entry with the line of the framework's own code that does it.

A call matches an entry when its method is the entry's `method` and the last part of its
receiver contains one of the entry's `receivers` (`accelerator.clip_grad_norm_(...)`,
`self.accelerator.unscale_gradients(opt)`, `optim_wrapper.update_params(loss)`), and, for an
entry that is not `distinctive`, the file imports the framework (`module`). The receiver `self`
matches only an entry that names it (Lightning's methods of the module itself): elsewhere a
`self.clip_grad_norm_(...)` is the framework's own code.

Event names (amplint.analysis.facts.framework_verbs turns them into scaler events):
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
    release: str  # the framework's release the source was read in
    path: str  # the file, relative to the installed package's parent (`accelerate/...`)
    line: int
    code: str  # the text on that line (tests/test_scaler_vocab.py checks it where installed)
    note: str = ""
    optimizer: Optional[str] = None  # keyword of the optimizer argument (also positional 0)
    distinctive: bool = False  # the method name is the framework's own: no import needed

    @property
    def source(self) -> str:
        return f"{self.release}, {self.path}:{self.line}"


_ACC = "accelerate 1.15.0"
_MME = "mmengine 0.10.7"
_PL = "lightning 2.6.2 (GitHub 7f0c343)"
_DS = "deepspeed 0.19.8"
_FS = "fairseq 0.12.2 (GitHub 3d262bb)"
_OW = ("optim_wrapper", "optimizer_wrapper")

VERBS: Tuple[Verb, ...] = (
    # -- accelerate: Accelerator and AcceleratedOptimizer ------------------------------------
    Verb("accelerate", "accelerate", ("accelerator",), "backward", ("backward",), _ACC,
         "accelerate/accelerator.py", 2857, "self.scaler.scale(loss).backward(**kwargs)"),
    Verb("accelerate", "accelerate", ("accelerator",), "unscale_gradients", ("unscale",), _ACC,
         "accelerate/accelerator.py", 2955, "self.scaler.unscale_(opt)",
         "every prepared optimizer when `optimizer` is None (2948)",
         optimizer="optimizer", distinctive=True),
    Verb("accelerate", "accelerate", ("accelerator",), "clip_grad_norm_", ("unscale_all", "clip"),
         _ACC, "accelerate/accelerator.py", 3047, "self.unscale_gradients()", "FSDP path: 3015"),
    Verb("accelerate", "accelerate", ("accelerator",), "clip_grad_value_",
         ("unscale_all", "clip"), _ACC, "accelerate/accelerator.py", 3074,
         "self.unscale_gradients()"),
    Verb("accelerate", "accelerate", ("accelerator",), "accumulate", (), _ACC,
         "accelerate/accelerator.py", 1256, "def accumulate(self, *models):",
         "a prepared optimizer steps only when sync_gradients (optimizer.py:169)"),
    Verb("accelerate", "accelerate", ("accelerator",), "autocast", ("region",), _ACC,
         "accelerate/accelerator.py", 4219,
         "def autocast(self, autocast_handler: AutocastKwargs = None):"),
    Verb("accelerate", "accelerate", ("optimizer", "opt"), "step", ("step_update",), _ACC,
         "accelerate/optimizer.py", 173, "self.scaler.step(self.optimizer, closure)",
         "then self.scaler.update() (174), only when sync_gradients (169)"),
    # -- mmengine: OptimWrapper / AmpOptimWrapper -------------------------------------------
    Verb("mmengine", "mmengine", _OW, "update_params", ("backward", "step_update"), _MME,
         "mmengine/optim/optimizer/optimizer_wrapper.py", 196, "self.backward(loss)",
         "then self.step() and self.zero_grad() when should_update() (200-202)",
         distinctive=True),
    Verb("mmengine", "mmengine", _OW, "backward", ("backward",), _MME,
         "mmengine/optim/optimizer/amp_optimizer_wrapper.py", 126,
         "self.loss_scaler.scale(loss).backward(**kwargs)",
         "OptimWrapper: loss.backward(**kwargs) (optimizer_wrapper.py:220)"),
    Verb("mmengine", "mmengine", _OW, "step", ("unscale", "clip", "step_update"), _MME,
         "mmengine/optim/optimizer/amp_optimizer_wrapper.py", 137,
         "self.loss_scaler.unscale_(self.optimizer)",
         "then self._clip_grad(), loss_scaler.step(...), loss_scaler.update(...) (138-140)"),
    Verb("mmengine", "mmengine", _OW, "optim_context", ("region",), _MME,
         "mmengine/optim/optimizer/amp_optimizer_wrapper.py", 189,
         "with super().optim_context(model), autocast(dtype=self.cast_dtype):",
         distinctive=True),
    # -- Lightning: LightningModule (manual optimization) and the AMP precision plugin ------
    Verb("lightning", "lightning", ("self",), "manual_backward", ("backward",), _PL,
         "lightning/pytorch/core/module.py", 1125,
         "self.trainer.strategy.backward(loss, None, *args, **kwargs)",
         "the AMP plugin scales it: tensor = self.scaler.scale(tensor) "
         "(plugins/precision/amp.py:83)", distinctive=True),
    Verb("lightning", "lightning", ("self",), "clip_gradients", ("clip",), _PL,
         "lightning/pytorch/core/module.py", 1299,
         "self.trainer.precision_plugin.clip_gradients(optimizer, gradient_clip_val, "
         "gradient_clip_algorithm)",
         "the AMP plugin's unscale_ is in optimizer_step (plugins/precision/amp.py:108)"),
    Verb("lightning", "lightning", ("opt", "optimizer"), "step", ("unscale", "step_update"), _PL,
         "lightning/pytorch/plugins/precision/amp.py", 108,
         "self.scaler.unscale_(optimizer)  # type: ignore[arg-type]",
         "then self.scaler.step(...) and self.scaler.update() (115-116)"),
    # -- DeepSpeed: the engine scales, clips and steps by itself -----------------------------
    Verb("deepspeed", "deepspeed", ("engine", "model_engine"), "backward", ("backward",), _DS,
         "deepspeed/runtime/engine.py", 3382,
         "def backward(self, loss, retain_graph=False, scale_wrt_gas=True):"),
    Verb("deepspeed", "deepspeed", ("engine", "model_engine"), "step", ("step_update",), _DS,
         "deepspeed/runtime/engine.py", 3567, "def step(self, lr_kwargs=None):",
         "_take_model_step at the accumulation boundary"),
    # -- fairseq: FP16Optimizer / MemoryEfficientFP16Optimizer -------------------------------
    # Its unscale (`_unscale_grads`, 172) multiplies by a factor it then resets to 1.0: calling
    # it twice is harmless, so no `unscale` event is recorded for it.
    Verb("fairseq", "fairseq", ("optimizer",), "backward", ("backward",), _FS,
         "fairseq/optim/fp16_optimizer.py", 107, "loss = self.scaler.scale(loss)",
         "then loss.backward() (108); MemoryEfficientFP16Optimizer: 400-401"),
    Verb("fairseq", "fairseq", ("optimizer",), "clip_grad_norm", ("clip",), _FS,
         "fairseq/optim/fp16_optimizer.py", 191,
         "def clip_grad_norm(self, max_norm, aggregate_norm_fn=None):",
         "multiplies by the inverse scale; MemoryEfficientFP16Optimizer: 421"),
    Verb("fairseq", "fairseq", ("optimizer",), "step", ("step_update",), _FS,
         "fairseq/optim/fp16_optimizer.py", 222, "self._unscale_grads()",
         "MemoryEfficientFP16Optimizer: 449"),
)

# Other top-level imports that name a framework of the table.
IMPORT_ALIASES: Dict[str, str] = {"pytorch_lightning": "lightning"}

BY_METHOD: Dict[str, Tuple[Verb, ...]] = {}
for _verb in VERBS:
    BY_METHOD[_verb.method] = BY_METHOD.get(_verb.method, ()) + (_verb,)

# The methods whose call may hold one of these events: the facts look no further on others.
METHODS = frozenset(BY_METHOD)
