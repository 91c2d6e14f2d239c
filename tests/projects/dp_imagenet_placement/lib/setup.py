import torch
import torch.distributed as dist


def place_model(model, args):
    """Put the model on the devices the run has: one process per GPU, one GPU, or all of them."""
    if not torch.cuda.is_available():
        print("using CPU, this will be slow")
        return model
    if args.distributed:
        torch.cuda.set_device(args.gpu)
        model.cuda(args.gpu)
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        return model.cuda(args.gpu)
    # DataParallel will divide and allocate batch_size to all available GPUs
    return torch.nn.DataParallel(model).cuda()


def world_size():
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
