"""Frameworks whose copies projects commit into their own tree (a fork of detectron2 beside the
paper's code, Megatron's package inside a training example): the package name and two files
every release of it has, which together tell a copy of the framework from a folder that only
shares its name (amplint.workspace.vendored)."""

from __future__ import annotations

from typing import Dict, Tuple

# package folder -> files inside it that mark the framework's own layout
FRAMEWORK_LAYOUTS: Dict[str, Tuple[str, ...]] = {
    "detectron2": ("engine/train_loop.py", "modeling/meta_arch/rcnn.py"),
    "megatron": ("core/parallel_state.py", "core/tensor_parallel/layers.py"),
    "apex": ("amp/frontend.py", "optimizers/fused_adam.py"),
    "deepspeed": ("runtime/engine.py", "runtime/fp16/loss_scaler.py"),
    "fairseq": ("trainer.py", "models/fairseq_model.py"),
    "transformers": ("modeling_utils.py", "trainer.py"),
    "timm": ("models/vision_transformer.py", "data/loader.py"),
    "mmcv": ("cnn/__init__.py", "ops/__init__.py"),
}

# distribution names a checkout's packaging metadata may give besides the package's own
# (NVIDIA/Megatron-LM's pyproject.toml: `name = "megatron-core"`; mmcv's older `mmcv-full`)
DISTRIBUTION_NAMES: Dict[str, Tuple[str, ...]] = {
    "megatron": ("megatron-core", "megatron_core"),
    "mmcv": ("mmcv-full", "mmcv_full"),
}
