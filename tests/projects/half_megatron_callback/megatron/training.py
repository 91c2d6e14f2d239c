import torch

from megatron.model.module import Float16Module


def get_model(model_provider_func, args):
    model = [model_provider_func(args)]
    model = [Float16Module(model_module, args) for model_module in model]
    return model


def train_step(forward_step_func, batch, model, optimizer, scaler, args):
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(args.device, dtype=torch.float16, enabled=args.fp16):
        loss = forward_step_func(batch, model[0])
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_([p for m in model for p in m.parameters()], args.clip_grad)
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def train(forward_step_func, model, optimizer, scaler, batches, args):
    losses = []
    for batch in batches:
        losses.append(train_step(forward_step_func, batch, model, optimizer, scaler, args))
    return losses


def pretrain(model_provider, forward_step_func, batches, args):
    model = get_model(model_provider, args)
    optimizer = torch.optim.AdamW([p for m in model for p in m.parameters()], lr=args.lr)
    scaler = torch.amp.GradScaler(args.device, enabled=args.fp16)
    return train(forward_step_func, model, optimizer, scaler, batches, args)
