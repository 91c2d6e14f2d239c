import torch


class Trainer:
    @classmethod
    def train_one_epoch(cls, model, iterator, optimizer, scaler, options):
        model.train()
        for batch in iterator:
            batch = {k: v.to("cuda") for k, v in batch.items()}
            with torch.autocast("cuda", enabled=options.use_amp):
                loss = model(**batch)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

    @classmethod
    def run(cls, model, optimizer, train_iter_factory, options):
        scaler = torch.amp.GradScaler("cuda", enabled=options.use_amp)
        for epoch in range(options.max_epoch):
            cls.train_one_epoch(model, train_iter_factory(epoch), optimizer, scaler, options)
