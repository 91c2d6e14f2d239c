"""AMP153 through the class flow (amplint/analysis/project/wrapper_entries.py): the model a bfloat16
region calls was wrapped in `nn.DataParallel` by a helper of another file, on one branch of
several, and reached the region through a parameter and a trainer attribute. The flow value
`("wrap", inner, ...)` keeps the wrapper (flowvalues.py), the class flow's holds carry it
(classvalues.py), and the calling file gets an `EntryWrappedCall`.

tests/projects/dp_imagenet_placement imitates pytorch/examples (imagenet/main.py's device
placement: DDP with one GPU per process, `model.cuda(args.gpu)`, else
`torch.nn.DataParallel(model).cuda()`), split into lib/setup.py `place_model`, lib/engine.py
`Trainer` (the region) and nets/ (the model). The corrected twin applies autocast in
`WideResNet.forward`, the AMP docs' fix.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, assert_warm_run_follows_an_edit, load

SETTINGS = Settings.default()
NAME = "dp_imagenet_placement"
FINDING = ("lib/engine.py", 19, "AMP153")
BARE = ("    return torch.nn.DataParallel(model).cuda()\n", "    return model.cuda()\n")


def amp153(files):
    return code_findings(files, "AMP153", SETTINGS)


def test_a_wrapper_made_by_a_helper_of_another_file_reaches_the_trainers_region():
    found, results = amp153(load(NAME))
    assert found == [FINDING]
    (message,) = [d.message for r in results.values() for d in r.diagnostics if d.code == "AMP153"]
    assert "`self.model` may be an `nn.DataParallel` of `WideResNet`" in message
    assert "torch.nn.DataParallel(model) at lib/setup.py:18; place_model(...) at main.py:26" in message
    assert "defined at nets/wide_resnet.py:30" in message


def test_twin_with_autocast_in_forward_is_silent():
    files = load(NAME, (("    def forward(self, x):\n        x = self.stages(",
                         "    @torch.autocast(\"cuda\", dtype=torch.bfloat16)\n"
                         "    def forward(self, x):\n        x = self.stages("),))
    assert amp153(files)[0] == []


def test_a_helper_that_returns_the_bare_model_on_every_branch_is_silent():
    assert amp153(load(NAME, (BARE,)))[0] == []


def test_a_float16_region_is_silent():
    files = load(NAME, (('with torch.autocast("cuda", dtype=torch.bfloat16):',
                         'with torch.autocast("cuda", dtype=torch.float16):'),))
    assert amp153(files)[0] == []


def test_a_wrapped_library_model_is_silent():
    """torchvision's model: no project class whose forward the rule could read."""
    files = load(NAME, (("from nets import build_net\n", "from nets import build_net\nimport torchvision\n"),
                        ("place_model(build_net(args.arch), args)",
                         "place_model(torchvision.models.__dict__[args.arch](), args)")))
    assert amp153(files)[0] == []


def test_warm_run_follows_an_edit_of_the_helper_file_only(tmp_path):
    assert_warm_run_follows_an_edit(tmp_path, NAME, "lib/setup.py", (BARE,), "AMP153", [FINDING])


def test_the_unwrapped_module_is_not_the_wrapper():
    """`model.module` (and `m.module if isinstance(m, DataParallel) else m`) is the module
    itself, called in the caller's thread: no replicas, nothing to report (a reviewer's probes)."""
    for stored in ("        self.model = model.module\n",
                   "        self.model = model.module if isinstance(model, torch.nn.DataParallel) else model\n"):
        found, _ = amp153(load(NAME, (("        self.model = model\n", stored),)))
        assert found == [], stored


def test_a_single_device_dataparallel_is_not_the_wrapper():
    """`device_ids=[0]`: DataParallel calls the module itself on one device."""
    files = load(NAME, (("torch.nn.DataParallel(model)", "torch.nn.DataParallel(model, device_ids=[0])"),))
    assert amp153(files)[0] == []
