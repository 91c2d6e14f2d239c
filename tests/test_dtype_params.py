"""Parameters bound at call sites (amplint.analysis.facts.dtype_params, issue 26): a parameter
holds the join of what every call site in the file passes, and only when every call site is
visible. tests/test_dtype_proof.py checks the bound values against execution; these check where
binding must and must not happen."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from amplint.analysis.facts import FileFacts


def value_of(source: str, text: str, occurrence: int = -1) -> Optional[set]:
    """The fact's dtypes for the `occurrence`-th expression whose code is `text`."""
    module = cst.parse_module(source)
    facts = FileFacts(module)
    found = []
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseExpression) and module.code_for_node(node) == text:
            found.append(node)
        stack.extend(reversed(node.children))
    assert found, text
    value = facts.dtypes.dtype(found[occurrence])
    return set(value.options) if value is not None else None


HELPER = '''import torch


def _head(x, k=2):
    y = x.sum(-1)
    return y * k


def run(h):
    a = _head(h.half())
    b = _head(torch.randn(4, 4).half(), k=3)
    return a, b
'''


def test_private_function_parameter_is_the_join_of_its_call_sites():
    assert value_of(HELPER, "x.sum(-1)") == {"float16"}
    two = HELPER.replace("torch.randn(4, 4).half()", "torch.randn(4, 4)")
    assert value_of(two, "x.sum(-1)") == {"float16", "float32"}


def test_one_unknown_call_site_leaves_the_parameter_unknown():
    source = HELPER + "\n\ndef other(t):\n    return _head(t)\n"
    assert value_of(source, "x.sum(-1)") is None


def test_a_public_or_exported_function_is_not_bound():
    assert value_of(HELPER.replace("_head", "head"), "x.sum(-1)") is None
    exported = HELPER + '\n__all__ = ["_head"]\n'
    assert value_of(exported, "x.sum(-1)") is None


def test_a_function_used_as_a_value_is_not_bound():
    source = HELPER + "\n\nHOOKS = [_head]\n"
    assert value_of(source, "x.sum(-1)") is None
    mapped = HELPER + "\n\ndef many(ts):\n    return list(map(_head, ts))\n"
    assert value_of(mapped, "x.sum(-1)") is None


def test_a_call_the_walk_never_reads_leaves_it_unknown():
    source = HELPER + "\n\ndef many(ts):\n    return [_head(t.half()) for t in ts]\n"
    assert value_of(source, "x.sum(-1)") is None


def test_nested_function_bound_from_its_enclosing_function():
    source = '''import torch


def forward(h):
    def head(z):
        return z * z

    return head(h.bfloat16()) + head(torch.ones(2, dtype=torch.bfloat16))
'''
    assert value_of(source, "z * z") == {"bfloat16"}


def test_private_method_bound_from_self_calls():
    source = '''import torch
from torch import nn


class Head(nn.Module):
    def forward(self, x):
        return self._logits(x.half())

    def _logits(self, v):
        return v.exp()
'''
    assert value_of(source, "v.exp()") == {"float16"}
    # and what it returns at that call
    assert value_of(source, "self._logits(x.half())") == {"float16"}
    # a base class of another library may call the method itself
    assert value_of(source.replace("(nn.Module)", "(nn.Conv2d)"), "v.exp()") is None
    # torch's Module calls its own private methods
    hook = source.replace("_logits", "_apply")
    assert value_of(hook, "v.exp()") is None
    # a call on something other than `self`
    outside = source + "\n\nHead()._logits(torch.zeros(2))\n"
    assert value_of(outside, "v.exp()") is None


def test_called_inside_and_outside_a_region():
    # called under a region in one place and outside it in another: the callee is read along
    # the region's call (README, "Call paths"), its float32 argument meets
    # the bfloat16 matmul there; the call outside is not joined in
    source = '''import torch


def _head(x):
    return x @ x


def run(h):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = _head(h.float())
    b = _head(h.float())
    return a, b
'''
    assert value_of(source, "x @ x") == {"bfloat16"}
    # `_head = _head` in `run` makes `_head` a local of `run`: the region's call reaches no
    # def the file can name (r16b-review: a name bound twice has no callee), so nothing is read
    twice = source.replace("a = _head(h.float())", "a = _head(h.float()); _head = _head")
    assert value_of(twice, "x @ x") is None
    assert value_of(twice.replace('dtype=torch.bfloat16', 'dtype=torch.bfloat16, enabled=h'),
                    "x @ x") is None  # a region that may be off: no path


# a StyleGAN-style generator (rosinality/stylegan2-pytorch): a pixel-norm module called by the
# module that holds it, under the autocast it opens
PIXEL = '''import torch
from torch import nn


class PixelNorm(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-8)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.norm = PixelNorm()

    def forward(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            return self.norm(self.conv(x))
'''
MEAN = "(x * x).mean(dim=1, keepdim=True)"


def test_module_forward_parameter_bound_from_its_instances_calls():
    assert value_of(PIXEL, MEAN) == {"float16"}
    # a second call outside the region passes float32: the forward is read along the call that
    # brings it under the region (facts/dtype_paths.py), float16 on that path only
    other = PIXEL + "\n    def other(self, y):\n        return self.norm(y.float())\n"
    assert value_of(other, MEAN) == {"float16"}
    # `Cls(...)(...)`: the instance is called where it is made
    direct = PIXEL.replace("self.norm(self.conv(x))", "PixelNorm()(self.conv(x))").replace(
        "        self.norm = PixelNorm()\n", "")
    assert value_of(direct, MEAN) == {"float16"}


def test_a_call_outside_the_region_leaves_the_region_s_path_alone():
    other = PIXEL + "\n    def other(self, y):\n        return self.norm(y)\n"
    # along the region's call it is float16 (facts/dtype_paths.py); the region's call itself
    # passing an unknown value leaves it unknown
    assert value_of(other, MEAN) == {"float16"}
    unknown = other.replace("self.norm(self.conv(x))", "self.norm(x)")
    assert value_of(unknown, MEAN) is None
    # a second instance called with an unknown value
    second = PIXEL.replace("        self.norm = PixelNorm()\n",
                           "        self.norm = PixelNorm()\n        self.out = PixelNorm()\n")
    second += "\n    def head(self, y):\n        return self.out(y)\n"
    assert value_of(second, MEAN) == {"float16"}  # the path through the region's call
    assert value_of(second.replace("self.norm(self.conv(x))", "self.norm(x)"), MEAN) is None


def test_a_module_reached_some_other_way_is_not_bound():
    # the instance passed on (torch calls it), hooked, read by name, or its forward called
    for changed in (
        PIXEL + "\n    def seq(self):\n        return nn.Sequential(self.norm)\n",
        PIXEL + "\n    def hook(self, f):\n        self.norm.register_forward_pre_hook(f)\n",
        PIXEL + "\n    def named(self, y):\n        return getattr(self, 'norm')(y)\n",
        PIXEL.replace("self.norm(self.conv(x))", "self.norm.forward(self.conv(x))"),
        PIXEL + "\n\nextra = PixelNorm()\n",
        PIXEL + "\n\nclass Wide(PixelNorm):\n    pass\n",
        PIXEL + '\n\n__all__ = ["PixelNorm"]\n',
        PIXEL.replace("class PixelNorm(nn.Module):", "class PixelNorm(nn.LayerNorm):"),
        PIXEL + "\n\nclass Wrapper(nn.Module):\n    def __call__(self, *a):\n        return a\n",
        PIXEL.replace("    def forward(self, x):\n        return x *",
                      "    def forward(self, x, *rest):\n        return x *"),
    ):
        assert value_of(changed, MEAN) is None, changed
    # the attribute assigned twice
    twice = PIXEL.replace("        self.norm = PixelNorm()\n",
                          "        self.norm = PixelNorm()\n        self.norm = PixelNorm()\n")
    assert value_of(twice, MEAN) is None


def test_module_called_where_no_region_is_open_keeps_its_plain_dtype():
    # no region around the call: the conv's float32 output, not float16
    plain = PIXEL.replace('        with torch.autocast("cuda", dtype=torch.float16):\n    ', "")
    assert value_of(plain, MEAN) is None or value_of(plain, MEAN) == {"float32"}
    halved = plain.replace("self.conv(x)", "self.conv(x).half()")
    assert value_of(halved, MEAN) == {"float16"}


def test_a_file_that_never_makes_its_modules_is_not_read_for_them(monkeypatch):
    """The forward binding reads the file's nodes only where the file instantiates one of its
    module classes (issue 34: most model files define classes others make)."""
    from amplint.analysis.facts import dtype_forwards

    reads = []
    real = dtype_forwards.iter_nodes
    monkeypatch.setattr(dtype_forwards, "iter_nodes", lambda node: reads.append(node) or real(node))
    library = PIXEL.replace("        self.norm = PixelNorm()\n", "").replace(
        "self.norm(self.conv(x))", "self.conv(x)")
    assert value_of(library, "self.conv(x)") == {"float16"}
    assert reads == []
    value_of(PIXEL, MEAN)
    assert len(reads) == 1


# the same pixel norm behind a network only ever called inside the region (p_ddpm140b)
BEHIND = PIXEL.replace('''        with torch.autocast("cuda", dtype=torch.float16):
            return self.norm(self.conv(x))
''', '''        return self.norm(self.conv(x))


net = Net().cuda()


def train(x):
    with torch.autocast("cuda", dtype=torch.float16):
        return net(x).mean()
''').replace("Generator", "Net")


def test_a_module_called_only_under_the_region_surely_runs_under_it():
    assert value_of(BEHIND, "self.conv(x)") == {"float16"}
    assert value_of(BEHIND, MEAN) == {"float16"}
    # a call outside the region too: the forward is read along the region's call, where the
    # conv's output is float16 (README, "Call paths")
    outside = BEHIND + "\n\ndef evaluate(x):\n    return net(x)\n"
    assert value_of(outside, "self.conv(x)") == {"float16"}
    assert value_of(outside, MEAN) == {"float16"}
    # the instance handed to another API: its calls are not all seen
    # (not bound), yet the region's own call runs it under the region (facts/dtype_paths.py)
    wrapped = BEHIND + "\n\nddp = torch.nn.parallel.DistributedDataParallel(net)\n"
    assert value_of(wrapped, "self.conv(x)") == {"float16"}
    # a region that may be off
    maybe = BEHIND.replace('dtype=torch.float16)', 'dtype=torch.float16, enabled=amp)')
    assert value_of(maybe, "self.conv(x)") is None


def test_a_module_another_file_reaches_is_not_bound():
    """The project pass says another file calls into the class (any kind of entry): its
    callers are not all here. (Set C's blip_dtype_property gave an entry with no `target`.)"""
    from amplint.analysis.facts.property_dtypes import EntryParamsDtype
    from amplint.analysis.facts.region_entries import EntryRegion
    from amplint.analysis.facts.regions import Enabled

    def with_entries(entries):
        module = cst.parse_module(PIXEL)
        facts = FileFacts(module, tuple(entries))
        found = [n for n in _walk(module) if isinstance(n, cst.Call)
                 and module.code_for_node(n) == MEAN]
        value = facts.dtypes.dtype(found[0])
        return set(value.options) if value is not None else None

    assert with_entries([EntryParamsDtype("Generator", "dtype", "a property of a base")]) == {"float16"}
    assert with_entries([EntryRegion("PixelNorm.forward", Enabled.TRUE, "cuda", "float16",
                                     "called at train.py:3")]) is None


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)
