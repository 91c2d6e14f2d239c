"""Runtime fixes for code you cannot edit, each checked by the verifier."""

from collections import OrderedDict, defaultdict, namedtuple

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import amplint.runtime as ar  # noqa: E402

FP16, BF16 = torch.float16, torch.bfloat16
Batch = namedtuple("Batch", "image label")


# -- cast_inputs ---------------------------------------------------------------------------------
def test_cast_inputs_by_source_dtype_keeps_containers_and_non_tensors():
    img, label, mask = torch.randn(2, 3), torch.tensor([1, 2049]), torch.tensor([True, False])
    counts = defaultdict(int, a=1)
    inputs = {"batch": Batch(img, label), "list": [img, "name", 3, None, mask],
              "ordered": OrderedDict(x=img), "counts": counts, "tuple": (img.double(),)}
    out = ar.cast_inputs(inputs, torch.float32, FP16)
    assert type(out["batch"]) is Batch and out["batch"].image.dtype == FP16
    assert out["batch"].label is label  # integer labels untouched (2049 would round in fp16)
    assert out["list"][1:4] == ["name", 3, None] and out["list"][4] is mask
    assert type(out["ordered"]) is OrderedDict and out["ordered"]["x"].dtype == FP16
    assert type(out["counts"]) is defaultdict and out["counts"].default_factory is int
    assert out["tuple"][0].dtype == torch.float64  # other float dtypes untouched
    assert inputs["batch"].image.dtype == torch.float32  # the input is not modified
    back = ar.cast_inputs(out, (FP16, BF16), torch.float32)
    assert back["batch"].image.dtype == torch.float32 and back["batch"].label is label


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.fc = nn.Linear(16, 3)

    def forward(self, batch):
        return self.fc(torch.cat([self.emb(batch["ids"]), batch["feats"]], dim=-1))


def mmcv_style_cast(x, dtype):  # what mmcv's cast_tensor_type does: every tensor
    if isinstance(x, torch.Tensor):
        return x.to(dtype)
    if isinstance(x, dict):
        return {k: mmcv_style_cast(v, dtype) for k, v in x.items()}
    return x


def tagger_runner(cast):
    def run(device, dtype):
        torch.manual_seed(0)
        model = Tagger().to(device)
        batch = {"ids": torch.randint(0, 10, (4,), device=device), "feats": torch.randn(4, 8, device=device)}
        if dtype is not None:  # pure half inference of a half model
            model = model.to(dtype)
            batch = cast(batch, dtype)
        with torch.no_grad():
            return {"out": model(batch)}
    return run


def test_cast_inputs_verified_against_cast_everything():
    result = ar.verify(tagger_runner(mmcv_style_cast),
                       tagger_runner(lambda b, dt: ar.cast_inputs(b, torch.float32, dt)),
                       hazard="Expected tensor for argument #1 'indices'")
    assert result.verified, result.summary()
    assert all("Expected tensor for argument #1 'indices'" in r.before.error for r in result.dtypes)


# -- keep_norm_fp32 / half_model -----------------------------------------------------------------
def bn_runner(make_half):
    def run(device, dtype):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2)).to(device)
        x = torch.randn(64, 4, device=device) * 3000  # large activations: var ~1e7
        if dtype is not None:
            model, x = make_half(model, dtype), x.to(dtype)
        model.train()
        model(x)  # one training forward updates the running statistics
        model.eval()
        with torch.no_grad():
            out = model(x)
        return {"out": out, "running_var": model[1].running_var / 1e6}
    return run


def test_keep_norm_fp32_verified():
    result = ar.verify(bn_runner(lambda m, dt: m.to(dt)), bn_runner(ar.half_model), dtypes=[FP16])
    assert result.verified, result.summary()
    assert result.dtypes[0].hazard.startswith("deviates from the fp32 reference")  # fp16 running_var is inf


def test_keep_norm_fp32_layers_and_io_dtypes():
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GroupNorm(2, 8), nn.Linear(8, 2)).half()
    handles = ar.keep_norm_fp32(model)
    assert len(handles) == 4
    assert model[0].weight.dtype == FP16 and model[1].weight.dtype == torch.float32
    assert model[2].weight.dtype == torch.float32 and model[3].weight.dtype == FP16
    out = model(torch.randn(3, 4).half())
    assert out.dtype == FP16
    assert len(ar.keep_norm_fp32(model)) == 0  # idempotent
    with ar.monitor() as m:  # pure half inference, no autocast: silent
        model(torch.randn(3, 4).half())
    assert m.findings == []
    handles.remove()


# -- BCE fp32 island -----------------------------------------------------------------------------
class ThirdPartyDetector(nn.Module):  # code you cannot edit
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        self.loss_fn = nn.BCELoss()

    def forward(self, x, y):
        return self.loss_fn(torch.sigmoid(self.net(x)), y)


def detector_runner(patch):
    def run(device, dtype):
        torch.manual_seed(0)
        model = ThirdPartyDetector().to(device)
        if patch:
            ar.patch_bce_fp32(model)
        x, y = torch.randn(16, 8, device=device), torch.rand(16, 1, device=device)
        with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = model(x, y)
        loss.backward()
        return {"loss": loss, **{f"grad.{n}": p.grad for n, p in model.named_parameters()}}
    return run


def test_patch_bce_fp32_verified():
    result = ar.verify(detector_runner(False), detector_runner(True), code="AMP102")
    assert result.verified, result.summary()
    assert all(r.before.codes == ["AMP102"] and r.after.clean for r in result.dtypes)


def test_patch_bce_fp32_runs_bce_in_fp32_and_removes():
    model = ThirdPartyDetector()
    seen = []
    model.loss_fn.register_forward_pre_hook(
        lambda mod, args: seen.append((args[0].dtype, torch.is_autocast_enabled("cpu"))))
    handles = ar.patch_bce_fp32(model)
    x, y = torch.randn(4, 8), torch.rand(4, 1)
    with torch.autocast("cpu", dtype=BF16):
        loss = model(x, y)
    assert loss.dtype == torch.float32 and seen[-1] == (BF16, True)
    handles.remove()
    with ar.monitor(stand_in_for_cuda=True) as m, torch.autocast("cpu", dtype=BF16):
        model(x, y)
    assert m.codes == ["AMP102"]


def test_bce_fp32_island_context_for_functional_calls():
    logits = torch.randn(4, 1)
    with ar.monitor() as m, torch.autocast("cpu", dtype=FP16):
        p = torch.sigmoid(nn.Linear(1, 1)(logits))
        with ar.bce_fp32_island():
            loss = F.binary_cross_entropy(p, torch.rand(4, 1))
    assert m.findings == [] and loss.dtype == torch.float32
