/* SPDX-License-Identifier: ISC */
/*
 * Hints for the result's error object (sbx(1) "The result"): what the
 * caller can do about a failure sbx recognises. Computed by the client, as
 * the caller, from the result and from what the host tells any user.
 */
#ifndef SBX_CLIENT_HINT_H
#define SBX_CLIENT_HINT_H
#include <stdbool.h>
#include <stddef.h>

/*
 * For a Python module that is missing in the sandbox ("polars", or the
 * top-level part of "a.b"): a one-line hint saying that packages cannot be
 * installed at run time and how an administrator adds one, naming the
 * Debian package python3-NAME when a package list the host knows
 * (APT_LISTS_DIR/ *_Packages, compressed ones read through apt-helper
 * cat-file) has it. With image (the result's environment.image, NULL or
 * "host" for the host's /usr) the hint names the image and says to rebuild
 * it with that package (sbx-image(8)). false if module is not a module name.
 */
bool hint_missing_module(const char *module, const char *image, char *buf, size_t len);

/* Whether some *_Packages file in dir has a "Package: name" stanza
 * (exposed for the unit tests). */
bool hint_debian_has(const char *dir, const char *name);

#define APT_LISTS_DIR "/var/lib/apt/lists"

#endif
