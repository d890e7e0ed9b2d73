/* SPDX-License-Identifier: ISC */
/*
 * The client <-> sbx-helper interface. The helper is setuid root, so this
 * interface is narrow: argv and a few inherited file descriptors.
 *
 *   sbx-helper run --lang NAME --code-fd N --result-fd N --control-fd N
 *              [--policy NAME] [--name FILE] [--timeout MS] [--memory BYTES]
 *              [--pids N] [--session ID] [--attempt N] [--parent ID]
 *              [--input-fd N --input-name NAME]... [--work-fd N] [--dry-run]
 *              [--allow HOST:PORT]...
 *
 * --lang      language name from sbx.conf ([language.NAME]); the helper, not
 *             the client, resolves it to an interpreter command line.
 * --code-fd   readable fd holding the code (the client uses a memfd); read
 *             to EOF, at most SBX_CODE_MAX bytes.
 * --name      file name the code gets under /code ([A-Za-z0-9._-], 1..64,
 *             not starting with '.'); default "main" + the language suffix.
 * --result-fd AF_UNIX SOCK_STREAM socket. The helper writes frames, each
 *             an 8-byte header (u32 type, u32 length, both big-endian)
 *             followed by `length` payload bytes:
 *               SBX_FRAME_ARTIFACT: payload = artifact name; exactly one
 *                 fd (a sealed memfd holding the content) arrives as
 *                 SCM_RIGHTS with the header's first byte.
 *               SBX_FRAME_RESULT: payload = the result JSON (last frame).
 *             then closes it.
 * --control-fd read end of a pipe. A byte 'I' asks the helper to deliver
 *             SIGINT to the payload, 'T' SIGTERM; EOF (the client died)
 *             kills the sandbox.
 * --timeout/--memory/--pids: tighten the policy (milliseconds, bytes, count);
 *             a value above the policy's is refused.
 * --session   [A-Za-z0-9._-]{1,64}; --attempt 1..10; --parent a run id
 *             (32 lower-case hex digits) of the previous attempt.
 *
 * --input-fd  a memfd sealed with F_SEAL_WRITE|F_SEAL_SHRINK|F_SEAL_GROW,
 *             copied read-only to /in/NAME; each is followed by its
 *             --input-name ([A-Za-z0-9._-]{1,64}, no leading '.', unique);
 *             at most SBX_MAX_INPUTS pairs, sizes together at most the
 *             policy's input_size.
 * --work-fd   a directory fd (O_PATH will do) of the caller's session: a
 *             directory owned by the caller, not group/world-writable;
 *             mounted read-write at /work (open_tree + move_mount), where
 *             the payload starts.
 * --allow     HOST:PORT as in sbx.policy(5), up to 16: the run may reach only
 *             these entries of the policy's [network] allow list, each of
 *             which must be one of them (tighten-only, like the limits).
 * --dry-run   all checks, then "key: value" lines of the effective set-up
 *             on stdout and exit 0; nothing runs, nothing is recorded.
 *
 * The payload's stdout and stderr are streamed to the helper's fds 1 and 2
 * up to the policy's output cap. The helper's own errors are one line on
 * fd 2, prefixed "sbx-helper: ".
 *
 * Exit status: the payload's exit status; 124 wall or CPU timeout; 128+N
 * killed by signal N (137 for the memory limit); 125 sbx failed (usage,
 * policy, sandbox set-up, audit log).
 */
#ifndef SBX_PROTO_H
#define SBX_PROTO_H

#define SBX_FRAME_ARTIFACT 1u
#define SBX_FRAME_RESULT   2u
#define SBX_FRAME_MAX      (64u << 20) /* largest frame payload, bytes */

#define SBX_CODE_MAX       (4u << 20)  /* bytes of code accepted */
#define SBX_MAX_ATTEMPTS   10
#define SBX_MAX_INPUTS     32          /* --input-fd pairs accepted */

#define SBX_EXIT_TIMEOUT   124
#define SBX_EXIT_FAILURE   125
#define SBX_EXIT_CANNOT_EXEC 126
#define SBX_EXIT_NOT_FOUND 127

#endif
