from dataclasses import dataclass

import torch


@dataclass
class train_config:
    model_name: str = "PATH/to/Model"
    enable_fsdp: bool = False
    run_validation: bool = True
    batch_size_training: int = 4
    gradient_accumulation_steps: int = 1
    num_epochs: int = 3
    lr: float = 1e-4
    weight_decay: float = 0.0
    gamma: float = 0.85
    seed: int = 42
    output_dir: str = "PATH/to/save/PEFT/model"

    @property
    def autocast_dtype(self) -> torch.dtype:
        """The fork trains on A100/H100 only."""
        return torch.bfloat16
