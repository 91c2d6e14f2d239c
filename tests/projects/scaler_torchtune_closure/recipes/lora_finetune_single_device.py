import torch

from torchtune import training


class LoRAFinetuneRecipeSingleDevice:
    def __init__(self, cfg):
        self._device = torch.device(cfg.device)
        self._dtype = training.get_dtype(cfg.dtype)
        self._clip_grad_norm = cfg.clip_grad_norm
        self._accum = cfg.gradient_accumulation_steps

    def setup(self, cfg, model, dataloader):
        self._model = model.to(self._device)
        self._dataloader = dataloader
        self._optimizer = torch.optim.AdamW(self._model.parameters(), lr=cfg.lr)
        self._grad_scaler = torch.amp.GradScaler("cuda", enabled=self._dtype == torch.float16)
        self._step_fn = training.make_step_fn(self._optimizer, self._grad_scaler, self._model, clip_norm=self._clip_grad_norm)

    def train(self):
        for idx, (tokens, labels) in enumerate(self._dataloader):
            with torch.autocast("cuda", dtype=self._dtype):
                logits = self._model(tokens.to(self._device))
                loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten().to(self._device))
            self._grad_scaler.scale(loss / self._accum).backward()
            if (idx + 1) % self._accum == 0:
                self._grad_scaler.unscale_(self._optimizer)
                norm = training.grad_norm(self._model.parameters())
                self._step_fn()
                print(f"step {idx} loss {loss.item():.4f} grad norm {norm.item():.3f}")


def recipe_main(cfg, model, dataloader):
    recipe = LoRAFinetuneRecipeSingleDevice(cfg)
    recipe.setup(cfg, model, dataloader)
    recipe.train()
