# SPDX-License-Identifier: ISC
# Ordinary least squares with a formula, and its summary table.
import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

rng = np.random.default_rng(3)
df = pd.DataFrame({"x": rng.uniform(0, 10, 200), "g": rng.choice(["a", "b"], 200)})
df["y"] = 1.5 * df["x"] + np.where(df["g"] == "b", 2.0, 0.0) + rng.normal(0, 1, 200)
fit = smf.ols("y ~ x + C(g)", data=df).fit()
open("/out/ols.txt", "w").write(str(fit.summary()))
print("RESULT", round(fit.params["x"], 1), round(fit.params["C(g)[T.b]"], 0), fit.rsquared > 0.9)
