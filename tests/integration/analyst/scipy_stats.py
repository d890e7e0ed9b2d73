# SPDX-License-Identifier: ISC
# A t-test, a curve fit and a minimisation with scipy.
import numpy as np
from scipy import optimize, stats

rng = np.random.default_rng(1)
a, b = rng.normal(0, 1, 300), rng.normal(0.5, 1, 300)
t, p = stats.ttest_ind(a, b)
xs = np.linspace(0, 4, 50)
ys = 2.5 * np.exp(-1.3 * xs) + rng.normal(0, 0.01, xs.size)
(amp, rate), _ = optimize.curve_fit(lambda x, A, k: A * np.exp(-k * x), xs, ys, p0=(1, 1))
res = optimize.minimize(lambda v: (v[0] - 1) ** 2 + (v[1] + 2) ** 2, [0, 0])
print("RESULT", p < 0.01, round(amp, 1), round(rate, 1), np.round(res.x, 3).tolist())
