from .fpn import FPN
