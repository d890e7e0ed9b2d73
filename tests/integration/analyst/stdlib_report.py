# SPDX-License-Identifier: ISC
# The standard library alone: csv, json, statistics, decimal, datetime, zip.
import csv
import datetime
import json
import statistics
import zipfile
from decimal import Decimal

rows = [{"day": (datetime.date(2026, 1, 1) + datetime.timedelta(d)).isoformat(), "v": d * 1.5} for d in range(30)]
with open("/out/days.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["day", "v"])
    w.writeheader()
    w.writerows(rows)
summary = {"mean": statistics.mean(r["v"] for r in rows), "stdev": round(statistics.stdev(r["v"] for r in rows), 3),
           "money": str(Decimal("0.1") * 3)}
json.dump(summary, open("/out/summary.json", "w"))
with zipfile.ZipFile("/out/bundle.zip", "w") as z:
    z.write("/out/days.csv", "days.csv")
print("RESULT", summary)
