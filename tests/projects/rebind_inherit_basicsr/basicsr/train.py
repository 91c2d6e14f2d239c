import torch

from basicsr.models import build_model


def parse_options():
    return {
        'is_train': True,
        'dist': False,
        'num_gpu': torch.cuda.device_count(),
        'network_g': {'type': 'MSRResNet', 'num_feat': 16, 'num_block': 2, 'upscale': 2},
        'train': {'lr': 2e-4, 'total_iter': 4},
    }


def train_pipeline():
    opt = parse_options()
    model = build_model(opt)
    for current_iter in range(1, opt['train']['total_iter'] + 1):
        lq = torch.rand(2, 3, 16, 16)
        model.feed_data({'lq': lq, 'gt': torch.rand(2, 3, 32, 32)})
        loss = model.optimize_parameters(current_iter)
        print(f'iter {current_iter}: l_pix {loss:.4f}')


if __name__ == '__main__':
    train_pipeline()
