import torch
import torch.nn as nn

SCALE_WEIGHT = 0.5 ** 0.5


def shape_transform(x):
    return torch.unsqueeze(torch.transpose(x, 1, 2), 3)


class CNNDecoder(nn.Module):
    def __init__(self, hidden_size, cnn_kernel_width, embeddings):
        super().__init__()
        self.cnn_kernel_width = cnn_kernel_width
        self.embeddings = embeddings
        self.linear = nn.Linear(hidden_size, hidden_size)
        self.conv = nn.Conv2d(hidden_size, hidden_size, (cnn_kernel_width, 1))

    def forward(self, tgt, enc_out):
        emb = self.embeddings(tgt)
        emb_reshape = emb.view(emb.size(0) * emb.size(1), -1)
        linear_out = self.linear(emb_reshape)
        x = linear_out.view(emb.size(0), emb.size(1), -1)
        x = shape_transform(x)
        pad = torch.zeros(x.size(0), x.size(1), self.cnn_kernel_width - 1, 1)
        pad = pad.type_as(x)
        new_target_input = torch.cat([pad, x], 2)
        out = self.conv(new_target_input)
        x = (x + out) * SCALE_WEIGHT
        return x.squeeze(3).transpose(1, 2)
