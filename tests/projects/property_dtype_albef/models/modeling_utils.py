"""Helpers copied from transformers' modeling_utils (ModuleUtilsMixin), as ALBEF vendors them."""
import torch


class ModuleUtilsMixin:
    """A few utilities for `torch.nn.Module`s, used as a mixin."""

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of the module (assuming that all the module parameters have the same dtype)."""
        return next(self.parameters()).dtype

    def invert_attention_mask(self, encoder_attention_mask):
        inverted = encoder_attention_mask[:, None, None, :].to(dtype=self.dtype)
        return (1.0 - inverted) * -10000.0


class BertPreTrainedModel(torch.nn.Module, ModuleUtilsMixin):
    """Base class of the text encoder: weight init."""

    def init_weights(self, module):
        if isinstance(module, torch.nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)
