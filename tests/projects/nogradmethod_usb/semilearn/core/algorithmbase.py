import torch


class AlgorithmBase:
    def __init__(self, model, optimizer, lambda_u=1.0):
        self.model = model
        self.optimizer = optimizer
        self.lambda_u = lambda_u
        self.loader_dict = {}

    def train_step(self, *args, **kwargs):
        raise NotImplementedError

    def train(self, num_iters):
        for _ in range(num_iters):
            x_lb, y_lb, x_ulb_w, x_ulb_s = next(iter(self.loader_dict["train"]))
            loss = self.train_step(x_lb, y_lb, x_ulb_w, x_ulb_s)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
