import torch

from classy_vision.tasks.classy_task import ClassyTask


class ClassificationTask(ClassyTask):
    def train_step(self, sample):
        inputs, target = sample["input"], sample["target"]
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.amp_enabled):
            output = self.base_model(inputs)
            local_loss = self.base_loss(output, target)
            self.backward(local_loss)
        self.losses.append(local_loss.detach().item())
        self.step_optimizer()

    def eval_step(self, sample):
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=self.amp_enabled):
            output = self.base_model(sample["input"])
        return self.base_loss(output.float(), sample["target"]).item()
