from lightning import Trainer

from src.models.components.simple_dense_net import SimpleDenseNet
from src.models.mnist_module import MNISTLitModule


def train(datamodule):
    model = MNISTLitModule(net=SimpleDenseNet())
    trainer = Trainer(max_epochs=10)
    trainer.fit(model=model, datamodule=datamodule)
