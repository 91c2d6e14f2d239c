"""The points-to resolver behind `amplint --call-graph`: one small program per binding construct,
each asserting the call edges the resolver must find (and, where a near miss is easy, one it
must not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from amplint.analysis.project.callgraph import build, call_graph


def graph(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return call_graph(build([str(tmp_path)]))


def one(tmp_path, text):
    return graph(tmp_path, {"app.py": text})


def test_tuple_unpacking_star_augmented_walrus_annotated(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        def c(): pass
        def d(): pass
        x, (y, z) = a, (b, c)
        first, *rest = d, a, b
        x(); y(); z(); first()
        for f in rest:
            f()
        h: object = c
        h()
        if (w := d):
            w()
    """)
    assert g["app"] == ["app.a", "app.b", "app.c", "app.d"]


def test_pairwise_unpacking_keeps_names_apart(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        x, y = a, b
        x()
    """)
    assert g["app"] == ["app.a"]


def test_for_target_over_list_and_generator(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        def gen():
            yield b
        for f in [a]:
            f()
        for f2 in gen():
            f2()
    """)
    assert g["app"] == ["app.a", "app.b", "app.gen"]


def test_with_as_binds_what_enter_returns(tmp_path):
    g = one(tmp_path, """
        class Session:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return False
            def run(self):
                pass
        with Session() as s:
            s.run()
    """)
    assert g["app"] == ["app.Session.__enter__", "app.Session.__exit__", "app.Session.run"]


def test_imports_relative_reexport_and_init(tmp_path):
    g = graph(tmp_path, {
        "pkg/__init__.py": "from .models import build\n",
        "pkg/models/__init__.py": "from .factory import build as build\n",
        "pkg/models/factory.py": """
            from ..utils import helpers
            from . import layers
            def build():
                helpers.log()
                return layers.Block()
        """,
        "pkg/models/layers.py": "class Block:\n    def __init__(self):\n        pass\n",
        "pkg/utils/helpers.py": "def log(): pass\n",
        "main.py": """
            import pkg
            import pkg.utils.helpers as h
            from pkg.models import *
            pkg.build()
            h.log()
            build()
        """,
    })
    assert g["main"] == ["pkg.models.factory.build", "pkg.utils.helpers.log"]
    assert g["pkg.models.factory.build"] == ["pkg.models.layers.Block.__init__", "pkg.utils.helpers.log"]


def test_params_defaults_returns_and_kwargs(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        def c(): pass
        def run(fn=a, *, hook=None, **extra):
            fn()
            hook()
            extra["late"]()
            return fn
        run(hook=b, late=c)()
    """)
    assert g["app.run"] == ["app.a", "app.b", "app.c"]
    assert g["app"] == ["app.a", "app.run"]


def test_star_args_reach_parameters(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def call_all(*fns):
            for f in fns:
                f()
        def call_first(f, g):
            f()
        call_all(a)
        args = (a, a)
        call_first(*args)
    """)
    assert g["app.call_all"] == ["app.a"]
    assert g["app.call_first"] == ["app.a"]


def test_lambda_is_a_function_of_its_scope(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def apply(f):
            return f()
        def outer():
            return lambda: a()
        apply(lambda: a())
        outer()()
    """)
    assert g["app.apply"] == ["app.<lambda1>"]
    assert g["app.<lambda1>"] == ["app.a"]
    assert g["app"] == ["app.apply", "app.outer", "app.outer.<lambda1>"]


def test_decorators_wrapper_identity_and_outside(tmp_path):
    g = one(tmp_path, """
        import functools
        def logged(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                return fn(*args)
            return wrapper
        def register(fn):
            return fn
        @logged
        def step(): pass
        @register
        def other(): pass
        @functools.lru_cache()
        def cached(): pass
        step(); other(); cached()
    """)
    assert g["app"] == ["app.cached", "app.logged", "app.logged.wrapper", "app.other", "app.register"]
    assert g["app.logged.wrapper"] == ["app.step"]


def test_mro_super_and_cls(tmp_path):
    g = one(tmp_path, """
        class Base:
            def __init__(self):
                self.setup()
            def setup(self): pass
            @classmethod
            def make(cls):
                return cls()
        class Mixin:
            def setup(self): pass
        class Child(Mixin, Base):
            def __init__(self):
                super().__init__()
        Child.make()
    """)
    assert g["app"] == ["app.Base.make"]
    assert g["app.Base.make"] == ["app.Base.__init__", "app.Child.__init__"]
    assert g["app.Child.__init__"] == ["app.Base.__init__"]
    assert "app.Mixin.setup" in g["app.Base.__init__"]


def test_self_call_reaches_forward_through_outside_base(tmp_path):
    g = one(tmp_path, """
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                return x
            def predict(self, x):
                return self(x)
        class Plain:
            def forward(self, x):
                return x
            def predict(self, x):
                return self(x)
    """)
    assert g["app.Net.predict"] == ["app.Net.forward"]
    assert g["app.Plain.predict"] == []  # no __call__, no outside base: calling it fails


def test_instance_call_uses_dunder_call(tmp_path):
    g = one(tmp_path, """
        class Loss:
            def __call__(self, x):
                return self.reduce(x)
            def reduce(self, x): pass
        loss = Loss()
        loss(1)
    """)
    assert g["app"] == ["app.Loss.__call__"]


def test_partial_of_function_and_class(tmp_path):
    g = one(tmp_path, """
        from functools import partial
        class Norm:
            def __init__(self, dim, eps=1e-5): pass
            def __call__(self, x): pass
        def scale(x, factor): pass
        norm_layer = partial(Norm, eps=1e-6)
        n = norm_layer(8)
        n(1)
        partial(scale, factor=2)(3)
    """)
    assert g["app"] == ["app.Norm.__call__", "app.Norm.__init__", "app.scale"]


def test_map_and_callbacks_passed_as_arguments(tmp_path):
    g = one(tmp_path, """
        from functools import partial
        def multi_apply(func, *args, **kwargs):
            pfunc = partial(func, **kwargs) if kwargs else func
            return tuple(map(pfunc, *args))
        class Head:
            def loss_single(self, score): pass
            def loss(self, scores):
                return multi_apply(self.loss_single, scores)
        Head().loss([1])
        list(map(str, [1]))
    """)
    assert g["app.multi_apply"] == ["app.Head.loss_single"]


def test_containers_collapse_to_elements(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        def c(): pass
        def d(): pass
        table = {"x": a, "y": b}
        table["x"]()
        items = []
        items.append(c)
        items[0]()
        for key, fn in {"k": d}.items():
            fn()
        s = {a}
        for f in s:
            f()
    """)
    assert g["app"] == ["app.a", "app.c", "app.d"]


def test_getattr_with_literal_and_setattr(tmp_path):
    g = one(tmp_path, """
        class Trainer:
            def train(self): pass
            def eval(self): pass
        t = Trainer()
        getattr(t, "train")()
        setattr(t, "hook", t.eval)
        t.hook()
    """)
    assert g["app"] == ["app.Trainer.eval", "app.Trainer.train"]


def test_dataclass_fields_hold_what_the_constructor_gets(tmp_path):
    g = one(tmp_path, """
        from dataclasses import dataclass
        from typing import Callable
        def relu(x): pass
        @dataclass
        class Config:
            name: str
            act: Callable = None
        cfg = Config("m", act=relu)
        cfg.act(1)
    """)
    assert g["app"] == ["app.relu"]


def test_closures_global_and_nonlocal(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        handler = None
        def install():
            global handler
            handler = a
        def counter():
            fn = None
            def set_():
                nonlocal fn
                fn = b
            def call():
                fn()
            return set_, call
        install()
        handler()
        setter, caller = counter()
        setter()
        caller()
    """)
    assert g["app"] == ["app.a", "app.counter", "app.counter.call", "app.counter.set_", "app.install"]
    assert g["app.counter.call"] == ["app.b"]


def test_class_body_names_are_not_visible_in_methods(tmp_path):
    g = one(tmp_path, """
        def helper(): pass
        class A:
            def helper(self): pass
            def run(self):
                helper()
    """)
    assert g["app.A.run"] == ["app.helper"]


def test_iteration_protocol_and_getitem(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        class Loader:
            def __iter__(self):
                return self
            def __next__(self):
                return a
        for f in Loader():
            f()
    """)
    assert g["app"] == ["app.Loader.__iter__", "app.Loader.__next__", "app.a"]


def test_cli_prints_pycg_shape_and_reports_bad_files(tmp_path):
    (tmp_path / "ok.py").write_text("def f(): pass\nf()\n")
    (tmp_path / "bad.py").write_text("def (:\n")
    proc = subprocess.run([sys.executable, "-m", "amplint", "--call-graph", str(tmp_path)],
                          capture_output=True, text=True, env=dict(os.environ), cwd=str(tmp_path))
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {"ok": ["ok.f"], "ok.f": []}
    assert "bad.py" in proc.stderr and proc.stderr.count("\n") == 1


def test_cli_reports_a_missing_path(tmp_path):
    (tmp_path / "ok.py").write_text("def f(): pass\n")
    proc = subprocess.run([sys.executable, "-m", "amplint", "--call-graph", str(tmp_path / "ok.py"),
                           str(tmp_path / "missing.py")], capture_output=True, text=True, env=dict(os.environ),
                          cwd=str(tmp_path))
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {"ok": [], "ok.f": []}
    assert proc.stderr.strip() == "%s: no such file or directory" % (tmp_path / "missing.py")


def test_constraints_are_cached_by_content(tmp_path, monkeypatch):
    """A warm run reads each file's constraints from the cache (no parse); an edited file is
    extracted again, and a file that cannot be parsed is reported on every run."""
    from amplint.workspace.cache import Cache
    from amplint.analysis.project import callgraph

    src = tmp_path / "src"
    src.mkdir()
    (src / "app.py").write_text("from lib import g\ndef f():\n    g()\n")
    (src / "lib.py").write_text("def g(): pass\n")
    (src / "bad.py").write_text("def (:\n")
    cache_dir = str(tmp_path / "cache")
    errors: list = []
    cold = call_graph(build([str(src)], errors, Cache(cache_dir)))
    assert cold["app.f"] == ["lib.g"] and len(errors) == 1
    parsed = []
    real = callgraph.extract
    monkeypatch.setattr(callgraph, "extract", lambda source, *a: parsed.append(source) or real(source, *a))
    errors = []
    assert call_graph(build([str(src)], errors, Cache(cache_dir))) == cold
    assert parsed == ["def (:\n"] and len(errors) == 1
    (src / "lib.py").write_text("def h(): pass\ng = h\n")
    warm = call_graph(build([str(src)], [], Cache(cache_dir)))
    assert warm["app.f"] == ["lib.h"] and parsed[1:] == ["def (:\n", "def h(): pass\ng = h\n"]


def test_cli_reuses_the_solved_graph_of_an_unchanged_tree(tmp_path, monkeypatch):
    from amplint.analysis.project import callgraph
    from amplint.workspace.cache import Cache

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def f(): pass\nf()\n")
    (tmp_path / "src" / "bad.py").write_text("def (:\n")
    cold = callgraph.main([str(tmp_path / "src")], Cache(str(tmp_path / "cache")))
    monkeypatch.setattr(callgraph, "build", lambda *a: pytest.fail("solved again"))
    assert callgraph.main([str(tmp_path / "src")], Cache(str(tmp_path / "cache"))) == cold
    assert len(cold[1]) == 1 and json.loads(cold[0])["app"] == ["app.f"]
    (tmp_path / "src" / "app.py").write_text("def g(): pass\ng()\n")
    monkeypatch.undo()
    assert json.loads(callgraph.main([str(tmp_path / "src")], Cache(str(tmp_path / "cache")))[0])["app"] == ["app.g"]


@pytest.mark.parametrize("code", ["x = 1\n", ""])
def test_programs_without_calls_have_empty_graphs(tmp_path, code):
    assert one(tmp_path, code) == {"app": []}


def test_straight_line_rebinding_is_flow_sensitive(tmp_path):
    g = one(tmp_path, """
        import random
        def a(): pass
        def b(): pass
        def c(): pass
        dec = a
        dec = b
        dec()
        pick = a
        if random.random() > 0.5:
            pick = c
        pick()
        def later():
            dec()
    """)
    assert g["app"] == ["app.a", "app.b", "app.c"]
    assert g["app.later"] == ["app.a", "app.b"]  # a function may run at any time: it sees every binding


def test_rebinding_without_branches_drops_the_old_value(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        f = a
        f = b
        f()
    """)
    assert g["app"] == ["app.b"]


def test_literal_indexes_slices_and_keys_carried_by_parameters(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        def c(): pass
        fns = [a, b, c]
        fns[1]()
        rest = fns[1:]
        rest[1]()
        table = {"x": a, "y": b}
        def pick(key):
            return table[key]
        pick("y")()
        first, second = (a, b)
        def pair():
            return a, b
        p, q = pair()
        q()
    """)
    assert g["app"] == ["app.b", "app.c", "app.pair", "app.pick"]


def test_dict_key_rebound_in_straight_line_code(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        def c(): pass
        hooks = {"start": a}
        hooks["start"] = b
        hooks["start"]()
        hooks.update({"start": c})
        hooks["start"]()
        def later():
            hooks["start"]()
    """)
    assert g["app"] == ["app.b", "app.c"]
    assert g["app.later"] == ["app.a", "app.b", "app.c"]  # a function sees the dict whole


def test_alias_of_a_rebound_dict_keeps_every_value(tmp_path):
    g = one(tmp_path, """
        def a(): pass
        def b(): pass
        hooks = {"start": a}
        alias = hooks
        hooks["start"] = b
        alias["start"]()
    """)
    assert g["app"] == ["app.a", "app.b"]


def test_index_with_unknown_key_reads_every_element(tmp_path):
    g = one(tmp_path, """
        import sys
        def a(): pass
        def b(): pass
        fns = [a, b]
        fns[int(sys.argv[1])]()
        def run(i):
            fns[i]()
    """)
    assert g["app"] == ["app.a", "app.b"]
    assert g["app.run"] == ["app.a", "app.b"]  # no call site binds i: any element


# -- test projects shaped like real repositories, each with a clean twin ----------------------

def project_graph(tmp_path, name, replace=()):
    from tests.project_files import load

    files = {path.split("/", 1)[1]: text for path, text in load(name, replace).items()}
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return call_graph(build([str(tmp_path)]))


HEAD = "mmdet.models.dense_heads.anchor_head.AnchorHead."
DETECTOR = "mmdet.models.detectors.single_stage.SingleStageDetector."


def test_mmdet_callbacks_self_call_and_project_train(tmp_path):
    """tests/projects/callgraph_mmdet_head: laid out like open-mmlab/mmdetection 2.x (mmdet/core/utils
    re-exported by a star import, heads calling multi_apply(self.loss_single, ...), a detector whose
    train_step calls self(**data), apis.train imported by tools/train.py)."""
    g = project_graph(tmp_path, "callgraph_mmdet_head")
    assert g["mmdet.core.utils.misc.multi_apply"] == [HEAD + "forward_single", HEAD + "loss_single"]
    assert g[DETECTOR + "train_step"] == [DETECTOR + "forward"]
    assert "mmdet.apis.train.train" in g["tools.train.main"]
    assert g["mmdet.apis.train.train"] == [DETECTOR + "train_step"]
    assert g["mmdet.models.necks.fpn.FPN.forward"] == ["mmdet.models.necks.fpn.ConvModule.forward"]


def test_mmdet_clean_twin(tmp_path):
    g = project_graph(tmp_path, "callgraph_mmdet_head", replace=[
        ("            self.loss_single, cls_scores", "            F.l1_loss, cls_scores"),
        ("losses = self(**data)", "losses = self.extract_feat(**data)"),
        ("    train(model, [], optimizer)", "    model.train()"),
        ("nn.ModuleList([ConvModule(c, out_channels) for c in in_channels])",
         "nn.ModuleList([nn.Conv2d(c, out_channels, 1) for c in in_channels])"),
    ])
    assert g["mmdet.core.utils.misc.multi_apply"] == [HEAD + "forward_single"]
    assert g[DETECTOR + "train_step"] == [DETECTOR + "extract_feat"]
    assert g["tools.train.main"] == [DETECTOR + "__init__"]  # model.train() is nn.Module's, not apis.train
    assert g["mmdet.models.necks.fpn.FPN.forward"] == []


CONVNEXT = "models.convnext."


def test_convnext_partial_of_a_class_and_module_containers(tmp_path):
    """tests/projects/callgraph_convnext: laid out like facebookresearch/ConvNeXt (models/convnext.py with
    norm_layer = partial(LayerNorm, eps=1e-6), stages as nn.ModuleList of nn.Sequential(*[Block(...)]),
    a timm @register_model factory, engine.train_one_epoch calling model(samples), main.train)."""
    g = project_graph(tmp_path, "callgraph_convnext")
    assert CONVNEXT + "LayerNorm.__init__" in g[CONVNEXT + "ConvNeXt.__init__"]
    assert g[CONVNEXT + "ConvNeXt.forward_features"] == [CONVNEXT + "Block.forward", CONVNEXT + "LayerNorm.forward"]
    assert g["engine.train_one_epoch"] == [CONVNEXT + "ConvNeXt.forward"]
    assert g["main.train"] == ["engine.evaluate", "engine.train_one_epoch", CONVNEXT + "convnext_tiny"]
    assert g["main"] == ["main.get_args_parser", "main.train"]


def test_convnext_clean_twin(tmp_path):
    g = project_graph(tmp_path, "callgraph_convnext", replace=[
        ("norm_layer = partial(LayerNorm, eps=1e-6)", "norm_layer = partial(nn.LayerNorm, eps=1e-6)"),
        ('LayerNorm(dims[0], eps=1e-6, data_format="channels_first"))', "nn.GroupNorm(1, dims[0]))"),
        ("            x = self.stages[i](x)\n", ""),
    ])
    assert CONVNEXT + "LayerNorm.__init__" not in g[CONVNEXT + "ConvNeXt.__init__"]
    assert g[CONVNEXT + "ConvNeXt.forward_features"] == []
    assert g["engine.train_one_epoch"] == [CONVNEXT + "ConvNeXt.forward"]


def test_a_wrapping_decorator_keeps_each_wrapped_function_apart(tmp_path):
    """detectron2's `configurable` shape: one wrapper closure per decorated function (as if inlined),
    so what one wrapped function returns does not reach the callers of another."""
    g = one(tmp_path, """
        import functools
        def configurable(init_func=None, *, from_config=None):
            if init_func is not None:
                @functools.wraps(init_func)
                def wrapped(self, *args, **kwargs):
                    return init_func(self, *args, **kwargs)
                return wrapped
            def wrapper(orig_func):
                @functools.wraps(orig_func)
                def wrapped(*args, **kwargs):
                    return orig_func(*args, **kwargs)
                return wrapped
            return wrapper
        class TrainLoader:
            def __iter__(self): pass
        class TestLoader:
            def __iter__(self): pass
        @configurable(from_config=None)
        def build_train_loader(cfg):
            return TrainLoader()
        @configurable(from_config=None)
        def build_test_loader(cfg):
            return TestLoader()
        def train():
            loader = build_train_loader(None)
            loader.__iter__()
    """)
    assert g["app.train"] == ["app.TrainLoader.__iter__", "app.configurable.wrapper.wrapped"]
    assert g["app.configurable.wrapper.wrapped"] == ["app.build_test_loader", "app.build_train_loader"]


def test_module_dict_keys_are_attributes(tmp_path):
    """nanoGPT's GPT: self.transformer = nn.ModuleDict(dict(h=nn.ModuleList([...]), ln_f=...))."""
    g = one(tmp_path, """
        import torch.nn as nn
        class Block(nn.Module):
            def forward(self, x):
                return x
        class Norm(nn.Module):
            def forward(self, x):
                return x
        class GPT(nn.Module):
            def __init__(self, n_layer):
                super().__init__()
                self.transformer = nn.ModuleDict(dict(
                    h=nn.ModuleList([Block() for _ in range(n_layer)]),
                    ln_f=Norm(),
                ))
            def forward(self, x):
                for block in self.transformer.h:
                    x = block(x)
                return self.transformer.ln_f(x)
    """)
    assert g["app.GPT.forward"] == ["app.Block.forward", "app.Norm.forward"]


def test_a_function_returning_its_argument_is_copied_per_call_site(tmp_path):
    """yolov5's `de_parallel(model)` / `smart_optimizer`-style helpers return what they are given:
    each call site gets its own copy, so one caller's model does not reach another caller."""
    g = one(tmp_path, """
        class Detect:
            def forward(self, x): pass
        class Classify:
            def forward(self, x): pass
        def de_parallel(model):
            return model.module if hasattr(model, "module") else model
        def train():
            det = de_parallel(Detect())
            det.forward(1)
        def classify():
            cls = de_parallel(Classify())
            cls.forward(1)
    """)
    assert g["app.train"] == ["app.Detect.forward", "app.de_parallel"]
    assert g["app.classify"] == ["app.Classify.forward", "app.de_parallel"]


def test_a_decorator_that_returns_itself_without_a_function_does_not_with_one(tmp_path):
    g = one(tmp_path, """
        def register(fn=None, *, name=None):
            if fn is None:
                return register
            def inner(*args):
                return fn(*args)
            return inner
        @register
        def build(): pass
        def run():
            build()
    """)
    assert g["app.run"] == ["app.register.inner"]


def test_a_decorator_given_a_function_skips_its_none_branch(tmp_path):
    """`def register(fn=None, *, name=None): if fn is None: return partial(register, name=name)`
    (timm/mmcv registries' shape): applied to a function, the partial branch cannot run, so
    calling the decorated function does not call `register` again."""
    g = one(tmp_path, """
        import functools
        REGISTRY = []
        def register(fn=None, *, name=None):
            if fn is None:
                return functools.partial(register, name=name)
            REGISTRY.append(fn)
            return fn
        @register
        def resnet(): pass
        @register(name="vit")
        def vit(): pass
        def main():
            resnet()
            vit()
        resnet.__wrapped__ = register()
        """)
    assert g["app.main"] == ["app.resnet", "app.vit"]


def test_a_call_leaving_a_guarded_parameter_to_none_skips_the_other_branch(tmp_path):
    """detectron2 `get_norm`-like builders: `build_norm()` with `cfg` left to None returns only
    the default layer, so its call reaches that layer's forward alone; `build_norm("gn")` keeps
    every branch (the key is not followed)."""
    g = one(tmp_path, """
        class FrozenBN:
            def __call__(self, x): return x
        class GroupNorm:
            def __call__(self, x): return x
        NORMS = {"bn": FrozenBN, "gn": GroupNorm}
        def build_norm(cfg=None):
            if cfg is not None:
                layer = NORMS[cfg]
                return layer()
            return FrozenBN()
        def stem(x):
            norm = build_norm()
            return norm(x)
        def head(x, key):
            norm = build_norm(key)
            return norm(x)
        stem(1)
        head(1, "bn")
        head(1, "gn")
        """)
    assert g["app.stem"] == ["app.FrozenBN.__call__", "app.build_norm"]
    assert g["app.head"] == ["app.FrozenBN.__call__", "app.GroupNorm.__call__", "app.build_norm"]


def test_a_method_returning_self_is_copied_per_receiver_class(tmp_path):
    """A project base class's `def to(self, device): return self` (detectron2 `Boxes.to`-like):
    `Net().to(d)` holds a Net only, also inside a function that is itself copied per call site."""
    g = one(tmp_path, """
        class Base:
            def to(self, device):
                return self
            def forward(self, x): return x
        class Net(Base):
            def forward(self, x): return x
        class Head(Base):
            def forward(self, x): return x
        def place(model, device):
            moved = Net().to(device)
            moved.forward(device)
            return model
        def build():
            h = Head().to("cpu")
            h.forward(1)
            return place(h, "cpu")
        """)
    assert g["app.place"] == ["app.Base.to", "app.Net.forward"]
    assert g["app.build"] == ["app.Base.to", "app.Head.forward", "app.place"]


def test_an_identity_decorator_keeps_each_function_apart(tmp_path):
    """timm's `register_model(fn)`: records `fn` in a registry and returns it; each decorated
    name holds its own function (not every function the decorator was applied to), and the
    decorator is still called."""
    g = graph(tmp_path, {
        "timm/models/_registry.py": """
            _model_entrypoints = {}
            def register_model(fn):
                _model_entrypoints[fn.__name__] = fn
                return fn
            def wrap_model(fn):
                fn = staticmethod(fn)
                return fn
            """,
        "timm/models/resnet.py": """
            from ._registry import register_model, wrap_model
            @register_model
            def resnet50(): pass
            @register_model
            def vit_base(): pass
            @wrap_model
            def a(): pass
            @wrap_model
            def b(): pass
            def main():
                resnet50()
                a()
            """,
        "timm/models/__init__.py": "",
        "timm/__init__.py": "",
    })
    assert g["timm.models.resnet.main"] == ["timm.models.resnet.a", "timm.models.resnet.b", "timm.models.resnet.resnet50"]
    assert "timm.models._registry.register_model" in g["timm.models.resnet"]


def test_dataclass_field_default_factory(tmp_path):
    # huggingface/accelerate-style settings: `criterion: nn.Module = field(default_factory=Loss)`;
    # each instance holds `Loss()`, and `default=` holds the value itself
    g = graph(tmp_path, {
        "multilabel/__init__.py": "",
        "multilabel/losses.py": """
            class AsymmetricBCE:
                def __call__(self, logits, labels):
                    return logits
            def sharpen(x):
                return x
        """,
        "multilabel/config.py": """
            import dataclasses
            from dataclasses import dataclass, field
            from .losses import AsymmetricBCE, sharpen
            @dataclass
            class TrainingConfig:
                lr: float = 2e-5
                criterion: object = field(default_factory=AsymmetricBCE)
                post: object = dataclasses.field(default=sharpen)
        """,
        "train.py": """
            from multilabel.config import TrainingConfig
            def training_function(cfg):
                cfg.post(cfg.criterion(1, 2))
            training_function(TrainingConfig())
        """,
    })
    assert g["train.training_function"] == ["multilabel.losses.AsymmetricBCE.__call__", "multilabel.losses.sharpen"]


def test_defaultdict_of_lists_keeps_each_key_apart(tmp_path):
    # minGPT's Trainer: callbacks filed by event string in a defaultdict(list), called by event
    g = one(tmp_path, """
        from collections import defaultdict
        def on_loss(t): pass
        def on_end(t): pass
        class Trainer:
            def __init__(self):
                self.callbacks = defaultdict(list)
            def add_callback(self, onevent, callback):
                self.callbacks[onevent].append(callback)
            def trigger_callbacks(self, onevent):
                for callback in self.callbacks.get(onevent, []):
                    callback(self)
            def fire_end(self):
                for callback in self.callbacks["end"]:
                    callback(self)
        t = Trainer()
        t.add_callback("loss", on_loss)
        t.add_callback("end", on_end)
        t.trigger_callbacks("loss")
        t.fire_end()
    """)
    assert g["app.Trainer.trigger_callbacks"] == ["app.on_loss"]
    assert g["app.Trainer.fire_end"] == ["app.on_end"]


def test_getattr_of_a_formatted_name_over_literal_names(tmp_path):
    # OpenPCDet's Detector3DTemplate.build_networks: `getattr(self, "build_%s" % name)()` over
    # `self.module_topology`, a list of literal names; an f-string and `+` are read the same way
    g = one(tmp_path, """
        class Detector:
            def __init__(self):
                self.module_topology = ["vfe", "dense_head"]
                for module_name in self.module_topology:
                    getattr(self, "build_%s" % module_name)()
            def build_vfe(self): pass
            def build_dense_head(self): pass
            def vfe(self): pass
            def dense_head(self): pass
            def forward(self, mode):
                getattr(self, f"forward_{mode}")()
                getattr(self, "loss_" + mode + "_term")()
            def forward_train(self): pass
            def forward_test(self): pass
            def loss_train_term(self): pass
        Detector().forward("train")
    """)
    assert g["app.Detector.__init__"] == ["app.Detector.build_dense_head", "app.Detector.build_vfe"]
    assert g["app.Detector.forward"] == ["app.Detector.forward_train", "app.Detector.loss_train_term"]


def test_a_formatted_name_with_an_unknown_part_names_nothing(tmp_path):
    # a part that holds no literal (a number computed at run time) or a conversion other than
    # %s/%d: no string, no attribute (the part's own strings are not the name)
    g = one(tmp_path, """
        import sys
        class Net:
            def run(self, name):
                getattr(self, "build_%s" % name)()
                getattr(self, "%5s" % "vfe")()
            def vfe(self): pass
            def build_(self): pass
        Net().run("vfe")
        Net().run(sys.argv[1])
    """)
    assert g["app.Net.run"] == []


def test_setdefault_registry_keeps_each_event_apart(tmp_path):
    # an event bus as in fairseq's / ignite's handler tables: `setdefault(event, []).append(fn)`
    # by a method given the event string; each event's dispatch reaches that event's handlers
    g = one(tmp_path, """
        def on_start(engine): pass
        def on_end(engine): pass
        class Engine:
            def __init__(self):
                self._handlers = {}
            def add_event_handler(self, event, handler):
                self._handlers.setdefault(event, []).append(handler)
            def fire_event(self, event):
                for handler in self._handlers.get(event, ()):
                    handler(self)
        engine = Engine()
        engine.add_event_handler("started", on_start)
        engine.add_event_handler("completed", on_end)
        engine.fire_event("started")
    """)
    assert g["app.Engine.fire_event"] == ["app.on_start"]


def test_a_property_object_is_not_its_getter(tmp_path):
    # detectron2's engine/defaults.py: `setattr(DefaultTrainer, _attr, property(lambda self, x=_attr:
    # getattr(self._trainer, x), ...))` over a literal list of names; `trainer.model(inputs)` then
    # calls what the getter returns, never the getter (reading the property runs it)
    g = one(tmp_path, """
        class Model:
            def __call__(self, x):
                return x
        class Trainer:
            def __init__(self):
                self._model = Model()
        for _attr in ["model"]:
            setattr(Trainer, _attr, property(lambda self, x=_attr: getattr(self, "_" + x)))
        def run(trainer):
            return trainer.model(1)
        run(Trainer())
    """)
    assert not any("lambda" in callee for callee in g.get("app.run", [])), g.get("app.run")
