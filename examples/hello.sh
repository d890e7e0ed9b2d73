#!/bin/sh
# SPDX-License-Identifier: ISC
# The smallest shell example: sbx picks --lang sh from the .sh suffix.
#   sbx run examples/hello.sh
echo "hello from $(hostname)"
echo "running as uid $(id -u) in $(pwd)"
ls /out && echo "/out is writable: $(touch /out/hello.txt && echo yes)"
