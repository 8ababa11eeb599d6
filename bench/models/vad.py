"""A streaming voice-activity detector in the shape of Silero VAD (random
weights): called every 32 ms with a 576-sample window (512 new samples and
64 of context) and its recurrent state, it returns a speech probability and
the next state.

The model branches on the sample rate, an input: the 16 kHz and 8 kHz
paths have their own STFT (a Conv1d over a fixed basis), convolutional
encoder and LSTM decoder. Scripted with torch.jit.script, the branch
exports as an ONNX If whose branches hold the convolutions and the LSTM,
so the whole model runs inside a subgraph.
"""

from typing import Tuple

import torch
from torch import nn

from common import ModelSpec

CONTEXT = 64
WINDOW = 512  # at 16 kHz


class RatePath(nn.Module):
    """STFT magnitude, four Conv1d+ReLU, one LSTM step, a 1x1 conv head."""

    def __init__(self, n_fft: int, hidden: int = 128):
        super().__init__()
        self.n_fft = n_fft
        bins = n_fft // 2 + 1
        self.bins = bins
        self.stft = nn.Conv1d(1, 2 * bins, n_fft, stride=n_fft // 2, bias=False)
        self.encoder = nn.Sequential(
            nn.Conv1d(bins, 128, 3, padding=1), nn.ReLU(),
            nn.Conv1d(128, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(64, hidden, 3, padding=1), nn.ReLU(),
        )
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.head = nn.Conv1d(hidden, 1, 1)

    def forward(self, x: torch.Tensor, state: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        # x: [1, samples]; state: [2, 1, hidden] (h, c)
        padded = nn.functional.pad(x.unsqueeze(1), (0, self.n_fft // 4), mode="reflect")
        spec = self.stft(padded)
        real = spec[:, : self.bins]
        imag = spec[:, self.bins:]
        magnitude = torch.sqrt(real * real + imag * imag)
        features = self.encoder(magnitude)  # [1, hidden, frames]
        last = features[:, :, -1:].transpose(1, 2)  # [1, 1, hidden]
        out, (h, c) = self.lstm(last, (state[0:1], state[1:2]))
        prob = torch.sigmoid(self.head(torch.relu(out.transpose(1, 2))))  # [1, 1, 1]
        return prob.reshape(1, 1), torch.cat([h, c], dim=0)


class VadModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.path16 = RatePath(256)
        self.path8 = RatePath(128)

    def forward(self, x: torch.Tensor, state: torch.Tensor, sr: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        if bool(sr == 16000):
            return self.path16(x, state)
        return self.path8(x, state)


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    model = VadModel().eval()
    x = torch.randn(1, CONTEXT + WINDOW) * 0.1
    state = torch.zeros(2, 1, 128)
    sr = torch.tensor(16000, dtype=torch.int64)
    return ModelSpec(
        name="vad",
        module=model,
        inputs={"input": x, "state": state, "sr": sr},
        output_names=["output", "stateN"],
        dynamic_axes={"input": {1: "samples"}},
        script=True,
    )
