"""A BERT-base-like encoder in plain torch (random weights).

Written out rather than taken from a library so that the exported graph is
what PyTorch itself produces for these ops: Gather embeddings, LayerNorm,
MatMul attention with an additive mask built in the graph, erf GELU.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from common import ModelSpec, init_transformer_weights


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + additive_mask, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.out(context)


class EncoderLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, eps: float):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor) -> torch.Tensor:
        x = self.attention_norm(x + self.attention(x, additive_mask))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


class Bert(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int, heads: int, intermediate: int,
                 max_positions: int = 512, type_vocab: int = 2, eps: float = 1e-12):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, intermediate, eps) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = (self.word_embeddings(input_ids) + self.position_embeddings(positions) +
             self.token_type_embeddings(token_type_ids))
        x = self.embedding_norm(x)
        # [B, S] of 1 (attend) / 0 (padding) -> [B, 1, 1, S] of 0 / -10000,
        # broadcast over heads and query positions.
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive_mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    if small:
        vocab, hidden, layers, heads, intermediate = 1000, 128, 2, 4, 512
        batch, seq = 2, 16
    else:
        vocab, hidden, layers, heads, intermediate = 30522, 768, 12, 12, 3072
        batch, seq = 1, 128
    model = Bert(vocab, hidden, layers, heads, intermediate)
    init_transformer_weights(model)

    input_ids = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    # Padding at the end of every row (more in later rows), so the mask matters.
    attention_mask = torch.ones(batch, seq, dtype=torch.int64)
    for b in range(batch):
        attention_mask[b, seq - seq // 4 - b:] = 0
    token_type_ids = torch.zeros(batch, seq, dtype=torch.int64)
    token_type_ids[:, seq // 2:] = 1

    axes = {0: "batch", 1: "sequence"}
    return ModelSpec(
        name="bert",
        module=model,
        inputs={"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids},
        output_names=["last_hidden_state", "pooler_output"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                      "last_hidden_state": axes, "pooler_output": {0: "batch"}},
    )
