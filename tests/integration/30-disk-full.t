#!/bin/sh
# SPDX-License-Identifier: ISC
# A payload that fills the size-capped tmpfs /tmp or /out is told ENOSPC and
# keeps its own outcome; the result JSON lists the full mounts in
# "disk_full" and, when no other limit fired, "limit" and the audit END
# record name the cap (tmp_size, out_size, tmp+out_size). Files of 1M each
# stay under file_size, so RLIMIT_FSIZE is not what stops them.
. "$(dirname "$0")/lib.sh"
plan 12
POL=$P/etc/sbx/policies.d
cat > "$POL/disk.policy" <<'EOF2'
[policy]
groups = sbx
[limits]
wall_time = 20s
file_size = 4M
tmp_size = 4M
out_size = 4M
output = 64K
EOF2
chmod 644 "$POL/disk.policy"
fill='i=0; while head -c 1048576 /dev/zero > $D/f$i 2>/dev/null && [ $(wc -c < $D/f$i) = 1048576 ]; do i=$((i+1)); done; echo filled $i'

sbx_run run --json --policy disk --lang sh -c "D=/tmp; $fill; exit 3"
diag "$(jget disk_full) $(jget limit) $(jget stdout)"
check "/tmp full: outcome stays the program's own (error, exit 3)" [ "$(jget outcome)/$rc" = error/3 ]
check "/tmp full: disk_full lists /tmp only" [ "$(jget disk_full)" = "['/tmp']" ]
check "/tmp full: limit tmp_size" [ "$(jget limit)" = tmp_size ]
check "/tmp full: audit END limit tmp_size" [ "$(audit_field "$(jget id)" end.limit)" = tmp_size ]

sbx_run run --json --policy disk --lang sh -c "D=/out; $fill"
check "/out full: outcome ok" [ "$(jget outcome)/$rc" = ok/0 ]
check "/out full: disk_full lists /out, limit out_size" [ "$(jget disk_full) $(jget limit)" = "['/out'] out_size" ]
check "/out full: audit END limit out_size" [ "$(audit_field "$(jget id)" end.limit)" = out_size ]

sbx_run run --json --policy disk --lang sh -c "D=/tmp; $fill; D=/out; $fill"
check "both full: limit tmp+out_size" [ "$(jget disk_full) $(jget limit)" = "['/tmp', '/out'] tmp+out_size" ]

sbx_run run --json --policy disk --lang sh -c 'head -c 2097152 /dev/zero > /tmp/half; head -c 100 /dev/zero > /out/x'
check "a normal run: disk_full empty, no limit" [ "$(jget disk_full) $(jget limit)" = "[] null" ]
check "a normal run: audit END without a limit" [ "$(audit_field "$(jget id)" end.limit)" = null ]

# filled, then cleaned up before exiting: nothing to report
sbx_run run --json --policy disk --lang sh -c "D=/tmp; $fill; rm -f /tmp/f*"
check "filled then emptied: not reported" [ "$(jget disk_full)" = "[]" ]

# another limit that fired wins the limit field; disk_full still says it
sbx_run run --json --policy disk --lang sh --timeout 2s -c "D=/tmp; $fill; sleep 30"
check "timeout after filling /tmp: limit wall_time, disk_full [/tmp]" \
	[ "$(jget outcome) $(jget limit) $(jget disk_full)" = "timeout wall_time ['/tmp']" ]
rm -f "$POL/disk.policy"
finish
