/* SPDX-License-Identifier: ISC */
/* `sbx policies`: the policies the caller may use, with their limits. */
#ifndef SBX_CLIENT_POLICIES_H
#define SBX_CLIENT_POLICIES_H
#include <stddef.h>

/*
 * The client reads SYSCONFDIR/sbx/policies.d itself: policies are installed
 * root:root 0644 (sbx.policy(5)), so no root code is needed to list them,
 * and it parses them with the helper's parser (common/policy.c) and the
 * helper's access rule (sbx_policy_allows plus group sbx). A policy file
 * the caller cannot read is listed as unreadable; sbx-helper still decides
 * at run time. argv[0] is "policies". Returns the exit status.
 */
int policies_main(int argc, char **argv);

/*
 * Before a run: when sbx.conf can be read and has no language `lang`, die
 * with code unknown_language (exit 2) and the languages there are ("no
 * language 'ruby' in /etc/sbx/sbx.conf; there are: python, sh"). The
 * helper checks again and stays the authority.
 */
void policies_check_language(const char *lang);
/* The host path of language lang's live_driver (sbx.conf(5)) in out: 0;
 * -1 sbx.conf unreadable or invalid, -2 no such language, -3 the language
 * has no live_driver. */
int policies_live_driver(const char *lang, char *out, size_t len);

/* The policy NAME's limits (NULL: sbx.conf's default policy), as the
 * client can read them; the built-in defaults when it cannot (the helper
 * decides at run time in any case). The policy's name in resolved. */
struct sbx_limits;
void policy_limits(const char *name, struct sbx_limits *out, char *resolved, size_t len);

#endif
