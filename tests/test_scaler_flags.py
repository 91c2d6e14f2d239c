"""AMP122 with two flags of one object (amplint/analysis/facts/scaler_flags.py): a GradScaler
enabled by one flag, a backward branch chosen by another.

tests/projects/scaler_glue_two_flags: huggingface/transformers' legacy GLUE example layout
(run_glue.py parses `--fp16`, the apex-era flag, beside a newer `--native_amp`, creates
`torch.cuda.amp.GradScaler(enabled=opts.native_amp)` and hands it to `train(opts, ...,
scaler=grad_scaler)` of glue_train.py, which scales the loss only `if args.fp16:`). With
`--native_amp` and without `--fp16`, the plain `loss.backward()` arm runs and
`scaler.unscale_`/`scaler.step` divide unscaled gradients by the loss scale. The flag's object
reaches the callee under another name (`opts` -> `args`) and through a keyword argument.

Twins: the branch tests the scaler's own flag (silent); run_glue.py makes `--fp16` follow
`--native_amp` (`opts.fp16 = opts.native_amp`: the two are one value; silent); the scaler's
flag belongs to an object the call does not pass (silent: not the same value); `setattr` on the
object (silent: any attribute may be stored); the same shape in one file (reported).
"""

from __future__ import annotations

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.project import lint_project

from project_files import cli_findings, load, project_findings

SETTINGS = Settings.default()
NAME = "scaler_glue_two_flags"
HAZARD = [("glue_train.py", 24, "AMP122")]


def amp12(files):
    return [f for f in project_findings(lint_project(files, SETTINGS)) if f[2].startswith("AMP12")]


def test_backward_arm_chosen_by_another_flag_than_the_scalers_is_reported():
    results = lint_project(load(NAME), SETTINGS)
    assert [f for f in project_findings(results) if f[2].startswith("AMP12")] == HAZARD
    (message,) = [d.message for d in results[f"{NAME}/glue_train.py"].diagnostics if d.code == "AMP122"]
    assert "run_glue.py:40" in message and "`args.native_amp`" in message and "`args.fp16`" in message
    fixes = [d.fix for d in results[f"{NAME}/glue_train.py"].diagnostics if d.code == "AMP122"]
    assert fixes == [None]  # the scaled arm exists: which flag is right is the author's call


def test_through_the_cli(tmp_path):
    for path, text in load(NAME).items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    found = [f for f in cli_findings(tmp_path / NAME, "--no-cache") if f[2].startswith("AMP12")]
    assert [(f[0].replace("\\", "/").split("/")[-1], f[1], f[2]) for f in found] == HAZARD


def test_twin_branch_on_the_scalers_own_flag_is_silent():
    assert amp12(load(NAME, (("if args.fp16:", "if args.native_amp:"),))) == []


def test_twin_flags_linked_by_a_store_is_silent():
    files = load(NAME, (("    opts.n_gpu = torch.cuda.device_count()\n",
                         "    opts.n_gpu = torch.cuda.device_count()\n    opts.fp16 = opts.native_amp\n"),))
    assert amp12(files) == []


def test_twin_flag_of_an_object_the_call_does_not_pass_is_silent():
    files = load(NAME, (("GradScaler(enabled=opts.native_amp)", "GradScaler(enabled=amp_cfg.enabled)"),
                        ("    opts = parse_options()\n",
                         "    opts = parse_options()\n    amp_cfg = parse_options()\n")))
    assert amp12(files) == []


def test_twin_object_set_by_name_is_silent():
    files = load(NAME, (("    opts.n_gpu = torch.cuda.device_count()\n",
                         "    setattr(opts, 'n_gpu', torch.cuda.device_count())\n"),))
    assert amp12(files) == []


def test_twin_scaler_maybe_none_is_silent():
    files = load(NAME, (("grad_scaler = torch.cuda.amp.GradScaler(enabled=opts.native_amp)",
                         "grad_scaler = torch.cuda.amp.GradScaler(enabled=opts.native_amp) if opts.n_gpu else None"),))
    assert amp12(files) == []


ONE_FILE = (
    "import torch\n"
    "def run(args, model, loader, optimizer):\n"
    "    scaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n"
    "    for x, y in loader:\n"
    "        with torch.autocast('cuda', enabled=args.amp):\n"
    "            loss = model(x, y)\n"
    "        if not args.fp16:\n"
    "            loss.backward()\n"
    "        else:\n"
    "            scaler.scale(loss).backward()\n"
    "        scaler.step(optimizer)\n"
    "        scaler.update()\n"
)


def test_one_file_two_flags():
    found = [(d.line, d.code) for d in lint_source("train.py", ONE_FILE, SETTINGS).diagnostics]
    assert found == [(8, "AMP122")]
    for same in (ONE_FILE.replace("not args.fp16", "not args.amp"),
                 ONE_FILE.replace("    for x, y", "    args.fp16 = args.amp\n    for x, y"),
                 ONE_FILE.replace("def run(args,", "def run(args, args2,").replace("enabled=args.amp)\n    for", "enabled=args2.amp)\n    for"),
                 ONE_FILE.replace("    for x, y", "    args = load(args)\n    for x, y"),
                 ONE_FILE.replace("if not args.fp16:", "if not (args.fp16 or args.amp):")):
        assert [d.code for d in lint_source("train.py", same, SETTINGS).diagnostics
                if d.code == "AMP122"] == [], same
