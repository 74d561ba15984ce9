"""Measure model-state and saved-activation bytes of a small GPT model trained with Adam on the CPU.

For each shape in a grid (hidden size, heads, sequence length, micro-batch, layers; fp32 and bf16
autocast; eager attention and ``F.scaled_dot_product_attention``) the script builds a pre-LN GPT
block stack in PyTorch, trains two steps with ``torch.optim.Adam`` and records, from the tensors
themselves:

- ``param_bytes``, ``grad_bytes``, ``optimizer_bytes`` (``exp_avg`` + ``exp_avg_sq``; the ``step``
  counters are excluded and reported as ``optimizer_step_bytes``);
- ``activation_bytes``: the distinct storages handed to ``torch.autograd.graph.saved_tensors_hooks``
  during one forward pass of the transformer blocks (embeddings and loss excluded), excluding
  storages of parameters and autocast's bf16 copies of parameters (``weight_cast_bytes``).

PyTorch is an optional extra (``pip install torch==2.13.0``), not a dependency of the book.
Writes ``data/measurements/memory_cpu_torch.csv``. Run: ``.venv/bin/python tools/measure_memory.py``.
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import math
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "data" / "measurements" / "memory_cpu_torch.csv"
SOURCE = "meas-memory-cpu-torch"
VOCAB = 256


class Block(nn.Module):
    """Pre-LN GPT block: LN, fused QKV, causal attention, output projection, LN, 4h MLP with GELU."""

    def __init__(self, hidden: int, heads: int, attention: str):
        super().__init__()
        self.heads, self.attention = heads, attention
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        if self.attention == "eager":
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d)) + mask
            y = att.softmax(dim=-1) @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers: int, hidden: int, heads: int, seq_len: int, attention: str):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, hidden), nn.Embedding(seq_len, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, attention) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, VOCAB, bias=False)
        self.head.weight = self.tok.weight  # tied
        self.register_buffer("mask", torch.full((seq_len, seq_len), float("-inf")).triu(1), persistent=False)


def _storage_key(t: torch.Tensor) -> tuple[int, int]:
    st = t.untyped_storage()
    return st.data_ptr(), st.nbytes()


def _is_weight_cast(t: torch.Tensor) -> bool:
    """An autocast copy of a parameter (or a view of one, e.g. its transpose).

    Follows single-input view nodes (TBackward, ViewBackward...) back to a ToCopyBackward whose input
    is a leaf (AccumulateGrad).
    """
    fn = t.grad_fn
    for _ in range(4):
        if fn is None:
            return False
        if "ToCopy" in fn.name():
            return any(nxt is not None and type(nxt).__name__ == "AccumulateGrad" for nxt, _ in fn.next_functions)
        inputs = [nxt for nxt, _ in fn.next_functions if nxt is not None]
        if len(inputs) != 1:
            return False
        fn = inputs[0]
    return False


def measure(layers: int, hidden: int, heads: int, seq_len: int, micro_batch: int, dtype: str, attention: str) -> dict:
    torch.manual_seed(0)
    model = GPT(layers, hidden, heads, seq_len, attention)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    idx = torch.randint(0, VOCAB, (micro_batch, seq_len))
    param_keys = {_storage_key(p) for p in model.parameters()}
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bf16")

    def loss_fn(record: dict | None) -> torch.Tensor:
        with autocast:
            x = model.tok(idx) + model.pos(torch.arange(seq_len))
            if record is None:
                for blk in model.blocks:
                    x = blk(x, model.mask)
            else:

                def pack(t: torch.Tensor) -> torch.Tensor:
                    key = _storage_key(t)
                    if key in param_keys or key[1] == 0:
                        return t
                    if _is_weight_cast(t):
                        record["casts"][key] = key[1]
                    else:
                        record["acts"][key] = key[1]
                    return t

                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    for blk in model.blocks:
                        x = blk(x, model.mask)
            logits = model.head(model.ln_f(x))
            return F.cross_entropy(logits.float().view(-1, VOCAB), idx.view(-1))

    for _ in range(2):
        opt.zero_grad(set_to_none=False)
        loss_fn(None).backward()
        opt.step()
    record: dict = {"acts": {}, "casts": {}}
    loss = loss_fn(record)
    del loss
    # weight-cast copies: a parameter's cast is shared by every use in the forward
    params = list(model.parameters())
    n_params = sum(p.numel() for p in params)
    state = [s for p in params for s in opt.state[p].values() if torch.is_tensor(s)]
    moments = [s for p in params for k, s in opt.state[p].items() if k in ("exp_avg", "exp_avg_sq")]
    steps = [s for p in params for k, s in opt.state[p].items() if k == "step" and torch.is_tensor(s)]
    assert len(state) == len(moments) + len(steps)
    return {
        "config": f"L{layers}-h{hidden}-a{heads}-s{seq_len}-b{micro_batch}-{dtype}-{attention}",
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "seq_len": seq_len,
        "micro_batch": micro_batch,
        "dtype": dtype,
        "attention": attention,
        "n_params": n_params,
        "param_bytes": sum(p.numel() * p.element_size() for p in params),
        "grad_bytes": sum(p.grad.numel() * p.grad.element_size() for p in params),
        "optimizer_bytes": sum(s.numel() * s.element_size() for s in moments),
        "optimizer_step_bytes": sum(s.numel() * s.element_size() for s in steps),
        "state_bytes": sum(p.numel() * p.element_size() for p in params)
        + sum(p.grad.numel() * p.grad.element_size() for p in params)
        + sum(s.numel() * s.element_size() for s in moments),
        "activation_bytes": sum(record["acts"].values()),
        "weight_cast_bytes": sum(record["casts"].values()),
    }


GRID = {
    "hidden": (64, 128, 256),
    "heads": (2, 4),
    "seq_len": (32, 128),
    "micro_batch": (1, 4),
    "dtype": ("fp32", "bf16"),
    "attention": ("eager", "sdpa"),
}


def main() -> None:
    torch.set_num_threads(4)
    rows = []
    today = dt.date.today().isoformat()
    env = f"torch {torch.__version__}; cpu"
    for hidden, heads, seq_len, micro_batch, dtype, attention in itertools.product(*GRID.values()):
        row = measure(2, hidden, heads, seq_len, micro_batch, dtype, attention)
        rows.append(row | {"date": today, "environment": env, "source": SOURCE})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main()
