from megatron.model.gpt_model import GPTModel
from megatron.training import pretrain


def model_provider(args):
    return GPTModel(args.vocab_size, args.hidden_size, args.num_layers)


def forward_step(batch, model):
    tokens, labels = batch
    return model(tokens, labels)


def main(args, batches):
    return pretrain(model_provider, forward_step, batches, args)
