from typing import Optional

import fire

from llama import Llama


def main(ckpt_dir: str, tokenizer_path: str, max_seq_len: int = 512, max_batch_size: int = 8,
         max_gen_len: Optional[int] = None):
    generator = Llama.build(ckpt_dir, tokenizer_path, max_seq_len, max_batch_size)
    dialogs = [[{"role": "user", "content": "what is the recipe of mayonnaise?"}]]
    for dialog, result in zip(dialogs, generator.chat(dialogs, max_gen_len)):
        print(dialog[-1]["content"], "->", result)


if __name__ == "__main__":
    fire.Fire(main)
