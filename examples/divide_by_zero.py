# SPDX-License-Identifier: ISC
"""A program that fails: the traceback sbx parses into the result's
"traceback" (type ZeroDivisionError, frames, the line in this file).

Try it:  sbx run --json examples/divide_by_zero.py
"""


def mean(values):
    return sum(values) / len(values)


def summarize(groups):
    return {name: mean(values) for name, values in groups.items()}


def main():
    groups = {"a": [1, 2, 3], "b": []}
    print(summarize(groups))


main()
