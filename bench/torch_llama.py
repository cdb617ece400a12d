#!/usr/bin/python3
"""A plain PyTorch Llama (the same model as remat's models/llama) as a step server for bench/compare.py.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_llama.py smollm [--precision bf16]

The commands and --precision are torch_gpt2.py's (params, step none|blocks, mem none|blocks, mm,
bf16mm, quit).

Model, as HF transformers' LlamaForCausalLM computes it with eager attention: pre-norm decoder layers
(h = x + attn(input_layernorm(x)); y = h + mlp(post_attention_layernorm(h))), RMSNorm
(x · rsqrt(mean(x²) + eps) · weight), rotary embeddings in the rotate-half convention (cos and sin
tables built once), grouped-query attention by repeat_kv (repeat_interleave of the kv heads),
causal masked_fill(finfo.min), softmax, SwiGLU MLP down(silu(gate(x)) · up(x)), final norm, LM head
tied to the embedding, shifted cross-entropy; float32, dropout 0, HF's initialisation (normal 0.02),
random tokens. PyTorch 1.13 has no scaled_dot_product_attention: this is the eager path HF runs there.
"""
import math
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede `import torch`
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt2 import serve, wants_bf16  # noqa: E402

CONFIGS = {  # name: (L, C, H, KV heads, intermediate, V, T, B), as bench/model_step.cpp
    "smollm": (30, 576, 9, 3, 1536, 49152, 256, 2),  # SmolLM2-135M's shape
}
ROPE_THETA, RMS_EPS = 100000.0, 1e-5


class RMSNorm(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_EPS))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    def __init__(self, C, H, KV):
        super().__init__()
        self.H, self.KV, self.D = H, KV, C // H
        self.q_proj = nn.Linear(C, H * self.D, bias=False)
        self.k_proj = nn.Linear(C, KV * self.D, bias=False)
        self.v_proj = nn.Linear(C, KV * self.D, bias=False)
        self.o_proj = nn.Linear(H * self.D, C, bias=False)

    def forward(self, x, cos, sin, causal):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.H, self.D).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.KV, self.D).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.KV, self.D).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(self.H // self.KV, dim=1)  # HF's repeat_kv
        v = v.repeat_interleave(self.H // self.KV, dim=1)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.D)
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        y = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, self.H * self.D))


class MLP(nn.Module):
    def __init__(self, C, I):
        super().__init__()
        self.gate_proj = nn.Linear(C, I, bias=False)
        self.up_proj = nn.Linear(C, I, bias=False)
        self.down_proj = nn.Linear(I, C, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, C, H, KV, I):
        super().__init__()
        self.self_attn = Attention(C, H, KV)
        self.mlp = MLP(C, I)
        self.input_layernorm = RMSNorm(C)
        self.post_attention_layernorm = RMSNorm(C)

    def forward(self, x, cos, sin, causal):
        h = x + self.self_attn(self.input_layernorm(x), cos, sin, causal)
        return h + self.mlp(self.post_attention_layernorm(h))


class Llama(nn.Module):
    def __init__(self, L, C, H, KV, I, V, T):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, C)
        self.layers = nn.ModuleList(DecoderLayer(C, H, KV, I) for _ in range(L))
        self.norm = RMSNorm(C)
        for m in self.modules():  # HF's _init_weights
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        D = C // H
        inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
        emb = torch.cat((torch.outer(torch.arange(T, dtype=torch.float32), inv_freq),) * 2, dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        self.register_buffer("causal", torch.ones(T, T, dtype=torch.bool).tril(), persistent=False)

    def forward(self, ids, checkpoint=False, on_block_input=None):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            if checkpoint:
                if on_block_input:
                    on_block_input(x)
                x = torch.utils.checkpoint.checkpoint(layer, x, self.cos, self.sin, self.causal, use_reentrant=False)
            else:
                x = layer(x, self.cos, self.sin, self.causal)
        logits = F.linear(self.norm(x), self.embed_tokens.weight)  # tied LM head
        V = logits.shape[-1]
        return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))


def main():
    bf16 = wants_bf16(sys.argv)
    if len(sys.argv) < 2 or sys.argv[1] not in CONFIGS or bf16 is None:
        sys.exit("usage: torch_llama.py smollm [--precision fp32|bf16]   (then commands on stdin)")
    L, C, H, KV, I, V, T, B = CONFIGS[sys.argv[1]]
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
    torch.manual_seed(1)
    model = Llama(L, C, H, KV, I, V, T)
    ids = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(7))
    serve(model, ids, 0, bf16)


if __name__ == "__main__":
    main()
