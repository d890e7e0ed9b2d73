/* SPDX-License-Identifier: ISC */
/*
 * sbx-image: the administrator's command for curated images (sbx-image(8)).
 * Runs as root; it is not setuid and never runs through sbx-helper.
 */
#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bsd/string.h>

#include "units.h"

/* SOURCE_DATE_EPOCH when neither --source-date-epoch nor the environment
 * gives one: a fixed value, so that two builds agree by default
 * (2024-01-01T00:00:00Z; any fixed value would do). */
#define DEFAULT_EPOCH 1704067200

static int usage(FILE *f, int code)
{
	fputs("usage: sbx-image build NAME --packages PKG[,PKG...] [--suite SUITE] [--source-date-epoch SECONDS]\n"
	      "                        [--cache DIR] [--keep-docs] [--no-compress] [--verbose]\n"
	      "       sbx-image ls\n"
	      "       sbx-image show NAME\n"
	      "       sbx-image rm [--force] NAME\n"
	      "       sbx-image mount NAME... | --all\n"
	      "       sbx-image verify NAME\n"
	      "See sbx-image(8).\n", f);
	return code;
}

static int check_name(const char *cmd, const char *name)
{
	if (!sbx_valid_name(name)) {
		img_warn("%s: '%s' is not an image name: [a-z0-9][a-z0-9_-]*, at most %d characters", cmd, name,
			 SBX_NAME_MAX);
		return -1;
	}
	return 0;
}

static int cmd_build(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"packages", required_argument, NULL, 'p'}, {"suite", required_argument, NULL, 's'},
		{"source-date-epoch", required_argument, NULL, 'e'}, {"cache", required_argument, NULL, 'c'},
		{"keep-docs", no_argument, NULL, 'd'}, {"no-compress", no_argument, NULL, 'n'},
		{"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct build_opts o = {.compress = true, .epoch = DEFAULT_EPOCH};
	char *packages = NULL, *tok, *save = NULL;
	const char *env = getenv("SOURCE_DATE_EPOCH");
	uint64_t v;
	int c;

	if (env != NULL && *env) {
		if (sbx_parse_uint(env, INT64_MAX, &v) < 0) {
			img_warn("SOURCE_DATE_EPOCH: '%s' is not a number of seconds", env);
			return IMG_EXIT_USAGE;
		}
		o.epoch = (int64_t)v;
	}
	while ((c = getopt_long(argc, argv, "p:v", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			packages = optarg;
			break;
		case 's':
			if (!img_valid_package(optarg)) { /* a suite name has the same shape */
				img_warn("--suite: '%s' is not a suite name", optarg);
				return IMG_EXIT_USAGE;
			}
			o.suite = optarg;
			break;
		case 'e':
			if (sbx_parse_uint(optarg, INT64_MAX, &v) < 0) {
				img_warn("--source-date-epoch: '%s' is not a number of seconds since 1970", optarg);
				return IMG_EXIT_USAGE;
			}
			o.epoch = (int64_t)v;
			break;
		case 'c':
			if (optarg[0] != '/' || strchr(optarg, '\'') != NULL) {
				img_warn("--cache: '%s' must be an absolute path without a single quote", optarg);
				return IMG_EXIT_USAGE;
			}
			o.cache = optarg;
			break;
		case 'd':
			o.keep_docs = true;
			break;
		case 'n':
			o.compress = false;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			return usage(stdout, IMG_EXIT_OK);
		default:
			return usage(stderr, IMG_EXIT_USAGE);
		}
	}
	if (optind != argc - 1) {
		img_warn("build: give exactly one image name");
		return usage(stderr, IMG_EXIT_USAGE);
	}
	o.name = argv[optind];
	if (check_name("build", o.name) < 0)
		return IMG_EXIT_USAGE;
	if (packages == NULL) {
		img_warn("build: --packages is required (comma-separated Debian package names)");
		return IMG_EXIT_USAGE;
	}
	for (tok = strtok_r(packages, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (!img_valid_package(tok)) {
			img_warn("--packages: '%s' is not a Debian package name (or NAME=VERSION)", tok);
			return IMG_EXIT_USAGE;
		}
		if (o.n_packages == IMG_MAX_PACKAGES) {
			img_warn("--packages: more than %d packages", IMG_MAX_PACKAGES);
			return IMG_EXIT_USAGE;
		}
		o.packages[o.n_packages++] = tok;
	}
	if (o.n_packages == 0) {
		img_warn("--packages: no package named");
		return IMG_EXIT_USAGE;
	}
	return img_build(&o);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Image names in the store, sorted; count in *n. */
static char **list_names(size_t *n)
{
	DIR *d = opendir(SBX_IMAGES_DIR);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (!sbx_valid_name(e->d_name))
			continue; /* ".", "..", hidden working directories */
		if (*n == cap) {
			char **nv = reallocarray(v, cap ? cap * 2 : 16, sizeof(*v));
			if (nv == NULL)
				break;
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		v[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof(*v), by_name);
	return v;
}

/* 78045184 -> "74.4M": ls's size column, in powers of 1024 like sbx's sizes */
static void human_size(uint64_t n, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	double v = (double)n;
	int u = -1;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, n);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

static int cmd_ls(int argc, char **argv)
{
	char err[IMG_ERR_LEN], size[32];
	size_t n;
	char **names;

	(void)argv;
	if (argc != 1) {
		img_warn("ls: takes no arguments");
		return IMG_EXIT_USAGE;
	}
	img_remove_leftovers();
	names = list_names(&n);
	printf("%-16s %-12s %8s %8s %-20s %s\n", "NAME", "STATE", "SIZE", "PACKAGES", "BUILT", "DIGEST");
	for (size_t i = 0; i < n; i++) {
		struct img_info info;

		if (img_info(names[i], &info, err, sizeof(err)) < 0) {
			img_warn("%s", err);
			continue;
		}
		human_size(info.size, size, sizeof(size));
		printf("%-16s %-12s %8s %8" PRIu64 " %-20s %s\n", info.name, info.state, size, info.packages,
		       info.built[0] ? info.built : "?", info.stamp.digest[0] ? info.stamp.digest : "?");
		free(names[i]);
	}
	free(names);
	return ferror(stdout) ? IMG_EXIT_FAIL : IMG_EXIT_OK;
}

static int open_image_dir(const char *name, int *code)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", SBX_IMAGES_DIR, name);
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		img_warn("no image '%s' (sbx-image ls lists them)", name);
		*code = errno == ENOENT ? IMG_EXIT_NO_IMAGE : IMG_EXIT_FAIL;
	}
	return fd;
}

static int cmd_show(int argc, char **argv)
{
	char buf[65536];
	ssize_t n;
	int dfd, fd, code = IMG_EXIT_OK;

	if (argc != 2) {
		img_warn("show: give one image name");
		return IMG_EXIT_USAGE;
	}
	if (check_name("show", argv[1]) < 0)
		return IMG_EXIT_USAGE;
	dfd = open_image_dir(argv[1], &code);
	if (dfd < 0)
		return code;
	fd = openat(dfd, "manifest", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		img_warn("%s: no manifest: %s", argv[1], strerror(errno));
		close(dfd);
		return IMG_EXIT_FAIL;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	close(dfd);
	return ferror(stdout) || n < 0 ? IMG_EXIT_FAIL : IMG_EXIT_OK;
}

static int cmd_rm(int argc, char **argv)
{
	char err[IMG_ERR_LEN], users[1024], src[PATH_MAX], dst[PATH_MAX], root[PATH_MAX + 8];
	bool force = false;
	int lock, dfd, code = IMG_EXIT_OK, i = 1;

	if (argc >= 2 && strcmp(argv[1], "--force") == 0) {
		force = true;
		i++;
	}
	if (argc != i + 1) {
		img_warn("rm: give one image name");
		return IMG_EXIT_USAGE;
	}
	if (check_name("rm", argv[i]) < 0)
		return IMG_EXIT_USAGE;
	dfd = open_image_dir(argv[i], &code);
	if (dfd < 0)
		return code;
	close(dfd);
	img_policies_naming(argv[i], users, sizeof(users));
	if (users[0] && !force) {
		img_warn("rm: image '%s' is named by policy %s (%s/sbx/policies.d); change the policy first, "
			 "or --force", argv[i], users, SBX_SYSCONFDIR);
		return IMG_EXIT_IN_USE;
	}
	lock = img_lock(err, sizeof(err));
	if (lock < 0) {
		img_warn("%s", err);
		return IMG_EXIT_FAIL;
	}
	/* out of the helper's sight first (one rename), then unmounted and
	 * deleted; sandboxes already running hold their own clone of the
	 * mount, which keeps the file and the loop device until they end */
	snprintf(src, sizeof(src), "%s/%s", SBX_IMAGES_DIR, argv[i]);
	snprintf(dst, sizeof(dst), "%s/.rm-%s-XXXXXX", SBX_IMAGES_DIR, argv[i]);
	if (mkdtemp(dst) == NULL || renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_EXCHANGE) < 0 ||
	    rmdir(src) < 0) {
		img_warn("rm: %s: %s", src, strerror(errno));
		close(lock);
		return IMG_EXIT_FAIL;
	}
	snprintf(root, sizeof(root), "%s/%s", dst, SBX_IMAGE_MOUNT);
	umount2(root, MNT_DETACH | UMOUNT_NOFOLLOW);
	if (img_rmtree(dst) < 0)
		img_warn("rm: removing %s: %s", dst, strerror(errno));
	close(lock);
	printf("removed image '%s'%s; runs already started keep it until they end\n", argv[i],
	       users[0] ? " (still named by a policy: its runs are refused)" : "");
	return IMG_EXIT_OK;
}

/* Mount one image where sbx-helper looks for it, unless it already is. */
static int mount_one(const char *name)
{
	char err[IMG_ERR_LEN], why[256], root[PATH_MAX];
	struct sbx_image_stamp s;
	struct stat st;
	int dfd, ffd, code = IMG_EXIT_OK;

	if (check_name("mount", name) < 0)
		return IMG_EXIT_USAGE;
	dfd = open_image_dir(name, &code);
	if (dfd < 0)
		return code;
	if (img_read_stamp(dfd, &s, err, sizeof(err)) < 0) {
		img_warn("%s: %s", name, err);
		close(dfd);
		return IMG_EXIT_FAIL;
	}
	ffd = openat(dfd, SBX_IMAGE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (ffd < 0 || fstat(ffd, &st) < 0) {
		img_warn("%s: %s: %s", name, SBX_IMAGE_FILE, strerror(errno));
		if (ffd >= 0)
			close(ffd);
		return IMG_EXIT_FAIL;
	}
	if (!sbx_image_stamp_matches(&s, &st, why, sizeof(why))) {
		img_warn("%s: %s changed since it was built (%s): run sbx-image verify %s", name, SBX_IMAGE_FILE,
			 why, name);
		close(ffd);
		return IMG_EXIT_MODIFIED;
	}
	snprintf(root, sizeof(root), "%s/%s/%s", SBX_IMAGES_DIR, name, SBX_IMAGE_MOUNT);
	if (img_is_mounted(root, ffd, &s, why, sizeof(why))) {
		close(ffd);
		return IMG_EXIT_OK;
	}
	/* whatever else is there (a stale mount of an older file) goes */
	while (umount2(root, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		;
	if (img_mount_file(ffd, root, err, sizeof(err)) < 0) {
		img_warn("%s: %s", name, err);
		close(ffd);
		return IMG_EXIT_FAIL;
	}
	close(ffd);
	return IMG_EXIT_OK;
}

static int cmd_mount(int argc, char **argv)
{
	int worst = IMG_EXIT_OK;

	if (argc == 2 && strcmp(argv[1], "--all") == 0) {
		size_t n;
		char **names = list_names(&n);

		for (size_t i = 0; i < n; i++) {
			int rc = mount_one(names[i]);
			if (rc != IMG_EXIT_OK)
				worst = rc;
			free(names[i]);
		}
		free(names);
		return worst;
	}
	if (argc < 2) {
		img_warn("mount: give image names or --all");
		return IMG_EXIT_USAGE;
	}
	for (int i = 1; i < argc; i++) {
		int rc = mount_one(argv[i]);
		if (rc != IMG_EXIT_OK)
			worst = rc;
	}
	return worst;
}

/* The tree digest of image.erofs, mounted privately in a child. */
static int digest_of(int ffd, const char *root, char digest[SBX_DIGEST_LEN + 1], char *err, size_t errlen)
{
	int p[2], st;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char e[IMG_ERR_LEN] = "", d[SBX_DIGEST_LEN + 1];
		uint64_t files;

		close(p[0]);
		/* a private mount over the image's mount point: only this child sees it */
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    img_mount_file(ffd, root, e, sizeof(e)) < 0 || img_tree_listing(root, NULL, d, &files, e, sizeof(e)) < 0) {
			dprintf(p[1], "E%s", e[0] ? e : strerror(errno));
			_exit(1);
		}
		dprintf(p[1], "D%s", d);
		_exit(0);
	}
	close(p[1]);
	char buf[IMG_ERR_LEN];
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	buf[n > 0 ? n : 0] = '\0';
	waitpid(pid, &st, 0);
	if (pid < 0 || buf[0] != 'D' || !sbx_valid_digest(buf + 1)) {
		snprintf(err, errlen, "%s", buf[0] == 'E' ? buf + 1 : "the digest child failed");
		return -1;
	}
	strlcpy(digest, buf + 1, SBX_DIGEST_LEN + 1);
	return 0;
}

static int cmd_verify(int argc, char **argv)
{
	char err[IMG_ERR_LEN], why[256], root[PATH_MAX], hex[65], digest[SBX_DIGEST_LEN + 1], text[SBX_IMAGE_STAMP_MAX];
	struct sbx_image_stamp s;
	struct stat st;
	int dfd, ffd, code = IMG_EXIT_OK;
	bool restamp;

	if (argc != 2) {
		img_warn("verify: give one image name");
		return IMG_EXIT_USAGE;
	}
	if (check_name("verify", argv[1]) < 0)
		return IMG_EXIT_USAGE;
	dfd = open_image_dir(argv[1], &code);
	if (dfd < 0)
		return code;
	if (img_read_stamp(dfd, &s, err, sizeof(err)) < 0) {
		img_warn("%s: %s", argv[1], err);
		close(dfd);
		return IMG_EXIT_FAIL;
	}
	ffd = openat(dfd, SBX_IMAGE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (ffd < 0 || fstat(ffd, &st) < 0 || img_file_sha256(ffd, hex) < 0) {
		img_warn("%s: %s: %s", argv[1], SBX_IMAGE_FILE, strerror(errno));
		close(dfd);
		return IMG_EXIT_FAIL;
	}
	if (strcmp(hex, s.file_sha256) != 0) {
		img_warn("%s: modified: %s has SHA-256 %s, built as %s; rebuild or remove the image", argv[1],
			 SBX_IMAGE_FILE, hex, s.file_sha256);
		close(ffd);
		close(dfd);
		return IMG_EXIT_MODIFIED;
	}
	snprintf(root, sizeof(root), "%s/%s/%s", SBX_IMAGES_DIR, argv[1], SBX_IMAGE_MOUNT);
	if (digest_of(ffd, root, digest, err, sizeof(err)) < 0) {
		img_warn("%s: %s", argv[1], err);
		close(ffd);
		close(dfd);
		return IMG_EXIT_FAIL;
	}
	if (strcmp(digest, s.digest) != 0) {
		img_warn("%s: modified: the tree digest is %s, built as %s", argv[1], digest, s.digest);
		close(ffd);
		close(dfd);
		return IMG_EXIT_MODIFIED;
	}
	restamp = !sbx_image_stamp_matches(&s, &st, why, sizeof(why));
	if (restamp) {
		/* same bytes, new times (a restore, a chmod): the stamp follows, and
		 * the image is mounted afresh so no page read meanwhile stays cached */
		sbx_image_stamp_set_file(&s, &st);
		if (sbx_image_stamp_format(&s, text, sizeof(text)) < 0 ||
		    img_write_file(dfd, SBX_IMAGE_STAMP, text, strlen(text), err, sizeof(err)) < 0) {
			img_warn("%s: %s", argv[1], err);
			close(ffd);
			close(dfd);
			return IMG_EXIT_FAIL;
		}
		while (umount2(root, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			;
	}
	close(ffd);
	close(dfd);
	code = mount_one(argv[1]);
	if (code == IMG_EXIT_OK)
		printf("%s: ok, %s%s\n", argv[1], s.digest, restamp ? " (stamp renewed: the file's times had changed)" : "");
	return code;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
		{"build", cmd_build}, {"ls", cmd_ls}, {"show", cmd_show},
		{"rm", cmd_rm}, {"mount", cmd_mount}, {"verify", cmd_verify},
	};

	if (argc < 2)
		return usage(stderr, IMG_EXIT_USAGE);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)
		return usage(stdout, IMG_EXIT_OK);
	umask(022);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name) != 0)
			continue;
		/* show reads world-readable files; everything else mounts, checks
		 * loop devices or writes under SBX_IMAGES_DIR */
		if (geteuid() != 0 && cmds[i].fn != cmd_show) {
			img_warn("%s: must be run as root (it builds and mounts images under %s)", argv[1],
				 SBX_IMAGES_DIR);
			return IMG_EXIT_USAGE;
		}
		return cmds[i].fn(argc - 1, argv + 1);
	}
	img_warn("unknown command '%s'", argv[1]);
	return usage(stderr, IMG_EXIT_USAGE);
}
