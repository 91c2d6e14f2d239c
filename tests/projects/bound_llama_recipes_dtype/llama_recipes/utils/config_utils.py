import torch


def get_autocast_dtype(train_config):
    """The mixed-precision dtype of a run: bf16 on the GPUs this recipe supports."""
    if train_config.use_fp16:
        raise ValueError("fp16 mixed precision is not supported by this recipe, use bf16")
    return torch.bfloat16


def inference_dtype(inference_config):
    if inference_config.quantization:
        raise ValueError("quantized checkpoints keep their own dtype")
    return torch.float32


def scoring_dtype(inference_config):
    if not inference_config.use_cuda:
        raise ValueError("the safety scorer runs on GPU")
    return torch.float16
