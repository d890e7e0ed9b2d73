/* SPDX-License-Identifier: ISC */
/*
 * fusehold: make an open file description of the caller's own FUSE file
 * one that nobody else can write to (tests/escape, issue 11, findings 2
 * and 4). Written against the kernel's FUSE protocol (linux/fuse.h,
 * Documentation/filesystems/fuse.rst); no libfuse.
 *
 *   fusehold [-l] FD -- PROG [ARGS...]
 *
 * A child makes a user and a mount namespace (the caller's uid mapped to
 * 0, as any unprivileged user may), mounts a FUSE file system on /tmp
 * there and serves /dev/fuse: INIT, LOOKUP, GETATTR (one regular file
 * "f" of 1 MiB), OPEN, FLUSH, RELEASE and FORGET are answered, READ and
 * WRITE never are. It opens /tmp/f read-write and hands the descriptor to
 * this process, which stays in the initial namespaces, polls it once (so
 * that the kernel stops asking the server: FUSE_POLL gets ENOSYS), puts
 * it on FD and execs PROG.
 *   -l  before the exec, a third process write(2)s to the descriptor from
 *       a buffer mmap(2)ed from the same file: the page fault waits for a
 *       READ that never comes while the write holds the description's
 *       position lock (fdget_pos) and the inode's lock, so every other
 *       write(2) to that description sleeps uninterruptibly (D state; not
 *       even SIGKILL ends it) for as long as the server lives.
 *   Without -l, a writer of a uid mapped in the namespace (the caller's)
 *   gets no answer to its WRITE and sleeps (interruptibly); one whose uid
 *   is not mapped there (root, _sbx) gets EOVERFLOW from the kernel.
 * The server runs until it is killed; its pid is printed on stderr as
 * "fusehold: server PID". Its death closes /dev/fuse, the kernel aborts
 * the connection and every waiting request fails, which ends the hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fuse.h>

#define FILE_SIZE (1u << 20)

static void die(const char *what)
{
	fprintf(stderr, "fusehold: %s: %s\n", what, strerror(errno));
	exit(111);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

static void reply(int dev, uint64_t unique, int error, const void *body, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header h = {.len = (uint32_t)(sizeof(h) + len), .error = error, .unique = unique};

	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), body, len);
	(void)!write(dev, buf, sizeof(h) + len);
}

static void attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
	a->size = node == FUSE_ROOT_ID ? 0 : FILE_SIZE;
	a->blocks = a->size / 512;
	a->blksize = 4096;
}

/* The server: answers what the file needs to be opened and mapped, holds
 * READ and WRITE (and tells the parent, once, that a READ is waiting). */
static void serve(int dev, int note)
{
	static char buf[FUSE_MIN_READ_BUFFER + (256u << 10)];
	int noted = 0;

	for (;;) {
		ssize_t n = read(dev, buf, sizeof(buf));
		struct fuse_in_header *in = (struct fuse_in_header *)buf;
		void *arg = buf + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			_exit(0); /* unmounted or aborted */
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = arg;
			struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION, .max_readahead = 0,
						  .max_write = 4096, .max_background = 16, .congestion_threshold = 12};
			o.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor : FUSE_KERNEL_MINOR_VERSION;
			reply(dev, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o = {.nodeid = 2, .generation = 1};
			if (in->nodeid != FUSE_ROOT_ID || strcmp((char *)arg, "f") != 0) {
				reply(dev, in->unique, -ENOENT, NULL, 0);
				break;
			}
			attr_of(2, &o.attr);
			reply(dev, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o = {.attr_valid = 3600};
			attr_of(in->nodeid, &o.attr);
			reply(dev, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o = {.fh = 1};
			reply(dev, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ:
			if (!noted++)
				(void)!write(note, "R", 1);
			break; /* never answered */
		case FUSE_WRITE:
			if (!noted++)
				(void)!write(note, "W", 1);
			break; /* never answered */
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break; /* no reply expected (INTERRUPT: the request stays held) */
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
			reply(dev, in->unique, 0, NULL, 0);
			break;
		default:
			reply(dev, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

static int recv_one_fd(int sock)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	char c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	int fd = -1;

	if (recvmsg(sock, &m, 0) != 1 || CMSG_FIRSTHDR(&m) == NULL)
		return -1;
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	return fd;
}

static void send_one_fd(int sock, int fd)
{
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	char c = 'F';
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *h;

	memset(&u, 0, sizeof(u));
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	if (sendmsg(sock, &m, 0) != 1)
		die("sendmsg");
}

int main(int argc, char **argv)
{
	int lock = 0, opt, target, sv[2], note[2];
	uid_t uid = getuid();
	gid_t gid = getgid();
	pid_t server;
	char map[64], c;

	while ((opt = getopt(argc, argv, "+l")) != -1)
		if (opt == 'l')
			lock = 1;
		else
			return 2;
	if (optind + 2 > argc || strcmp(argv[optind + 1], "--") != 0 || optind + 3 > argc) {
		fprintf(stderr, "usage: fusehold [-l] FD -- PROG [ARGS...]\n");
		return 2;
	}
	target = atoi(argv[optind]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(note) < 0)
		die("socketpair");
	server = fork();
	if (server < 0)
		die("fork");
	if (server == 0) {
		int dev, f;
		char opts[128];

		close(sv[0]);
		close(note[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			die("unshare");
		put("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
		put("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
		put("/proc/self/gid_map", map);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			die("mount --make-rprivate /");
		dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
		if (dev < 0)
			die("/dev/fuse");
		snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", dev);
		if (mount("fusehold", "/tmp", "fuse.fusehold", MS_NOSUID | MS_NODEV, opts) < 0)
			die("mount fuse on /tmp");
		if (fork() == 0) {
			/* the opener, while the server below answers */
			f = open("/tmp/f", O_RDWR);
			if (f < 0)
				die("open /tmp/f");
			send_one_fd(sv[1], f);
			_exit(0);
		}
		serve(dev, note[1]);
	}
	close(sv[1]);
	close(note[1]);
	fprintf(stderr, "fusehold: server %d\n", (int)server);
	int f = recv_one_fd(sv[0]);
	if (f < 0)
		die("receiving the FUSE file");
	/* The first poll(2) asks the server (FUSE_POLL); its ENOSYS makes the
	 * kernel answer "writable" to everyone after that without asking, as
	 * for any file system without poll support. A poll from a uid not
	 * mapped in the namespace would get POLLERR instead. */
	{
		struct pollfd p = {.fd = f, .events = POLLOUT};
		(void)poll(&p, 1, 1000);
	}
	if (lock) {
		if (fork() == 0) {
			char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
			if (m == MAP_FAILED)
				die("mmap");
			(void)!write(f, m, 4096); /* holds the locks until the server dies */
			_exit(0);
		}
		/* the write is in its page fault once the server sees the READ */
		if (read(note[0], &c, 1) != 1)
			die("waiting for the locked write");
	}
	if (f != target && (dup2(f, target) < 0 || close(f) < 0))
		die("dup2");
	close(sv[0]);
	close(note[0]);
	execvp(argv[optind + 2], argv + optind + 2);
	die(argv[optind + 2]);
}
