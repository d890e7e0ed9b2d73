# SPDX-License-Identifier: ISC
# A spreadsheet written with pandas (openpyxl), read back, and styled.
import openpyxl
import pandas as pd

df = pd.DataFrame({"item": ["a", "b", "c"], "qty": [3, 5, 7], "price": [1.5, 2.0, 0.5]})
df["total"] = df["qty"] * df["price"]
df.to_excel("/out/report.xlsx", index=False, sheet_name="report")
wb = openpyxl.load_workbook("/out/report.xlsx")
ws = wb["report"]
ws["F1"] = "sum"
ws["F2"] = "=SUM(D2:D4)"
ws["A1"].font = openpyxl.styles.Font(bold=True)
wb.save("/out/report.xlsx")
back = pd.read_excel("/out/report.xlsx")
print("RESULT", back["total"].sum(), ws.max_row)
