import torch

from bevdepth.models.bev_depth import BEVDepth


def paste_depth(depth, valid, num_rois):
    canvas = torch.zeros((num_rois, depth.shape[-1]), device=depth.device)
    canvas[valid] = depth[valid]
    return canvas


def depth_logprob(depth_logits):
    return depth_logits.exp().sum(dim=-1, keepdim=True).log()


def mask_invalid(depth_logits, valid):
    return depth_logits.masked_fill(~valid[:, None], -1e9)


def evaluate(model, history_imgs, bev_feats, valid):
    depth_logits = model.head(bev_feats).half()
    canvas = paste_depth(depth_logits, valid, depth_logits.shape[0])
    return canvas, depth_logprob(depth_logits), mask_invalid(depth_logits, valid)


def main(device="cuda"):
    model = BEVDepth().to(device)
    history_imgs = torch.randn(4, 32, device=device)
    bev_feats = torch.randn(4, 16, device=device)
    valid = bev_feats[:, 0] > 0
    print(model(history_imgs, bev_feats).shape)
    print(evaluate(model, history_imgs, bev_feats, valid))


if __name__ == "__main__":
    main()
