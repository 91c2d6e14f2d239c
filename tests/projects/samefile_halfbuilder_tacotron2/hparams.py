from types import SimpleNamespace


def create_hparams():
    return SimpleNamespace(fp16_run=True, seed=1234, learning_rate=1e-3, weight_decay=1e-6, epochs=500,
                           batch_size=64, grad_clip_thresh=1.0, n_frames_per_step=1, n_mel_channels=80,
                           training_files="filelists/ljs_audio_text_train_filelist.txt")
