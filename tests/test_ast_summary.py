"""The on-demand summaries from Python's `ast` (amplint/analysis/project/ast_summary.py) against
LibCST's portable summaries: equal field for field (lines included), or refused.

(a) handwritten modules shaped like the call-site, registry and model files of detectron2,
mmdetection, fairseq and timm, one construct group each; (b) every .py file of torch's own
nn/modules, optim and utils/data (torch is installed wherever the tests run)."""

from __future__ import annotations

import os
import textwrap

import pytest

from amplint.analysis.facts import FileFacts
from amplint.analysis.parsing import parse
from amplint.analysis.project import needs_summary
from amplint.analysis.project.ast_summary import Refusal, ast_summary
from amplint.analysis.project.summary import portable_summary
from amplint.run import project_inputs


def libcst_summary(path, text):
    module = parse(text)
    return portable_summary(path, text, module, FileFacts(module))


def both(text, path="pkg/mod.py"):
    text = textwrap.dedent(text)
    assert not needs_summary(text)
    return ast_summary(path, text), libcst_summary(path, text)


SNIPPETS = {
    "imports": """
        import torch
        import torch.nn as nn
        import os.path
        from torch.nn import functional as F, Linear
        from .losses import FocalLoss, dice as dice_loss
        from .. import utils
        from . import heads
        from ..models.builder import *
        try:
            from apex import amp_C
        except ImportError:
            from fallback import amp_C
        if os.name == "nt":
            from .win import helper
        else:
            from .posix import helper

        def use():
            import numpy as np
            from .local import thing
            return FocalLoss(np.zeros(3)), thing(), helper(), heads.Head(), utils.build(), dice_loss(F.relu)
    """,
    "classes and methods": """
        import torch.nn as nn
        from .backbone import Backbone, BACKBONE_REGISTRY
        from mmdet.models.builder import HEADS

        @BACKBONE_REGISTRY.register()
        class ResNet(Backbone):
            def __init__(self, depth, norm="BN", *, out_features=None):
                super().__init__()
                self.stem = BasicStem(3, 64)
                self.stages = nn.ModuleList([Block(64) for _ in range(depth)])
                self.head = nn.Sequential(nn.Linear(64, 10), Block(10))
                self.extra = Block(5).cuda().half()

            def forward(self, x):
                x = self.stem(x)
                for stage in self.stages:
                    x = stage(x)
                for i, blk in enumerate(self.head):
                    x = blk(x)
                for name, mod in self.named.items():
                    x = mod(x)
                return self.head(self.extra(x))

            @classmethod
            def from_config(cls, cfg):
                return cls(cfg.MODEL.DEPTH)

            @property
            def size(self):
                return self._size

            @size.setter
            def size(self, value):
                self._size = value

        class BasicStem(nn.Module):
            def forward(self, x):
                return self.conv(x)

        class Block(BasicStem):
            pass

        @HEADS.register_module()
        class Head(nn.Module, metaclass=type):
            def forward(self, x):
                return self.forward_train(x) + self.other.method(x)

        HEADS.register_module(module=Block)
        HEADS.register("stem")(BasicStem)

        class Outer:
            class Inner(Block):
                def run(self):
                    return self.go()
    """,
    "functions, calls and values": """
        import functools
        from functools import partial
        from torch.nn.parallel import DistributedDataParallel as DDP
        import torch
        from .models import build_model, Net
        from .registry import MODELS, build_from_cfg
        import timm

        def train(cfg, model: "Net", loader, opt: Net = None, *args, device="cuda", **kwargs):
            net = build_model(cfg.model)
            net = DDP(net, device_ids=[0])
            net = torch.compile(net)
            other = MODELS.build(cfg.other)
            made = build_from_cfg(cfg.head, MODELS)
            created = timm.create_model("vit_small_patch16_224.augreg_in21k", pretrained=True)
            hub = timm.create_model("hf-hub:timm/vit", pretrained=True)
            plain = timm.create_model(cfg.name)
            half = net.half()
            cast = net.to(torch.float16)
            bf = net.to("cuda", dtype=torch.bfloat16)
            pick = net if cfg.flag else other
            either = net or other
            a, b = make_pair()
            c, *rest = build_model(cfg), Net()
            (d, e) = [net, other]
            layers = []
            layers.append(Net())
            layers.extend([Net(), Net()])
            table = {"a": Net(), "b": other}
            comp = [Net() for _ in range(3)]
            gen = dict((k, Net()) for k in "ab")
            dcomp = {k: Net() for k in "ab"}
            sub = layers[0]
            sub(torch.zeros(1))
            layers[cfg.index](loader)
            step = partial(train_step, model=net, data=loader)
            step2 = functools.partial(Net, dim=8)
            fn = lambda x: net.forward_features(x)
            fn(loader)
            for batch in loader:
                loss = net(batch, target=batch.y, **kwargs)
                other.backward(loss, *args)
            result = run(net, opt, [a, b], {"k": c}, flag=True, name=None, scale=1.5)
            return result, model.module, net._orig_mod.encoder

        def train_step(model, data):
            return model(data)

        def make_pair():
            return Net(), Net()

        def run(model, opt, items, mapping, flag, name, scale):
            model.eval()
            model.train(False)
            model.zero_grad()
            return model.forward_test(items)

        async def serve(model):
            async with model.lock() as held:
                await model.infer(held)
            async for x in model.stream():
                yield x

        def outer():
            def inner(y):
                return Net()(y)
            return inner
    """,
    "lines of multi-line and parenthesised calls": """
        from .models import build_model, Net

        def setup(cfg):
            model = build_model(
                cfg.model,
                Net(
                    cfg.dim,
                ),
            )
            wrapped = (
                build_model(cfg.other)
            )
            both = ((
                Net(1)).eval())
            chained = (
                build_model(cfg)
                .cuda()
                .eval()
            )
            nested = build_model(build_model(
                cfg.inner), Net(2))
            value = build_model(  # a comment
                cfg.x)
            value2 = build_model(
                # a comment line
                (Net(3)),
            )
            cont = build_model \\
                (cfg.y)
            text = f"{build_model(cfg)}"
            x = 1; y = build_model(cfg); z = Net(); return model, wrapped, both, chained, nested, value, value2, cont, text, x, y, z

        def short(cfg): return build_model(cfg)

        def suite(cfg):
            if cfg.a: m = build_model(cfg); return m
            elif cfg.b:
                return Net()
            else:
                if cfg.c:
                    return build_model(cfg.c)
            while cfg.d:
                try:
                    return Net(4)
                except ValueError as err:
                    return build_model(err)
                else:
                    return Net(5)
                finally:
                    cfg.close()
            with cfg.ctx() as ctx:
                return ctx.model()
    """,
    "annotations and defaults": """
        from typing import Optional, Union
        import torch.nn as nn
        from .models import Net, Head

        def fit(model: Net, head: Optional[Head] = None, other: Union[Net, Head] = Head(),
                third: "Net" = None, fourth: "Optional[Head]" = None, fifth: Net | None = None,
                tensor: torch.Tensor = None, module: nn.Module = None,
                long: Optional[Union[Net, Head, Net, Head, Net, Head, Net, Head]] = None,
                *, sixth: Net = Net(), seventh=build()):
            return model(head)

        def build():
            return Net()
    """,
    "disabled regions (force_fp32, custom_fwd)": """
        import torch
        from mmcv.runner import force_fp32
        from torch.cuda.amp import custom_fwd
        from .losses import FocalLoss, build_loss

        class Head:
            def __init__(self):
                self.crit = FocalLoss()

            @force_fp32(apply_to=("x",))
            def loss(self, x):
                with torch.no_grad():
                    y = self.helper(x)
                def inner(z):
                    return build_loss(z)
                return self.crit(x) + build_loss(y) + inner(x)

            @custom_fwd(cast_inputs=torch.float32)
            def forward(self, x):
                return self.crit(x, self.loss(x))

            @custom_fwd
            def plain(self, x):
                return self.crit(x)

            def helper(self, x):
                return self.loss(x)
    """,
    "module level code": """
        import torch
        from .models import Net, build_model

        MODEL = build_model("r50")
        BACKUP = Net()
        if torch.cuda.is_available():
            DEVICE = MODEL.cuda()
        for key in ("a", "b"):
            build_model(key)
        with open("x") as handle:
            LOADED = Net.from_pretrained(handle)

        class Config:
            model = Net()
            size: int = 3

        def main():
            global MODEL
            out = MODEL(torch.zeros(1))
            BACKUP(out)
            return LOADED.predict(out)
    """,
    "calls of the class's own methods on self (nnUNet v2 _build_loss)": """
        from torch import nn

        class Trainer:
            def _build_loss(self):
                return Loss()

            @property
            def wrapped(self):
                return Loss()

            def initialize(self):
                self.loss = self._build_loss()
                self.held = self.network(1)
                self.prop = self.wrapped()
                helper = self._build_loss().cuda()
                nested = [self._build_loss() for _ in range(2)]
                return helper, nested

            def network(self, x):
                return nn.Linear(x, x)
    """,
    "reflective lookups (pytorch/examples imagenet --arch, importlib)": """
        import importlib
        import models
        from . import nets
        from models import resnet as rn

        def build(args, cfg):
            net = getattr(models, args.arch)(num_classes=10)
            other = getattr(models, "ResNet")
            alt = models.__dict__[args.arch]
            third = getattr(cfg, "model")
            dyn = getattr(nets, cfg.name, None)
            mod = importlib.import_module("models." + "resnet")
            mod2 = importlib.import_module("models." + args.arch)
            bad = getattr(models, "not-an-id")
            wrapped = build2(models.__dict__[args.arch], getattr(rn, args.arch))
            own = globals()[args.arch](num_classes=10)
            listed = vars(models)[cfg.name]
            named = globals()["Trainer"]
            filename = "models." + args.arch + "_model"
            mod3 = importlib.import_module(filename)
            mod4 = importlib.import_module(name="pkg." + cfg.name)
            two = "a" + args.arch + cfg.name
            for key, cls in mod3.__dict__.items():
                picked = cls
            return net, other, alt, third, dyn, mod, mod2, bad, wrapped, own, listed, named, mod4, two, picked

        def shadowed(args):
            globals = dict
            return globals()[args.arch]

        class Trainer:
            def setup(self):
                self.model = getattr(models, self.cfg.arch)()
                self.model2 = getattr(self, "model")
                self.crit = (
                    getattr(models, "Loss")
                )
    """,
    "classes and functions passed as arguments (detectron2 make_stage, timm build_model_with_cfg)": """
        import functools
        import torch
        from torch import nn
        from .blocks import BottleneckBlock
        from .helpers import build_model_with_cfg, init_weights

        class Net(nn.Module):
            def __init__(self, block=None):
                super().__init__()
                blocks = make_stage(block_class=BottleneckBlock, num_blocks=2, norm=nn.BatchNorm2d)
                self.stage = nn.Sequential(*blocks)
                self.apply(init_weights)
                self.head = build_model_with_cfg(Head, functools.partial(BottleneckBlock, k=1), torch.float16)

        class Head(nn.Module):
            pass

        def make_stage(block_class, num_blocks, norm):
            return [block_class(norm=norm) for _ in range(num_blocks)]

        def convert(model, layer):
            model.stage.apply(to_half)
            model.head.to(torch.float16)
            model.to(device="cuda", dtype=torch.bfloat16)
            model.stage.type(torch.cuda.HalfTensor)
            layer.weight.data = layer.weight.data.type(torch.half)
            model.to("cuda")

        def to_half(layer):
            layer.weight.data = layer.weight.data.half()
    """,
    # Lightning's fabric/utilities/warnings.py, fabric/utilities/distributed.py and
    # pytorch/loops/fit_loop.py: names bound once to an import's attribute (facts.tree
    # `Frame.aliases`), which LibCST's summary resolves at their calls and values; then every
    # shape that is not an alias (bound twice, under `if`, in a class body, global, deleted,
    # a lambda's or a comprehension's name, walrus) and partials facts reads or does not
    "import aliases (Lightning warnings, distributed, fit_loop)": """
        import warnings
        import torch
        import torch.nn.functional as F
        from functools import partial
        from lightning.pytorch.trainer.states import RunningStage, TrainerFn
        from lightning.pytorch.trainer.connectors.data_connector import _process_dataloader
        from .helpers import checkpoint
        from . import helpers

        _default_format_warning = warnings.formatwarning
        bce = F.binary_cross_entropy
        bce_again = bce
        clip = partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)
        scaler = partial(torch.cuda.amp.GradScaler, growth_factor=2.0)
        cast = partial(torch.Tensor.to, dtype=torch.float16)
        relative = helpers.build
        twice = F.relu
        twice = F.gelu
        if torch.cuda.is_available():
            branch = F.silu
        dropped = F.dropout
        del dropped
        shadowed = F.softmax
        lam = lambda shadowed: shadowed
        comp = F.tanh
        squares = [comp for comp in range(3)]
        glob = F.elu
        walrus = F.sigmoid
        half = torch.float16
        hop1 = F.relu
        hop2 = hop1
        hop3 = hop2
        hop4 = hop3
        hop5 = hop4
        hop6 = hop5
        hop7 = hop6

        def _custom_format_warning(message, category, filename, lineno, line=None):
            walrus(message), hop5(message), hop6(message), hop7(message)
            return _default_format_warning(message, category, filename, lineno, line)

        def _get_default_process_group_backend_for_device(device):
            device_backend_map = torch.distributed.Backend.default_device_backend_map
            return device_backend_map[device.type]

        class FitLoop:
            gather = torch.gather

            def setup_data(self, trainer, loader):
                global glob
                trainer_fn = TrainerFn.FITTING
                stage = RunningStage.TRAINING
                fn = bce_again
                dl = _process_dataloader(trainer, trainer_fn, stage, loader)
                self.model.to(dtype=half)
                if (walrus := None) is None:
                    pass
                return (fn(dl), clip(self.model.parameters()), scaler(), cast(dl), relative(dl),
                        twice(dl), branch(dl), shadowed(dl), comp(dl), glob(dl), self.gather(dl),
                        checkpoint(dl), glob, trainer_fn)
    """,
    # litgpt's config property and ModuleDict(dict(...)) (classvalues' property reads, the
    # builtin dict's values); a shadowed `dict` and a `**` are not the builtin display
    "properties_and_dict_calls": """
        import functools
        import torch.nn as nn
        from .norms import RMSNorm

        class Config:
            @property
            def norm_class(self):
                return functools.partial(RMSNorm, eps=1e-6)

            @functools.cached_property
            def head(self):
                return nn.Linear(4, 4)

            @norm_class.setter
            def norm_class(self, value):
                self._norm = value

        class GPT(nn.Module):
            def __init__(self, config, extra):
                super().__init__()
                self.transformer = nn.ModuleDict(dict(h=nn.ModuleList(RMSNorm(4) for _ in range(2)), ln_f=config.norm_class(4)))
                self.more = nn.ModuleDict(dict(extra, ln=RMSNorm(4)))
                self.rest = nn.ModuleDict(dict(**extra))

        def local_dict():
            def dict(**parts):
                return parts
            return dict(a=RMSNorm(4))
    """,
    "matched casts (yolov10's profile)": """
        import torch

        def profile(inputs, ops, half=False):
            for x in inputs:
                for m in ops:
                    m = m.half() if hasattr(m, "half") and x.dtype is torch.float16 else m
                    n = m.half() if half else m
                    k = m.to(torch.float16) if next(m.parameters()).dtype == torch.float32 else m
                    j = m if x.dtype == torch.float32 else m.bfloat16()
                    if x.dtype == torch.float16:
                        m.half()
                        m = m.half()
                    elif half:
                        m.half()
                    else:
                        if x.dtype == torch.bfloat16:
                            m = m.bfloat16()
                        n = m.half()
    """,
    "branch-exclusive locals (yolov10's entrypoint)": """
        from ultralytics import RTDETR, SAM, YOLO

        def entrypoint(overrides, task=None, stem=""):
            model = overrides.pop("model")
            if "rtdetr" in stem:
                model = RTDETR(model)
            elif "sam" in stem:
                head = model
                model, extra = SAM(model), YOLO(head)
                if task:
                    model = SAM(extra, model)
                else:
                    other = YOLO(model)
            elif "v8" in stem:
                model: YOLO = YOLO(model, task=task)
            else:
                for stage in range(2):
                    if stage:
                        model = YOLO(model)
                    else:
                        kept = RTDETR(model)
                gen = [YOLO(model) for _ in range(2)]
            model.load(overrides)
            return model

        def with_param(model, flag):
            if flag:
                model = SAM(model)
            else:
                model = YOLO(model)
            return model
    """,
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_ast_summary_equals_libcst(name):
    fast, slow = both(SNIPPETS[name])
    assert not isinstance(fast, Refusal), fast
    assert fast == slow


def test_the_comparison_sees_lines_and_values():
    """The equality the tests rely on compares lines and values: one blank line moves the
    calls, and a renamed callee changes a reference."""
    text = textwrap.dedent(SNIPPETS["lines of multi-line and parenthesised calls"])
    fast = ast_summary("pkg/mod.py", text)
    assert fast != libcst_summary("pkg/mod.py", text.replace("def setup", "\ndef setup"))
    assert fast != libcst_summary("pkg/mod.py", text.replace("Net(4)", "Head(4)"))


REFUSED = {
    "a lookup by subscript in a call spanning lines": """
        import models
        def build(args):
            return build2(
                models.__dict__[args.arch],
            )
    """,
    "detectron2 LazyConfig amp dict": """
        train = dict(output_dir="out", amp=dict(enabled=True))
    """,
    "match": """
        def pick(x):
            match x:
                case 1:
                    return build()
    """,
    "except star": """
        def pick(x):
            try:
                return build()
            except* ValueError:
                pass
    """,
    "multi-line annotation": """
        from .models import Net
        def fit(model: (
                Net)):
            return model
    """,
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_constructs(name):
    text = textwrap.dedent(REFUSED[name])
    assert not needs_summary(text)
    assert isinstance(ast_summary("pkg/mod.py", text), Refusal)


def _torch_files():
    torch = pytest.importorskip("torch")
    root = os.path.dirname(torch.__file__)
    for sub in ("nn/modules", "optim", "utils/data", "nn/parallel"):
        for directory, _, names in os.walk(os.path.join(root, sub)):
            for name in sorted(names):
                if name.endswith(".py"):
                    yield os.path.join(directory, name)


def test_installed_torch_sources_equal_or_refused():
    files = refused = 0
    unequal = []
    for path in _torch_files():
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if needs_summary(text):
            continue
        files += 1
        fast = ast_summary(path, text)
        if isinstance(fast, Refusal):
            refused += 1
        elif fast != libcst_summary(path, text):
            unequal.append(path)
    assert files > 30
    assert unequal == []
    assert refused < files / 4


def test_summarize_file_takes_the_ast_path_and_falls_back(tmp_path, monkeypatch):
    plain = tmp_path / "plain.py"
    plain.write_text(textwrap.dedent(SNIPPETS["functions, calls and values"]))
    refused = tmp_path / "refused.py"
    refused.write_text(textwrap.dedent(REFUSED["match"]))
    expected = libcst_summary(str(plain), plain.read_text())
    parsed = []
    real_parse = project_inputs.parse
    monkeypatch.setattr(project_inputs, "parse", lambda text: parsed.append(text) or real_parse(text))
    assert project_inputs.summarize_file(str(plain)) == expected
    assert parsed == []  # no LibCST parse
    assert project_inputs.summarize_file(str(refused)) == libcst_summary(str(refused), refused.read_text())
    assert len(parsed) == 1  # the refused file: LibCST


def test_models_a_framework_runs():
    """summary.prepared (accelerate/Fabric `prepare`/`setup`, HF `Trainer(model=, args=)`)."""
    fast, slow = both("""
        from accelerate import Accelerator
        from transformers import Trainer
        from .models import Net, Head
        from .data import loader

        def main(fabric, cfg):
            accelerator = Accelerator()
            model = Net(cfg)
            model, opt = accelerator.prepare(model, make_opt(), *cfg.more)
            head = fabric.setup(Head(cfg))
            trainer = Trainer(model=Net.from_pretrained(cfg.path), args=cfg.args)
            torch_thing = torch.setup(Net())
            return model, head, trainer

        def make_opt():
            return None
    """)
    assert not isinstance(fast, Refusal)
    assert fast.prepared and fast == slow


def test_parenthesised_with_items():
    """`with (...):` spanning lines, as Lightning's tests write them (Python 3.9+)."""
    fast, slow = both("""
        from unittest import mock
        from .trainer import Runner

        def test_fit(tmp_path):
            with (
                mock.patch("a.b") as patched,
                Runner(tmp_path).session() as session,
            ):
                session.fit(patched)
            with (
                Runner(tmp_path)
            ) as single:
                single.fit()
            with (
                (Runner(tmp_path))
            ):
                pass
    """)
    assert not isinstance(fast, Refusal)
    assert fast == slow
