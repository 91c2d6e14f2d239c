from .latte import Latte_models


def get_models(args):
    if "Latte" not in args.model:
        raise NotImplementedError(f"{args.model} is not a Latte model")
    model = Latte_models[args.model](num_frames=args.num_frames, learn_sigma=args.learn_sigma)
    # 16-frame clips do not fit the card with float32 weights
    return model.half()
