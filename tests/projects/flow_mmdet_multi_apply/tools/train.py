from mmdet.apis import train_detector


def main(data_loader):
    train_detector(data_loader)
