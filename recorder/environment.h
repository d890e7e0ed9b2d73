/* SPDX-License-Identifier: ISC */
/*
 * The environment a run executes in (environment.c): which tree its /usr
 * came from and that tree's digest, and which interpreter, of which
 * package and version. START records it (fields 140-159 of
 * auditlog/recfield.h; kernel and sbx version are audit's fields 20-22)
 * and the result carries it under "environment".
 */
#ifndef SBX_ENVIRONMENT_H
#define SBX_ENVIRONMENT_H
#include <limits.h>
#include <stddef.h>

struct sbx_record;

struct run_env {
	char image[65];             /* image name, or "host" */
	char digest[72];            /* image: tree digest; host: package-set digest; "" unknown */
	char interpreter[PATH_MAX]; /* argv[0] resolved in the run's tree */
	char interp_package[128];   /* "" when no package owns it */
	char interp_version[128];
	char kernel[65];            /* uname(2) release */
	char sbx_version[64];
};

/*
 * Work out the environment of a run: image (the policy's, "" for the
 * host's /usr) and its digest as the supervisor checked it, argv0 the
 * interpreter as the sandbox will execute it. For the host, the
 * package-set digest and program index come from a cache in
 * SBX_LOCALSTATEDIR/lib/sbx/hostenv, rebuilt with dpkg-query when dpkg's
 * status file changed (once per install or upgrade, about a second).
 * Never fails: what cannot be found is left "" (and said in why, if
 * anything was wrong).
 */
void run_environment(const char *image, const char *image_digest, const char *argv0, struct run_env *e);

/* The result's "environment" object: image, digest, interpreter,
 * interpreter_package, interpreter_version, kernel, sbx_version (docs/result.schema.json). */
struct json_t;
struct json_t *run_env_json(const struct run_env *e);

/* The START fields of e (image, image_digest, interpreter package and
 * version). 0, or -1 with err. */
int run_env_fields(struct sbx_record *rec, const struct run_env *e, char *err, size_t errlen);

#endif
