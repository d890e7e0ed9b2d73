/* SPDX-License-Identifier: ISC */
/*
 * Egress in the audit record and the result ([network] mode = allow;
 * docs/egress.md): the START fields (the allowed pairs, the limits), the
 * relay's report read and checked, the END fields (connections, refused
 * destinations, totals, the destination words search --dest matches) and
 * the result's "network" object. Field definitions: auditlog/recfield.h,
 * tags 120-139.
 */
#ifndef SBX_EGRESS_RECORD_H
#define SBX_EGRESS_RECORD_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "egress_proto.h"
#include "policy.h"
#include "record.h"

/* What sbx-relay reported, as checked by the recorder. */
struct egress_report {
	struct sbx_egress_report conns[SBX_EGRESS_CONNECTIONS_MAX];
	size_t n_conns;
	struct sbx_egress_report refused[SBX_EGRESS_ATTEMPTS_MAX];
	size_t n_refused;
	struct sbx_egress_report totals; /* the END record of the report */
	bool complete;                   /* the END record came, every record well-formed */
	char status[128];                /* "complete", or why the report is not */
};

#define SBX_EGRESS_REPORT_MS 5000 /* how long the recorder waits for the report */

/* START: network_allow and network_limits (mode = allow only). 0, or -1
 * with err. */
int egress_start_fields(struct sbx_record *start, const struct sbx_egress_facts *f, char *err, size_t errlen);
/* Read the report from fd (and close it), within SBX_EGRESS_REPORT_MS;
 * every record checked against the run's pairs and limits (the relay is
 * a less privileged process). Nothing to read unless mode = allow and the
 * run started. */
void egress_report_read(int fd, const struct sbx_egress_facts *f, struct egress_report *rep);
/* END: network_connections, network_refused, network, network_destinations. */
int egress_end_fields(struct sbx_record *end, const struct sbx_egress_facts *f,
		      const struct egress_report *rep, char *err, size_t errlen);
/* The result's "network" object, or NULL unless mode = allow. */
json_t *egress_result_json(const struct sbx_egress_facts *f, const struct egress_report *rep);

#endif
