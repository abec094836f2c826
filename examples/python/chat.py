#!/usr/bin/env python3
"""Chats with a model: one message per line on stdin, the reply streamed to stdout,
in `ngpt chat`'s format.

usage: chat.py MODEL [--system TEXT] [-n N] [--temp T] [--seed S] [--session FILE]"""
import argparse
import os
import sys

import ngpt

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("model")
p.add_argument("--system", default=None)
p.add_argument("-n", type=int, default=128)
p.add_argument("--temp", type=float, default=0.8)
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()

try:
    with ngpt.Model(args.model) as model:
        chat = ngpt.Chat(model, system=args.system, seed=args.seed, max_tokens=args.n,
                         temperature=args.temp)
        interactive = os.isatty(0)
        while True:
            if interactive:
                print("> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                break
            for piece in chat.say(line):
                print(piece, end="", flush=True)
            print()
except ngpt.Error as e:
    sys.exit("chat.py: %s" % e)
