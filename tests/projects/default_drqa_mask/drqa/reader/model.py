import torch
import torch.nn.functional as F

from drqa.reader.rnn_reader import RnnDocReader


class DocReader:
    def __init__(self, args):
        self.args = args
        self.network = RnnDocReader(args).cuda()
        self.optimizer = torch.optim.Adamax(self.network.parameters())
        self.scaler = torch.amp.GradScaler("cuda")
        self.updates = 0

    def update(self, ex):
        self.network.train()
        inputs = [e.cuda(non_blocking=True) for e in ex[:4]]
        target_s = ex[4].cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            score_s = self.network(*inputs)
        loss = F.cross_entropy(score_s.float(), target_s)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.updates += 1
        return loss.item()
