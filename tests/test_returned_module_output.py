"""A helper of another file that returns the output of a module held by its parameter
(`return model.encoder(images)` under its own autocast region) hands its callers a half value
(module_outputs.py names `model.encoder(...)` when the class flow resolves it to project module
classes only; escape_returns.py reads the helper's returns with those outputs).

tests/projects/returns_simsiam_encoder: facebookresearch/simsiam layout (main_lincls.py trains a
linear classifier on the frozen encoder of `SimSiam`, simsiam/builder.py, whose `encoder` is the
`ResNet` of simsiam/resnet.py), in a fork that computes the frozen features through
`extract_features(model, images)` of simsiam/features.py under a float16 CUDA autocast. The
features are half after the region and main_lincls.py feeds them to its float32 `nn.Linear`:
'mat1 and mat2 must have the same dtype' (torch 2.13: the output of a module under a CPU
bfloat16 autocast is bfloat16 and a float32 Linear outside the region raises on it). On main
`model.encoder(...)` of a parameter was not read as a module's output. Clean twin: the helper
returns `.float()` of it.
"""

from __future__ import annotations

from project_files import code_findings, load

NAME = "returns_simsiam_encoder"
RETURN = "return model.encoder(images)"
FINDING = ("main_lincls.py", 18, "AMP105")


def _amp105(replace=()):
    return code_findings(load(NAME, replace), "AMP105")[0]


def test_a_held_modules_output_returned_from_the_region_is_half():
    assert RETURN in load(NAME)[f"{NAME}/simsiam/features.py"]
    assert _amp105() == [FINDING]


def test_clean_twin_returns_it_in_float32():
    assert _amp105(((RETURN, "return model.encoder(images).float()"),)) == []


def test_a_model_the_flow_cannot_follow_says_nothing():
    assert _amp105((("train(torch.load(\"imagenet_train_loader.pt\"), model.cuda(),",
                     "train(torch.load(\"imagenet_train_loader.pt\"), torch.load(args.pretrained),"),)) == []


def test_a_held_value_that_is_not_a_module_says_nothing():
    assert _amp105((("class ResNet(nn.Module):", "class ResNet:"),)) == []
