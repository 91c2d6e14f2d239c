import torch

from src.utils import AverageMeter


def run_one_epoch(device, training, encoder, classifier, opt, scaler, data_loader,
                  use_fp16, attend_across_segments):
    classifier.train(mode=training)
    criterion = torch.nn.CrossEntropyLoss()
    top1_meter = AverageMeter()
    for itr, data in enumerate(data_loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
            clips = [[dij.to(device, non_blocking=True) for dij in di] for di in data[0]]
            labels = data[1].to(device)
            with torch.no_grad():
                outputs = encoder(clips)
                if not training:
                    if attend_across_segments:
                        outputs = [classifier(o) for o in outputs]
                    else:
                        outputs = [[classifier(ost) for ost in os] for os in outputs]
            if training:
                if attend_across_segments:
                    outputs = [classifier(o) for o in outputs]
                else:
                    outputs = [[classifier(ost) for ost in os] for os in outputs]

        loss = sum([criterion(o, labels) for o in outputs]) / len(outputs)
        top1_meter.update(float(loss))
        if training:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
    return top1_meter.avg
