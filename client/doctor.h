/* SPDX-License-Identifier: ISC */
/* `sbx doctor [--json]`: host and install checks (doctor.c, sbx(1)). */
#ifndef SBX_CLIENT_DOCTOR_H
#define SBX_CLIENT_DOCTOR_H
#include <stdio.h>

/* argv[0] is "doctor". Returns the exit status: 0 all ok, 1 problems;
 * dies with 125 on a usage error. */
int doctor_main(int argc, char **argv);
void doctor_usage(FILE *out);

#endif
