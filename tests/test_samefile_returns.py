"""Values a function of the SAME file returns, read by the facts that classify a value's kind as
they read the expression written inline (issue 26; amplint/analysis/facts/function_returns.py).
Each project below keeps the helper next to its use, as forks of the named repositories do; each
test has a twin that must stay silent, and each finding is missed by the code before the summary.

- samefile_device_yolov5 (ultralytics/yolov5's train.py, with `select_device` kept in the
  script): `self.device = select_device(...)` and a local `device = select_device(...)` are
  `torch.device` objects, and `torch.autocast(device_type=self.device)` raises 'ValueError:
  Expected `device_type` of type `str`' (torch 2.13, enabled or not). AMP131.
- samefile_ctxconst_guided (openai/guided-diffusion's train_util.py in a fork that trains under
  autocast): a module constant `AMP_DTYPE = th.bfloat16` names the dtype of the autocast that
  the file's `autocast()` helper returns, and the always-enabled GradScaler of the file scales
  bfloat16 losses. AMP124.
- samefile_halfbuilder_tacotron2 (NVIDIA/tacotron2's train.py with apex dropped): `load_model`
  returns the model it casts with `.half()` under `hparams.fp16_run`, and `train` steps a plain
  Adam over its parameters with no autocast or GradScaler. AMP152, reported at the cast; run
  under the caller's autocast instead, AMP103 at the cast.
- samefile_finfo_xtransformers (lucidrains/x-transformers: `max_neg_value(tensor)` returns
  `-torch.finfo(tensor.dtype).max`): a fork's Attention fills its float16 scores with
  `max_neg_value(x)`, `x` the float32 LayerNorm output; the dtype follows the ARGUMENT, so the
  return is read per call. Under CPU autocast (torch 2.13) the fill raises 'value cannot be
  converted to type c10::Half without overflow' (c10::BFloat16 under bfloat16); the twin
  `max_neg_value(dots)` runs. AMP111, the region in train_enwik8.py.
- samefile_escape_dinov2 (facebookresearch/dinov2's eval/linear.py): the classifier holds
  `self.feature_model = FeatureModel(...)`, whose `get_intermediate_layers` returns the pooled
  output of its autocast region; the float32 `self.linear` meets it outside any region: 'mat1
  and mat2 must have the same dtype, but got BFloat16 and Float' under CPU bfloat16 autocast
  (torch 2.13); the twin returning `.float()` runs. AMP105.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()


def findings(name, code, replace=()):
    return code_findings(load(name, replace), code, SETTINGS)


# -- AMP131: a torch.device returned by a helper of the file -----------------------------------
DEVICE = "samefile_device_yolov5"
DEVICE_FOUND = [("train.py", 31, "AMP131"), ("train.py", 44, "AMP131")]


def test_a_device_a_helper_returns_is_a_device_object():
    found, results = findings(DEVICE, "AMP131")
    assert found == DEVICE_FOUND
    assert all(d.fix is not None for r in results.values() for d in r.diagnostics if d.code == "AMP131")


def test_twin_passing_the_device_type_is_silent():
    found, _ = findings(DEVICE, "AMP131", (("device_type=self.device,", "device_type=self.device.type,"),
                                           ("torch.autocast(device,", "torch.autocast(device.type,")))
    assert found == []


def test_a_helper_with_a_return_that_is_not_a_device_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (('        return torch.device("cpu")\n', '        return "cpu"\n'),))
    assert found == []


def test_a_helper_whose_path_falls_off_the_end_is_not_taken():
    found, _ = findings(DEVICE, "AMP131", (('    raise RuntimeError(f"no device for {device}")\n', ""),))
    assert found == []


def test_a_local_that_shadows_the_helper_is_not_read_as_it():
    found, _ = findings(DEVICE, "AMP131", (("def validate(model, loader, opt):\n",
                                            "def validate(model, loader, opt, select_device=str):\n"),))
    assert found == DEVICE_FOUND[:1]


# -- AMP124: a module constant dtype of the autocast a helper returns -------------------------
CTX = "samefile_ctxconst_guided"
CTX_FOUND = [("guided_diffusion/train_util.py", 21, "AMP124")]
CONST = "AMP_DTYPE = th.bfloat16\n"


def test_a_module_constant_dtype_of_a_returned_autocast_is_read():
    found, results = findings(CTX, "AMP124")
    assert found == CTX_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP124"]
    assert "runs in bfloat16 (line 26)" in diagnostic.message


def test_twin_a_float16_constant_is_silent():
    assert findings(CTX, "AMP124", ((CONST, "AMP_DTYPE = th.float16\n"),))[0] == []


def test_a_constant_bound_twice_is_not_read():
    rebound = CONST + "if th.cuda.is_available() and not th.cuda.is_bf16_supported():\n    AMP_DTYPE = th.float16\n"
    assert findings(CTX, "AMP124", ((CONST, rebound),))[0] == []


def test_a_parameter_of_that_name_shadows_the_constant():
    found, _ = findings(CTX, "AMP124", (("def autocast(enabled=True):", "def autocast(enabled=True, AMP_DTYPE=None):"),))
    assert found == []


# -- AMP152: a builder of the file returns the model it casts to float16 ----------------------
BUILDER = "samefile_halfbuilder_tacotron2"
BUILDER_FOUND = [("train.py", 14, "AMP152")]


def test_a_model_a_builder_casts_and_returns_trained_by_plain_adam():
    found, results = findings(BUILDER, "AMP152")
    assert found == BUILDER_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP152"]
    assert "(in `load_model`, which returns it to the call at line 20)" in diagnostic.message
    assert "plain `Adam` (line 22)" in diagnostic.message


def test_twin_a_builder_returning_another_value_is_silent():
    assert findings(BUILDER, "AMP152", (("    return model\n", "    return Tacotron2(hparams).cuda()\n"),))[0] == []


def _flag(default: str, call: str):
    """The cast guarded by a parameter `fp16_run` of the builder (default `default`), called as
    `call`."""
    return (("def load_model(hparams):\n", f"def load_model(hparams, fp16_run={default}):\n"),
            ("    if hparams.fp16_run:\n", "    if fp16_run:\n"),
            ("model = load_model(hparams).train()", f"model = {call}.train()"))


def test_a_call_that_turns_the_cast_flag_off_gets_no_half_model():
    assert findings(BUILDER, "AMP152", _flag("False", "load_model(hparams, fp16_run=False)"))[0] == []
    assert findings(BUILDER, "AMP152", _flag("True", "load_model(hparams, False)"))[0] == []
    assert findings(BUILDER, "AMP152", _flag("False", "load_model(hparams)"))[0] == []
    assert findings(BUILDER, "AMP152", _flag("False", "load_model(hparams, True)"))[0] == BUILDER_FOUND
    assert findings(BUILDER, "AMP152", _flag("True", "load_model(hparams)"))[0] == BUILDER_FOUND


UNDER_AUTOCAST = (("            y_pred = model(x)\n",
                   "            with torch.autocast(\"cuda\"):\n                y_pred = model(x)\n"),)


def test_twin_training_under_autocast_is_silent():
    assert findings(BUILDER, "AMP152", UNDER_AUTOCAST)[0] == []


def test_the_returned_half_model_run_under_autocast_is_amp103():
    """The same builder, its model run under autocast by the caller: AMP103 at the cast."""
    found, results = findings(BUILDER, "AMP103", UNDER_AUTOCAST)
    assert found == [("train.py", 14, "AMP103")]
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP103"]
    assert "(returned by `load_model(...)` at line 20, which runs it under autocast)" in diagnostic.message
    outside = UNDER_AUTOCAST + (("            loss = criterion(y_pred, y)\n", "            loss = criterion(model(x), y)\n"),
                                ("                y_pred = model(x)\n", "                y_pred = None\n"))
    assert findings(BUILDER, "AMP103", outside)[0] == []  # the region no longer runs it
    assert findings(BUILDER, "AMP103")[0] == []


def test_a_returned_half_input_is_not_read_as_the_model():
    """diffusers' TensorRT pipelines: `__encode_prompt` returns text embeddings it casts to
    float16 for an engine's float16 bindings, called under `torch.autocast("cuda")`; no torch op
    of the region need read them, so the returned cast of an input is no AMP103 (the model's is)."""
    encode = ("def train(output_directory, hparams):\n",
              "def encode_prompt(engine, ids):\n"
              "    embeddings = engine(ids)\n"
              "    embeddings = embeddings.to(dtype=torch.float16)\n"
              "    return embeddings\n\n\n"
              "def infer(engine, unet_engine, ids):\n"
              "    with torch.autocast(\"cuda\"):\n"
              "        embeddings = encode_prompt(engine, ids)\n"
              "        return unet_engine(embeddings)\n\n\n"
              "def train(output_directory, hparams):\n")
    assert findings(BUILDER, "AMP103", (encode,))[0] == []
    assert findings(BUILDER, "AMP103", (encode,) + UNDER_AUTOCAST)[0] == [("train.py", 14, "AMP103")]  # the model's


def _as_methods(override=""):
    """The builder as a method `Builder.load_model`, called as `self.load_model(...)` by a
    `Trainer(Builder)`; `override`: a subclass's own `load_model` added after it."""
    return (("def load_model(hparams):\n", "class Builder:\n    def load_model(self, hparams):\n"),
            ("    model = Tacotron2(hparams).cuda()\n    if", "        model = Tacotron2(hparams).cuda()\n        if"),
            ("        model = model.half()\n    return model\n",
             "            model = model.half()\n        return model\n\n\n" + override),
            ("def train(output_directory, hparams):\n", "class Trainer(Builder):\n  def train(self, output_directory, hparams):\n"),
            ("model = load_model(hparams).train()", "model = self.load_model(hparams).train()"))


def test_a_builder_method_called_through_self_is_read():
    assert findings(BUILDER, "AMP152", _as_methods())[0] == [("train.py", 15, "AMP152")]


def test_a_builder_a_subclass_overrides_is_not_read():
    """A subclass of the file defines its own `load_model`: `self` may be one, whose method
    returns a float32 model."""
    override = "class FloatBuilder(Trainer):\n    def load_model(self, hparams):\n        return Tacotron2(hparams)\n\n\n"
    assert findings(BUILDER, "AMP152", _as_methods(override))[0] == []


def test_a_cast_the_builder_undoes_before_its_return_is_not_read():
    """`model = model.float()` after the cast, or a loop casting other models under the same name
    before `model` is bound to a new one: the return gives a float32 model (unknown, silent);
    a module move after the cast keeps it (twin, still reported)."""
    cast = "        model = model.half()\n    return model\n"
    back = (cast, "        model = model.half()\n    model = model.float()\n    return model\n")
    assert findings(BUILDER, "AMP152", (back,))[0] == []
    assert findings(BUILDER, "AMP103", (back,) + UNDER_AUTOCAST)[0] == []
    in_place = (cast, "        model = model.half()\n    model.to(torch.float32)\n    return model\n")
    assert findings(BUILDER, "AMP152", (in_place,))[0] == []
    loop = (("    if hparams.fp16_run:\n        model = model.half()\n",
             "    for model in hparams.teachers:\n        model.half()\n    model = Tacotron2(hparams)\n"),)
    assert findings(BUILDER, "AMP152", loop)[0] == []
    moved = (cast, "        model = model.half()\n    model = model.cuda()\n    return model\n")
    assert findings(BUILDER, "AMP152", (moved,))[0] == BUILDER_FOUND


def test_a_builder_defined_again_is_not_read():
    """A second `def load_model` replaces the first at run time (in the module, and as a method of
    the class): the call gets the float32 model of the second; the first is not read."""
    again = ("def train(output_directory, hparams):\n",
             "def load_model(hparams):\n    return Tacotron2(hparams).cuda()\n\n\n"
             "def train(output_directory, hparams):\n")
    assert findings(BUILDER, "AMP152", (again,))[0] == []
    method = _as_methods("class Unused:\n    pass\n\n\n")
    method = tuple((old, new.replace("\n\n\nclass Unused", "\n\n    def load_model(self, hparams):\n"
                                     "        return Tacotron2(hparams)\n\n\nclass Unused"))
                   for old, new in method)
    assert findings(BUILDER, "AMP152", method)[0] == []


def test_a_builder_call_whose_value_is_dropped_gives_no_half_model():
    """`self.load_model(hparams)` as a statement: the returned copy is dropped; `self`, whose
    parameters the optimizer trains, is not the cast model."""
    dropped = _as_methods() + (
        ("model = self.load_model(hparams).train()", "self.load_model(hparams)\n    model = self"),
        ("torch.optim.Adam(model.parameters()", "torch.optim.Adam(self.parameters()"))
    assert findings(BUILDER, "AMP152", dropped)[0] == []


# -- AMP111: a helper of the file returns finfo of its parameter's dtype ----------------------
FINFO = "samefile_finfo_xtransformers"
FINFO_FOUND = [("x_transformers/x_transformers.py", 29, "AMP111")]
FILL = "dots.masked_fill(~mask, max_neg_value(x))"


def test_a_finfo_helper_reads_the_dtype_of_its_argument():
    found, results = findings(FINFO, "AMP111")
    assert found == FINFO_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP111"]
    assert diagnostic.message.startswith("`max_neg_value(x)` (`torch.finfo(tensor.dtype).max` of the function at "
                                         "line 11, with `tensor` = `x`) takes the range of `x`")
    assert diagnostic.fix is None  # the argument, not the helper, is what to change


def test_twin_the_helper_given_the_filled_tensor_is_silent():
    assert findings(FINFO, "AMP111", ((FILL, "dots.masked_fill(~mask, max_neg_value(dots))"),))[0] == []


def test_a_helper_whose_returns_read_different_parameters_is_not_read():
    two = ("def max_neg_value(tensor):\n    return -torch.finfo(tensor.dtype).max\n",
           "def max_neg_value(tensor, like=None):\n    if like is not None:\n        return -torch.finfo(like.dtype).max\n"
           "    return -torch.finfo(tensor.dtype).max\n")
    assert findings(FINFO, "AMP111", (two,))[0] == []


def test_a_helper_that_rebinds_its_parameter_is_not_read():
    rebound = ("    return -torch.finfo(tensor.dtype).max\n",
               "    tensor = tensor.float()\n    return -torch.finfo(tensor.dtype).max\n")
    assert findings(FINFO, "AMP111", (rebound,))[0] == []


# -- AMP105: a method of the class `self.attr` holds returns its region's half value ----------
ESCAPE = "samefile_escape_dinov2"
ESCAPE_FOUND = [("dinov2/eval/linear.py", 27, "AMP105")]
RETURN = "        return tokens.flatten(2).mean(-1)\n"
HELD = "        self.feature_model = FeatureModel(embed_dim)\n"


def test_a_half_value_returned_by_the_method_of_a_held_module_is_reported():
    found, results = findings(ESCAPE, "AMP105")
    assert found == ESCAPE_FOUND
    (diagnostic,) = [d for r in results.values() for d in r.diagnostics if d.code == "AMP105"]
    assert "float16 from the autocast region at line 13 (produced at line 14)" in diagnostic.message


def test_twin_returning_float32_is_silent():
    assert findings(ESCAPE, "AMP105", ((RETURN, "        return tokens.flatten(2).mean(-1).float()\n"),))[0] == []


def test_an_attribute_a_subclass_stores_another_value_in_is_not_read():
    other = ("def run_eval_linear(", "class ExternalFeatures(LinearClassifier):\n"
             "    def __init__(self, backbone):\n        super().__init__()\n        self.feature_model = backbone\n\n\n"
             "def run_eval_linear(")
    assert findings(ESCAPE, "AMP105", (other,))[0] == []


def test_an_attribute_stored_twice_with_different_values_is_not_read():
    twice = (HELD, HELD + "        if embed_dim > 1024:\n            self.feature_model = torch.hub.load('facebookresearch/dinov2', 'dinov2_vitg14')\n")
    assert findings(ESCAPE, "AMP105", (twice,))[0] == []


def test_an_attribute_the_file_stores_on_another_receiver_is_not_read():
    """`classifier.feature_model = FloatFeatureModel()` after the construction replaces the held
    module on that instance: the method the call reaches is not known (its float32 override)."""
    swapped = (("class LinearClassifier(nn.Module):", "class FloatFeatureModel(FeatureModel):\n"
                "    def get_intermediate_layers(self, images):\n"
                "        return self.patch_embed(images).flatten(2).mean(-1)\n\n\n"
                "class LinearClassifier(nn.Module):"),
               ("    classifier = LinearClassifier().cuda()\n",
                "    classifier = LinearClassifier().cuda()\n    classifier.feature_model = FloatFeatureModel()\n"))
    assert findings(ESCAPE, "AMP105", swapped)[0] == []
    subclass_only = swapped[:1]  # twin: the subclass defined but never stored: still reported
    assert findings(ESCAPE, "AMP105", subclass_only)[0] == [("dinov2/eval/linear.py", 32, "AMP105")]
