/* SPDX-License-Identifier: ISC */
/* The version of sbx: printed by `sbx --version` and recorded in every
 * START record (record field sbx_version). Keep in step with
 * packaging/debian/changelog and packaging/rpm/sbx.spec. */
#ifndef SBX_VERSION_H
#define SBX_VERSION_H

#ifndef SBX_VERSION
#define SBX_VERSION "0.1.0"
#endif

#endif
