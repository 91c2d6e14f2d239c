import numpy as np
import torch


def normalize_2nd_moment(x, dim=1, eps=1e-8):
    return x * (x.square().mean(dim=dim, keepdim=True) + eps).rsqrt()


def modulated_scale(styles, demodulate=True):
    if demodulate:
        styles = styles * styles.norm(float("inf"), dim=1, keepdim=True).reciprocal()
    return styles


class FullyConnectedLayer(torch.nn.Module):
    def __init__(self, in_features, out_features, lr_multiplier=1.0):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn([out_features, in_features]) / lr_multiplier)
        self.bias = torch.nn.Parameter(torch.zeros([out_features]))
        self.weight_gain = lr_multiplier / np.sqrt(in_features)

    def forward(self, x):
        w = self.weight.to(x.dtype) * self.weight_gain
        return torch.addmm(self.bias.to(x.dtype), x, w.t())


class MappingNetwork(torch.nn.Module):
    def __init__(self, z_dim, w_dim, num_ws, num_layers=8):
        super().__init__()
        self.num_ws = num_ws
        self.fcs = torch.nn.ModuleList([FullyConnectedLayer(z_dim if i == 0 else w_dim, w_dim, 0.01)
                                        for i in range(num_layers)])

    def forward(self, z, truncation_psi=1):
        x = normalize_2nd_moment(z)
        for fc in self.fcs:
            x = torch.nn.functional.leaky_relu(fc(x), 0.2)
        return x.unsqueeze(1).repeat([1, self.num_ws, 1])


class SynthesisNetwork(torch.nn.Module):
    def __init__(self, w_dim, img_resolution, img_channels):
        super().__init__()
        self.affine = FullyConnectedLayer(w_dim, img_channels * img_resolution * img_resolution)
        self.img_resolution = img_resolution
        self.img_channels = img_channels

    def forward(self, ws):
        styles = modulated_scale(self.affine(ws[:, -1]))
        return styles.view(-1, self.img_channels, self.img_resolution, self.img_resolution)


class Generator(torch.nn.Module):
    def __init__(self, z_dim, w_dim, img_resolution, img_channels):
        super().__init__()
        self.z_dim = z_dim
        self.synthesis = SynthesisNetwork(w_dim, img_resolution, img_channels)
        self.mapping = MappingNetwork(z_dim, w_dim, num_ws=14)

    def forward(self, z, truncation_psi=1):
        ws = self.mapping(z, truncation_psi=truncation_psi)
        return self.synthesis(ws)
