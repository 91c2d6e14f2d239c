import torch


def standard_train_step(task, sample):
    with torch.autocast("cuda", dtype=torch.float16, enabled=task.amp_args is not None):
        model_output = task.base_model(sample["input"])
        local_loss = task.loss(model_output, sample["target"])
    task.optimizer.zero_grad()
    local_loss.backward()
    task.optimizer.step()
    return local_loss.detach()
