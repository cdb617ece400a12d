#!/usr/bin/python3
"""A plain PyTorch GPT-2 (the same model as remat's models/gpt2) as a step server for bench/compare.py.

    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/torch_gpt2.py tiny|small|deep [--precision bf16]

--precision bf16 runs every forward (and the loss) under torch.autocast("cpu", dtype=torch.bfloat16)
and the backward after it, as PyTorch's documentation recommends.

Commands on stdin, one reply line each (flushed):
    params        -> "<parameters> <matmul parameters>"   (matmul: all but the position embedding)
    trainable     -> "<parameters>"  those with requires_grad (all here; the adapters under torch_llama.py --lora)
    rss           -> "<bytes>"  the process's peak resident set size so far (getrusage ru_maxrss)
    step none     -> "<ms>"   one forward+backward of the LM loss (grads set to None first, untimed)
    step blocks   -> "<ms>"   the same with every block under torch.utils.checkpoint.checkpoint
    mem none|blocks -> "<saved bytes> <allocator peak bytes>"  activation memory of a step (untimed, see below)
    mm            -> "<GFLOP/s>"  best of 10 torch.mm 1024x1024x1024 on this process's threads
    bf16mm        -> "<GFLOP/s>"  the same in bfloat16 (oneDNN's AMX kernels where the CPU has them)
    quit
The first step or mem command is preceded by one untimed step (first touch of everything), so that
params, trainable and rss can be asked of a large model without paying for a step.

Model: pre-LN blocks (h = x + attn(ln_1(x)); y = h + mlp(ln_2(h))), causal attention with
masked_fill(finfo.min), GELU tanh approximation, final ln_f, LM head tied to wte, shifted
cross-entropy; float32, dropout 0, HF's initialisation, random tokens. Threads: 2 intra-op threads,
OMP_WAIT_POLICY=PASSIVE (set before torch is imported: PyTorch's spinning OpenMP pool otherwise
fights OpenBLAS's threads on two cores and loses up to 3.7x).

Memory (two measures; PyTorch 1.13 keeps no CPU allocator statistics outside the profiler):
  saved  -- what autograd saves for backward: a saved_tensors_hooks pack hook notes the storage of
            every tensor saved during the forward; the sum of the unique storages' nbytes (parameters
            excluded) plus the checkpointed blocks' inputs (which non-reentrant checkpoint keeps alive
            by reference, outside the hooks). What is held at the end of the forward; transient
            buffers (softmax inside cross-entropy, recomputed blocks, gradients) are not counted.
  peak   -- the allocator's peak of live bytes during forward+backward above the level before it,
            as remat's memory tracker measures: torch.autograd.profiler(profile_memory=True), each
            event's self allocation summed in start-time order (op granularity). Parameter gradients
            exist before the step (zeroed, not freed), so they are excluded as in remat.
"""
import math
import os
import resource
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede `import torch`
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.utils.checkpoint  # noqa: E402

CONFIGS = {  # name: (L, C, H, V, T, B)
    "tiny": (4, 128, 4, 1024, 64, 4),
    "small": (12, 768, 12, 50257, 128, 2),
    "deep": (24, 256, 8, 8192, 256, 4),
}
N_POSITIONS = 1024  # as remat's bench (max(T, 1024)), so parameter counts agree


class Attention(nn.Module):
    def __init__(self, C, H, T):
        super().__init__()
        self.n_head = H
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.register_buffer("causal", torch.ones(T, T, dtype=torch.bool).tril().view(1, 1, T, T), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.n_head, C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)
        scores = scores.masked_fill(~self.causal[:, :, :T, :T], torch.finfo(scores.dtype).min)
        y = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc = nn.Linear(C, 4 * C)
        self.c_proj = nn.Linear(4 * C, C)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, C, H, T):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C, eps=1e-5)
        self.attn = Attention(C, H, T)
        self.ln_2 = nn.LayerNorm(C, eps=1e-5)
        self.mlp = MLP(C)

    def forward(self, x):
        h = x + self.attn(self.ln_1(x))
        return h + self.mlp(self.ln_2(h))


class GPT2(nn.Module):
    def __init__(self, L, C, H, V, T):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(N_POSITIONS, C)
        self.h = nn.ModuleList(Block(C, H, T) for _ in range(L))
        self.ln_f = nn.LayerNorm(C, eps=1e-5)
        for name, m in self.named_modules():  # HF's GPT-2 initialisation (LayerNorms: 1 and 0 already)
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02 / math.sqrt(2 * L) if name.endswith("c_proj") else 0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, ids, checkpoint=False, on_block_input=None):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T))
        for block in self.h:
            if checkpoint:
                if on_block_input:
                    on_block_input(x)
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # tied LM head
        V = logits.shape[-1]
        return F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))


def loss_of(model, ids, checkpoint, bf16, on_block_input=None):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        return model(ids, checkpoint, on_block_input=on_block_input)


def saved_bytes(model, ids, checkpoint, bf16):
    params = {p.data_ptr() for p in model.parameters()}
    storages = {}

    def note(t):
        s = t.storage()
        if s.data_ptr() not in params:
            storages[s.data_ptr()] = s.nbytes()

    def pack(t):
        note(t)
        return t

    model.zero_grad(set_to_none=False)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = loss_of(model, ids, checkpoint, bf16, on_block_input=note)
    held = sum(storages.values())
    loss.backward()
    return held


def peak_bytes(model, ids, checkpoint, bf16):
    model.zero_grad(set_to_none=False)
    with torch.autograd.profiler.profile(profile_memory=True) as prof:
        loss_of(model, ids, checkpoint, bf16).backward()
    live = peak = 0
    for e in sorted(prof.function_events, key=lambda e: e.time_range.start):
        live += e.self_cpu_memory_usage
        peak = max(peak, live)
    return peak


def mm_gflops(n=1024, dtype=torch.float32):
    a, b = torch.full((n, n), 0.5, dtype=dtype), torch.full((n, n), 0.25, dtype=dtype)
    best = math.inf
    for r in range(11):
        t0 = time.perf_counter()
        torch.mm(a, b)
        if r:
            best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9


def serve(model, ids, unmatmul_params, bf16=False):
    """Answers the step server's commands (above) for a model whose forward(ids, checkpoint) is the loss."""
    def step(checkpoint):
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        loss_of(model, ids, checkpoint, bf16).backward()
        return (time.perf_counter() - t0) * 1e3

    touched = False
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "quit":
            break
        if cmd[0] == "params":
            n = sum(p.numel() for p in model.parameters())
            reply = f"{n} {n - unmatmul_params}"
        elif cmd[0] == "trainable":
            reply = f"{sum(p.numel() for p in model.parameters() if p.requires_grad)}"
        elif cmd[0] == "rss":
            reply = f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}"  # ru_maxrss: KiB on Linux
        elif cmd[0] == "mm":
            reply = f"{mm_gflops():.1f}"
        elif cmd[0] == "bf16mm":
            reply = f"{mm_gflops(dtype=torch.bfloat16):.1f}"
        elif cmd[0] in ("step", "mem") and len(cmd) == 2 and cmd[1] in ("none", "blocks"):
            ckpt = cmd[1] == "blocks"
            if not touched:
                step(False)  # first touch of everything
                touched = True
            if cmd[0] == "step":
                reply = f"{step(ckpt):.3f}"
            else:
                reply = f"{saved_bytes(model, ids, ckpt, bf16)} {peak_bytes(model, ids, ckpt, bf16)}"
        else:
            reply = f"error: unknown command {line.strip()!r}"
        print(reply, flush=True)


def wants_bf16(argv):
    """The [--precision fp32|bf16] after the config name."""
    if len(argv) == 2:
        return False
    if len(argv) == 4 and argv[2] == "--precision" and argv[3] in ("fp32", "bf16"):
        return argv[3] == "bf16"
    return None


def main():
    bf16 = wants_bf16(sys.argv)
    if len(sys.argv) < 2 or sys.argv[1] not in CONFIGS or bf16 is None:
        sys.exit("usage: torch_gpt2.py tiny|small|deep [--precision fp32|bf16]   (then commands on stdin)")
    L, C, H, V, T, B = CONFIGS[sys.argv[1]]
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
    torch.manual_seed(1)
    model = GPT2(L, C, H, V, T)
    ids = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(7))
    serve(model, ids, model.wpe.weight.numel(), bf16)


if __name__ == "__main__":
    main()
