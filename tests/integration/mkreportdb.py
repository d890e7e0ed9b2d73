#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Build an audit log for `sbx-audit report` tests and measurements.

The rows carry the SQL columns a real log has, with placeholder blob, leaf,
chain and signature values: report reads only the columns, so the counts
can be set by hand (verify would reject this log, which is not the point).
The schema (tables and indexes) is copied from TEMPLATE, a log written by
the real recorder, so it cannot drift from the writer's.

  mkreportdb.py TEMPLATE OUT < RUNS     one run per input line:
      TIME USER POLICY LANGUAGE OUTCOME LIMIT CODE SESSION ATTEMPT [SECONDS]
    TIME is ISO 8601 UTC ("2026-01-05T10:00:00Z"); OUTCOME "-" writes a
    START without END (an incomplete run); LIMIT, SESSION "-" for none;
    CODE is any word (hashed into code_sha256); ATTEMPT a number. The END
    record is written SECONDS (default 1) after the START.
  mkreportdb.py --random N TEMPLATE OUT   N random runs over 30 days
    (2 records each), blobs of ~600 bytes like real ones.
"""
import datetime, hashlib, os, random, sqlite3, sys


def schema(template, out):
    if os.path.exists(out):
        os.unlink(out)
    t = sqlite3.connect("file:%s?mode=ro" % template, uri=True)
    rows = t.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                     " ORDER BY type = 'index'").fetchall()
    meta = t.execute("SELECT key, value FROM meta").fetchall()
    t.close()
    d = sqlite3.connect(out)
    d.execute("PRAGMA journal_mode=WAL")
    for _, name, sql in rows:
        # FTS5 makes its shadow tables itself with the virtual table
        if name.startswith("code_fts_"):
            continue
        d.execute(sql)
    d.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", meta)
    return d


COLS = ("seq, kind, run_id, time, realtime_ns, uid, user, host, policy, language,"
        " code_sha256, session, attempt, parent_id, outcome, exit_code, signal, limit_fired,"
        " wall_ms, cpu_ms, memory_peak_bytes, stdout_bytes, stderr_bytes, artifacts,"
        " blob, leaf, chain, sig, origin")
INSERT = "INSERT INTO records(%s) VALUES(%s)" % (COLS, ",".join("?" * 29))


def rows_of(seq, i, ns, user, policy, lang, outcome, limit, code, session, attempt, parent,
            blob_len=64, dur=1):
    run_id = hashlib.sha256(b"run%d" % i).hexdigest()[:32]
    code_sha = hashlib.sha256(code.encode()).hexdigest()
    uid = 1000 + (sum(user.encode()) % 1000)
    blob = os.urandom(blob_len) if blob_len > 64 else b"x" * blob_len
    fixed = [b"\0" * 32, b"\0" * 32, b"\0" * 64, "fixture"]

    def iso(t):
        return datetime.datetime.fromtimestamp(t / 1e9, datetime.timezone.utc) \
            .strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % ((t // 1000000) % 1000)
    out = [[seq, "start", run_id, iso(ns), ns, uid, user, "host", policy, lang, code_sha,
            session, attempt, parent, None, None, None, None, None, None, None, None, None,
            None, blob] + fixed]
    if outcome is not None:
        e = ns + dur * 1000000000
        out.append([seq + 1, "end", run_id, iso(e), e, uid, user, "host", policy, lang,
                    code_sha, session, attempt, parent, outcome,
                    0 if outcome == "ok" else 1, 0, limit, 100, 50, 1 << 20, 10, 0, "[]",
                    blob] + fixed)
    return run_id, out


def from_lines(d, lines):
    seq, last_in_session = 1, {}
    for i, line in enumerate(lines):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        when, user, policy, lang, outcome, limit, code, session, attempt = f[:9]
        dur = int(f[9]) if len(f) > 9 else 1
        ns = int(datetime.datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()) \
            * 1000000000
        session = None if session == "-" else session
        parent = last_in_session.get(session) if session else None
        run_id, rows = rows_of(seq, i, ns, user, policy, lang, None if outcome == "-" else outcome,
                               None if limit == "-" else limit, code, session, int(attempt),
                               parent, dur=dur)
        if session:
            last_in_session[session] = run_id
        d.executemany(INSERT, rows)
        seq += len(rows)


def randomly(d, n):
    rnd = random.Random(1)
    users = ["u%02d" % k for k in range(50)]
    policies = ["default", "strict", "net", "data"]
    langs = ["python", "sh", "node"]
    outcomes = ["ok"] * 8 + ["error", "timeout", "memory_limit", "output_limit"]
    limit_of = {"timeout": "wall", "memory_limit": "memory", "output_limit": "output"}
    start = 1767225600 * 10**9  # 2026-01-01
    seq, batch = 1, []
    for i in range(n):
        ns = start + i * (30 * 86400 * 10**9 // n)
        o = rnd.choice(outcomes) if i < n - 5 else None
        sess = "s%d" % (i // 3) if i % 10 < 3 else None
        _, rows = rows_of(seq, i, ns, rnd.choice(users), rnd.choice(policies), rnd.choice(langs),
                          o, limit_of.get(o), "code%d" % rnd.randrange(5000), sess, i % 3 + 1
                          if sess else 1, None, blob_len=600)
        seq += len(rows)
        batch.extend(rows)
        if len(batch) > 20000:
            d.executemany(INSERT, batch)
            batch = []
    d.executemany(INSERT, batch)


def main(argv):
    if argv[0] == "--random":
        d = schema(argv[2], argv[3])
        randomly(d, int(argv[1]))
    else:
        d = schema(argv[0], argv[1])
        from_lines(d, sys.stdin.read().splitlines())
    d.commit()
    d.close()


main(sys.argv[1:])
