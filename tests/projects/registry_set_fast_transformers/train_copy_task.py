import torch
import torch.nn.functional as F

from fast_transformers.builders import TransformerEncoderBuilder


class SequenceModel(torch.nn.Module):
    def __init__(self, attention_type, n_tokens=32, d_model=256, n_layers=4, n_heads=8):
        super().__init__()
        self.embedding = torch.nn.Embedding(n_tokens, d_model)
        self.encoder = TransformerEncoderBuilder.from_kwargs(
            attention_type=attention_type, n_layers=n_layers, n_heads=n_heads,
            query_dimensions=d_model // n_heads, value_dimensions=d_model // n_heads,
            feed_forward_dimensions=4 * d_model).get()
        self.predictor = torch.nn.Linear(d_model, n_tokens)

    def forward(self, x):
        return self.predictor(self.encoder(self.embedding(x)))


def train(attention_type, iterations=100000, batch_size=64, seq_len=512):
    model = SequenceModel(attention_type).cuda()
    optimizer = torch.optim.RAdam(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for i in range(iterations):
        x = torch.randint(1, 32, (batch_size, seq_len), device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            y_hat = model(x)
            loss = F.cross_entropy(y_hat.view(-1, y_hat.size(-1)), x.view(-1))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    import sys

    train(sys.argv[1])
