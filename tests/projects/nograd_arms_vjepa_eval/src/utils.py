class AverageMeter:
    def __init__(self):
        self.val = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val += val * n
        self.count += n

    @property
    def avg(self):
        return self.val / max(self.count, 1)
