import torch

from peft.tuners.lora import LoraLinear


def main():
    layer = LoraLinear(torch.nn.Linear(64, 64), "en").cuda()
    x = torch.randn(3, 10, 64, device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        out = layer(x, adapter_names=["en", "fr", "__base__"])
    print(out.float().abs().mean())


if __name__ == "__main__":
    main()
