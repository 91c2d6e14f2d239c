"""For `--explain` and the docs: how amplint decides that code runs under autocast."""

EXPLAIN = """\
## How amplint decides that code runs under autocast

A line is *under autocast* when it runs inside an autocast region, enabled or maybe enabled:

- in the body of `with torch.autocast(...)` (any spelling: `torch.amp.autocast`,
  `torch.cuda.amp.autocast`, an imported `autocast`, a name or `functools.partial` bound to
  one, `nullcontext() if ... else autocast(...)`), of `with accelerator.autocast():`,
  `with fabric.autocast():` or `with optim_wrapper.optim_context(model):`, or of a function
  decorated with autocast or mmcv's `@auto_fp16`;
- in a function that such a region calls, in the same file or, when a whole project is linted,
  in another file: amplint follows imports (absolute, relative, re-exports through
  `__init__.py`), instances (`crit = FocalLoss()`, `self.crit = FocalLoss()` then
  `crit(out, y)` runs `FocalLoss.forward`) and inherited methods;
- in code a framework runs under autocast once mixed precision is on in the project:
  Lightning `Trainer(precision="16-mixed" | "bf16-mixed" | 16 | "16" | "bf16")` or a
  LightningCLI YAML `trainer: precision:` (`training_step`, `validation_step`, `test_step`,
  `predict_step` and `forward` of LightningModule subclasses); Fabric
  `Fabric(precision=...)` (`forward` of the modules given to `fabric.setup`); accelerate
  `Accelerator(mixed_precision="fp16" | "bf16")` (`forward` of the models given to
  `accelerator.prepare`); mmengine / MMDetection 3 `optim_wrapper = dict(type="AmpOptimWrapper")`
  (`forward` and `loss` of model classes registered in an mm* `MODELS` registry or derived
  from an mm* model base); detectron2 `AMPTrainer`, `SOLVER.AMP.ENABLED: True` (YAML or
  Python) or LazyConfig `train.amp.enabled = True` (`forward` of classes registered in a
  detectron2 registry or derived from a `detectron2.modeling` class); Hugging Face
  `TrainingArguments(fp16=True | bf16=True)` (`forward` of PreTrainedModel subclasses and of
  the model given to `Trainer(model=...)`; `compute_loss` is not autocast by current
  transformers, only the model's forward is);
- in modules declared to run under autocast: `[tool.amplint] autocast-modules =
  ["pkg/models/**"]`, with `autocast-device` (default "cuda") and `autocast-dtype`
  (default "float16").

A precision given as an expression (`precision=args.precision`, `enabled=use_amp`) makes a
*maybe enabled* region: the hazard is reported, since it is real in the mixed-precision run.
`enabled=False`, `"32-true"`, `"16-true"`, `mixed_precision="no"` make none. A region's device
and dtype travel with it: hazards that exist only on CUDA or only in float16 are not reported in
regions known to be on the CPU or in bfloat16. When several regions reach the same function,
the most hazardous one is cited.

Every message says why: `(autocast at line 12)`, `(called at line 30 under the autocast region
at line 12)`, `(called at train.py:14 under the autocast region at train.py:12)` (`called at train.py:14 and
2 more` when other calls under autocast reach it too),
`(Lightning runs `LitModel.training_step` under autocast: Trainer(precision="16-mixed") at
main.py:30)`. A file named on the command line (`amplint losses.py`) is linted in the context
of its project; with `--isolated-files` it uses only what that file shows.
"""
