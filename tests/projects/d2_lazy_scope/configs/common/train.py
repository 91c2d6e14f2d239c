train = dict(
    output_dir="./output",
    init_checkpoint="",
    max_iter=90000,
    amp=dict(enabled=False),
    checkpointer=dict(period=5000, max_to_keep=100),
    eval_period=5000,
    device="cuda",
)
