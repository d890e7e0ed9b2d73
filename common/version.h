/* SPDX-License-Identifier: ISC */
/* The version of sbx: printed by `sbx --version` and `sbx-audit --version`
 * and recorded in every START record (record field sbx_version). It comes
 * from the top-level VERSION file, the one version source (the .deb and
 * the .rpm take theirs from it too): the Makefile writes it into paths.h. */
#ifndef SBX_VERSION_H
#define SBX_VERSION_H

#include "paths.h"

#endif
