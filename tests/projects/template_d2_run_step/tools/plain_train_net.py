import torch

from d2.engine.train_loop import TrainerBase


class AMPTrainer(TrainerBase):
    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda", dtype=torch.float16):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())
        losses.backward()


def do_train(model, data_loader, max_iter):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    AMPTrainer(model, data_loader, optimizer).train(0, max_iter)
