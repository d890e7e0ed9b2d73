# SPDX-License-Identifier: ISC
# Least squares, eigenvalues, a seeded random walk: numpy with its BLAS.
import numpy as np

rng = np.random.default_rng(42)
x = np.linspace(0, 10, 200)
y = 3.0 * x + 2.0 + rng.normal(0, 0.5, x.size)
A = np.vstack([x, np.ones_like(x)]).T
(slope, icpt), *_ = np.linalg.lstsq(A, y, rcond=None)
m = rng.random((400, 400))
w = np.linalg.eigvalsh(m @ m.T)
np.save("/out/walk.npy", rng.standard_normal(1000).cumsum())
print("RESULT", round(slope, 1), round(icpt, 0), bool((w > -1e-9).all()))
