class RunConfig:
    def __init__(self, lr=1e-4, amp=True, norm_eps=1e-10, mask_value=-1e9):
        self.lr = lr
        self.amp = amp
        self.norm_eps = norm_eps
        self.mask_value = mask_value
