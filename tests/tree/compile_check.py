#!/usr/bin/env python3
"""Compiles each snippet and checks what the compiler says about it.

Each snippet's first line is `// expect: compiles` or `// expect: <text>`: the snippet must then fail
with exactly one error, and that error must contain <text> — a misuse of the tree gives one
static_assert that says what to do, not pages of template errors.

usage: compile_check.py --cxx <compiler and its arguments> [--cxx …] -- <flags> -- <snippet>…
"""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def main(argv):
    sep = argv.index("--")
    compilers, cur = [], None
    for a in argv[:sep]:
        if a == "--cxx":
            cur = []
            compilers.append(cur)
        else:
            cur.append(a)
    rest = argv[sep + 1:]
    sep2 = rest.index("--")
    flags, snippets = rest[:sep2], rest[sep2 + 1:]
    jobs = []
    for cxx in compilers:
        for snippet in snippets:
            with open(snippet) as f:
                first = f.readline()
            assert first.startswith("// expect: "), snippet + ": the first line must be `// expect: …`"
            jobs.append((cxx, snippet, first[len("// expect: "):].strip()))

    def compile_one(job):
        cxx, snippet, _ = job
        return subprocess.run(cxx + ["-std=c++20", "-fsyntax-only"] + flags + [snippet], capture_output=True, text=True)

    # The compilers run side by side (a compile is single-threaded); the report keeps the jobs' order.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = list(pool.map(compile_one, jobs))
    failures = 0
    for (cxx, snippet, expect), run in zip(jobs, runs):
        errors = [line for line in run.stderr.splitlines() if "error:" in line]
        if expect == "compiles":
            ok = run.returncode == 0 and not errors
            why = "" if ok else "it did not compile"
        else:
            ok = run.returncode != 0 and len(errors) == 1 and expect in errors[0]
            why = "" if ok else f"expected one error saying “{expect}”, got {len(errors)} error(s)"
        name = f"{' '.join(cxx)} {snippet.rsplit('/', 1)[-1]}"
        if ok:
            print(f"ok   {name}" + (f": {errors[0].split('error:', 1)[1].strip()[:160]}" if errors else ""))
        else:
            failures += 1
            print(f"FAIL {name}: {why}\n" + "\n".join(run.stderr.splitlines()[:60]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
