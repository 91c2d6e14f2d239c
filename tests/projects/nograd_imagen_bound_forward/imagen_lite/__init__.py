from .elucidated import ElucidatedDiffusion
from .unet import TinyUnet
