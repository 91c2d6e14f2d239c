"""Fine-tuning a sequence classifier on a GLUE task (legacy example script layout)."""
import argparse
import logging
import os

import torch
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from glue_data import build_features
from glue_train import evaluate, train

logger = logging.getLogger(__name__)


def parse_options():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--task_name", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--fp16", action="store_true", help="apex O1 mixed precision (kept for old configs)")
    parser.add_argument("--native_amp", action="store_true", help="torch.cuda.amp autocast and GradScaler")
    return parser.parse_args()


def main():
    opts = parse_options()
    opts.n_gpu = torch.cuda.device_count()
    device = torch.device("cuda" if opts.n_gpu else "cpu")
    config = AutoConfig.from_pretrained(opts.model_name_or_path)
    tokenizer = AutoTokenizer.from_pretrained(opts.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(opts.model_name_or_path, config=config)
    model.to(device)
    grad_scaler = torch.cuda.amp.GradScaler(enabled=opts.native_amp)
    train_features = build_features(opts.task_name, tokenizer, "train")
    step, loss = train(opts, train_features, model, device, scaler=grad_scaler)
    logger.info("global_step = %s, average loss = %s", step, loss)
    os.makedirs(opts.output_dir, exist_ok=True)
    model.save_pretrained(opts.output_dir)
    logger.info("eval: %s", evaluate(opts, build_features(opts.task_name, tokenizer, "dev"), model, device))


if __name__ == "__main__":
    main()
