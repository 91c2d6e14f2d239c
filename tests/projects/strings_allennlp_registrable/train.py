import torch

import tagger.modules.pass_through_encoder  # noqa: F401  (registers "pass_through")
import tagger.modules.self_attention_encoder  # noqa: F401  (registers "self_attention")
from tagger.models.simple_tagger import SimpleTagger
from tagger.modules.seq2seq_encoder import Seq2SeqEncoder
from tagger.training.trainer import Trainer

CONFIG = {
    "model": {
        "embedding_dim": 128,
        "encoder": {"type": "self_attention", "input_dim": 128, "num_heads": 4},
    },
    "trainer": {"num_epochs": 5, "use_amp": True},
}


def build_model(vocab_size, num_tags):
    encoder_params = dict(CONFIG["model"]["encoder"])
    encoder_class = Seq2SeqEncoder.by_name(encoder_params.pop("type"))
    encoder = encoder_class(**encoder_params)
    return SimpleTagger(vocab_size, num_tags, CONFIG["model"]["embedding_dim"], encoder)


def main():
    model = build_model(30000, 17).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    Trainer(model, optimizer, torch.load("train_batches.pt"), **CONFIG["trainer"]).train()


if __name__ == "__main__":
    main()
