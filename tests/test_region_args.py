"""A value that may be half, passed under an enabled autocast region into a function of another
file, is half evidence for that function's parameter (project/region_args.py,
facts/half_evidence.py's EntryRegionArg): AMP101 reads it where the function writes it into a
float32 buffer.

tests/projects/regionarg_gfpgan_faces: TencentARC/GFPGAN layout (inference_gfpgan.py main with
its -i/-o/-v/-w flags, gfpgan/utils.py GFPGANer.__init__/enhance, gfpgan/archs/
gfpganv1_clean_arch.py GFPGANv1Clean, gfpgan/face_utils.py select_faces/scatter_restored_faces).
GFPGANer.enhance restores the kept faces in one batch under a float16 autocast and, still in the
region, hands `output` (the generator's output) to scatter_restored_faces, whose
`out[keep_idx] = restored` writes it into a float32 `torch.zeros(...)`: 'Index put requires the
source and destination dtypes match' (checked under CPU autocast below). The clean twin
allocates the slots with `restored.new_zeros(...)`.
"""

from __future__ import annotations

import pytest
import torch

from project_files import assert_warm_run_follows_an_edit, code_findings, load

NAME = "regionarg_gfpgan_faces"
TWIN = (("torch.zeros(num_faces, 3, size, size, device=restored.device)",
         "restored.new_zeros((num_faces, 3, size, size))"),)
UTILS = f"{NAME}/gfpgan/utils.py"
FACES = f"{NAME}/gfpgan/face_utils.py"
FOUND = [("gfpgan/face_utils.py", 11, "AMP101")]


def _found(files):
    return code_findings(files, "AMP101")


def test_a_module_output_passed_under_the_region_into_another_files_helper():
    found, results = _found(load(NAME))
    assert found == FOUND
    message = next(d.message for r in results.values() for d in r.diagnostics if d.code == "AMP101")
    assert ("writes `restored` (half: the output of `self.gfpgan` at gfpgan/utils.py:26, passed at "
            "gfpgan/utils.py:27)") in message
    assert "called at gfpgan/utils.py:27 under the autocast region at gfpgan/utils.py:25" in message
    assert _found(load(NAME, TWIN))[0] == []  # the clean twin
    _premise_under_torch()


@pytest.mark.parametrize("call", [
    "scatter_restored_faces(restored=output, keep_idx=keep_idx, num_faces=len(faces))",  # keywords
    "scatter_restored_faces(output * 2, keep_idx, len(faces))",  # arithmetic of the output
    "scatter_restored_faces(self.gfpgan(batch.to(self.device))[0], keep_idx, len(faces))",  # written in the call
])
def test_every_way_the_argument_is_written(call):
    files = load(NAME, (("scatter_restored_faces(output, keep_idx, len(faces))", call),))
    assert _found(files)[0] == FOUND


def test_a_method_of_an_instance_of_another_file():
    files = load(NAME)
    files[FACES] = files[FACES].replace(
        "def scatter_restored_faces(restored, keep_idx, num_faces, size=512):",
        "class FaceSlots:\n    def scatter(self, restored, keep_idx, num_faces, size=512):")
    files[FACES] = files[FACES].replace("\n    out = torch.zeros", "\n        out = torch.zeros").replace(
        "\n    out[keep_idx]", "\n        out[keep_idx]").replace("\n    return out", "\n        return out").replace(
        '\n    """One slot', '\n        """One slot')
    files[UTILS] = files[UTILS].replace("import scatter_restored_faces, select_faces",
                                        "import FaceSlots, select_faces")
    files[UTILS] = files[UTILS].replace("        self.upscale = upscale\n",
                                        "        self.upscale = upscale\n        self.slots = FaceSlots()\n")
    files[UTILS] = files[UTILS].replace("scatter_restored_faces(output,", "self.slots.scatter(output,")
    assert _found(files)[0] == [("gfpgan/face_utils.py", 12, "AMP101")]


@pytest.mark.parametrize("edits", [
    # the argument cast to float32 first
    ((UTILS, "scatter_restored_faces(output, keep_idx", "scatter_restored_faces(output.float(), keep_idx"),),
    # the call after the region
    ((UTILS, "            restored = scatter_restored_faces", "        restored = scatter_restored_faces"),),
    # a region turned off around the call
    ((UTILS, 'torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cuda", enabled=False)'),),
    # the helper binds the parameter again
    ((FACES, "    out = torch.zeros", "    restored = restored.float()\n    out = torch.zeros"),),
    # an argument that is no module output (the indices)
    ((UTILS, "scatter_restored_faces(output, keep_idx, len(faces))",
      "scatter_restored_faces(keep_idx.float(), keep_idx, len(faces))"),),
])
def test_only_a_half_value_under_an_enabled_region_is_passed_on(edits):
    assert _found(load(NAME))[0] == FOUND
    files = load(NAME)
    for path, old, new in edits:
        assert old in files[path]
        files[path] = files[path].replace(old, new)
    assert _found(files)[0] == []


def test_a_warm_run_follows_an_edit_of_the_calling_file(tmp_path):
    assert_warm_run_follows_an_edit(
        tmp_path, NAME, "gfpgan/utils.py", [("scatter_restored_faces(output,", "scatter_restored_faces(output.float(),")],
        "AMP101", FOUND)


def _premise_under_torch():
    with torch.autocast("cpu", dtype=torch.bfloat16):
        restored = torch.nn.Linear(4, 4)(torch.ones(2, 4))
        out = torch.zeros(3, 4)
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            out[torch.tensor([0, 2])] = restored
