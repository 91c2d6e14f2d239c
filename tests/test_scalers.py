"""The GradScaler protocol analysis (amplint/analysis/facts/scalers.py) and the AMP12x rules on real
training code: which names are scalers, the event order with loops and branches, and silence on
the way real projects write correct code."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from amplint.analysis.engine import Settings, lint_source
from amplint.analysis.facts import FileFacts
from amplint.analysis.facts.regions import Enabled
from amplint.analysis.facts.scalers import exclusive

AMP12 = frozenset({"AMP120", "AMP121", "AMP122", "AMP123", "AMP124", "AMP125", "AMP126"})


def facts(source: str) -> FileFacts:
    return FileFacts(cst.parse_module(textwrap.dedent(source)))


def codes(source: str, select=AMP12):
    result = lint_source("t.py", textwrap.dedent(source), Settings(frozenset(select)))
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics]


# -- which names are scalers ----------------------------------------------------------------
@pytest.mark.parametrize("construction", [
    "import torch\nscaler = torch.amp.GradScaler('cuda')",
    "import torch\nscaler = torch.cuda.amp.GradScaler()",
    "from torch.cuda import amp as tamp\nscaler = tamp.GradScaler()",
    "from torch.cuda.amp import GradScaler as GS\nscaler = GS()",
    "import torch\nscaler = torch.GradScaler('cuda')",
    "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler\n"
    "scaler = ShardedGradScaler()",
])
def test_every_spelling_of_gradscaler_is_a_scaler(construction):
    f = facts(construction + "\n")
    assert f.scalers.any
    (info,) = f.scalers.infos.values()
    assert str(info.text) == "scaler" and info.constructed and info.enabled is Enabled.TRUE


def test_enabled_states_and_gating():
    f = facts("""
        import torch
        a = torch.amp.GradScaler('cuda', enabled=False)
        b = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
        c = torch.amp.GradScaler('cuda') if args.fp16 else None
    """)
    by_text = {str(i.text): i for i in f.scalers.infos.values()}
    assert by_text["a"].enabled is Enabled.FALSE
    assert by_text["b"].enabled is Enabled.MAYBE
    assert by_text["c"].enabled is Enabled.MAYBE and by_text["c"].maybe_none
    # the older API keeps working for AMP103
    assert f.scalers.any and ("name", "a") in f.scalers.scalers


def test_scalers_known_from_their_use():
    f = facts("""
        def train_one_epoch(model, loader, optimizer, scaler, loss_scaler, sk_scaler):
            scaler.scale(model(x)).backward()
            loss_scaler(loss, optimizer, clip_grad=1.0)
            sk_scaler.fit(data)
            sk_scaler.transform(data)
        class T:
            def step(self):
                self.grad_scaler.step(self.opt)
                self.grad_scaler.update()
    """)
    texts = sorted(str(i.text) for i in f.scalers.infos.values())
    assert texts == ["scaler", "self.grad_scaler"]  # not timm's loss_scaler, not sklearn's
    assert not f.scalers.any  # nothing constructed here


def test_same_name_in_two_functions_is_two_scalers():
    f = facts("""
        import torch
        def a():
            scaler = torch.amp.GradScaler('cuda', enabled=False)
        def b():
            scaler = torch.amp.GradScaler('cuda')
    """)
    states = sorted(i.enabled.value for i in f.scalers.infos.values())
    assert states == ["disabled", "enabled"]


# -- the event order ------------------------------------------------------------------------
def test_events_in_order_with_loops_and_branches():
    f = facts("""
        import torch
        scaler = torch.amp.GradScaler('cuda')
        def train(model, loader, opt):
            for i, (x, y) in enumerate(loader):
                if not torch.isfinite(x).all():
                    continue
                loss = model(x)
                scaler.scale(loss).backward()
                if (i + 1) % 4 == 0:
                    scaler.unscale_(opt)
                    model.clip_grad_norm_(1.0)
                    scaler.step(opt)
                    scaler.update()
                else:
                    loss.backward()
    """)
    (flow,) = f.scalers.flows
    kinds = [e.kind for e in flow.events]
    assert kinds == ["continue", "scale", "unscale", "clip", "step", "update", "backward"]
    scale, step, backward = flow.of("scale")[0], flow.of("step")[0], flow.of("backward")[0]
    assert scale.backward and scale.loop is step.loop is not None
    assert not scale.conditional(scale.loop) and step.conditional(step.loop)
    assert exclusive(step, backward) and not exclusive(scale, step)
    assert step.arg == "opt"


def test_two_ifs_on_one_condition_are_exclusive():
    f = facts("""
        def step(loss, opt, scaler=None):
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            if scaler is None:
                opt.step()
            else:
                scaler.step(opt)
                scaler.update()
    """)
    (flow,) = f.scalers.flows
    assert exclusive(flow.of("backward")[0], flow.of("step")[0])
    assert not exclusive(flow.of("scale")[0], flow.of("step")[0])


def test_nested_functions_are_flows_of_their_own():
    f = facts("""
        import torch
        scaler = torch.amp.GradScaler('cuda')
        def fit(opt):
            def closure():
                scaler.scale(loss()).backward()
                return 0
            scaler.step(opt, closure)
            scaler.update()
    """)
    kinds = sorted([e.kind for e in flow.events] for flow in f.scalers.flows)
    assert kinds == [["scale", "return"], ["step", "update"]]


# -- the forms that defeat naive matching ---------------------------------------------------
def test_alias_self_scaler_and_model_clip_wrapper():
    assert codes("""
        from torch.cuda import amp as tamp
        class Trainer:
            def __init__(self):
                self.scaler = tamp.GradScaler()
            def step(self, loss):
                self.scaler.scale(loss).backward()
                self.model.clip_grad_norm_(1.0)
                self.scaler.step(self.opt)
                self.scaler.update()
    """) == ["AMP120"]


def test_clip_through_a_same_file_helper():
    assert codes("""
        import torch
        def clip(model, c):
            return torch.nn.utils.clip_grad_norm_(model.parameters(), c)
        def train(model, loss, opt, scaler):
            scaler.scale(loss).backward()
            clip(model, 1.0)
            scaler.step(opt)
            scaler.update()
    """) == ["AMP120"]


def test_continue_between_step_and_update():
    assert codes("""
        import torch
        scaler = torch.amp.GradScaler('cuda')
        for i, x in enumerate(loader):
            scaler.scale(model(x)).backward()
            scaler.step(opt)
            if i % 10:
                continue
            scaler.update()
    """) == ["AMP121"]


def test_unscaled_backward_with_a_scaler_parameter():
    assert codes("""
        def train(model, loader, opt, scaler):
            for x in loader:
                model(x).backward()
                scaler.step(opt)
                scaler.update()
    """) == ["AMP122"]


# -- silence on real code -------------------------------------------------------------------
REAL = {
    "detectron2_amp": """\
import torch
from torch.nn.parallel import DataParallel, DistributedDataParallel

class AMPTrainer(SimpleTrainer):
    def __init__(self, model, data_loader, optimizer, gather_metric_period=1, zero_grad_before_forward=False, grad_scaler=None, precision=torch.float16, log_grad_scaler=False, async_write_metrics=False):
        unsupported = "AMPTrainer does not support single-process multi-device training!"
        super().__init__(model, data_loader, optimizer, gather_metric_period, zero_grad_before_forward)
        if grad_scaler is None:
            from torch.cuda.amp import GradScaler
            grad_scaler = GradScaler()
        self.grad_scaler = grad_scaler
        self.precision = precision
        self.log_grad_scaler = log_grad_scaler

    def run_step(self):
        assert self.model.training, "[AMPTrainer] model was changed to eval mode!"
        assert torch.cuda.is_available(), "[AMPTrainer] CUDA is required for AMP training!"
        from torch.cuda.amp import autocast
        start = time.perf_counter()
        data = next(self._data_loader_iter)
        data_time = time.perf_counter() - start
        if self.zero_grad_before_forward:
            self.optimizer.zero_grad()
        with autocast(dtype=self.precision):
            loss_dict = self.model(data)
            if isinstance(loss_dict, torch.Tensor):
                losses = loss_dict
                loss_dict = {"total_loss": loss_dict}
            else:
                losses = sum(loss_dict.values())
        if not self.zero_grad_before_forward:
            self.optimizer.zero_grad()
        self.grad_scaler.scale(losses).backward()
        if self.log_grad_scaler:
            storage = get_event_storage()
            storage.put_scalar("[metric]grad_scaler", self.grad_scaler.get_scale())
        self.after_backward()
        if self.async_write_metrics:
            self.concurrent_executor.submit(self._write_metrics, loss_dict, data_time, iter=self.iter)
        else:
            self._write_metrics(loss_dict, data_time)
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()

    def state_dict(self):
        ret = super().state_dict()
        ret["grad_scaler"] = self.grad_scaler.state_dict()
        return ret
""",
    "dino_train": """\
import torch
import utils
def train_one_epoch(student, teacher, teacher_without_ddp, dino_loss, data_loader, optimizer, lr_schedule, wd_schedule, momentum_schedule, epoch, fp16_scaler, args):
    for it, (images, _) in enumerate(metric_logger.log_every(data_loader, 10, header)):
        it = len(data_loader) * epoch + it
        images = [im.cuda(non_blocking=True) for im in images]
        with torch.cuda.amp.autocast(fp16_scaler is not None):
            teacher_output = teacher(images[:2])
            student_output = student(images)
            loss = dino_loss(student_output, teacher_output, epoch)
        if not math.isfinite(loss.item()):
            print("Loss is {}, stopping training".format(loss.item()), force=True)
            sys.exit(1)
        optimizer.zero_grad()
        param_norms = None
        if fp16_scaler is None:
            loss.backward()
            if args.clip_grad:
                param_norms = utils.clip_gradients(student, args.clip_grad)
            utils.cancel_gradients_last_layer(epoch, student, args.freeze_last_layer)
            optimizer.step()
        else:
            fp16_scaler.scale(loss).backward()
            if args.clip_grad:
                fp16_scaler.unscale_(optimizer)
                param_norms = utils.clip_gradients(student, args.clip_grad)
            utils.cancel_gradients_last_layer(epoch, student, args.freeze_last_layer)
            fp16_scaler.step(optimizer)
            fp16_scaler.update()
        with torch.no_grad():
            m = momentum_schedule[it]
""",
    "examples_imagenet": """\
import torch
def train(train_loader, model, criterion, optimizer, epoch, device, args, scaler):
    model.train()
    for i, (images, target) in enumerate(train_loader):
        images = images.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", enabled=args.amp):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            if args.clip_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            if args.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            optimizer.step()

def main(args):
    scaler = torch.cuda.amp.GradScaler() if args.amp else None
""",
    "gan_two_scalers": """\
import torch
scaler_d = torch.cuda.amp.GradScaler()
scaler_g = torch.cuda.amp.GradScaler()
for real in loader:
    with torch.autocast("cuda"):
        d_loss = disc_loss(D, G, real)
    opt_d.zero_grad()
    scaler_d.scale(d_loss).backward()
    scaler_d.step(opt_d)
    scaler_d.update()
    with torch.autocast("cuda"):
        g_loss = gen_loss(D, G, real)
    opt_g.zero_grad()
    scaler_g.scale(g_loss).backward()
    scaler_g.step(opt_g)
    scaler_g.update()
""",
    "hf_old_trainer": """\
import torch
from torch.cuda.amp import GradScaler, autocast
class Trainer:
    def __init__(self, args):
        if args.fp16:
            self.use_amp = True
            self.scaler = GradScaler()
    def training_step(self, model, inputs):
        model.train()
        if self.use_amp:
            with autocast():
                loss = self.compute_loss(model, inputs)
        else:
            loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        if self.use_amp:
            self.scaler.scale(loss).backward()
        elif self.use_apex:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.detach()
    def train(self):
        for epoch in range(epochs_trained, int(num_train_epochs)):
            for step, inputs in enumerate(epoch_iterator):
                tr_loss += self.training_step(model, inputs)
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    if self.use_amp:
                        self.scaler.unscale_(self.optimizer)
                        torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    elif self.use_apex:
                        torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.args.max_grad_norm)
                    else:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    if is_torch_tpu_available():
                        xm.optimizer_step(self.optimizer)
                    elif self.use_amp:
                        self.scaler.step(self.optimizer)
                        self.scaler.update()
                    else:
                        self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
""",
    "mae_engine": """\
import torch
def train_one_epoch(model, data_loader, optimizer, device, epoch, loss_scaler, log_writer=None, args=None):
    accum_iter = args.accum_iter
    optimizer.zero_grad()
    for data_iter_step, (samples, _) in enumerate(metric_logger.log_every(data_loader, print_freq, header)):
        if data_iter_step % accum_iter == 0:
            lr_sched.adjust_learning_rate(optimizer, data_iter_step / len(data_loader) + epoch, args)
        samples = samples.to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            loss, _, _ = model(samples, mask_ratio=args.mask_ratio)
        loss_value = loss.item()
        loss /= accum_iter
        loss_scaler(loss, optimizer, parameters=model.parameters(), update_grad=(data_iter_step + 1) % accum_iter == 0)
        if (data_iter_step + 1) % accum_iter == 0:
            optimizer.zero_grad()
        torch.cuda.synchronize()

class NativeScalerWithGradNormCount:
    state_dict_key = "amp_scaler"
    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()
    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False, update_grad=True):
        self._scaler.scale(loss).backward(create_graph=create_graph)
        if update_grad:
            if clip_grad is not None:
                assert parameters is not None
                self._scaler.unscale_(optimizer)
                norm = torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
            else:
                self._scaler.unscale_(optimizer)
                norm = get_grad_norm_(parameters)
            self._scaler.step(optimizer)
            self._scaler.update()
        else:
            norm = None
        return norm
""",
    "nanogpt_train": """\
import torch
from contextlib import nullcontext
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
X, Y = get_batch('train')
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        if losses['val'] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses['val']
    if iter_num == 0 and eval_only:
        break
    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch('train')
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
    if iter_num > max_iters:
        break
""",
    "timm_train": """\
import torch
from contextlib import suppress
from functools import partial
from timm.utils import ApexScaler, NativeScaler
import timm.utils as utils

def main():
    amp_autocast = suppress
    loss_scaler = None
    if use_amp == 'apex':
        model, optimizer = amp.initialize(model, optimizer, opt_level='O1')
        loss_scaler = ApexScaler()
    elif use_amp == 'native':
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=amp_dtype)
        if device.type in ('cuda',) and amp_dtype == torch.float16:
            loss_scaler = NativeScaler(device=device.type)

def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, device=torch.device('cuda'), lr_scheduler=None, saver=None, output_dir=None, amp_autocast=suppress, loss_scaler=None, model_ema=None, mixup_fn=None, num_updates_total=None):
    second_order = hasattr(optimizer, 'is_second_order') and optimizer.is_second_order
    has_no_sync = hasattr(model, "no_sync")
    optimizer.zero_grad()
    for batch_idx, (input, target) in enumerate(loader):
        def _forward():
            with amp_autocast():
                output = model(input)
                loss = loss_fn(output, target)
            if accum_steps > 1:
                loss /= accum_steps
            return loss

        def _backward(_loss):
            if loss_scaler is not None:
                loss_scaler(
                    _loss,
                    optimizer,
                    clip_grad=args.clip_grad,
                    clip_mode=args.clip_mode,
                    parameters=model_parameters(model, exclude_head='agc' in args.clip_mode),
                    create_graph=second_order,
                    need_update=need_update,
                )
            else:
                _loss.backward(create_graph=second_order)
                if need_update:
                    if args.clip_grad is not None:
                        utils.dispatch_clip_grad(
                            model_parameters(model, exclude_head='agc' in args.clip_mode),
                            value=args.clip_grad,
                            mode=args.clip_mode,
                        )
                    optimizer.step()

        if has_no_sync and not need_update:
            with model.no_sync():
                loss = _forward()
                _backward(loss)
        else:
            loss = _forward()
            _backward(loss)
        if not need_update:
            continue
        num_updates += 1
        optimizer.zero_grad()
        if model_ema is not None:
            model_ema.update(model, step=num_updates)
""",
    "yolov5_train": """\
import torch
from torch.cuda import amp
import torch.nn as nn

def train(hyp, opt, device, callbacks):
    cuda = device.type != 'cpu'
    scaler = torch.cuda.amp.GradScaler(enabled=amp)
    last_opt_step = -1
    for epoch in range(start_epoch, epochs):
        model.train()
        optimizer.zero_grad()
        for i, (imgs, targets, paths, _) in pbar:
            ni = i + nb * epoch
            imgs = imgs.to(device, non_blocking=True).float() / 255
            with torch.cuda.amp.autocast(amp):
                pred = model(imgs)
                loss, loss_items = compute_loss(pred, targets.to(device))
                if RANK != -1:
                    loss *= WORLD_SIZE
                if opt.quad:
                    loss *= 4.
            # Backward
            scaler.scale(loss).backward()
            # Optimize
            if ni - last_opt_step >= accumulate:
                scaler.unscale_(optimizer)  # unscale gradients
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)  # clip gradients
                scaler.step(optimizer)  # optimizer.step
                scaler.update()
                optimizer.zero_grad()
                if ema:
                    ema.update(model)
                last_opt_step = ni
            if RANK in {-1, 0}:
                mloss = (mloss * i + loss_items) / (i + 1)
        lr = [x['lr'] for x in optimizer.param_groups]
        scheduler.step()
""",
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_training_code_is_silent(name):
    """Training loops as nanoGPT, YOLOv5, detectron2, DINO, MAE, timm, torchvision and an older
    HF Trainer write them (condensed): correct scaler use, no AMP12x finding."""
    assert codes(REAL[name]) == []


def test_fix_inserts_unscale_before_the_clip_once():
    source = textwrap.dedent("""
        import torch
        scaler = torch.amp.GradScaler('cuda')
        for x in loader:
            scaler.scale(model(x)).backward()
            if max_norm:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(opt)
            scaler.update()
    """)
    result = lint_source("t.py", source, Settings(AMP12), fix=True)
    assert result.fixed_source is not None
    assert result.fixed_source.count("scaler.unscale_(opt)") == 1
    assert "    if max_norm:\n        scaler.unscale_(opt)\n        torch.nn.utils.clip_grad_norm_" in result.fixed_source
    assert result.diagnostics == []


# -- the quoted runtime errors are torch's own ----------------------------------------------
def test_quoted_errors_exist_in_torch_source():
    torch = pytest.importorskip("torch")
    source = (Path(torch.__file__).parent / "amp" / "grad_scaler.py").read_text()
    for text in (
        "step() has already been called since the last update().",
        "unscale_() has already been called on this optimizer since the last update().",
        "unscale_() is being called after step().",
        "Attempted {funcname} but _scale is None.",
        "Closure use is not currently supported if GradScaler is enabled.",
        "No inf checks were recorded prior to update.",
    ):
        assert text in source, text


def test_hazards_behave_as_documented_on_cpu():
    torch = pytest.importorskip("torch")
    import warnings

    warnings.simplefilter("ignore")

    def setup():
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        return model, opt, torch.amp.GradScaler("cpu"), torch.randn(8, 4)

    model, opt, scaler, x = setup()  # AMP121
    scaler.scale(model(x).sum()).backward()
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called"):
        scaler.step(opt)

    model, opt, scaler, x = setup()  # AMP122
    model(x).sum().backward()
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(opt)

    model, opt, scaler, x = setup()  # AMP123
    scaler.scale(model(x).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called"):
        scaler.unscale_(opt)

    model, opt, scaler, x = setup()  # AMP125
    scaler.scale(model(x).sum()).backward()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)

    model, opt, scaler, x = setup()  # AMP120: the clip sees the scaled norm
    scaler.scale(model(x).sum()).backward()
    scaled_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9))
    scaler.unscale_(opt)
    true_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9))
    assert scaled_norm == pytest.approx(true_norm * scaler.get_scale(), rel=1e-4)
