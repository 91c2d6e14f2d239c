"""The protocol summary builds a function's composed flow only when the function can hold a
GradScaler protocol event (issue 34; amplint/analysis/facts/scaler_protocol.py `protocol_frames`).

On Lightning the first pass built the flow of every function of the 13 files whose text holds
a protocol word (321 flows) to keep the few with events, most of its 1.4 s of protocol
summaries. The source imitates Lightning's `lightning/fabric/plugins/precision/amp.py`: a
`MixedPrecision` plugin whose GradScaler is driven by `backward`, `optimizer_step` and
`unscale_gradients` among many methods that never touch it (contexts, conversions, state).
Counted in flows built; the summary must equal the one made from every function's flow."""

from __future__ import annotations

from amplint.analysis.facts import FileFacts, scaler_protocol
from amplint.analysis.parsing import parse
from amplint.analysis.project.scaler_summaries import summarize_scaler

PLUGIN = '''"""Mixed precision through torch.autocast and a GradScaler."""
from contextlib import contextmanager

import torch
from torch.autograd import backward as autograd_backward
from torch.nn.utils import clip_grad_norm_


def _convert(data, dtype):
    return data.to(dtype) if torch.is_tensor(data) else data


def _norm(module, max_norm):
    clip_grad_norm_(module.parameters(), max_norm)


class MixedPrecision:
    def __init__(self, precision, device, scaler=None):
        if scaler is None and precision == "16-mixed":
            scaler = torch.amp.GradScaler(device)
        self.precision = precision
        self.device = device
        self.scaler = scaler

    @contextmanager
    def forward_context(self):
        with self._autocast_context_manager():
            yield

    def convert_input(self, data):
        return _convert(data, self._desired_dtype())

    def convert_output(self, data):
        return _convert(data, torch.get_default_dtype())

    def _desired_dtype(self):
        return torch.bfloat16 if self.precision == "bf16-mixed" else torch.float16

    def _autocast_context_manager(self):
        return torch.autocast(self.device, dtype=self._desired_dtype())

    def module_init_context(self):
        return torch.device(self.device)

    def state_dict(self):
        return self.scaler.state_dict() if self.scaler is not None else {}

    def load_state_dict(self, state):
        if self.scaler is not None:
            self.scaler.load_state_dict(state)

    def teardown(self):
        self.scaler = None

    def backward(self, tensor, model):
        if self.scaler is not None:
            tensor = self.scaler.scale(tensor)
        tensor.backward()

    def optimizer_step(self, optimizer, model, max_norm):
        if self.scaler is None:
            return optimizer.step()
        self.scaler.unscale_(optimizer)
        _norm(model, max_norm)
        out = self.scaler.step(optimizer)
        self.scaler.update()
        return out

    def closure_backward(self, losses):
        autograd_backward(losses)

    def training_step(self, model, batch, optimizer, max_norm):
        with self.forward_context():
            loss = model(self.convert_input(batch))
        self.backward(loss, model)
        return self.optimizer_step(optimizer, model, max_norm)
'''

# the functions that can hold a protocol event: their own calls, or a call into one of them
HOLDERS = {"_norm", "backward", "optimizer_step", "closure_backward", "training_step"}


def _walked(monkeypatch):
    walked = []
    original = scaler_protocol._Composer.flow

    def flow(self, frame, stack):
        if id(frame) not in self.done:
            walked.append(frame.node.name.value)
        return original(self, frame, stack)

    monkeypatch.setattr(scaler_protocol._Composer, "flow", flow)
    return walked


def test_only_the_functions_that_can_hold_a_protocol_event_get_a_flow(monkeypatch):
    walked = _walked(monkeypatch)
    module = parse(PLUGIN)
    summary = summarize_scaler("amp.py", module, FileFacts(module), True, PLUGIN)
    assert set(summary.functions) == {
        "_norm", "MixedPrecision.backward", "MixedPrecision.optimizer_step",
        "MixedPrecision.closure_backward", "MixedPrecision.training_step",
    }
    assert sorted(walked) == sorted(HOLDERS)  # 5 flows, not one for each of the 16 functions


def test_the_summary_equals_the_one_made_from_every_functions_flow(monkeypatch):
    module = parse(PLUGIN)
    fast = summarize_scaler("amp.py", module, FileFacts(module), True, PLUGIN)
    walked = _walked(monkeypatch)
    monkeypatch.setattr(scaler_protocol, "protocol_frames", lambda analysis: None, raising=False)
    module = parse(PLUGIN)
    slow = summarize_scaler("amp.py", module, FileFacts(module), True, PLUGIN)
    assert len(walked) == 16
    assert fast.functions == slow.functions and fast.functions
    assert fast.flags == slow.flags and fast.calls == slow.calls
