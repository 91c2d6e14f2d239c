class LocalTrainer:
    def train(self, task, loader):
        for sample in loader:
            task.train_step(sample)
