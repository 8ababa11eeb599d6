"""A GPT-2-like decoder in plain torch (random weights).

The causal mask is built inside the graph from the sequence length
(ones -> tril -> == 0 -> masked_fill), so the export holds the
ConstantOfShape/Trilu/Equal/Where ops that real GPT-2 exports carry, and
GELU is GPT-2's tanh approximation written out term by term.
"""

import math

import torch
from torch import nn

from common import ModelSpec, init_transformer_weights


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=2)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        causal = torch.tril(torch.ones(s, s, dtype=x.dtype, device=x.device))
        # The most negative float rather than -inf, as GPT-2 does: a fully
        # masked row then stays finite instead of turning into NaN.
        scores = scores.masked_fill(causal == 0, torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.proj(context)


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, eps: float):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=eps)
        self.attn = CausalSelfAttention(hidden, heads)
        self.ln_2 = nn.LayerNorm(hidden, eps=eps)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(gelu_tanh(self.fc(self.ln_2(x))))


class Gpt2(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int, heads: int, max_positions: int = 1024,
                 eps: float = 1e-5):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_positions, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, eps) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=eps)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        # The output projection shares the token embedding, as in GPT-2.
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    if small:
        vocab, hidden, layers, heads = 1000, 128, 2, 4
        batch, seq = 2, 16
    else:
        vocab, hidden, layers, heads = 50257, 768, 12, 12
        batch, seq = 1, 128
    model = Gpt2(vocab, hidden, layers, heads)
    init_transformer_weights(model)
    input_ids = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    axes = {0: "batch", 1: "sequence"}
    return ModelSpec(
        name="gpt2",
        module=model,
        inputs={"input_ids": input_ids},
        output_names=["logits"],
        dynamic_axes={"input_ids": axes, "logits": axes},
    )
