from .deform_conv import DeformConv2d, DeformConv2dPack, deform_conv2d

__all__ = ['DeformConv2d', 'DeformConv2dPack', 'deform_conv2d']
