from basicsr.models.sr_model import SRModel


def build_model(opt):
    model = SRModel(opt)
    print(f'Model [{model.__class__.__name__}] is created.')
    return model
