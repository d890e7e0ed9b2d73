// SPDX-License-Identifier: ISC
// One official MCP TypeScript SDK client of an older protocol revision
// against `sbx mcp`: connect (the SDK offers its LATEST_PROTOCOL_VERSION
// and refuses an answer it does not support), list the tools, run
// print(6*7), and print one line per check, "PASS NAME" or
// "FAIL NAME: why", for tests/integration/56-mcp-versions.t.
//
// usage: node client.mjs SDK-PACKAGE -- CMD ARG...
const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
const pkg = argv[0];
const [command, ...args] = argv.slice(sep + 1);
const { Client } = await import(`${pkg}/client/index.js`);
const { StdioClientTransport } = await import(`${pkg}/client/stdio.js`);
const { LATEST_PROTOCOL_VERSION } = await import(`${pkg}/types.js`);

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

const transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
const client = new Client({ name: `sbx-test-${LATEST_PROTOCOL_VERSION}`, version: '1.0.0' }, { capabilities: {} });
let connected = false;
await check('connect', async () => { await client.connect(transport); connected = true; });
if (!connected) process.exit(0);
console.log(`INFO offered ${LATEST_PROTOCOL_VERSION}`);
await check('tools', async () => {
  const t = (await client.listTools()).tools;
  // execute_code, then the live-session tools (tests/integration/82-live-mcp.t)
  const names = t.map((x) => x.name).join(' ');
  if (names !== 'execute_code sbx_session_list sbx_session_stop sbx_session_restart') return JSON.stringify(names);
  if (t.some((x) => x.outputSchema !== undefined && x.name !== 'execute_code')) return 'outputSchema on a session tool';
  if (t[0].outputSchema !== undefined) return 'outputSchema sent to a client before 2025-06-18';
});
await check('call', async () => {
  const r = await client.callTool({ name: 'execute_code', arguments: { code: 'print(6*7)' } });
  if (r.isError) return `isError ${JSON.stringify(r)}`;
  if (r.structuredContent !== undefined) return 'structuredContent sent to a client before 2025-06-18';
  const texts = r.content.filter((c) => c.type === 'text').map((c) => c.text);
  if (!texts.includes('stdout:\n42\n') && !texts.some((x) => x.includes('42'))) return JSON.stringify(texts);
  const res = JSON.parse(texts[texts.length - 1]);
  if (res.outcome !== 'ok' || res.stdout !== '42\n' || !res.schema_version) return `last text block ${texts[texts.length - 1]}`;
});
await client.close();
