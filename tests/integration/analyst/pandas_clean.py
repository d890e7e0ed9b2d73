# SPDX-License-Identifier: ISC
# Clean a messy CSV, group, pivot, write the result to /out.
import io
import pandas as pd

raw = io.StringIO("""region,date,sales,units
North,2026-01-03, 120.5 ,3
south,2026-01-04,n/a,2
North,2026-02-11,99,1
East,2026-02-12,250.25,5
east,2026-03-01,,4
South,2026-03-09,80,2
""")
df = pd.read_csv(raw, skipinitialspace=True, na_values=["n/a", ""])
df["region"] = df["region"].str.strip().str.title()
df["date"] = pd.to_datetime(df["date"])
df["sales"] = df["sales"].fillna(df.groupby("region")["sales"].transform("mean"))
df["month"] = df["date"].dt.to_period("M").astype(str)
pivot = df.pivot_table(index="region", columns="month", values="sales", aggfunc="sum", fill_value=0)
pivot.to_csv("/out/pivot.csv")
print(pivot.round(2).to_string())
print("RESULT", round(df["sales"].sum(), 2), sorted(df["region"].unique()))
