from basicsr.models import SRModel


def train_pipeline(opt, loader, total_iters):
    model = SRModel(opt)
    current_iter = 0
    while current_iter < total_iters:
        for train_data in loader:
            current_iter += 1
            model.update_learning_rate(current_iter)
            model.feed_data(train_data)
            model.optimize_parameters(current_iter)
