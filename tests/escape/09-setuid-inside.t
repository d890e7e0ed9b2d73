#!/bin/sh
# SPDX-License-Identifier: ISC
# Escape class 9: setuid and file-capability binaries inside the sandbox
# gain nothing. The host's own setuid-root programs are visible under /usr
# (sudo, su, mount, passwd, newgrp, chsh); ping with file capabilities is
# not installed on the test hosts, so the test set-up (root) makes its own:
# a copy of tests/escape/bin/kobj with file capabilities (setcap
# cap_setuid,cap_setgid,cap_sys_admin,cap_dac_override+eip) and a
# setuid-root copy, in a root-owned directory under /var/tmp that a test
# policy binds read-only (the install prefix lives under /tmp, which the
# sandbox's new root hides). Running them inside must leave every uid the
# caller's and every capability set empty.
#
# Defences checked by removing them: with MS_NOSUID dropped from the
# read-only binds (mounts.c bind_path), the bounding-set drop and
# PR_SET_NO_NEW_PRIVS removed (sandbox.c drop_privileges) and the seccomp
# filter not installed (libseccomp sets no_new_privs by itself), the
# file-capability copy ran with CapPrm = CapEff = 00000000002000c2 and
# tests 2, 6 and 7 failed. The setuid-root copy still gained nothing and
# setuid(0) stayed refused: uid 0 is not mapped in the sandbox's user
# namespace, a fourth layer.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-b.sh"
plan 10
POL=$P/etc/sbx/policies.d
D=/var/tmp/sbx-escape-9-$$
trap 'rm -rf "$T" "$D" "$POL/esc9.policy"' EXIT
install -d -m 0755 "$D"
cp "$EB/kobj" "$D/capprobe"
setcap cap_setuid,cap_setgid,cap_sys_admin,cap_dac_override+eip "$D/capprobe"
cp "$EB/kobj" "$D/suidprobe"
chown root:root "$D/suidprobe"
chmod 4755 "$D/suidprobe"
sed "s|^ro = .*|& $D|" "$POL/default.policy" > "$POL/esc9.policy"
chmod 0644 "$POL/esc9.policy"
hostsum() { cat /etc/passwd /etc/shadow /etc/group "$D"/* | sha256sum; getcap "$D/capprobe"; stat -c %A "$D/suidprobe"; }
before=$(hostsum)

cat > "$T/s.sh" <<EOS
echo "capprobe: \$($D/capprobe caps)"
echo "suidprobe: \$($D/suidprobe caps)"
o=\$(sudo -n id -u 2>/dev/null); r=\$?; echo "sudo: out=[\$o] rc=\$r"
o=\$(su root -c 'id -u' </dev/null 2>/dev/null); r=\$?; echo "su: out=[\$o] rc=\$r"
mkdir /tmp/m; mount -t tmpfs none /tmp/m 2>/dev/null; echo "mount: rc=\$? mounted=\$(grep -c ' /tmp/m ' /proc/self/mountinfo)"
newgrp root </dev/null 2>/dev/null; echo "newgrp: rc=\$?"
chsh -s /bin/sh </dev/null 2>/dev/null; echo "chsh: rc=\$?"
echo "mounts: \$(grep -c . /proc/self/mountinfo) nosuid: \$(grep -c nosuid /proc/self/mountinfo)"
echo "nnp: \$(awk '/^NoNewPrivs/ {print \$2}' /proc/self/status)"
ls -l /usr/bin/sudo /usr/bin/su /usr/bin/mount /usr/bin/passwd $D/suidprobe | awk '{print "visible:", \$1}' | sort -u
EOS
chmod 0644 "$T/s.sh"
sbx_run run --json --policy esc9 --lang sh "$T/s.sh"
jget stdout > "$T/r"
diag "$(cat "$T/r" "$T/err")"
g() { sed -n "s/^$1: //p" "$T/r"; }
u=$(id -u sbxtest)
none="ids $u $u $u caps 0000000000000000 0000000000000000 setuid0 refused"
check "the setuid bit is visible inside (the attack is real)" grep -q "visible: -rwsr-xr-x" "$T/r"
check "file-capability binary: caller's uids, no capability, setuid(0) refused" [ "$(g capprobe)" = "$none" ]
check "setuid-root binary: caller's uids, no capability, setuid(0) refused" [ "$(g suidprobe)" = "$none" ]
check "sudo and su give no root (refused, print nothing)" [ "$(g sudo) | $(g su)" = "out=[] rc=1 | out=[] rc=1" ]
check "mount refused, nothing mounted; newgrp and chsh refused" \
	[ "$(g mount) | $(g newgrp) | $(g chsh)" = "rc=32 mounted=0 | rc=1 | rc=1" ]
m=$(g mounts)
check "every mount inside is nosuid ($m)" [ "${m% nosuid: *}" = "${m#* nosuid: }" ]
check "no_new_privs set for the payload" [ "$(g nnp)" = 1 ]
check "run audited (ok)" [ "$(end_outcome "$(jget id)")" = ok ]
check "host passwd/shadow/group and the probes unchanged" [ "$(hostsum)" = "$before" ]
check "no cgroup left" cg_gone "$(jget id)"
finish
