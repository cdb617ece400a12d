#!/usr/bin/env python3
"""Every header under include/remat/ is included by remat.hpp and named in public_headers_test.cpp.

Usage: public_headers.py INCLUDE_DIR TEST_CPP. Prints each header missing from either and exits 1.
"""
import pathlib
import re
import sys

include, test = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
groups = {"remat/remat.hpp", "remat/layers.hpp", "remat/ops.hpp"}  # headers of headers
headers = {str(p.relative_to(include)) for p in include.rglob("*.hpp")} - groups
included = set(re.findall(r'#include "(remat/[^"]+)"', (include / "remat/remat.hpp").read_text()))
named = set(re.findall(r"//\s*(remat/\S+\.hpp)", test.read_text()))
problems = [f"{h}: not included by remat/remat.hpp" for h in sorted(headers - included)]
problems += [f"{h}: no symbol named in {test.name}" for h in sorted(headers - named)]
problems += [f"{h}: named in {test.name} but not a public header" for h in sorted(named - headers)]
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
