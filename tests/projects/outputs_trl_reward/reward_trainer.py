import torch
import torch.nn as nn
import torch.nn.functional as F


class ValueHead(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.dropout = nn.Dropout(0.1)
        self.summary = nn.Linear(hidden_size, 1)

    def forward(self, hidden_states):
        output = self.dropout(hidden_states)
        return self.summary(output).squeeze(-1)


class RewardModel(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.embed = nn.Linear(hidden_size, hidden_size)
        self.v_head = ValueHead(hidden_size)

    def forward(self, hidden_states):
        hidden = self.embed(hidden_states)
        rewards = self.v_head(hidden)
        return hidden, None, rewards


def gather_end_rewards(rewards, attention_mask):
    ends = attention_mask.sum(dim=-1) - 1
    keep = ends >= 0
    end_rewards = torch.zeros(rewards.size(0), device=rewards.device)
    end_rewards[keep] = rewards[keep, ends[keep]]
    return end_rewards


def pairwise_loss(model, chosen, rejected, attention_mask):
    _, _, chosen_rewards = model(chosen)
    rejected_rewards = model(rejected)[2]
    chosen_end = gather_end_rewards(chosen_rewards, attention_mask)
    rejected_end = gather_end_rewards(rejected_rewards, attention_mask)
    return -F.logsigmoid(chosen_end.float() - rejected_end.float()).mean()


def train_step(batch, optimizer):
    model = RewardModel(64).cuda()
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = pairwise_loss(model, batch["chosen"], batch["rejected"], batch["attention_mask"])
    loss.backward()
    optimizer.step()
    return loss
