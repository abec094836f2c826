#!/usr/bin/env python3
"""Fine-tunes a model on a text file for a few steps, printing the loss as it goes,
then shows the held-out perplexity before and after.

usage: finetune.py MODEL TEXT_FILE OUT [--steps N] [--batch B] [--seq T] [--lr LR]"""
import argparse
import sys

import ngpt

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("model")
p.add_argument("text")
p.add_argument("out")
p.add_argument("--steps", type=int, default=20)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--seq", type=int, default=64)
p.add_argument("--lr", type=float, default=1e-3)
args = p.parse_args()


def progress(step, loss):
    print("step %d/%d  loss %.4f" % (step, args.steps, loss), flush=True)


try:
    ngpt.finetune(args.model, args.out, path=args.text, steps=args.steps, batch=args.batch,
                  seq=args.seq, lr=args.lr, progress=progress)
    for name in (args.model, args.out):
        # a loss reads every position's logits: plan them all
        with ngpt.Model(name, logits_rows=ngpt.LOGITS_ALL) as m:
            ppl = m.perplexity(path=args.text, batches=4, seq=args.seq)
            print("%s: held-out perplexity %.2f" % (name, ppl))
except ngpt.Error as e:
    sys.exit("finetune.py: %s" % e)
