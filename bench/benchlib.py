"""Helpers shared by the benchmark drivers (bench/run-*-bench): running one
contender, and the median with its quartiles."""
import os
import statistics
import subprocess
import sys


def sh(cmd, env=None, timeout=300, ok="check=ok"):
    """The output of cmd, or None when it ran past timeout; a failure (exit status,
    or no ok in the output) ends the run, printing its output's tail"""
    try:
        p = subprocess.run(cmd, env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0 or ok not in out:
        sys.exit("failed (%s):\n%s" % (" ".join(cmd), out[-3000:]))
    return out


def quart(v):
    """(first quartile, median, third quartile) of v, None for no values"""
    v = [x for x in v if x is not None]
    if not v:
        return None
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    return (q[0], statistics.median(v), q[2])


def fmt(q, d=2):
    """median (quartiles)"""
    return "-" if q is None else "%.*f (%.*f-%.*f)" % (d, q[1], d, q[0], d, q[2])


def ratios(a, b):
    """per-round ratios a/b of two contenders measured in the same rounds"""
    return [x / y for x, y in zip(a, b) if x is not None and y is not None and y]
