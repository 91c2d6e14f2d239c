import torch

from models.rendering import NeRFRenderer


def sample_along_rays(rays_o, rays_d, near=2.0, far=6.0, n_samples=64):
    t = torch.linspace(0.0, 1.0, n_samples, device=rays_o.device)
    z_vals = (near * (1.0 - t) + far * t).expand(rays_o.shape[0], n_samples)
    return rays_o[:, None, :] + rays_d[:, None, :] * z_vals[..., None], z_vals


def train(loader, epochs=1):
    renderer = NeRFRenderer()
    optimizer = torch.optim.Adam(renderer.parameters(), lr=5e-4)
    for _ in range(epochs):
        for rays_o, rays_d, target in loader:
            pts, z_vals = sample_along_rays(rays_o, rays_d)
            rgb, _ = renderer(pts, z_vals)
            loss = torch.mean((rgb - target) ** 2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
