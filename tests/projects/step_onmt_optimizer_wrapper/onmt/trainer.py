import torch


class Trainer(object):
    def __init__(self, model, train_loss, optim, accum_count=1):
        self.model = model
        self.train_loss = train_loss
        self.optim = optim
        self.accum_count = accum_count

    def train(self, batches):
        for i, batch in enumerate(batches):
            self._gradient_accumulation([batch], normalization=float(len(batch)))

    def _gradient_accumulation(self, true_batches, normalization):
        self.optim.zero_grad()
        for batch in true_batches:
            with torch.autocast("cuda", enabled=self.optim.amp):
                output = self.model(batch["src"])
                loss = self.train_loss(output, batch["tgt"])
            loss = loss / normalization
            self.optim.backward(loss)
        self.optim.step()


def build_trainer(opt, model, optim):
    loss = torch.nn.CrossEntropyLoss(ignore_index=opt.pad_idx)
    return Trainer(model, loss, optim, accum_count=opt.accum_count)
