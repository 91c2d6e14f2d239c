import torch

from models.flash_intern_image import FlashInternImage


def train(loader, epochs=1):
    model = FlashInternImage(channels=64, core_op="DepthwiseConv").cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = torch.nn.functional.cross_entropy(model(x.cuda()).mean(1), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
