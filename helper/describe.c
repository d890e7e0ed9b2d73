/* SPDX-License-Identifier: ISC */
/*
 * The run description (common/rundesc.h): what the recorder is told of a
 * run, and, with the binds and environment, --dry-run's answer to the
 * client, which formats it (client/dryrun.c): root prints nothing. Values
 * come from argv (already validated), root-owned files and the fds' sizes.
 */
#include <stdio.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bsd/string.h>

#include "helper.h"
#include "runenv.h"

void describe_run(const struct run *r, struct sbx_run_desc *d)
{
	memset(d, 0, sizeof(*d));
	sbx_msg_hdr_init(&d->hdr, SBX_REC_MSG_RUN, sizeof(*d));
	if (r->refused) {
		d->flags |= SBX_DESC_REFUSED;
		strlcpy(d->error, r->error, sizeof(d->error));
	}
	if (r->work_tree >= 0) {
		d->flags |= SBX_DESC_WORK;
		d->work_dev = r->work_dev;
		d->work_ino = r->work_ino;
	}
	if (r->refused && r->code_checked)
		d->flags |= SBX_DESC_CODE;
	/* refused before a policy loaded: what was asked for (a REFUSED record) */
	if (r->refused && !r->policy_loaded)
		d->flags |= SBX_DESC_NO_POLICY;
	if (r->policy_fd >= 0) {
		d->flags |= SBX_DESC_POLICY_TEXT;
		d->policy_bytes = r->policy_len;
	}
	d->unrecorded_refusals = r->unrecorded_refusals;
	d->alloc_tightened = r->alloc_tightened;
	strlcpy(d->alloc_nested, r->alloc_nested, sizeof(d->alloc_nested));
	if (r->policy.sessions)
		d->flags |= SBX_DESC_SESSIONS;
	if (r->ws_tree >= 0 || r->ws_fd >= 0) {
		d->flags |= SBX_DESC_WORKSPACE;
		d->ws_dev = r->ws_dev;
		d->ws_ino = r->ws_ino;
	}
	if (r->apply)
		d->flags |= SBX_DESC_APPLY;
	if (r->live)
		d->flags |= SBX_DESC_LIVE;
	strlcpy(d->run_id, r->run_id, sizeof(d->run_id));
	d->realtime_ns = r->realtime_ns;
	d->boottime_ns = r->boottime_ns;
	d->uid = (uint32_t)r->uid;
	d->gid = (uint32_t)r->gid;
	strlcpy(d->user, r->user, sizeof(d->user));
	strlcpy(d->group, r->group, sizeof(d->group));
	strlcpy(d->policy, r->policy_loaded ? r->policy.name : r->policy_name, sizeof(d->policy));
	memcpy(d->policy_sha256, r->policy.sha256, sizeof(d->policy_sha256));
	strlcpy(d->language, r->lang_name, sizeof(d->language));
	strlcpy(d->code_path, r->code_path, sizeof(d->code_path));
	d->code_bytes = r->code_len;
	/* an argv the record cannot hold is cut there, as before */
	for (size_t i = 0; r->argv[i] != NULL; i++)
		if (sbx_run_desc_add_arg(d, r->argv[i]) < 0)
			break;
	if (d->argv_len == 0)
		sbx_run_desc_add_arg(d, r->code_path);
	d->limits = r->limits;
	strlcpy(d->session, r->session, sizeof(d->session));
	d->attempt = r->attempt;
	strlcpy(d->parent_id, r->parent_id, sizeof(d->parent_id));
	/* a refused run's inputs were not all checked: none are described */
	d->n_inputs = r->refused ? 0 : (uint32_t)r->n_inputs;
	for (uint32_t i = 0; i < d->n_inputs; i++) {
		strlcpy(d->inputs[i].name, r->inputs[i].name, sizeof(d->inputs[i].name));
		d->inputs[i].size = r->inputs[i].size;
	}
	d->inputs_bytes = r->refused ? 0 : r->inputs_bytes;
	if (r->stdin_fd >= 0 && !r->refused) {
		d->flags |= SBX_DESC_STDIN;
		d->stdin_bytes = r->stdin_size;
	}
	d->net = (uint32_t)r->policy.net;
	d->seccomp = (uint32_t)r->policy.seccomp;
	egress_facts(r, &d->egress);
	strlcpy(d->audit_origin, r->conf.audit_origin, sizeof(d->audit_origin));
	strlcpy(d->witness_dir, r->conf.audit_witness_dir, sizeof(d->witness_dir));
	strlcpy(d->witness_command, r->conf.audit_witness_command, sizeof(d->witness_command));
	strlcpy(d->image, r->policy.image, sizeof(d->image));
	strlcpy(d->image_digest, r->image_digest, sizeof(d->image_digest));
}

static void add_bind(struct sbx_dry_run *d, const char *path, bool rw)
{
	struct sbx_dry_bind *b = &d->binds[d->n_binds++];
	struct stat st;

	strlcpy(b->path, path, sizeof(b->path));
	b->rw = rw;
	/* a policy path: root-owned configuration, not the caller's */
	if (lstat(path, &st) < 0)
		b->state = SBX_BIND_MISSING;
	else if (S_ISLNK(st.st_mode))
		b->state = SBX_BIND_SYMLINK;
	else
		b->state = SBX_BIND_OK;
}

void dry_run_send(const struct run *r)
{
	static struct sbx_dry_run d;
	const struct sbx_policy *p = &r->policy;

	describe_run(r, &d.run);
	sbx_msg_hdr_init(&d.run.hdr, SBX_REC_MSG_RUN, sizeof(d));
	for (size_t i = 0; i < p->n_ro; i++)
		if (!image_provides(r, p->ro[i])) /* the image line says these */
			add_bind(&d, p->ro[i], false);
	for (size_t i = 0; i < p->n_rw; i++)
		add_bind(&d, p->rw[i], true);
	{
		/* what the sandbox will compute (sandbox.c), computed the same way */
		static struct sbx_runenv env;
		cpu_set_t set;

		d.cpus = run_cpu_set(r, &set);
		int k = 0;
		for (unsigned c = 0; c < CPU_SETSIZE && k < CPU_COUNT(&set); c++)
			if (CPU_ISSET(c, &set)) {
				size_t at = strlen(d.cpu_list);
				snprintf(d.cpu_list + at, sizeof(d.cpu_list) - at, "%s%u", k++ ? "," : "", c);
			}
		sbx_runenv_build(&env, p, r->lang, d.cpus);
		for (size_t i = 0; i < env.n; i++)
			strlcpy(d.env[d.n_env++], env.entry[i], sizeof(d.env[0]));
	}
	d.tmp_inodes = tmpfs_inodes(r->limits.tmp_bytes);
	d.shm_inodes = tmpfs_inodes(r->limits.shm_bytes);
	d.out_inodes = tmpfs_inodes(r->limits.out_bytes);
	if (p->net == SBX_NET_ALLOW) {
		for (size_t i = 0; i < p->egress.n_allow; i++) {
			strlcpy(d.allow[i].host, p->egress.allow[i].host, sizeof(d.allow[i].host));
			d.allow[i].port = p->egress.allow[i].port;
		}
		d.n_allow = (uint32_t)p->egress.n_allow;
		d.net_connections = p->egress.connections;
		d.net_bytes_out = p->egress.bytes_out;
		d.net_bytes_in = p->egress.bytes_in;
	}
	_exit(msg_frame(SBX_FRAME_DRY_RUN, &d, sizeof(d), 1000) < 0 ? SBX_EXIT_FAILURE : 0);
}
