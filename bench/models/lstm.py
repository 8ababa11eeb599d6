"""A 2-layer LSTM sequence model with a per-timestep Linear head (random weights).

torch.nn.LSTM exports as one ONNX LSTM node per layer (gates reordered to
ONNX's i, o, f, c by the exporter), with the glue between layers (Squeeze,
Transpose for batch_first) around them.
"""

import torch
from torch import nn

from common import ModelSpec


class LstmModel(nn.Module):
    def __init__(self, input_size: int, hidden: int, layers: int, outputs: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)  # [B, S, hidden]; the state starts at zero
        return self.head(y)


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    if small:
        input_size, hidden, batch, seq = 256, 64, 2, 16
    else:
        input_size, hidden, batch, seq = 256, 512, 1, 128
    # torch's default LSTM initialisation, U(-1/sqrt(hidden), 1/sqrt(hidden)),
    # keeps the gates away from saturation, so the reference is a fair test.
    model = LstmModel(input_size, hidden, layers=2, outputs=256)
    x = torch.randn(batch, seq, input_size)
    axes = {0: "batch", 1: "sequence"}
    return ModelSpec(
        name="lstm",
        module=model,
        inputs={"input": x},
        output_names=["logits"],
        dynamic_axes={"input": axes, "logits": axes},
    )
