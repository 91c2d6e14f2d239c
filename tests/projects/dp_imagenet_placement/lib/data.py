import torch
import torchvision.datasets as datasets
import torchvision.transforms as transforms


def imagenet_loaders(args):
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train = datasets.ImageFolder(args.data + "/train", transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val = datasets.ImageFolder(args.data + "/val", transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    return (torch.utils.data.DataLoader(train, batch_size=args.batch_size, shuffle=True, num_workers=8),
            torch.utils.data.DataLoader(val, batch_size=args.batch_size, shuffle=False, num_workers=8))
