# SPDX-License-Identifier: ISC
"""Find the frequencies hidden in a noisy signal and plot the spectrum.

Try it:  sbx run --artifacts out examples/plot.py
The sandbox has no display, so matplotlib draws with the Agg backend
(policies set MPLBACKEND=Agg; set here too so the example also works under
a policy that does not). Files written to /out come back as artifacts.
"""
import os

import matplotlib

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

RATE = 1000  # samples per second
rng = np.random.default_rng(seed=7)
t = np.arange(0, 2.0, 1 / RATE)
signal = 1.0 * np.sin(2 * np.pi * 50 * t) + 0.5 * np.sin(2 * np.pi * 120 * t)
noisy = signal + rng.normal(scale=0.8, size=t.size)

spectrum = np.abs(np.fft.rfft(noisy)) / t.size
freqs = np.fft.rfftfreq(t.size, d=1 / RATE)
peaks = freqs[np.argsort(spectrum)[-2:]]
print("strongest frequencies (Hz):", sorted(float(f) for f in peaks))

fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6))
ax1.plot(t[:200], noisy[:200], lw=0.8, label="noisy")
ax1.plot(t[:200], signal[:200], lw=1.5, label="clean")
ax1.set_xlabel("time (s)")
ax1.legend()
ax2.plot(freqs, spectrum)
ax2.set_xlabel("frequency (Hz)")
ax2.set_ylabel("amplitude")
for f in peaks:
    ax2.axvline(f, color="red", ls="--", lw=0.8)
fig.tight_layout()
os.makedirs("/out", exist_ok=True)
fig.savefig("/out/plot.png", dpi=100)
print("saved /out/plot.png")
