import torch

from src.utils import AverageMeter


def run_one_epoch(device, training, encoder, classifier, opt, scaler, data_loader, use_fp16):
    classifier.train(mode=training)
    criterion = torch.nn.CrossEntropyLoss()
    top1_meter = AverageMeter()
    for itr, data in enumerate(data_loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
            imgs, labels = data[0].to(device), data[1].to(device)
            with torch.no_grad():
                outputs = encoder(imgs)
                if not training:
                    outputs = classifier(outputs)
            if training:
                outputs = classifier(outputs)

        loss = criterion(outputs, labels)
        top1_acc = 100.0 * outputs.max(dim=1).indices.eq(labels).sum() / len(imgs)
        top1_meter.update(float(top1_acc))
        if training:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
    return top1_meter.avg
