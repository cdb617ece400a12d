#!/usr/bin/python3
"""A plain PyTorch Llama (the same model as remat's models/llama) as a step server for bench/compare.py.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_llama.py smollm|tinyllama|tinylora [--precision bf16]
        [--lora R [--lora-dropout P] [--lora-random-b]]

The commands and --precision are torch_gpt2.py's (params, trainable, rss, step none|blocks,
mem none|blocks, mm, bf16mm, quit).

Model, as HF transformers' LlamaForCausalLM computes it with eager attention: pre-norm decoder layers
(h = x + attn(input_layernorm(x)); y = h + mlp(post_attention_layernorm(h))), RMSNorm
(x · rsqrt(mean(x²) + eps) · weight), rotary embeddings in the rotate-half convention (cos and sin
tables built once), grouped-query attention by repeat_kv (repeat_interleave of the kv heads),
causal masked_fill(finfo.min), softmax, SwiGLU MLP down(silu(gate(x)) · up(x)), final norm, LM head
tied to the embedding (SmolLM2) or a separate lm_head (TinyLlama), shifted cross-entropy; float32,
dropout 0, HF's initialisation (normal 0.02), random tokens. PyTorch 1.13 has no
scaled_dot_product_attention: this is the eager path HF runs there.

--lora R: LoRA as HF PEFT computes it (LoraConfig(r=R, lora_alpha=2R, lora_dropout=P,
target_modules=[q,k,v,o,gate,up,down]_proj)): each of those nn.Linear becomes LoRALinear,
y = base_layer(x) + scaling · lora_B(lora_A(lora_dropout(x))), scaling = alpha / r = 2; A
Kaiming-uniform(a=√5), B zero. Every other parameter (embedding, norms, LM head) and every base weight
is frozen (requires_grad False), so autograd creates gradients for the adapters only. Dropout p defaults
to 0.05 (the usual recipe's; LoraConfig's own default is 0) and is live (the model is in training mode);
checkpointing keeps the recomputed masks equal to the forward's (preserve_rng_state). --lora-random-b draws B from normal(0, 0.01)
(generator seeded 5) instead: with B zero, A's gradient is zero but costs the same, so timings do not
depend on it; the loss is then no longer the base model's.
"""
import argparse
import collections
import math
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede `import torch`
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt2 import serve  # noqa: E402

Config = collections.namedtuple("Config", "L C H KV I V T B rope_theta tied")
CONFIGS = {  # smollm as bench/model_step.cpp (which has no tinyllama yet)
    "smollm": Config(30, 576, 9, 3, 1536, 49152, 256, 2, 100000.0, True),  # SmolLM2-135M's shape
    "tinyllama": Config(22, 2048, 32, 4, 5632, 32000, 512, 1, 10000.0, False),  # TinyLlama-1.1B's shape
    "tinylora": Config(2, 64, 4, 2, 128, 256, 16, 2, 10000.0, False),  # for bench/torch_lora_check.py
}
RMS_EPS = 1e-5
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LORA_B_SEED = 5


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
    def __init__(self, L, C, H, KV, I, V, T, rope_theta=100000.0, tied=True):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, C)
        self.layers = nn.ModuleList(DecoderLayer(C, H, KV, I) for _ in range(L))
        self.norm = RMSNorm(C)
        self.lm_head = None if tied else nn.Linear(C, V, bias=False)  # tied: logits use embed_tokens
        for m in self.modules():  # HF's _init_weights
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        D = C // H
        inv_freq = 1.0 / (rope_theta ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
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
                # Non-reentrant: with the embedding frozen (LoRA) x needs no grad, and the reentrant
                # variant would then give the adapters inside the layer no gradient at all.
                x = torch.utils.checkpoint.checkpoint(layer, x, self.cos, self.sin, self.causal, use_reentrant=False)
            else:
                x = layer(x, self.cos, self.sin, self.causal)
        h = self.norm(x)
        logits = F.linear(h, self.embed_tokens.weight) if self.lm_head is None else self.lm_head(h)
        V = logits.shape[-1]
        return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))


class LoRALinear(nn.Module):
    """y = base_layer(x) + scaling · lora_B(lora_A(lora_dropout(x))), as PEFT's lora.Linear (one adapter)."""

    def __init__(self, base_layer, r, alpha, dropout):
        super().__init__()
        self.base_layer = base_layer
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.lora_A = nn.Linear(base_layer.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base_layer.out_features, bias=False)
        self.scaling = alpha / r
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))  # PEFT's init_lora_weights=True
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


def add_lora(model, r, dropout=0.05, random_b=False):
    """Freezes every parameter of model and wraps each target nn.Linear in a LoRALinear, in module order.
    A is drawn from torch's global generator; random_b draws B from normal(0, 0.01) under its own seed."""
    model.requires_grad_(False)
    targets = [(parent, name) for parent in model.modules() for name, child in parent.named_children()
               if name in LORA_TARGETS and isinstance(child, nn.Linear)]
    b_generator = torch.Generator().manual_seed(LORA_B_SEED)
    for parent, name in targets:
        lora = LoRALinear(getattr(parent, name), r, 2 * r, dropout)
        if random_b:
            with torch.no_grad():
                lora.lora_B.weight.normal_(0.0, 0.01, generator=b_generator)
        setattr(parent, name, lora)
    return len(targets)


def build(name, lora=None, lora_dropout=0.05, lora_random_b=False):
    """The benchmark's model and tokens for a config: seeds as main() has always used them, so the base
    weights (and the loss with B zero) do not depend on --lora."""
    c = CONFIGS[name]
    torch.manual_seed(1)
    model = Llama(c.L, c.C, c.H, c.KV, c.I, c.V, c.T, c.rope_theta, c.tied)
    if lora:
        add_lora(model, lora, lora_dropout, lora_random_b)
    ids = torch.randint(0, c.V, (c.B, c.T), generator=torch.Generator().manual_seed(7))
    return model, ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="then commands on stdin, as torch_gpt2.py's")
    parser.add_argument("config", choices=list(CONFIGS))
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--lora", type=int, metavar="R", help="LoRA of rank R on all seven projections, base frozen")
    parser.add_argument("--lora-dropout", type=float, default=0.05, metavar="P", help="LoRA dropout (default 0.05)")
    parser.add_argument("--lora-random-b", action="store_true", help="B ~ normal(0, 0.01) instead of zero")
    args = parser.parse_args()
    if args.lora is not None and args.lora < 1:
        parser.error("--lora R needs R >= 1")
    if not 0 <= args.lora_dropout < 1:
        parser.error("--lora-dropout P needs 0 <= P < 1")
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
    model, ids = build(args.config, args.lora, args.lora_dropout, args.lora_random_b)
    c = CONFIGS[args.config]
    # matmul parameters: all but an untied embedding table, which is only gathered from
    serve(model, ids, 0 if c.tied else c.V * c.C, args.precision == "bf16")


if __name__ == "__main__":
    main()
