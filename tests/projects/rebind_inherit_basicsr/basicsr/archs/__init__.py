from copy import deepcopy

from basicsr.archs.srresnet_arch import MSRResNet


def build_network(opt):
    opt = deepcopy(opt)
    opt.pop('type')
    net = MSRResNet(**opt)
    return net
