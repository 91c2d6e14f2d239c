import torch

from dinov2.train.ssl_meta_arch import SSLMetaArch


def build_optimizer(cfg, params_groups):
    return torch.optim.AdamW(params_groups, betas=(cfg.optim.adamw_beta1, cfg.optim.adamw_beta2))


def do_train(cfg, model, data_loader):
    model.train()
    optimizer = build_optimizer(cfg, model.parameters())
    fp16_scaler = model.fp16_scaler  # for mixed precision training
    for data in data_loader:
        optimizer.zero_grad(set_to_none=True)
        loss_dict = model.forward_backward(data, teacher_temp=0.07)
        if fp16_scaler is not None:
            if cfg.optim.clip_grad:
                fp16_scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.student.parameters(), cfg.optim.clip_grad)
            fp16_scaler.step(optimizer)
            fp16_scaler.update()
        else:
            if cfg.optim.clip_grad:
                torch.nn.utils.clip_grad_norm_(model.student.parameters(), cfg.optim.clip_grad)
            optimizer.step()
    return loss_dict


def main(cfg):
    model = SSLMetaArch(cfg).to(torch.device("cuda"))
    do_train(cfg, model, [])
