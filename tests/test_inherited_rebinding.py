"""A self-rebinding through an INHERITED method (issue 26): BasicSR's
`self.net_g = self.model_to_device(self.net_g)`, `model_to_device` defined in the base class
`BaseModel` of another file, which wraps the net in DataParallel when more than one GPU is
visible and returns it. The summaries recorded `self.m(...)` only for a method the class itself
defines, so the wrap was lost and the bfloat16 region's AMP153 missed.

tests/projects/rebind_inherit_basicsr: XPixelGroup/BasicSR's layout (basicsr/models/base_model.py
`BaseModel.model_to_device`, basicsr/models/sr_model.py `SRModel(BaseModel)`, basicsr/archs
`build_network` and srresnet_arch.MSRResNet, basicsr/train.py building the model from an options
dict) in a fork whose optimize_parameters runs under a bfloat16 autocast. The clean twins (a
base that wraps only in DDP, a float16 region, a base class the project does not define) are
silent."""

from __future__ import annotations

import textwrap

from amplint.analysis.engine import Settings
from amplint.analysis.project import lint_project
from amplint.analysis.project.ast_summary import ast_summary

from project_files import load, project_findings
from test_ast_summary import libcst_summary

SETTINGS = Settings.default()
NAME = "rebind_inherit_basicsr"
SR_MODEL = "basicsr/models/sr_model.py"
DATA_PARALLEL = ("            net = DataParallel(net)\n", "            net = net.float()\n")


def findings(replace=()):
    return project_findings(lint_project(load(NAME, replace), SETTINGS))


def test_a_net_rebound_through_the_base_class_method_that_wraps_it():
    assert findings() == [(SR_MODEL, 31, "AMP153")]
    (message,) = [d.message for r in lint_project(load(NAME), SETTINGS).values() for d in r.diagnostics]
    assert "DataParallel(net) at models/base_model.py:33; self.model_to_device(self.net_g) at models/sr_model.py:14" \
        in message
    # the clean twins. The base only moves the net (DDP for several processes): nothing runs in replica threads
    assert findings([DATA_PARALLEL]) == []
    # a float16 region: the replicas' float16 is what was asked for
    assert findings([("dtype=torch.bfloat16", "dtype=torch.float16")]) == []
    # a base class the project does not define: `model_to_device` is unresolved, nothing is said
    assert findings([("from basicsr.models.base_model import BaseModel", "from mmsr.models import BaseModel")]) == []


def test_the_summaries_record_the_stored_call_alike():
    text = textwrap.dedent("""
        from .base_model import BaseModel


        class SRModel(BaseModel):
            def __init__(self, opt):
                self.net_g = self.model_to_device(self.net_g)
                self.net_d = self.net_g.cuda()
                self.output = self.net_g(opt)
    """)
    ast_flow = ast_summary("pkg/sr_model.py", text).flow
    assert ast_flow == libcst_summary("pkg/sr_model.py", text).flow
    assert ast_flow.functions["SRModel.__init__"].stores == [
        ("net_g", ("call", ("self", "model_to_device"), "self.model_to_device(self.net_g)", 7)),
        ("net_d", ("self", "net_g")),
        ("output", ("call", ("self", "net_g"), "self.net_g(opt)", 9)),
    ]
