#!/usr/bin/env python3
"""Power of issue 41's learning-signal experiment, decided before the runs (standard library only).

The endpoint: held-out turn-1 pass@1, RL against SFT, paired by operator and seed. The analysis the
experiment will run: the mean over (op, seed) of p_RL - p_SFT with a 95% percentile bootstrap that
resamples operators and seeds (two-way); the effect is found when the interval excludes 0.

The simulated world, calibrated on issue 22's run (SFT: 11 of 104 held-out turns correct, 8 per
op, successes in 4 of 13 ops):
  logit p_SFT(op, seed) = mu + a_op + b_seed,       a_op ~ N(0, sigma_op), b_seed ~ N(0, sigma_seed)
  logit p_RL(op, seed)  = logit p_SFT + log(OR) + d_op,                      d_op ~ N(0, sigma_effect)
and m turn-1 samples per (arm, op, seed) drawn Binomial(m, p).

  scripts/power_calc.py calibrate          mu and sigma_op that reproduce issue 22's SFT numbers
  scripts/power_calc.py table [--sims N]   power over seeds x samples x odds ratios (markdown)
  scripts/power_calc.py one --ops 13 --seeds 5 --m 16 --odds-ratio 2    one design
"""
import argparse
import math
import random
import statistics
import sys

# Issue 22's SFT held-out evaluation (docs/results.md): 13 ops, 8 turns each, 11 correct, 4 ops
# with at least one.
OBSERVED_OPS, OBSERVED_PER_OP, OBSERVED_CORRECT, OBSERVED_OPS_WITH_ONE = 13, 8, 11, 4


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def calibrate(rng, n_draws=5000):
    """The (mu, sigma_op) on a grid whose expected pass rate and share of ops with a success in 8
    turns are closest to issue 22's (11/104, 4/13)."""
    target_rate = OBSERVED_CORRECT / (OBSERVED_OPS * OBSERVED_PER_OP)
    target_share = OBSERVED_OPS_WITH_ONE / OBSERVED_OPS
    normals = [rng.gauss(0, 1) for _ in range(n_draws)]
    best = None
    for sigma10 in range(0, 41, 2):
        sigma = sigma10 / 10
        for mu10 in range(-60, 1, 2):
            mu = mu10 / 10
            ps = [sigmoid(mu + sigma * z) for z in normals]
            rate = statistics.fmean(ps)
            share = statistics.fmean(1 - (1 - p) ** OBSERVED_PER_OP for p in ps)
            err = ((rate - target_rate) / target_rate) ** 2 + ((share - target_share) / target_share) ** 2
            if best is None or err < best[0]:
                best = (err, mu, sigma, rate, share)
    _, mu, sigma, rate, share = best
    return mu, sigma, rate, share


def binomial(rng, n, p):
    return sum(rng.random() < p for _ in range(n))


def bootstrap_excludes_zero(rng, diff, n_boot):
    """Whether the 95% two-way percentile bootstrap interval of the mean of diff[op][seed] lies
    above 0 (a one-sided look at a two-sided 95% interval: the test the results table reports)."""
    n_ops, n_seeds = len(diff), len(diff[0])
    means = []
    for _ in range(n_boot):
        ops = [rng.randrange(n_ops) for _ in range(n_ops)]
        seeds = [rng.randrange(n_seeds) for _ in range(n_seeds)]
        means.append(sum(diff[o][s] for o in ops for s in seeds) / (n_ops * n_seeds))
    means.sort()
    return means[int(0.025 * n_boot)] > 0


def power(rng, *, n_ops, n_seeds, m, odds_ratio, mu, sigma_op, sigma_seed, sigma_effect, sims, n_boot):
    hits = 0
    for _ in range(sims):
        a = [rng.gauss(0, sigma_op) for _ in range(n_ops)]
        d = [rng.gauss(0, sigma_effect) for _ in range(n_ops)]
        b = [rng.gauss(0, sigma_seed) for _ in range(n_seeds)]
        diff = []
        for o in range(n_ops):
            row = []
            for s in range(n_seeds):
                base = mu + a[o] + b[s]
                p_sft, p_rl = sigmoid(base), sigmoid(base + math.log(odds_ratio) + d[o])
                row.append((binomial(rng, m, p_rl) - binomial(rng, m, p_sft)) / m)
            diff.append(row)
        hits += bootstrap_excludes_zero(rng, diff, n_boot)
    return hits / sims


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["calibrate", "table", "one"])
    ap.add_argument("--seed", type=int, default=41, help="the simulation's random seed")
    ap.add_argument("--sims", type=int, default=400, help="simulated experiments per design")
    ap.add_argument("--boot", type=int, default=400, help="bootstrap resamples per experiment")
    ap.add_argument("--ops", type=int, default=13, help="held-out operators")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per arm (the same across arms)")
    ap.add_argument("--m", type=int, default=16, help="turn-1 samples per op, seed and arm")
    ap.add_argument("--odds-ratio", type=float, default=2.0, help="RL's effect on the odds of a correct turn 1")
    ap.add_argument("--sigma-seed", type=float, default=0.3, help="seed-to-seed spread (logit scale)")
    ap.add_argument("--sigma-effect", type=float, default=0.5, help="op-to-op spread of the effect (logit)")
    args = ap.parse_args(argv)
    for name in ("sims", "boot", "ops", "seeds", "m"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1 (got {getattr(args, name)})")
    if args.odds_ratio <= 0:
        ap.error(f"--odds-ratio must be positive (got {args.odds_ratio})")
    rng = random.Random(args.seed)
    mu, sigma_op, rate, share = calibrate(rng)
    print(f"calibrated on issue 22's SFT run: mu {mu:.1f}, sigma_op {sigma_op:.1f} "
          f"(expected pass rate {rate:.3f}, ops with a success in 8 turns {share:.2f}; "
          f"observed {OBSERVED_CORRECT / (OBSERVED_OPS * OBSERVED_PER_OP):.3f}, {OBSERVED_OPS_WITH_ONE / OBSERVED_OPS:.2f})")
    if args.mode == "calibrate":
        return 0
    common = dict(mu=mu, sigma_op=sigma_op, sigma_seed=args.sigma_seed, sigma_effect=args.sigma_effect,
                  sims=args.sims, n_boot=args.boot)
    if args.mode == "one":
        p = power(rng, n_ops=args.ops, n_seeds=args.seeds, m=args.m, odds_ratio=args.odds_ratio, **common)
        print(f"power {p:.2f}: {args.ops} ops, {args.seeds} seeds, m {args.m}, odds ratio {args.odds_ratio}, "
              f"sigma_seed {args.sigma_seed}, sigma_effect {args.sigma_effect}, {args.sims} simulations")
        return 0
    ratios = [1.5, 2.0, 3.0]
    print(f"\n{args.ops} ops, sigma_seed {args.sigma_seed}, sigma_effect {args.sigma_effect}, "
          f"{args.sims} simulated experiments x {args.boot} bootstrap resamples each\n")
    print("| seeds | m per op | " + " | ".join(f"power at OR {r}" for r in ratios) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in ratios) + " |")
    for seeds in (3, 5, 8):
        for m in (16, 32):
            cells = [power(rng, n_ops=args.ops, n_seeds=seeds, m=m, odds_ratio=r, **common) for r in ratios]
            print(f"| {seeds} | {m} | " + " | ".join(f"{c:.2f}" for c in cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
