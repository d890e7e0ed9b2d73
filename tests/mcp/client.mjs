// SPDX-License-Identifier: ISC
// Drives `sbx mcp` with the official MCP TypeScript SDK (a client nobody
// here wrote) and prints one line per check: "PASS NAME" or
// "FAIL NAME: why". tests/integration/19-mcp.t turns them into TAP.
//
// usage: node client.mjs [--with-files] [--with-session] [--with-live] [--with-workspace] -- CMD ARG...
//   --with-workspace: the server has --workspace $SBX_TEST_WORKSPACE (93-workspace-mcp.t)
//   CMD ARG... starts the server (the test runs it as sbxtest).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
const flags = new Set(argv.slice(0, sep));
const [command, ...args] = argv.slice(sep + 1);

function report(name, ok, why) {
  console.log(ok ? `PASS ${name}` : `FAIL ${name}: ${why}`);
}

async function check(name, fn) {
  try {
    const why = await fn();
    report(name, why === undefined || why === true, why);
  } catch (e) {
    report(name, false, e && e.stack ? e.stack.split('\n')[0] : String(e));
  }
}

const texts = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text);

const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
let negotiated = null;
transport.setProtocolVersion = (v) => { negotiated = v; };
const client = new Client({ name: 'sbx-test-client', version: '1.0.0' });

await check('initialize', async () => {
  await client.connect(transport);
  const info = client.getServerVersion();
  if (info?.name !== 'sbx') return `serverInfo ${JSON.stringify(info)}`;
  if (!client.getServerCapabilities()?.tools) return 'no tools capability';
  if (negotiated !== LATEST_PROTOCOL_VERSION) return `negotiated ${negotiated}, asked ${LATEST_PROTOCOL_VERSION}`;
});

await check('tools/list', async () => {
  const { tools } = await client.listTools();
  const t = tools.find((x) => x.name === 'execute_code');
  if (!t) return `tools ${JSON.stringify(tools.map((x) => x.name))}`;
  const inp = t.inputSchema, out = t.outputSchema;
  if (!inp?.required?.includes('code') || inp.properties.language?.default !== 'python')
    return `inputSchema ${JSON.stringify(inp)}`;
  for (const k of ['policy', 'timeout', 'files', 'session'])
    if (!inp.properties[k]) return `inputSchema lacks ${k}`;
  if (!out?.properties?.outcome || !out.required?.includes('outcome')) return `outputSchema ${JSON.stringify(out)}`;
});

// callTool validates structuredContent against the outputSchema itself.
await check('call ok', async () => {
  const r = await client.callTool({ name: 'execute_code', arguments: { code: 'print(6*7)' } });
  if (r.isError) return `isError ${JSON.stringify(r)}`;
  if (!texts(r).some((t) => t.includes('42'))) return `content ${JSON.stringify(r.content)}`;
  if (r.structuredContent?.outcome !== 'ok' || r.structuredContent.stdout !== '42\n')
    return `structuredContent ${JSON.stringify(r.structuredContent)}`;
});

await check('call error', async () => {
  const r = await client.callTool({ name: 'execute_code', arguments: { code: 'x = 1\nprint("before")\nx / 0\n' } });
  if (r.isError !== true) return `isError ${r.isError}`;
  const first = r.content[0];
  if (first?.type !== 'text' || !first.text.startsWith('Traceback') || !first.text.includes('ZeroDivisionError'))
    return `first block ${JSON.stringify(first)}`;
  if (!texts(r).some((t) => t.includes('before'))) return 'stdout missing';
  if (r.structuredContent?.outcome !== 'error' || r.structuredContent.traceback?.type !== 'ZeroDivisionError')
    return `structuredContent ${JSON.stringify(r.structuredContent)}`;
});

await check('image artifact', async () => {
  const code = [
    'import matplotlib', 'matplotlib.use("Agg")', 'import matplotlib.pyplot as plt',
    'plt.plot([1, 2, 3], [1, 4, 9])', 'plt.savefig("/out/plot.png")',
    'open("/out/notes.txt", "w").write("three points\\n")',
  ].join('\n');
  const r = await client.callTool({ name: 'execute_code', arguments: { code } });
  if (r.isError) return `isError ${JSON.stringify(r.content)}`;
  const img = r.content.find((c) => c.type === 'image');
  if (!img || img.mimeType !== 'image/png') return `content ${JSON.stringify(r.content.map((c) => c.type))}`;
  const png = Buffer.from(img.data, 'base64');
  if (png.toString('base64') !== img.data.replace(/\s/g, '')) return 'not valid base64';
  if (!png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'no PNG signature';
  const art = r.structuredContent.artifacts.find((a) => a.name === 'plot.png');
  if (!art || art.size !== png.length) return `artifact ${JSON.stringify(art)} vs ${png.length} bytes`;
  const link = r.content.find((c) => c.type === 'resource_link');
  if (!link || link.name !== 'notes.txt' || !link.uri.endsWith('/out/notes.txt') || link.mimeType !== 'text/plain')
    return `resource_link ${JSON.stringify(link)}`;
  const read = await client.readResource({ uri: link.uri });
  if (read.contents?.[0]?.text !== 'three points\n') return `resources/read ${JSON.stringify(read)}`;
  const list = await client.listResources();
  if (!list.resources.some((x) => x.uri === link.uri)) return `resources/list ${JSON.stringify(list)}`;
});

// 5 MB printed (past the run's 1M output cap): the model gets at most
// --max-text (32 KiB) of stdout with head, tail and a marker, the whole
// captured stdout as a resource link, and structuredContent bounded alike.
await check('bounded text', async () => {
  const code = 'for i in range(100000):\n    print("row %06d %s" % (i, "y" * 40))\nprint("LAST LINE")\n';
  const r = await client.callTool({ name: 'execute_code', arguments: { code } });
  if (r.isError) return `isError ${JSON.stringify(r.content).slice(0, 300)}`;
  const out = texts(r).find((t) => t.startsWith('stdout:'));
  if (!out || out.length > 33 * 1024) return `stdout block of ${out?.length} chars`;
  if (!out.includes('row 000000 ') || !out.trimEnd().endsWith('LAST LINE') || !/bytes not shown here \(--max-text 32768\)/.test(out))
    return `stdout block ${out.slice(0, 80)} ... ${out.slice(-200)}`;
  if (texts(r).join('').length > 40 * 1024) return `all text ${texts(r).join('').length} chars`;
  const sc = r.structuredContent;
  if (sc.stdout.length > 33 * 1024 || !sc.stdout.endsWith('LAST LINE\n') || sc.stdout_bytes !== 5200010)
    return `structuredContent stdout ${sc.stdout.length} chars, stdout_bytes ${sc.stdout_bytes}`;
  const link = r.content.find((c) => c.type === 'resource_link' && c.uri.endsWith('/stdout'));
  if (!link || link.mimeType !== 'text/plain') return `no stdout link: ${JSON.stringify(r.content.map((c) => c.uri ?? c.type))}`;
  const whole = (await client.readResource({ uri: link.uri })).contents?.[0]?.text ?? '';
  if (whole.length < 700000 || !whole.startsWith('row 000000 ') || !whole.endsWith('LAST LINE\n'))
    return `resource of ${whole.length} chars`;
});

await check('progress', async () => {
  const notes = [];
  const code = 'import time\nfor i in range(4):\n    print("tick", i, flush=True)\n    time.sleep(0.6)\n';
  const r = await client.callTool({ name: 'execute_code', arguments: { code } }, undefined,
    { onprogress: (p) => notes.push(p) });
  if (r.isError) return `isError ${JSON.stringify(r.content)}`;
  if (notes.length < 2) return `${notes.length} notifications`;
  for (let i = 1; i < notes.length; i++)
    if (!(notes[i].progress > notes[i - 1].progress)) return `not increasing: ${JSON.stringify(notes)}`;
  if (!notes.some((n) => /tick/.test(n.message ?? ''))) return `no output in messages: ${JSON.stringify(notes)}`;
});

await check('ping during a run', async () => {
  const t0 = Date.now();
  const call = client.callTool({ name: 'execute_code', arguments: { code: 'import time; time.sleep(2)' } });
  await client.ping();
  const pinged = Date.now() - t0;
  const r = await call;
  if (r.isError) return `isError ${JSON.stringify(r.content)}`;
  if (pinged > 1500) return `ping took ${pinged} ms`;
});

await check('timeout outcome', async () => {
  const r = await client.callTool({ name: 'execute_code', arguments: { code: 'import time; time.sleep(30)', timeout: 1 } });
  if (r.isError !== true || r.structuredContent?.outcome !== 'timeout') return JSON.stringify(r.structuredContent);
});

await check('malformed call', async () => {
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (e) {
    if (e instanceof McpError && e.code === ErrorCode.InvalidParams) return;
    return `threw ${e}`;
  }
  return 'no error';
});

await check('bad arguments', async () => {
  // 2025-11-25 (SEP-1303): a tool error the model can read
  const r = await client.callTool({ name: 'execute_code', arguments: { code: 'print(1)', timeout: 'soon' } });
  if (r.isError !== true || !texts(r).some((t) => t.startsWith('timeout:'))) return JSON.stringify(r);
});

if (flags.has('--with-files')) {
  await check('files', async () => {
    const r = await client.callTool({
      name: 'execute_code',
      arguments: {
        code: 'print(open("/in/data.csv").read().split()[1])\nprint(open("/in/blob.bin","rb").read())',
        files: [{ name: 'data.csv', content: 'a,b\n1,2\n' }, { name: 'blob.bin', content: 'AAEC', encoding: 'base64' }],
      },
    });
    if (r.isError || r.structuredContent.stdout !== "1,2\nb'\\x00\\x01\\x02'\n") return JSON.stringify(r.content);
  });
}
if (flags.has('--with-session')) {
  await check('session', async () => {
    // the session directory at /work outlives the call
    const w = await client.callTool({ name: 'execute_code',
      arguments: { code: 'open("/work/state.txt", "w").write("kept")', session: 'mcp-test-1' } });
    if (w.isError || w.structuredContent.session !== 'mcp-test-1') return JSON.stringify(w.structuredContent);
    const r = await client.callTool({ name: 'execute_code',
      arguments: { code: 'print(open("/work/state.txt").read())', session: 'mcp-test-1' } });
    if (r.isError || r.structuredContent.stdout !== 'kept\n') return JSON.stringify(r.content);
  });
}

if (flags.has('--with-live')) {
  await check('live session tools', async () => {
    // execute_code with a session keeps its interpreter (started on
    // first use); list, restart and stop it (82-live-mcp.t)
    const call = async (code, extra) => {
      const r = await client.callTool({ name: 'execute_code', arguments: { code, session: 'mcp-live-1', ...extra } });
      if (r.isError) throw new Error(JSON.stringify(r.content));
      return r.structuredContent;
    };
    const tool = async (name, args) => {
      const r = await client.callTool({ name, arguments: args });
      if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
      return r.structuredContent || JSON.parse(texts(r)[0]);
    };
    let r = await call('y = 7');
    if (r.cell !== 1 || r.session_state !== 'live') return `first call: ${JSON.stringify(r)}`;
    r = await call('print(y, open("/in/a.txt").read())', { files: [{ name: 'a.txt', content: 'z' }] });
    if (r.stdout !== '7 z\n' || r.cell !== 2) return `second call: ${JSON.stringify(r)}`;
    const l = await tool('sbx_session_list', {});
    const s = l.sessions.find((x) => x.name === 'mcp-live-1');
    if (!s || !s.live || s.live.cells !== 2 || !(s.live.memory_bytes > 0)) return `list: ${JSON.stringify(l)}`;
    const rs = await tool('sbx_session_restart', { name: 'mcp-live-1' });
    if (rs.session_state !== 'restarted') return `restart: ${JSON.stringify(rs)}`;
    r = await call('print("y" in globals())');
    if (r.stdout !== 'False\n' || r.cell !== 1 || r.session_state !== 'restarted')
      return `after restart: ${JSON.stringify(r)}`;
    const st = await tool('sbx_session_stop', { name: 'mcp-live-1' });
    if (st.session_state !== 'stopped') return `stop: ${JSON.stringify(st)}`;
    const again = await client.callTool({ name: 'sbx_session_stop', arguments: { name: 'mcp-live-1' } });
    if (again.isError !== true) return `second stop: ${JSON.stringify(again)}`;
  });
}

if (flags.has('--with-workspace')) {
  await check('workspace changeset and apply_changes', async () => {
    // execute_code's /work is the workspace copy-on-write: the result
    // (validated by the SDK against outputSchema) carries the changeset
    // and its diff, the disk is unchanged; apply_changes writes it
    const fs = await import('node:fs');
    const ws = process.env.SBX_TEST_WORKSPACE;
    const { tools } = await client.listTools();
    const ap = tools.find((x) => x.name === 'apply_changes');
    if (!ap || ap.annotations?.destructiveHint !== true || !ap.inputSchema?.required?.includes('changeset'))
      return `apply_changes in tools/list: ${JSON.stringify(ap)}`;
    const r = await client.callTool({ name: 'execute_code',
      arguments: { code: 'open("/work/sdk.txt", "w").write("SDK\\n")' } });
    const cs = r.structuredContent?.changeset;
    if (r.isError || !cs?.id || cs.entries !== 1 || cs.files?.[0]?.path !== 'sdk.txt' || !cs.diff.includes('+SDK'))
      return `execute_code: ${JSON.stringify(r.structuredContent)}`;
    if (!texts(r).some((t) => t.startsWith(`changeset ${cs.id}: 1 change(s)`))) return `content ${JSON.stringify(r.content)}`;
    if (fs.existsSync(`${ws}/sdk.txt`)) return 'the run wrote the workspace';
    const a = await client.callTool({ name: 'apply_changes', arguments: { changeset: cs.id } });
    if (a.isError || a.structuredContent?.result !== 'applied') return `apply_changes: ${JSON.stringify(a)}`;
    if (fs.readFileSync(`${ws}/sdk.txt`, 'utf8') !== 'SDK\n') return 'not applied on disk';
    // a bad argument: a tool error from 2025-11-25, a protocol error before
    let refused;
    try {
      refused = (await client.callTool({ name: 'apply_changes', arguments: { changeset: 'abc123' } })).isError === true;
    } catch (e) {
      refused = e instanceof McpError;
    }
    if (!refused) return 'an id no call proposed was not refused';
  });
}

await client.close();
