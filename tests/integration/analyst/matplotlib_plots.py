# SPDX-License-Identifier: ISC
# Two charts, one saved in /out, then plt.show(): sbx returns every open
# figure as it would appear in a notebook, /out/figure-1.png and figure-2.png.
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(0, 2 * np.pi, 100)
fig, ax = plt.subplots()
ax.plot(x, np.sin(x), label="sin")
ax.legend()
fig.savefig("/out/sine.png", dpi=80)
plt.figure()
plt.hist(np.random.default_rng(0).normal(size=1000), bins=30)
plt.title("histogram")
plt.show()
print("RESULT saved and shown")
