"""A factory's float32 value followed through the locals of its function (found reading real
trees, r18-realread: AMP101 ×2 in NVIDIA/Megatron-LM megatron/core/models/vision/radio.py, the
RADIO position-embedding augmentation: `torch.rand` draws through several rebindings, a stack,
in-place updates and `F.grid_sample(pos.float(), grid=...).to(pos.dtype)`; every value they
meet is float32 or a Python number, so nothing half is upcast).

tests/projects/factory_ada_augment: NVlabs/stylegan2-ada-pytorch layout (training/augment.py
`AugmentPipe`, generate.py makes it half). amplint/analysis/facts/float32_flow.py
`stays_float32`, read by AMP101's fp16 side. Proved under torch 2.13 CPU: the pipe made
`.half()` / `.bfloat16()` runs and returns the half dtype (the grid stays float32).
Twins, reported: the draws meet the half images, an attribute whose dtype nobody knows, the
value returned, passed to a function of the project, the grid_sample result not cast back.
"""

from __future__ import annotations

from project_files import code_findings, load

ADA = "factory_ada_augment"
AUGMENT = "training/augment.py"


def amp101(*edits):
    return code_findings(load(ADA, edits), "AMP101")[0]


def test_draws_that_meet_only_float32_values_and_end_cast_are_silent():
    assert amp101() == []


def test_twin_draws_meeting_the_half_images_are_reported():
    edit = ("grid = torch.stack([xs, ys], dim=-1) * scale_xy + shift",
            "grid = torch.stack([xs, ys], dim=-1) * scale_xy + shift + images[:, :2].permute(0, 2, 3, 1)")
    found = amp101(edit)
    assert (AUGMENT, 21, "AMP101") in found and (AUGMENT, 25, "AMP101") in found


def test_twin_an_attribute_of_unknown_dtype_is_reported():
    # the grid every draw reaches meets it: each draw is reported
    found = amp101(("device=images.device) * 0.125", "device=images.device) * self.scale_std"))
    assert found == [(AUGMENT, 21, "AMP101"), (AUGMENT, 25, "AMP101")]


def test_twin_a_draw_returned_is_reported():
    found = amp101(("return self.out(images)", "return self.out(images), scale"))
    assert (AUGMENT, 21, "AMP101") in found


def test_twin_a_draw_passed_to_a_project_function_is_reported():
    edit = ("        grid.mul_(2).sub_(1)\n", "        grid.mul_(2).sub_(1)\n        grid = _clip(grid)\n")
    tail = ("        return self.out(images)\n",
            "        return self.out(images)\n\n\ndef _clip(grid):\n    return grid.clamp(-1, 1)\n")
    found = amp101(edit, tail)
    assert (AUGMENT, 21, "AMP101") in found and (AUGMENT, 25, "AMP101") in found


def test_twin_the_sampled_images_not_cast_back_are_reported():
    found = amp101(("align_corners=False).to(images.dtype)", "align_corners=False)"))
    assert (AUGMENT, 21, "AMP101") in found


# A factory stored in an entry of a local dict (r17-realread: BlinkDL/RWKV-LM
# RWKV-v5/rwkv_v6_demo.py `init_params`, `m[n] = torch.empty(...)` read only by `nn.init.*_`
# and `.numel()`). tests/projects/factory_rwkv_init_table: RWKV-LM layout (src/model.py,
# train.py makes the model bfloat16 and calls `count_init_params`; runs under torch 2.13 CPU).
RWKV = "factory_rwkv_init_table"
MODEL = "src/model.py"


def rwkv101(*edits):
    return code_findings(load(RWKV, edits), "AMP101")[0]


def test_a_factory_in_a_local_dict_read_only_by_initialisers_and_sizes_is_silent():
    assert rwkv101() == []


def test_twin_the_dict_returned_is_reported():
    assert rwkv101(('        print("init params", total)\n',
                    '        print("init params", total)\n        return table\n')) == [(MODEL, 37, "AMP101")]


def test_twin_an_entry_mixed_with_the_half_parameter_is_reported():
    edit = ("            total += table[name].numel()\n",
            "            total += (table[name] * param).sum()\n")
    assert rwkv101(edit) == [(MODEL, 37, "AMP101")]


def test_twin_a_tensor_table_written_by_index_is_reported():
    assert rwkv101(("        table = {}\n", "        table = torch.zeros(64, 32, 32)\n")) \
        == [(MODEL, 30, "AMP101"), (MODEL, 37, "AMP101")]
