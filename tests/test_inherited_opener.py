"""`with self.maybe_autocast():` where `maybe_autocast` is a method a base class of another file
defines (project/context_methods.py `_inherited_region`): a method reached through the bases
across files is the same opener as a local one, when every class that can be `self` there runs
that one method, and no base outside the project comes before it.

tests/projects/inherit_minigpt4_opener is laid out like Vision-CAIR/MiniGPT-4 (minigpt4/models/
base_model.py BaseModel.maybe_autocast, minigpt_base.py MiniGPTBase, minigpt_v2.py
MiniGPTv2.encode_img, demo.py) in a fork whose `encode_img` runs the projection to the LLM's
width after the region: the half image tokens meet the float32 `llama_proj` Linear outside
autocast. The twin casts them back first.
"""

from __future__ import annotations

from amplint.analysis.engine import Settings

from project_files import code_findings, load

SETTINGS = Settings.default()
NAME = "inherit_minigpt4_opener"
MODEL = "minigpt4/models/minigpt_v2.py"
ESCAPE = (MODEL, 19, "AMP105")
PROJ = "        inputs_llama = self.llama_proj(image_embeds)\n"


def findings(*edits):
    return code_findings(load(NAME, edits), "AMP105", SETTINGS)[0]


def test_the_region_of_a_method_inherited_across_two_files_is_seen():
    assert findings() == [ESCAPE]


def test_the_twin_casting_back_is_silent():
    assert findings((PROJ, "        inputs_llama = self.llama_proj(image_embeds.float())\n")) == []


def test_the_nearest_definition_along_the_bases_is_the_opener():
    # MiniGPTBase, between the two, defines a disabled one: that is what runs
    override = ("class MiniGPTBase(BaseModel):\n",
                "class MiniGPTBase(BaseModel):\n"
                "    def maybe_autocast(self, dtype=torch.float16):\n"
                "        return torch.autocast('cuda', dtype=dtype, enabled=False)\n\n")
    assert findings(override) == []


def test_a_project_subclass_with_another_opener_gives_no_answer():
    sub = ("__all__ = [\"MiniGPTv2\"]\n",
           "__all__ = [\"MiniGPTv2\"]\n\n\n"
           "class CPUMiniGPT(MiniGPTv2):\n"
           "    def maybe_autocast(self, dtype=None):\n"
           "        import contextlib\n"
           "        return contextlib.nullcontext()\n")
    assert findings(sub) == []


def test_a_base_outside_the_project_before_the_defining_one_gives_no_answer():
    edits = ("class MiniGPTBase(BaseModel):", "class MiniGPTBase(PeftMixin, BaseModel):"), (
        "from minigpt4.models.base_model import BaseModel\n",
        "from minigpt4.models.base_model import BaseModel\nfrom peft.mixins import PeftMixin\n")
    assert findings(*edits) == []
