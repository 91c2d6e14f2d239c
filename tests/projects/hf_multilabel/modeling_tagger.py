import torch
from torch import nn
from transformers import BertModel, BertPreTrainedModel


class BertForTagging(BertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.loss_fct = nn.BCELoss()
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, labels=None):
        pooled = self.bert(input_ids, attention_mask=attention_mask).pooler_output
        probs = torch.sigmoid(self.classifier(pooled))
        loss = None
        if labels is not None:
            loss = self.loss_fct(probs, labels.float())
        return {"loss": loss, "logits": probs}
