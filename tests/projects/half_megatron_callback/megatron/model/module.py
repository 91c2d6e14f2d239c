import torch


class MegatronModule(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def state_dict_for_save_checkpoint(self, prefix="", keep_vars=False):
        return self.state_dict(prefix=prefix, keep_vars=keep_vars)


class Float16Module(MegatronModule):
    def __init__(self, module, args):
        super().__init__()
        if args.fp16:
            self.add_module("module", module.half())
        elif args.bf16:
            self.add_module("module", module.bfloat16())
        else:
            self.add_module("module", module)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class Float32Module(MegatronModule):
    def __init__(self, module):
        super().__init__()
        self.add_module("module", module.float())

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
