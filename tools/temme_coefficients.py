"""Prints the coefficients of Temme's uniform asymptotic expansion of the incomplete gamma
functions that ``ember/ops/incomplete_gamma.py`` holds as ``_TEMME`` (exact rational
arithmetic, then rounded once to float64).

With lambda = x / a and eta = sign(lambda - 1) sqrt(2 (lambda - 1 - log lambda)) (DLMF 8.12):

    Q(a, x) = erfc(eta sqrt(a / 2)) / 2 + R,   P(a, x) = erfc(-eta sqrt(a / 2)) / 2 - R,
    R = exp(-a eta^2 / 2) / sqrt(2 pi a) * sum_k c_k(eta) a^-k.

Derivation (integration by parts, written here from the math): with t = mu - 1 defined by
t - log(1 + t) = z^2 / 2, Gamma(a, x) = a^a e^-a int_eta^inf exp(-a z^2 / 2) f(z) dz for
f(z) = z / t(z). Writing f_0 = f, A_k = f_k(0), g_k = (f_k - A_k) / z and f_{k+1} = g_k', each
step of parts gives int_eta^inf exp(-a z^2/2) f_k dz = A_k sqrt(pi / 2a) erfc(eta sqrt(a/2)) +
exp(-a eta^2/2) g_k(eta) / a + int exp(-a z^2/2) f_{k+1} dz / a; over the whole line the
boundary terms vanish and sum_k A_k a^-k is Stirling's series of Gamma*(a). Dividing,
sum_k c_k a^-k = (sum_k g_k a^-k) / (sum_k A_k a^-k). t(z) comes from t t' = z (1 + t).

Each c_k is kept to the degree in eta where its terms stay above 3e-18 for |eta| <= 0.35
(lambda in [0.7, 1.3]) and a >= 20 (the region the module uses the expansion in).

    python tools/temme_coefficients.py
"""
import textwrap
from fractions import Fraction

DEGREE = 70       # terms of the series in z
ORDERS = 16       # c_0 ... c_15
ETA, A_MIN, SMALLEST = 0.35, 20.0, 3e-18


def coefficients():
    b = [Fraction(0), Fraction(1)]  # t = sum b_n z^n, from t t' = z (1 + t)
    for m in range(2, DEGREE + 2):
        s = sum((m + 1 - i) * b[i] * b[m + 1 - i] for i in range(2, m))
        b.append((b[m - 1] - s) / (m + 1))
    q = [b[n + 1] for n in range(DEGREE)]  # t / z
    f = [Fraction(1)] + [Fraction(0)] * (DEGREE - 1)  # z / t, by series division
    for n in range(1, DEGREE):
        f[n] = -sum(q[i] * f[n - i] for i in range(1, n + 1))
    stirling, g = [], []
    for _ in range(ORDERS):
        stirling.append(f[0])
        g.append(f[1:])
        f = [(i + 1) * g[-1][i + 1] for i in range(len(g[-1]) - 1)]
    c = []
    for k in range(ORDERS):
        ck = list(g[k])
        for j in range(1, k + 1):
            for i in range(min(len(ck), len(c[k - j]))):
                ck[i] -= stirling[j] * c[k - j][i]
        c.append(ck)
    return c


def main():
    rows = []
    for k, ck in enumerate(coefficients()):
        kept = [i for i, v in enumerate(ck) if abs(float(v)) * ETA ** i / A_MIN ** k > SMALLEST]
        if not kept:
            break
        rows.append([float(v) for v in ck[:max(kept) + 1]])
    print("_TEMME = (")
    for row in rows:
        text = "(" + ", ".join(repr(v) for v in row) + ("," if len(row) == 1 else "") + "),"
        print(textwrap.fill(text, 96, initial_indent="    ", subsequent_indent="     "))
    print(")")


if __name__ == "__main__":
    main()
