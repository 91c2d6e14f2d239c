import torch

from minigpt4.models import MiniGPTv2


def main():
    model = MiniGPTv2().to("cuda")
    model.load_checkpoint("minigptv2_checkpoint.pth")
    image = torch.rand(1, 3, 224, 224, device="cuda")
    img_embeds, atts = model.encode_img(image)
    print(img_embeds.shape, atts.shape)


if __name__ == "__main__":
    main()
