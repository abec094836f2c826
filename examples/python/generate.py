#!/usr/bin/env python3
"""Streams a model's continuation of a prompt, like `ngpt generate`.

usage: generate.py MODEL [PROMPT] [-n N] [--temp T] [--top-k K] [--seed S] [--stop STR]
Needs the ngpt package (pip install ./python) and libngpt.so (NGPT_LIBRARY)."""
import argparse
import sys

import ngpt

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("model")
p.add_argument("prompt", nargs="?", default="Once upon a time")
p.add_argument("-n", type=int, default=100, help="new tokens at most")
p.add_argument("--temp", type=float, default=0.8)
p.add_argument("--top-k", type=int, default=40)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--stop", action="append", default=[], help="stop before STR (repeatable)")
args = p.parse_args()

try:
    with ngpt.Model(args.model) as model:
        for piece in model.generate(args.prompt, args.n, temperature=args.temp,
                                    top_k=args.top_k, seed=args.seed, stop=args.stop):
            print(piece, end="", flush=True)
        print()
        print("[%s, %d tokens]" % (model.stop_reason, model.last_result.n_tokens),
              file=sys.stderr)
except ngpt.Error as e:
    sys.exit("generate.py: %s" % e)
