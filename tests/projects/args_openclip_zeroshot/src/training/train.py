from training.zero_shot import zero_shot_eval


def evaluate(model, data, epoch, args):
    metrics = {}
    model.eval()
    zero_shot_metrics = zero_shot_eval(model, data, epoch, args)
    metrics.update(zero_shot_metrics)
    return metrics
