/* SPDX-License-Identifier: ISC */
/*
 * libFuzzer target: sbx-signer's state file (signer/state.c
 * sign_state_parse), whose two slots a crash may leave torn anywhere.
 * Whatever is accepted must keep its promise: a tree of exactly head
 * leaves, a checkpoint not above the head, and a state that saves and
 * loads back to itself (one generation on).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

#define REQUIRE(c) do { if (!(c)) abort(); } while (0)

static void same_tree(const struct sbx_mtree *a, const struct sbx_mtree *b)
{
	unsigned char fa[SBX_FRONTIER_MAX], fb[SBX_FRONTIER_MAX];
	size_t na = sbx_mtree_save(a, fa), nb = sbx_mtree_save(b, fb);

	REQUIRE(na == nb && memcmp(fa, fb, na) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sign_state st, again;
	char path[64], err[512];

	if (sign_state_parse((const char *)data, size, &st) < 0)
		return 0;
	REQUIRE(st.have && st.tree.size == st.head && st.ckpt <= st.head);
	REQUIRE(!st.have_prev || st.prev_tree.size + 1 == st.head);
	snprintf(path, sizeof(path), "/tmp/fuzz-signer-state.%d", (int)getpid());
	unlink(path);
	REQUIRE(sign_state_save(path, &st, err, sizeof(err)) == 0);
	REQUIRE(sign_state_load(path, &again, err, sizeof(err)) == 1);
	unlink(path);
	REQUIRE(again.gen == st.gen + 1 && again.head == st.head && again.ckpt == st.ckpt);
	REQUIRE(memcmp(again.head_chain, st.head_chain, 32) == 0);
	REQUIRE(memcmp(again.ckpt_root, st.ckpt_root, 32) == 0);
	same_tree(&again.tree, &st.tree);
	REQUIRE(again.have_prev == st.have_prev);
	if (st.have_prev) {
		REQUIRE(memcmp(again.prev_chain, st.prev_chain, 32) == 0);
		same_tree(&again.prev_tree, &st.prev_tree);
	}
	return 0;
}
