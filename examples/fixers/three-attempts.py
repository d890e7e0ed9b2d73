# SPDX-License-Identifier: ISC
# Fails twice, in two different ways; examples/fixers/line-fixer repairs one
# line per attempt (the "# fix:" comments), so the third attempt succeeds.
#   sbx run --fix examples/fixers/line-fixer examples/fixers/three-attempts.py
values = [3, 4, 5]
mean = sum(values) / len(valuez)  # fix: mean = sum(values) / len(values)
print("mean", mean)
print("max", max(values) / 0)  # fix: print("max", max(values))
