import fast_transformers.attention.full_attention  # noqa: F401  (fills the registry)
import fast_transformers.attention.linear_attention  # noqa: F401
from fast_transformers.attention_registry import AttentionRegistry
from fast_transformers.transformers import AttentionLayer, TransformerEncoder, TransformerEncoderLayer


class TransformerEncoderBuilder:
    def __init__(self):
        self.attention_type = "full"
        self.n_layers = 4
        self.n_heads = 4
        self.query_dimensions = 64
        self.value_dimensions = 64
        self.feed_forward_dimensions = 1024
        self.dropout = 0.1
        self.softmax_temp = None
        self.attention_dropout = 0.1
        self.feature_map = None

    @classmethod
    def from_kwargs(cls, **kwargs):
        builder = cls()
        for key, value in kwargs.items():
            if not hasattr(builder, key):
                raise ValueError(f"{key} is not a valid builder parameter")
            setattr(builder, key, value)
        return builder

    def get(self):
        d_model = self.n_heads * self.value_dimensions
        attention_class, parameter_names = AttentionRegistry.spec(self.attention_type)
        layers = []
        for _ in range(self.n_layers):
            attention = attention_class(**{name: getattr(self, name) for name in parameter_names})
            layers.append(TransformerEncoderLayer(AttentionLayer(attention, d_model, self.n_heads),
                                                  d_model, self.feed_forward_dimensions, self.dropout))
        return TransformerEncoder(layers)
