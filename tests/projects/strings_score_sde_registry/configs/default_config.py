import ml_collections


def get_config():
    config = ml_collections.ConfigDict()
    config.device = "cuda"
    config.training = ml_collections.ConfigDict()
    config.training.n_iters = 1300001
    config.training.mixed_precision = True
    config.data = ml_collections.ConfigDict()
    config.data.num_channels = 3
    config.model = ml_collections.ConfigDict()
    config.model.name = "ncsnpp"
    config.model.nf = 128
    return config
