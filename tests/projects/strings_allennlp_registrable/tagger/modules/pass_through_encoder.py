from tagger.modules.seq2seq_encoder import Seq2SeqEncoder


@Seq2SeqEncoder.register("pass_through")
class PassThroughEncoder(Seq2SeqEncoder):
    def __init__(self, input_dim):
        super().__init__()
        self.input_dim = input_dim

    def get_output_dim(self):
        return self.input_dim

    def forward(self, inputs, mask):
        return inputs * mask.unsqueeze(-1)
