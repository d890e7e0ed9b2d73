/* SPDX-License-Identifier: ISC */
/*
 * kobj: probes of kernel objects and interfaces that live outside a
 * sandbox's namespaces, run inside an sbx sandbox by the escape tests
 * (tests/escape/09, 10, 11). Each probe runs in a forked child, so a
 * seccomp kill (SIGSYS) is reported instead of ending the program.
 *
 *   kobj probe               one line per probe: "NAME RESULT", RESULT is
 *                            "ok" (the call worked), an errno name or
 *                            "sig:<SIG>" (the child was killed)
 *   kobj ipc-create KEY SEC  create SysV shm/msg/sem objects with KEY and a
 *                            POSIX message queue, print "ready", sleep SEC
 *   kobj ipc-check KEY       look the same objects up, one line each
 *   kobj fill MIB            fill /tmp, a SysV shm segment (left, not
 *                            removed) and a POSIX mqueue with MIB MiB each
 *   kobj caps                print "ids R E S caps PRM EFF" and whether
 *                            setuid(0) worked
 *   kobj lock PATH SEC       flock(LOCK_EX) PATH read-only, print "locked",
 *                            sleep SEC
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <linux/io_uring.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#define KEY_SPEC_SESSION_KEYRING (-3)
#define KEY_SPEC_USER_KEYRING (-4)
#define KEYCTL_GET_KEYRING_ID 0
#define X32_BIT 0x40000000L

static char *low; /* below 4 GiB, for the i386 ABI's 32-bit pointers */

static long int80(long nr, long a, long b, long c, long d, long e)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e) : "memory");
	return ret;
}

/* Run f in a child; its exit code 0 means the call worked, else errno. */
static void probe(const char *name, int (*f)(void))
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		errno = 0;
		int rc = f();
		_exit(rc < 0 ? (errno ? errno : 255) : 0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("%s sig:%s\n", name, sigabbrev_np(WTERMSIG(st)));
	else if (WEXITSTATUS(st) == 0)
		printf("%s ok\n", name);
	else
		printf("%s %s\n", name, WEXITSTATUS(st) == 255 ? "E?" : strerrorname_np(WEXITSTATUS(st)));
}

static int p_add_key_session(void)
{
	return (int)syscall(SYS_add_key, "user", "sbx-escape", "x", 1, KEY_SPEC_SESSION_KEYRING);
}
static int p_add_key_user(void)
{
	return (int)syscall(SYS_add_key, "user", "sbx-escape", "x", 1, KEY_SPEC_USER_KEYRING);
}
static int p_keyctl(void)
{
	return (int)syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1);
}
static int p_request_key(void)
{
	long r = syscall(SYS_request_key, "user", "sbx-escape", NULL, KEY_SPEC_SESSION_KEYRING);
	/* ENOKEY means the call was made and looked: it reached the keyrings */
	return r < 0 && errno == ENOKEY ? 0 : (int)r;
}
static int sock(int fam, int type)
{
	int s = socket(fam, type, 0);
	return s < 0 && errno != EAFNOSUPPORT && errno != EPERM && errno != EACCES ? 0 : s;
}
static int p_vsock(void) { return sock(AF_VSOCK, SOCK_STREAM); }
static int p_netlink(void) { return sock(AF_NETLINK, SOCK_RAW); }
static int p_packet(void) { return sock(AF_PACKET, SOCK_DGRAM); }
static int p_inet(void) { return sock(AF_INET, SOCK_STREAM); }
static int p_inet6(void) { return sock(AF_INET6, SOCK_DGRAM); }
static int p_alg(void) { return sock(AF_ALG, SOCK_SEQPACKET); }
static int p_unix(void) { return sock(AF_UNIX, SOCK_STREAM); }
static int p_io_uring(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	return (int)syscall(SYS_io_uring_setup, 4, &p);
}
static int p_userfaultfd(void) { return (int)syscall(SYS_userfaultfd, 1 /* UFFD_USER_MODE_ONLY */); }
static int p_bpf(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	return (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
}
static int p_perf(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}
static int p_i386_getpid(void)
{
	long r = int80(20, 0, 0, 0, 0, 0);
	return r < 0 ? (errno = (int)-r, -1) : 0;
}
static int p_i386_add_key(void)
{
	strcpy(low, "user");
	strcpy(low + 16, "sbx-escape");
	strcpy(low + 32, "x");
	long r = int80(286, (long)low, (long)(low + 16), (long)(low + 32), 1, KEY_SPEC_SESSION_KEYRING);
	return r < 0 ? (errno = (int)-r, -1) : 0;
}
static int p_i386_unshare(void)
{
	long r = int80(310, CLONE_NEWUSER, 0, 0, 0, 0);
	return r < 0 ? (errno = (int)-r, -1) : 0;
}
static int p_x32_getpid(void) { return (int)syscall(X32_BIT | SYS_getpid); }
static int p_x32_add_key(void)
{
	return (int)syscall(X32_BIT | 248, "user", "sbx-escape", "x", 1, KEY_SPEC_SESSION_KEYRING);
}
static int p_clone3_newuser(void)
{
	struct clone_args a;
	memset(&a, 0, sizeof(a));
	a.flags = CLONE_NEWUSER;
	a.exit_signal = SIGCHLD;
	long pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : 0;
}
static int p_clone_newuser(void)
{
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	return pid < 0 ? -1 : 0;
}
static int p_unshare_user(void) { return unshare(CLONE_NEWUSER); }
static int p_unshare_ipc(void) { return unshare(CLONE_NEWIPC); }
static void *thr(void *a) { return a; }
static int p_pthread(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		if ((errno = pthread_create(&t[i], NULL, thr, NULL)) != 0)
			return -1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int do_probe(void)
{
	static const struct { const char *n; int (*f)(void); } p[] = {
		{"add_key_session", p_add_key_session}, {"add_key_user", p_add_key_user},
		{"keyctl", p_keyctl}, {"request_key", p_request_key},
		{"socket_vsock", p_vsock}, {"socket_netlink", p_netlink}, {"socket_packet", p_packet},
		{"socket_inet", p_inet}, {"socket_inet6", p_inet6}, {"socket_alg", p_alg},
		{"socket_unix", p_unix},
		{"io_uring_setup", p_io_uring}, {"userfaultfd", p_userfaultfd}, {"bpf", p_bpf},
		{"perf_event_open", p_perf},
		{"i386_getpid", p_i386_getpid}, {"i386_add_key", p_i386_add_key},
		{"i386_unshare", p_i386_unshare},
		{"x32_getpid", p_x32_getpid}, {"x32_add_key", p_x32_add_key},
		{"clone3_newuser", p_clone3_newuser}, {"clone_newuser", p_clone_newuser},
		{"unshare_user", p_unshare_user}, {"unshare_ipc", p_unshare_ipc},
		{"pthread", p_pthread},
	};
	low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		probe(p[i].n, p[i].f);
	return 0;
}

static void mqname(char *buf, size_t n, long key)
{
	snprintf(buf, n, "/sbx-escape-%lx", key);
}

static int ipc_create(long key, int sec)
{
	struct mq_attr at = {.mq_maxmsg = 4, .mq_msgsize = 64};
	// cppcheck-suppress unusedStructMember ; msgsnd(2) reads t, the message type
	struct { long t; char m[8]; } msg = {1, "hello"};
	char name[64];
	int shm = shmget((key_t)key, 1 << 20, IPC_CREAT | 0666);
	int mq = msgget((key_t)key, IPC_CREAT | 0666);
	int sem = semget((key_t)key, 1, IPC_CREAT | 0666);
	mqd_t q;

	mqname(name, sizeof(name), key);
	q = mq_open(name, O_CREAT | O_RDWR, 0666, &at);
	if (mq >= 0)
		msgsnd(mq, &msg, sizeof(msg.m), 0);
	printf("created shm=%d msg=%d sem=%d mq=%d\n", shm, mq, sem, (int)q);
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)sec);
	return 0;
}

static void show(const char *what, int r)
{
	if (r >= 0)
		printf("%s ok\n", what);
	else
		printf("%s %s\n", what, strerrorname_np(errno));
}

static int ipc_check(long key)
{
	char name[64];

	show("shm", shmget((key_t)key, 0, 0));
	show("msg", msgget((key_t)key, 0));
	show("sem", semget((key_t)key, 0, 0));
	mqname(name, sizeof(name), key);
	show("mq", (int)mq_open(name, O_RDONLY));
	return 0;
}

static int fill(long mib)
{
	static char buf[1 << 20];
	struct mq_attr at = {.mq_maxmsg = 8, .mq_msgsize = 8192};
	int fd = open("/tmp/fill", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int id = shmget(IPC_PRIVATE, (size_t)mib << 20, IPC_CREAT | 0600);
	mqd_t q = mq_open("/sbx-fill", O_CREAT | O_RDWR, 0600, &at);
	char *p;

	memset(buf, 'f', sizeof(buf));
	for (long i = 0; fd >= 0 && i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	if (id >= 0 && (p = shmat(id, NULL, 0)) != (void *)-1)
		memset(p, 's', (size_t)mib << 20); /* not IPC_RMID: left for the namespace to free */
	for (int i = 0; q != (mqd_t)-1 && i < 8; i++)
		mq_send(q, buf, 8192, 0);
	printf("filled tmp=%d shm=%d mq=%d\n", fd >= 0, id >= 0, q != (mqd_t)-1);
	return 0;
}

static int caps(void)
{
	char line[256], prm[32] = "?", eff[32] = "?";
	uid_t r, e, s;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "CapPrm: %31s", prm);
		sscanf(line, "CapEff: %31s", eff);
	}
	getresuid(&r, &e, &s);
	printf("ids %u %u %u caps %s %s setuid0 %s\n", (unsigned)r, (unsigned)e, (unsigned)s, prm, eff,
	       setuid(0) == 0 ? "ok" : "refused");
	return 0;
}

static int lock(const char *path, int sec)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		printf("lock %s\n", strerrorname_np(errno));
		return 1;
	}
	printf("locked\n");
	fflush(stdout);
	sleep((unsigned)sec);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "probe") == 0)
		return do_probe();
	if (argc >= 4 && strcmp(argv[1], "ipc-create") == 0)
		return ipc_create(strtol(argv[2], NULL, 0), atoi(argv[3]));
	if (argc >= 3 && strcmp(argv[1], "ipc-check") == 0)
		return ipc_check(strtol(argv[2], NULL, 0));
	if (argc >= 3 && strcmp(argv[1], "fill") == 0)
		return fill(atol(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "caps") == 0)
		return caps();
	if (argc >= 4 && strcmp(argv[1], "lock") == 0)
		return lock(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: kobj probe|ipc-create KEY SEC|ipc-check KEY|fill MIB|caps|lock PATH SEC\n");
	return 2;
}
