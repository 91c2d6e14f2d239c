import fire
import torch
from transformers import LlamaForCausalLM

from llama_recipes.configs import fsdp_config, train_config
from llama_recipes.utils.train_utils import train


def warm_up(model, batches, optimizer):
    """A few steps of the head alone before the FSDP run, in the FSDP mixed precision."""
    fsdp_cfg = fsdp_config(sharding_strategy="NO_SHARD")
    scaler = torch.amp.GradScaler("cuda")
    for batch in batches:
        with torch.autocast("cuda", dtype=fsdp_cfg.mixed_precision_dtype):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def main(**kwargs):
    cfg = train_config(**kwargs)
    torch.manual_seed(cfg.seed)
    model = LlamaForCausalLM.from_pretrained(cfg.model_name).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=cfg.gamma)
    batches = [{"input_ids": torch.randint(0, 32000, (cfg.batch_size_training, 128))}] * 8
    warm_up(model, batches, optimizer)
    return train(model, batches, optimizer, scheduler, cfg.gradient_accumulation_steps, cfg)


if __name__ == "__main__":
    fire.Fire(main)
