import torch
import torch.nn as nn


def shifted_softplus(x):
    return nn.functional.softplus(x) - 0.6931471805599453


class GaussianRBF(nn.Module):
    def __init__(self, n_rbf, cutoff):
        super().__init__()
        self.register_buffer("offsets", torch.linspace(0, cutoff, n_rbf))
        self.register_buffer("widths", torch.full((n_rbf,), cutoff / n_rbf))

    def forward(self, inputs):
        coeff = -0.5 / torch.pow(self.widths, 2)
        return torch.exp(coeff * torch.pow(inputs[..., None] - self.offsets, 2))


class SchNetInteraction(nn.Module):
    def __init__(self, n_atom_basis, n_rbf, n_filters):
        super().__init__()
        self.n_filters = n_filters
        self.in2f = nn.Linear(n_atom_basis, n_filters, bias=False)
        self.f2out = nn.Sequential(nn.Linear(n_filters, n_atom_basis), nn.Softplus(),
                                   nn.Linear(n_atom_basis, n_atom_basis))
        self.filter_network = nn.Sequential(nn.Linear(n_rbf, n_filters), nn.Softplus(),
                                            nn.Linear(n_filters, n_filters))

    def forward(self, x, f_ij, idx_i, idx_j):
        h = self.in2f(x)
        W = self.filter_network(f_ij)
        x_ij = h[idx_j] * W
        agg = torch.zeros(x.shape[0], self.n_filters, device=x.device).index_add_(0, idx_i, x_ij)
        return self.f2out(agg)


class SchNet(nn.Module):
    def __init__(self, n_atom_basis=128, n_interactions=3, n_rbf=20, cutoff=5.0, max_z=100):
        super().__init__()
        self.embedding = nn.Embedding(max_z, n_atom_basis, padding_idx=0)
        self.radial_basis = GaussianRBF(n_rbf, cutoff)
        self.interactions = nn.ModuleList(
            [SchNetInteraction(n_atom_basis, n_rbf, n_atom_basis) for _ in range(n_interactions)])

    def forward(self, inputs):
        idx_i, idx_j = inputs["idx_i"], inputs["idx_j"]
        d_ij = torch.norm(inputs["Rij"], dim=1)
        f_ij = self.radial_basis(d_ij)
        q = self.embedding(inputs["Z"])
        for interaction in self.interactions:
            q = q + interaction(q, f_ij, idx_i, idx_j)
        return q
