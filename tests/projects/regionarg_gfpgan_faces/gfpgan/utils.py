import torch
import torch.nn.functional as F

from gfpgan.archs.gfpganv1_clean_arch import GFPGANv1Clean
from gfpgan.face_utils import scatter_restored_faces, select_faces


class GFPGANer:
    def __init__(self, model_path, upscale=2, arch="clean", device=None):
        self.upscale = upscale
        self.device = torch.device("cuda") if device is None else device
        if arch != "clean":
            raise ValueError(f"arch {arch} is not supported")
        self.gfpgan = GFPGANv1Clean(out_size=512)
        loadnet = torch.load(model_path, map_location="cpu")
        self.gfpgan.load_state_dict(loadnet["params_ema"], strict=True)
        self.gfpgan.eval()
        self.gfpgan = self.gfpgan.to(self.device)

    @torch.no_grad()
    def enhance(self, faces, weight=0.5):
        keep = select_faces(faces)
        batch = torch.cat([F.interpolate(faces[i], size=(512, 512), mode="bilinear") for i in keep])
        keep_idx = torch.tensor(keep, dtype=torch.long, device=self.device)
        with torch.autocast("cuda", dtype=torch.float16):
            output = self.gfpgan(batch.to(self.device), return_rgb=False, weight=weight)[0]
            restored = scatter_restored_faces(output, keep_idx, len(faces))
        return (restored.float().clamp_(-1, 1) + 1) / 2
