"""Step servers for the side-by-side benchmarks (bench/compare.py, bench/lora_compare.py): a process that
reads one command per line and answers with one line of numbers, and the environments both sides run in."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    """A step server: one command line in, one reply line out."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if not reply or reply.startswith("error"):
            raise RuntimeError(f"{' '.join(self.proc.args)}: {command!r} -> {reply!r}")
        return [float(x) for x in reply.split()]

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait()


def environments():
    """remat's environment (its own pool of 2 threads: no thread-count overrides) and PyTorch's (2 threads,
    OpenMP workers sleeping rather than spinning between steps)."""
    remat_env = dict(os.environ)
    remat_env.pop("OPENBLAS_NUM_THREADS", None)
    remat_env.pop("REMAT_NUM_THREADS", None)
    torch_env = dict(remat_env, OMP_WAIT_POLICY="PASSIVE", TORCH_THREADS="2")
    return remat_env, torch_env
