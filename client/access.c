/* SPDX-License-Identifier: ISC */
#include "access.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "spawn.h"

bool caller_in_gid(gid_t gid)
{
	gid_t groups[1024];
	int n = getgroups(1024, groups);

	if (getegid() == gid || getgid() == gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* Listed in /etc/group (or the primary group in /etc/passwd): the
 * membership exists, the login session just predates it. */
static bool member_on_file(const struct group *gr, const struct passwd *pw)
{
	if (pw == NULL)
		return false;
	if (pw->pw_gid == gr->gr_gid)
		return true;
	for (char **m = gr->gr_mem; m != NULL && *m != NULL; m++)
		if (strcmp(*m, pw->pw_name) == 0)
			return true;
	return false;
}

const char *helper_access(char *msg, size_t len)
{
	struct passwd *pw = getpwuid(getuid());
	const char *user = pw ? pw->pw_name : "this user";
	struct group *gr;
	struct stat st;

	if (stat(SBX_HELPER_PATH, &st) < 0) {
		snprintf(msg, len, "%s: %s: sbx is not installed completely (install it again)", SBX_HELPER_PATH,
			 strerror(errno));
		return "setup";
	}
	if (access(SBX_HELPER_PATH, X_OK) == 0)
		return NULL;
	gr = getgrnam("sbx");
	if (gr == NULL) {
		snprintf(msg, len, "group sbx does not exist, so nobody may run %s: as root, run sbx-postinst",
			 SBX_HELPER_PATH);
		return "setup";
	}
	if (!caller_in_gid(gr->gr_gid)) {
		if (member_on_file(gr, pw))
			snprintf(msg, len, "%s was added to group sbx after this login session began: log in "
				 "again (or run: newgrp sbx) to run %s", user, SBX_HELPER_PATH);
		else
			snprintf(msg, len, "%s is not in group sbx, which may run %s: ask an administrator to "
				 "run usermod -a -G sbx %s, then log in again", user, SBX_HELPER_PATH, user);
		return "not_in_group";
	}
	snprintf(msg, len, "%s is mode %04o %s: the administrator has switched sbx off here", SBX_HELPER_PATH,
		 (unsigned)(st.st_mode & 07777), st.st_gid == gr->gr_gid ? "(group sbx)" : "(not group sbx)");
	return "setup";
}
