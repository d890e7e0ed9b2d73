# SPDX-License-Identifier: ISC
# Read the caller's data file (--input), summarise it with pandas.
import pandas as pd

df = pd.read_csv("/in/measurements.csv")
by = df.groupby("sensor")["value"].agg(["count", "mean", "max"])
by.to_csv("/out/by_sensor.csv")
print("RESULT", by["count"].sum(), round(by["mean"].mean(), 2))
