from imagen_pytorch.imagen_pytorch import Unet
