import torch


def test(epoch, model, test_loader, cuda=True, fp16=False):
    model.eval()
    correct = 0
    total_num = 0
    for data, target in test_loader:
        if cuda:
            data, target = data.cuda(), target.cuda()
        if fp16:
            data = data.half()
        output = model(data)
        pred = output.data.max(1, keepdim=True)[1]
        correct += pred.eq(target.data.view_as(pred)).cpu().sum().item()
        hits = torch.eq(output.argmax(1), target).sum()
        total_num += len(data)
    print(f"epoch {epoch} testing_correct: {correct / total_num} {hits}")
    return correct / total_num
