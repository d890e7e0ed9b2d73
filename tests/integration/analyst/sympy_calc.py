# SPDX-License-Identifier: ISC
# Exact algebra: solve, integrate, simplify.
import sympy as sp

x = sp.symbols("x")
roots = sp.solve(x**2 - 5 * x + 6, x)
integral = sp.integrate(sp.exp(-x**2), (x, -sp.oo, sp.oo))
simple = sp.simplify(sp.sin(x)**2 + sp.cos(x)**2)
print("RESULT", sorted(roots), integral, simple)
