from engine.fit import fit
from losses import BCEDice
from models import Net


def main(loader):
    net = Net().cuda()
    fit(net, loader, criterion=BCEDice(), epochs=5)
