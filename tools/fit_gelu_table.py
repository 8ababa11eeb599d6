#!/usr/bin/python3
"""Fits the piecewise tables of src/providers/cpu/gelu_avx512.h and checks them.

GELU(x) = max(x, 0) - |x| h(|x|). For the erf form (--form erf, the
default) h(a) = erfc(a / sqrt 2) / 2; for the tanh approximation (--form
tanh) h(a) = 1 / (1 + e^(2u)), u = sqrt(2 / pi) (a + 0.044715 a^3). h is
fitted on [0, 31.5 / 8) in 32 pieces of 1/8 centred on k / 8: piece k is
a degree-5 polynomial in w = 8a - k in [-1/2, 1/2], k = 8a rounded to
nearest, fitted for the smallest *relative* error (Lawson's iteration on
weighted least squares over Chebyshev nodes), so that GELU of negative
inputs stays relatively accurate down its tail.

Prints the C++ table (coefficients from the highest degree, one row of 32
per degree) and, on stderr, the worst relative error of h with float32
steps as the kernel takes them (k and w from one rounding of 8a + 1.5 *
2^23 each, Horner by FMAs) at 400000 points (about 1.1e-7).

Run: /usr/bin/python3 tools/fit_gelu_table.py [--form erf|tanh] > /tmp/table.inc
(needs Debian's python3-numpy and python3-scipy).
"""
import argparse
import math
import sys

import numpy as np
from scipy.special import erfc

PIECES = 32
PER_UNIT = 8  # pieces per unit of |x|
DEGREE = 5


def h_erf(a):
    return 0.5 * erfc(a / np.sqrt(2.0))


def h_tanh(a):
    return 1.0 / (1.0 + np.exp(2.0 * math.sqrt(2.0 / math.pi) * (a + 0.044715 * a**3)))



def fit_piece(h, k):
    n = 400
    w = -0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    w = w[k + w >= 0]  # piece 0 starts at a = 0
    y = h((k + w) / PER_UNIT)
    weight = 1.0 / y  # relative error
    v = np.vander(w, DEGREE + 1)
    lawson = np.ones(len(w))
    for _ in range(300):
        s = weight * np.sqrt(lawson)
        c, *_ = np.linalg.lstsq(v * s[:, None], y * s, rcond=None)
        err = np.abs(v @ c - y) * weight
        lawson = lawson * err
        lawson /= lawson.sum()
    return c.astype(np.float32)


def horner_f32(c, w):
    """Horner in float32 with each step rounded once, as an FMA does."""
    p = np.full_like(w, c[0])
    for ck in c[1:]:
        p = (p.astype(np.float64) * w + ck).astype(np.float32)
    return p


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--form", choices=("erf", "tanh"), default="erf")
    h = h_tanh if parser.parse_args().form == "tanh" else h_erf
    table = [fit_piece(h, k) for k in range(PIECES)]
    magic = np.float32(1.5 * 2**23)  # its float's last bits are the rounded sum's integer part
    a = np.linspace(0, 31.5 / PER_UNIT, 400001)[:-1].astype(np.float32)
    biased = (a.astype(np.float64) * PER_UNIT + magic).astype(np.float32)  # one FMA
    k = (biased - magic).astype(np.float32)
    w = (a.astype(np.float64) * PER_UNIT - k).astype(np.float32)  # one FMA
    ref = h(a.astype(np.float64))
    worst = 0.0
    for piece, c in enumerate(table):
        at = k == piece
        worst = max(worst, float(np.max(np.abs(horner_f32(c, w[at]) - ref[at]) / ref[at])))
    print(f"worst relative error of h: {worst:.3g}", file=sys.stderr)
    print("{")
    for d in range(DEGREE + 1):
        row = [f"{float(c[d]):.9g}f" for c in table]  # 9 digits: each float exactly
        lines = [", ".join(row[i:i + 6]) for i in range(0, PIECES, 6)]
        print("    {" + ",\n     ".join(lines) + "},")
    print("};")


if __name__ == "__main__":
    main()
