import torch

from dlrm.model.dlrm import Dlrm


def main(flags, loader, test_loader):
    model = Dlrm(13, 64).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=flags.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=flags.amp)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="mean")

    def forward_backward(numerical_features, click):
        with torch.autocast("cuda", enabled=flags.amp):
            output = model(numerical_features).squeeze()
            loss = loss_fn(output, click)
        scaler.scale(loss).backward()
        return loss

    for numerical_features, click in loader:
        optimizer.zero_grad()
        forward_backward(numerical_features, click)
        scaler.step(optimizer)
        scaler.update()
    return dist_evaluate(model, test_loader, flags)


def dist_evaluate(model, data_loader, flags):
    loss_fn = torch.nn.BCELoss(reduction="mean")
    scores, labels = [], []
    with torch.no_grad():
        for numerical_features, click in data_loader:
            with torch.autocast("cuda", enabled=flags.amp):
                output = model(numerical_features).squeeze()
            scores.append(torch.sigmoid(output.float()))
            labels.append(click)
    return loss_fn(torch.cat(scores), torch.cat(labels)).item()
