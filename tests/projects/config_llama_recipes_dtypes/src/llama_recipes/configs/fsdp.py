import torch


class fsdp_config:
    def __init__(self, sharding_strategy="FULL_SHARD", checkpoint_type="SHARDED_STATE_DICT"):
        self.sharding_strategy = sharding_strategy
        self.checkpoint_type = checkpoint_type
        self.mixed_precision_dtype = torch.bfloat16
        self.fsdp_activation_checkpointing = True
