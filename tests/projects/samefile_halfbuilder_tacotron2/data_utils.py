import torch


class TextMelLoader(torch.utils.data.Dataset):
    def __init__(self, audiopaths_and_text, hparams):
        with open(audiopaths_and_text) as f:
            self.items = [line.strip().split("|") for line in f]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return torch.randint(0, 148, (50,)), torch.randn(50, 80)


class TextMelCollate:
    def __init__(self, n_frames_per_step):
        self.n_frames_per_step = n_frames_per_step

    def __call__(self, batch):
        return torch.stack([b[0] for b in batch]), torch.stack([b[1] for b in batch])
