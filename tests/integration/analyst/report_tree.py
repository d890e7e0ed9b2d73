# SPDX-License-Identifier: ISC
# A typical end-of-analysis script: a long progress log (past the 1M output
# cap, so only its head and tail are kept), then a per-region report tree
# under /out (CSV per region, one plot per region, an index), and the
# final RESULT line last, which must survive the cut.
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

rng = np.random.default_rng(7)
df = pd.DataFrame({
    "region": rng.choice(["east", "north", "south", "west"], 20000),
    "units": rng.integers(1, 50, 20000),
    "price": rng.uniform(1.0, 9.0, 20000).round(2),
})
for i in range(40000):  # a chatty loop: about 1.8 MB of progress lines
    print("processed batch %05d of 40000, running total %d" % (i, i * 3))
df["revenue"] = df["units"] * df["price"]
os.makedirs("/out/regions", exist_ok=True)
os.makedirs("/out/plots/by_region", exist_ok=True)
for region, part in df.groupby("region"):
    part.to_csv("/out/regions/%s.csv" % region, index=False)
    fig, ax = plt.subplots()
    part["revenue"].plot.hist(ax=ax, bins=30)
    fig.savefig("/out/plots/by_region/%s.png" % region)
    plt.close(fig)
totals = df.groupby("region")["revenue"].sum()
totals.to_csv("/out/index.csv")
print("RESULT", len(totals), sorted(totals.index), bool((totals > 0).all()))
