#!/usr/bin/env python3
"""Derives the polynomial coefficients of the f32 math helpers in
generator/emit/CRuntimeHelpers.cpp (tg_exp_f32, tg_exp2_f32, tg_log_f32, tg_tanh_f32,
tg_erf_f32): Chebyshev fits (near-minimax) computed with mpmath at 40 digits, then rounded
to f32 and printed as C hex literals, lowest degree first (Horner order is the reverse).
The quoted fit error is mpmath's bound on the fit before rounding to f32; the accuracy of
the helpers as compiled is what tests/unit/emit/MathTest.cpp measures.
Usage: python3 math_coefficients.py   (needs mpmath)"""
import struct

import mpmath as mp

mp.mp.dps = 40


def f32_literal(x):
    v = struct.unpack("f", struct.pack("f", float(x)))[0]
    mant, exp = v.hex().split("p")
    mant = mant.rstrip("0").rstrip(".")
    return mant + "p" + exp + "f"


def fit(name, f, a, b, degree):
    poly, err = mp.chebyfit(f, [a, b], degree + 1, error=True)
    coeffs = ", ".join(f32_literal(c) for c in reversed(poly))
    print(f"{name}: degree {degree} on [{float(a):.6g}, {float(b):.6g}], fit error {float(err):.2e}")
    print(f"  {coeffs}")


def small(z):  # below this, use the series' leading term (avoids 0/0)
    return abs(z) < mp.mpf("1e-20")


half_ln2 = mp.log(2) / 2
# e^r = 1 + r + r^2 q(r), |r| <= ln2/2
fit("exp q(r) = (e^r - 1 - r) / r^2", lambda r: mp.mpf(1) / 2 if small(r) else (mp.exp(r) - 1 - r) / r**2,
    -half_ln2, half_ln2, 4)
# 2^r = 1 + r p(r), |r| <= 1/2
fit("exp2 p(r) = (2^r - 1) / r", lambda r: mp.log(2) if small(r) else (mp.power(2, r) - 1) / r, -0.5, 0.5, 5)
# log(1 + f) = 2 atanh(s), s = f / (2 + f), |s| <= (sqrt2 - 1) / (sqrt2 + 1); R in z = s^2
s_max = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
fit("log R(z) = (2 atanh(s) - 2 s) / s^3, z = s^2",
    lambda z: mp.mpf(2) / 3 if small(z) else (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / mp.sqrt(z) ** 3,
    0, s_max**2, 3)
# tanh(a) = a + a^3 P(a^2), a < 0.625
fit("tanh P(z) = (tanh(a) - a) / a^3, z = a^2",
    lambda z: mp.mpf(-1) / 3 if small(z) else (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z) ** 3,
    0, mp.mpf(0.625) ** 2, 5)
# erf(a) = a E(a^2), a < 0.875
fit("erf E(z) = erf(a) / a, z = a^2",
    lambda z: 2 / mp.sqrt(mp.pi) if small(z) else mp.erf(mp.sqrt(z)) / mp.sqrt(z), 0, mp.mpf(0.875) ** 2, 5)
# erf(a) = 1 - e^(-a^2) G(1/a), 0.875 <= a <= 4
fit("erf G(t) = erfc(a) e^(a^2), t = 1/a", lambda t: mp.erfc(1 / t) * mp.exp(1 / t**2),
    mp.mpf(1) / 4, 1 / mp.mpf(0.875), 9)
ln2_hi = mp.mpf("0.693145751953125")  # 0x1.62e4p-1: 9 trailing zero bits, n * ln2_hi exact
print("ln2_hi", f32_literal(ln2_hi), "ln2_lo", f32_literal(mp.log(2) - ln2_hi))
log2e = 1 / mp.log(2)
print("log2e", f32_literal(log2e), "log2e_lo", f32_literal(log2e - struct.unpack("f", struct.pack("f", float(log2e)))[0]))
