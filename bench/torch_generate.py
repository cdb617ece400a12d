#!/usr/bin/python3
"""Greedy decoding speed of plain PyTorch with its own KV cache: the baseline for remat's generate() (issue 19).

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_generate.py [gpt2-small] [smollm]
        [--threads 2] [--prompt 64] [--new 128] [--repeats 5] [--seed 1] [--gemv]

Prints one JSON line per model:
    {"model", "threads", "linear", "batch": 1, "prompt_tokens", "new_tokens", "decode_steps", "repeats",
     "prefill_ms", "decode_ms", "decode_tokens_per_s", "weight_bytes", "kv_cache_bytes", "torch"}

Models: the modules of bench/torch_gpt2.py and bench/torch_llama.py (the training-step baselines, same
parameters and initialisation), random weights from --seed, float32:
    gpt2-small  GPT-2 124M: L12 C768 H12 V50257, 1024 positions, LM head tied to wte
    smollm      SmolLM-135M's shape: L30 C576, 9 heads, 3 KV heads, intermediate 1536, V49152, tied embeddings,
                rope_theta 1e4, RMSNorm eps 1e-5 (SmolLM2-135M, in torch_llama.py, has rope_theta 1e5;
                the speed does not depend on it)

What is timed, at batch 1 under torch.inference_mode():
    prefill  one forward of the --prompt random tokens that fills the cache, the LM head on the last position
             only (HF's generate asks for logits_to_keep=1 too), and the argmax: new token 1.
    decode   the other --new - 1 tokens, one forward of one token each against the cache, each followed by
             its argmax; decode_tokens_per_s = decode_steps / decode time. This is the memory-bound part:
             every step reads every weight matrix once, GPT-2's position table aside (weight_bytes: float32
             parameters, the tied matrix counted once).
Projections: by default F.linear with the modules' weights, as HF's nn.Linear layers run ("linear":
"F.linear"). With --gemv a single row goes through torch.mv instead ("linear": "mv"), which PyTorch 1.13 runs
at a higher bandwidth than a one-row addmm: the stronger baseline a tuned PyTorch decoder would be.
Each figure is the median over --repeats runs after one untimed warm-up run. The cache is preallocated
for prompt + new tokens once (zeroed, so first-touch page faults fall outside the timings) and rewound for
each run; attention reads only the filled part.

Before timing, each model checks its cache: the logits of 8 cached decode steps equal those of a full
forward of the same tokens without a cache (float32, to 1e-4 relative).

Threads: --threads intra-op threads (default 2, the machine's cores). OMP_WAIT_POLICY=PASSIVE is set before
torch is imported unless already set: PyTorch's spinning OpenMP pool otherwise fights OpenBLAS's threads on
two cores and loses up to 3.7x (see torch_gpt2.py).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede `import torch`
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt2 import GPT2  # noqa: E402  (module definitions only; main-guarded)
from torch_llama import Llama  # noqa: E402

CONFIGS = {
    "gpt2-small": dict(family="gpt2", L=12, C=768, H=12, V=50257),
    "smollm": dict(family="llama", L=30, C=576, H=9, KV=3, I=1536, V=49152, theta=10000.0),
}
MAX_POSITIONS = 2048  # the rotary tables' length (SmolLM's context); GPT-2 small has 1024 positions


class KVCache:
    """Keys and values of every layer, (L, B, heads, S_max, D), filled from position 0 to n."""

    def __init__(self, L, B, heads, S_max, D):
        self.k = torch.zeros(L, B, heads, S_max, D)
        self.v = torch.zeros(L, B, heads, S_max, D)
        self.n = 0

    def put(self, layer, k, v):
        """Stores this step's k, v (B, heads, T, D) after the filled part; returns all keys and values so far."""
        T = k.shape[2]
        self.k[layer, :, :, self.n:self.n + T] = k
        self.v[layer, :, :, self.n:self.n + T] = v
        return self.k[layer, :, :, :self.n + T], self.v[layer, :, :, :self.n + T]

    def bytes(self):
        return self.k.numel() * self.k.element_size() * 2


def module_linear(x, weight, bias=None):
    return F.linear(x, weight, bias)  # what nn.Linear.forward calls: the baseline as HF's modules run it


def gemv_linear(x, weight, bias=None):
    """F.linear, but a single row goes through torch.mv: on PyTorch 1.13 here, F.linear of one row (addmm)
    streams a weight at ~5-9 GB/s where torch.mv reaches ~12-25 GB/s. The bias is added apart because
    torch.addmv was slower than mv plus add."""
    if x.shape[:-1].numel() != 1:
        return F.linear(x, weight, bias)
    y = torch.mv(weight, x.reshape(-1))
    if bias is not None:
        y = y.add_(bias)
    return y.view(*x.shape[:-1], weight.shape[0])


def causal_scores(s, start):
    """s (..., T, start + T): query t sits at position start + t and sees keys up to it. A single query
    (decoding) sees every key, so only the prompt pays for a mask."""
    T, S = s.shape[-2], s.shape[-1]
    if T == 1:
        return s
    allowed = torch.ones(T, S, dtype=torch.bool).tril(diagonal=start)
    return s.masked_fill(~allowed, torch.finfo(s.dtype).min)


class Gpt2Decoder:
    def __init__(self, cfg, linear):
        self.cfg, self.linear = cfg, linear
        self.model = GPT2(cfg["L"], cfg["C"], cfg["H"], cfg["V"], 1)  # T=1: its training mask is unused here
        self.model.eval()

    def new_cache(self, B, S_max):
        c = self.cfg
        return KVCache(c["L"], B, c["H"], S_max, c["C"] // c["H"])

    def step(self, ids, cache, all_logits=False):
        """ids (B, T) at positions cache.n .. cache.n + T - 1 -> logits (B, V) of the last (or (B, T, V))."""
        m, C, H, lin = self.model, self.cfg["C"], self.cfg["H"], self.linear
        B, T = ids.shape
        D = C // H
        start = cache.n
        x = m.wte(ids) + m.wpe(torch.arange(start, start + T))
        for i, block in enumerate(m.h):
            at, mlp = block.attn, block.mlp
            q, k, v = lin(block.ln_1(x), at.c_attn.weight, at.c_attn.bias).split(C, dim=2)
            q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
            k, v = cache.put(i, k, v)  # (B, H, start + T, D)
            s = causal_scores(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D), start)
            y = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(B, T, C)
            x = x + lin(y, at.c_proj.weight, at.c_proj.bias)
            u = F.gelu(lin(block.ln_2(x), mlp.c_fc.weight, mlp.c_fc.bias), approximate="tanh")
            x = x + lin(u, mlp.c_proj.weight, mlp.c_proj.bias)
        cache.n += T
        h = m.ln_f(x if all_logits else x[:, -1])
        return lin(h, m.wte.weight)  # tied LM head


class LlamaDecoder:
    def __init__(self, cfg, linear):
        self.cfg, self.linear = cfg, linear
        L, C, H, KV, I, V = (cfg[k] for k in ("L", "C", "H", "KV", "I", "V"))
        self.model = Llama(L, C, H, KV, I, V, 1)  # its own rotary tables (rope_theta 1e5, T=1) go unused
        self.model.eval()
        self.D = D = C // H
        inv_freq = 1.0 / (cfg["theta"] ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
        emb = torch.cat((torch.outer(torch.arange(MAX_POSITIONS, dtype=torch.float32), inv_freq),) * 2, dim=-1)
        self.cos, self.sin = emb.cos(), emb.sin()  # (MAX_POSITIONS, D)

    def new_cache(self, B, S_max):
        assert S_max <= MAX_POSITIONS
        return KVCache(self.cfg["L"], B, self.cfg["KV"], S_max, self.D)

    def step(self, ids, cache, all_logits=False):
        """As Gpt2Decoder.step. Grouped-query attention as a broadcast matmul over (KV, G): the G query heads
        of a KV head share its keys without repeat_kv copying the cache every step."""
        m, D, lin = self.model, self.D, self.linear
        H, KV = self.cfg["H"], self.cfg["KV"]
        G = H // KV
        B, T = ids.shape
        start = cache.n
        cos, sin = self.cos[start:start + T], self.sin[start:start + T]  # (T, D)

        def rope(t):
            h = D // 2
            return t * cos + torch.cat((-t[..., h:], t[..., :h]), dim=-1) * sin  # rotate-half

        x = m.embed_tokens(ids)
        for i, layer in enumerate(m.layers):
            a, att, mlp = layer.input_layernorm(x), layer.self_attn, layer.mlp
            q = rope(lin(a, att.q_proj.weight).view(B, T, KV, G, D).permute(0, 2, 3, 1, 4))  # (B, KV, G, T, D)
            k = rope(lin(a, att.k_proj.weight).view(B, T, KV, D).transpose(1, 2))  # (B, KV, T, D)
            v = lin(a, att.v_proj.weight).view(B, T, KV, D).transpose(1, 2)
            k, v = cache.put(i, k, v)  # (B, KV, start + T, D)
            s = torch.matmul(q, k.unsqueeze(2).transpose(-1, -2)) / math.sqrt(D)  # (B, KV, G, T, start + T)
            y = torch.matmul(torch.softmax(causal_scores(s, start), dim=-1), v.unsqueeze(2))
            x = x + lin(y.permute(0, 3, 1, 2, 4).reshape(B, T, H * D), att.o_proj.weight)
            u = layer.post_attention_layernorm(x)
            x = x + lin(F.silu(lin(u, mlp.gate_proj.weight)) * lin(u, mlp.up_proj.weight), mlp.down_proj.weight)
        cache.n += T
        h = m.norm(x if all_logits else x[:, -1])
        return lin(h, m.embed_tokens.weight)  # tied LM head


def weight_bytes(model):
    return sum(p.numel() * p.element_size() for p in model.parameters())  # a shared Parameter is listed once


def check_cache(dec, prompt, steps=8):
    cache = dec.new_cache(1, prompt.shape[1] + steps)
    seq, logits = prompt, [dec.step(prompt, cache)]
    for _ in range(steps - 1):
        seq = torch.cat([seq, logits[-1].argmax(-1, keepdim=True)], dim=1)
        logits.append(dec.step(seq[:, -1:], cache))
    full = dec.step(seq, dec.new_cache(1, seq.shape[1]), all_logits=True)[0, prompt.shape[1] - 1:]
    cached = torch.cat(logits)
    err = (cached - full).abs().max().item()
    assert err <= 1e-4 * full.abs().max().item(), f"cached decoding differs from the full forward by {err:g}"


def generate_timed(dec, cache, prompt, new):
    cache.n = 0
    t0 = time.perf_counter()
    tok = dec.step(prompt, cache).argmax(-1, keepdim=True)
    t1 = time.perf_counter()
    for _ in range(new - 1):
        tok = dec.step(tok, cache).argmax(-1, keepdim=True)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def bench(name, args):
    cfg = CONFIGS[name]
    torch.manual_seed(args.seed)
    linear = gemv_linear if args.gemv else module_linear
    dec = (Gpt2Decoder if cfg["family"] == "gpt2" else LlamaDecoder)(cfg, linear)
    prompt = torch.randint(0, cfg["V"], (1, args.prompt), generator=torch.Generator().manual_seed(args.seed + 6))
    with torch.inference_mode():
        check_cache(dec, prompt)
        cache = dec.new_cache(1, args.prompt + args.new)
        generate_timed(dec, cache, prompt, args.new)  # warm-up
        runs = [generate_timed(dec, cache, prompt, args.new) for _ in range(args.repeats)]
    prefill = statistics.median(r[0] for r in runs)
    decode = statistics.median(r[1] for r in runs)
    steps = args.new - 1
    return {
        "model": name, "threads": args.threads, "linear": "mv" if args.gemv else "F.linear", "batch": 1,
        "prompt_tokens": args.prompt, "new_tokens": args.new, "decode_steps": steps, "repeats": args.repeats,
        "prefill_ms": round(prefill * 1e3, 3), "decode_ms": round(decode * 1e3, 3),
        "decode_tokens_per_s": round(steps / decode, 2), "weight_bytes": weight_bytes(dec.model),
        "kv_cache_bytes": cache.bytes(), "torch": torch.__version__,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", help=f"any of {', '.join(CONFIGS)} (default: all)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--prompt", type=int, default=64, help="prompt tokens (default 64)")
    ap.add_argument("--new", type=int, default=128, help="new tokens, the first from the prefill (default 128)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs; medians are reported (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gemv", action="store_true", help="single-row projections through torch.mv (see gemv_linear)")
    args = ap.parse_args()
    args.models = args.models or list(CONFIGS)
    unknown = [m for m in args.models if m not in CONFIGS]
    if unknown:
        ap.error(f"unknown model {unknown[0]!r}; choose from {', '.join(CONFIGS)}")
    if args.prompt < 1 or args.new < 2 or args.repeats < 1 or args.threads < 1:
        ap.error("--prompt, --threads and --repeats must be >= 1 and --new >= 2")
    if args.prompt + args.new > (1024 if "gpt2-small" in args.models else MAX_POSITIONS):
        ap.error("prompt + new tokens exceed the context (gpt2-small: 1024, smollm: 2048)")
    torch.set_num_threads(args.threads)
    for name in args.models:
        print(json.dumps(bench(name, args)), flush=True)


if __name__ == "__main__":
    main()
