/* SPDX-License-Identifier: ISC */
/*
 * An image's manifest (docs/images.md "The manifest"): header fields in
 * the style of a Debian control file, a blank line, then one
 * "package<TAB>version<TAB>architecture" line per installed package,
 * sorted. sbx-image show prints it; ls reads its header.
 */
#include "image.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <bsd/string.h>

int img_manifest_write(int dirfd, const struct manifest *m, char *err, size_t errlen)
{
	char *text = NULL;
	int n, rc;

	n = asprintf(&text,
		     "Format: sbx-image-manifest 1\n"
		     "Name: %s\n"
		     "Digest: %s\n"
		     "File-SHA256: %s\n"
		     "Built: %s\n"
		     "Source-Date-Epoch: %" PRId64 "\n"
		     "Suite: %s\n"
		     "Architecture: %s\n"
		     "Requested: %s\n"
		     "Documentation: %s\n"
		     "Compression: %s\n"
		     "Size: %" PRIu64 "\n"
		     "Files: %" PRIu64 "\n"
		     "Packages: %" PRIu64 "\n"
		     "Package-Set: %s\n"
		     "Builder: %s\n"
		     "\n%s",
		     m->name, m->digest, m->file_sha256, m->built, m->epoch, m->suite, m->arch, m->requested,
		     m->keep_docs ? "kept" : "left out (manual and info pages, translations, documents but copyrights)",
		     m->compress ? "lz4hc" : "none",
		     m->size, m->files, m->n_packages, m->set_digest, m->builder, m->packages ? m->packages : "");
	if (n < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = img_write_file(dirfd, "manifest", text, (size_t)n, err, errlen);
	free(text);
	return rc;
}

int img_manifest_field(const char *text, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = text; *p && *p != '\n'; ) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l > kl + 1 && strncmp(p, key, kl) == 0 && p[kl] == ':' && p[kl + 1] == ' ') {
			size_t vl = l - kl - 2;
			if (vl >= len)
				vl = len - 1;
			memcpy(buf, p + kl + 2, vl);
			buf[vl] = '\0';
			return 0;
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	buf[0] = '\0';
	return -1;
}
