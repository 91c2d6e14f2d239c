from minigpt4.models.minigpt_v2 import MiniGPTv2

__all__ = ["MiniGPTv2"]
