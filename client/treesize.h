/* SPDX-License-Identifier: ISC */
/* Size of a session directory for `sbx session ls`, walked like rmtree.c
 * (directory fds, fstatat(AT_SYMLINK_NOFOLLOW), openat(O_NOFOLLOW)), so a
 * payload swapping a directory for a link cannot send it outside the tree. */
#ifndef SBX_CLIENT_TREESIZE_H
#define SBX_CLIENT_TREESIZE_H
#include <stdint.h>

/* Bytes (st_size) of the regular files below TOP (a directory fd), which stays open and
 * unmoved. Directories that cannot be read, and those nested deeper than
 * RMTREE_MAX_DEPTH, are skipped: the figure is then a lower bound. */
uint64_t tree_size_bytes(int top);

#endif
