from transformers import AutoConfig, Trainer, TrainingArguments

from modeling_tagger import BertForTagging


def main(train_dataset, eval_dataset):
    config = AutoConfig.from_pretrained("bert-base-uncased", num_labels=12)
    model = BertForTagging.from_pretrained("bert-base-uncased", config=config)
    training_args = TrainingArguments(
        output_dir="out",
        per_device_train_batch_size=32,
        num_train_epochs=3,
        fp16=True,
    )
    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset,
                      eval_dataset=eval_dataset)
    trainer.train()
