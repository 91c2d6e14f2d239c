import torch

from mobile_sam import sam_model_registry

model_type = "vit_t"
sam_checkpoint = "./weights/mobile_sam.pt"
device = "cuda" if torch.cuda.is_available() else "cpu"

mobile_sam = sam_model_registry[model_type](checkpoint=sam_checkpoint)
mobile_sam = mobile_sam.to(device=device).half()
mobile_sam.eval()


def segment(image):
    with torch.no_grad():
        return mobile_sam(image.half())
