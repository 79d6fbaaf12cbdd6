/**
 * @opscan/client as a user gets it: `npm pack` of client/, the tarball installed into an empty
 * project (nothing else comes with it), a sample calling every client method compiled there with
 * `tsc --strict` against the package's declarations and TypeScript's ES lib only (no DOM, no Node
 * types), a deliberately wrong call rejected, then the sample (ESM and CommonJS) and a tRPC client
 * typed by `@opscan/client/trpc` run against a running opscan. Uses the npm registry (for
 * `@trpc/client` and `@trpc/server` only) and a private npm cache; removes what it made.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '../../server/app.js';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import { endpoints } from '../../server/endpoints/index.js';
import { sampleInputs } from '../server/support/sampleInputs.js';
import { useIndexedDevnet } from '../server/support/indexedDevnet.js';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const clientDir = path.join(repoDir, 'client');
const tsc = path.join(repoDir, 'node_modules', 'typescript', 'bin', 'tsc');
const trpcVersion = (JSON.parse(readFileSync(path.join(repoDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
  .dependencies['@trpc/server']!;

type Run = { code: number; stdout: string; stderr: string };

/** Runs a command to its end (never left running); npm's own variables of an enclosing `npm test` are not passed on. */
function run(file: string, args: string[], cwd: string, cache: string): Promise<Run> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')));
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd, env: { ...env, npm_config_cache: cache, npm_config_audit: 'false', npm_config_fund: 'false' }, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

function ok(result: Run, what: string): string {
  expect(result.code, `${what}:\n${result.stdout}\n${result.stderr}`).to.equal(0);
  return result.stdout;
}

/** Strings that are whole numbers become numbers, as a TypeScript user would write them (both are accepted). */
const literal = (input: Record<string, string>) =>
  JSON.stringify(Object.fromEntries(Object.entries(input).map(([k, v]) => [k, /^\d+$/.test(v) && k !== 'network' ? Number(v) : v])));

const STRICT = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false, outDir: 'out' };

describe('@opscan/client packed, installed into an empty project, compiled with tsc --strict and run', function () {
  // npm pack builds (tsc twice), npm install reaches the registry, tsc compiles three projects.
  this.timeout(300_000);
  const d = useIndexedDevnet({ ops: 60, seed: 29 });
  let server: Server;
  let url: string;
  let work: string;
  let project: string;
  let cache: string;

  before(async () => {
    server = createServer(createApp(d.deps));
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    work = await mkdtemp(path.join(tmpdir(), 'opscan-client-package-'));
    cache = path.join(work, 'npm-cache');
    project = path.join(work, 'project');
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (work) await rm(work, { recursive: true, force: true });
  });

  let tarball: string;

  it('packs dist (ESM, CommonJS, declarations) and package.json, with no dependency', async () => {
    const [packed] = JSON.parse(
      ok(await run('npm', ['pack', '--json', '--pack-destination', work], clientDir, cache), 'npm pack'),
    ) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    tarball = path.join(work, packed!.filename);
    const files = packed!.files.map((f) => f.path);
    expect(files).to.include.members([
      'package.json',
      'LICENSE',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/trpc.d.ts',
    ]);
    expect(files.filter((f) => !/^(package\.json|README\.md|LICENSE|dist\/(esm|cjs)\/[\w.]+)$/.test(f))).to.deep.equal([]);
    const manifest = JSON.parse(await readFile(path.join(clientDir, 'package.json'), 'utf8')) as Record<string, unknown>;
    // A company can adopt it: MIT, its text in the tarball.
    expect(manifest.license).to.equal('MIT');
    expect(manifest).to.not.have.any.keys('dependencies', 'optionalDependencies', 'bundleDependencies');
  });

  it('installs alone into an empty project, pulling in nothing else', async () => {
    await mkdir(project);
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'sample', private: true, type: 'module' }));
    ok(await run('npm', ['install', tarball], project, cache), 'npm install tarball');
    expect((await readdir(path.join(project, 'node_modules'))).filter((f) => !f.startsWith('.'))).to.deep.equal(['@opscan']);
    expect(await readdir(path.join(project, 'node_modules', '@opscan'))).to.deep.equal(['client']);
  });

  it('compiles a sample using every client method with tsc --strict (ES lib only), and rejects a wrong call', async () => {
    const samples = sampleInputs(d.truth);
    const op = d.truth.userOps.find((o) => o.paymaster)!;
    const queries = (Object.entries(endpoints) as Array<[string, Endpoint]>).filter(([, e]) => e.kind !== 'mutation').map(([name]) => name);
    const config = `const opscan = createOpscanClient({ url: ${JSON.stringify(url)}, apiKey: ${JSON.stringify(d.key)} });`;
    const sample = `import { createOpscanClient, OpscanError, type OutputOf } from '@opscan/client';

// Only TypeScript's ES lib is in this project: the client's declarations need nothing else.
declare const console: { log(text: string): void };
${config}
const answers: Record<string, unknown> = {};
async function record(name: string, call: Promise<unknown>): Promise<void> {
  try {
    answers[name] = await call;
  } catch (error) {
    if (!(error instanceof OpscanError)) throw error;
    answers[name] = { error: { status: error.status, code: error.code, message: error.message } };
  }
}

// Every /v0 query, with its typed parameters.
${queries.map((name) => `await record('${name}', opscan.v0.${name}(${literal(samples[name]!)}));`).join('\n')}

// Typed answers.
const latest: OutputOf<'getLatestUserOps'> = await opscan.v0.getLatestUserOps({ network: 'devnet', first: 2 });
const latestHash: string | undefined = latest.userOps[0]?.userOpHash;
answers.latestHash = latestHash;

// The subgraph client's three operations.
const meta = await opscan.getNetworkStatus('devnet');
const block: number = meta._meta.block.number;
answers.subgraphBlock = block;
answers.subgraphUserOp = (await opscan.getUserOp('devnet', ${JSON.stringify(op.userOpHash)})).userOps.map((o) => o.userOpHash);
answers.subgraphActivity = (await opscan.getAddressActivity('devnet', ${JSON.stringify(op.sender)}, 5, 0, 0, 0)).accountDetail.userOps.length;

// The webhook mutations.
const created = await opscan.v0.createWebhook({
  webhookUrl: 'https://93.184.215.14/hooks/opscan',
  filter: 'PAYMASTER',
  identifier: ${JSON.stringify(op.paymaster)},
  chainId: ${JSON.stringify(String(d.truth.chainId))},
  apiName: 'package-test',
});
const secret: string = created.webhook.secret;
answers.created = secret.startsWith('whsec_');
answers.listed = (await opscan.v0.listWebhooks({})).webhooks.some((w) => w.id === created.webhook.id);
answers.deliveries = Array.isArray((await opscan.v0.getWebhookDeliveries({ id: created.webhook.id })).deliveries);
await record('testWebhook', opscan.v0.testWebhook({ id: 'wh_00000000000000000000000000' }));
await record('replayWebhookDelivery', opscan.v0.replayWebhookDelivery({ id: 'msg_01JDF3Q8M4X2ZK7Y9T0V5W6R1S' }));
await record('deleteWebhook', opscan.v0.deleteWebhook({ id: created.webhook.id }));

// A query of our own over GraphQL, typed by the caller.
const own = await opscan.graphql<{ userOps: Array<{ userOpHash: string }> }>('devnet', '{ userOps(first: 1) { userOpHash } }');
answers.graphql = own.userOps.length;

// Every failure is an OpscanError with a kind (a closed port: network).
await createOpscanClient({ url: 'http://127.0.0.1:1', apiKey: 'k', timeoutMs: 5000 }).v0.getNetworks({}).catch((error: unknown) => {
  if (error instanceof OpscanError) answers.unreachable = error.kind satisfies 'network' | 'timeout' | 'aborted' | 'http' | 'api';
});

// What the types refuse (compiled, never run): a network the deployment does not serve, a page over 100, a fifth filter.
export function typeChecks(): unknown[] {
  const devnetOnly = createOpscanClient<'devnet'>({ url: '', apiKey: '' });
  return [
    devnetOnly.v0.getLatestUserOps({ network: 'devnet', first: 100 }),
    devnetOnly.getNetworkStatus('devnet'),
    // @ts-expect-error -- not one of the deployment's networks
    devnetOnly.v0.getLatestUserOps({ network: 'atlantis' }),
    // @ts-expect-error -- not one of the deployment's networks
    devnetOnly.getUserOp('atlantis', '0x'),
    // @ts-expect-error -- a page holds 1 to 100
    devnetOnly.v0.getLatestUserOps({ first: 101 }),
    // @ts-expect-error -- 1 to 366 days
    devnetOnly.v0.getDailyMetrics({ noOfDays: 0 }),
    // @ts-expect-error -- ADDRESS, FACTORY, BUNDLER or PAYMASTER
    devnetOnly.v0.createWebhook({ webhookUrl: '', filter: 'SENDER', identifier: '', chainId: 1, apiName: '' }),
  ];
}
console.log(JSON.stringify(answers));
`;
    const commonjs = `import { createOpscanClient } from '@opscan/client';

declare const console: { log(text: string): void };
${config}
void opscan.v0.getNetworkStatus({ network: 'devnet' }).then((status) => console.log(JSON.stringify(status.indexedBlock)));
`;
    const trpc = `import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { AppErrorCode, AppRouter } from '@opscan/client/trpc';

const trpc = createTRPCClient<AppRouter>({
  links: [httpLink({ url: ${JSON.stringify(`${url}/trpc`)}, headers: { 'x-api-key': ${JSON.stringify(d.key)} } })],
});
const status = await trpc.getNetworkStatus.query({ network: 'devnet' });
const indexed: number = status.indexedBlock;
const jiffyscan = await trpc.jiffyscan.getUserOp.query({ hash: ${JSON.stringify(op.userOpHash)} });

// A refusal's data carries opscan's code and the parameter at fault, typed.
const isOpscanError = (error: unknown): error is TRPCClientError<AppRouter> => error instanceof TRPCClientError;
let refusal: { code?: AppErrorCode; param?: string; httpStatus?: number } = {};
try {
  await trpc.getLatestUserOps.query({ network: 'atlantis' });
} catch (error) {
  if (!isOpscanError(error)) throw error;
  refusal = { code: error.data?.code, param: error.data?.param, httpStatus: error.data?.httpStatus };
  // @ts-expect-error -- the parameter is \`param\`, as in the REST error body
  void error.data?.parameter;
}
console.log(JSON.stringify({ indexed, jiffyscan: jiffyscan.userOps.map((o) => o.userOpHash), refusal }));
`;
    await writeFile(path.join(project, 'sample.ts'), sample);
    await writeFile(path.join(project, 'commonjs.cts'), commonjs);
    await writeFile(path.join(project, 'trpc.ts'), trpc);
    await writeFile(
      path.join(project, 'wrong.ts'),
      `import { createOpscanClient } from '@opscan/client';\n${config}\nawait opscan.v0.getUserOp({ hash: 42 });\n`,
    );
    const tsconfig = (files: string[], lib: string[]) => JSON.stringify({ compilerOptions: { ...STRICT, lib, types: [] }, files });
    await writeFile(path.join(project, 'tsconfig.json'), tsconfig(['sample.ts', 'commonjs.cts'], ['ES2022']));
    // tRPC's own declarations speak of fetch, AbortSignal and Disposable: libs it requires, not the client.
    await writeFile(path.join(project, 'tsconfig.trpc.json'), tsconfig(['trpc.ts'], ['ES2022', 'DOM', 'ESNext.Disposable']));
    await writeFile(path.join(project, 'tsconfig.wrong.json'), tsconfig(['wrong.ts'], ['ES2022']));

    ok(await run(process.execPath, [tsc, '-p', 'tsconfig.json'], project, cache), 'tsc --strict on the sample');
    const wrong = await run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json', '--noEmit'], project, cache);
    expect(wrong.code).to.not.equal(0);
    expect(wrong.stdout).to.match(/wrong\.ts\(\d+,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);

    ok(await run('npm', ['install', `@trpc/client@${trpcVersion}`, `@trpc/server@${trpcVersion}`], project, cache), 'npm install @trpc/*');
    ok(await run(process.execPath, [tsc, '-p', 'tsconfig.trpc.json'], project, cache), 'tsc --strict on the tRPC sample');
  });

  it('runs the sample against a running opscan: each answer is what REST answers', async () => {
    const answers = JSON.parse(ok(await run(process.execPath, ['out/sample.js'], project, cache), 'the sample')) as Record<string, unknown>;
    const samples = sampleInputs(d.truth);
    for (const [name, endpoint] of Object.entries(endpoints) as Array<[string, Endpoint]>) {
      if (endpoint.kind === 'mutation') continue;
      const rest = await d.get(name, samples[name]);
      const expected =
        rest.status === 200 ? rest.body : { error: { status: rest.status, code: rest.body.code, message: rest.body.message } };
      expect(answers[name], name).to.deep.equal(expected);
    }
    const op = d.truth.userOps.find((o) => o.paymaster)!;
    expect(answers.subgraphUserOp).to.deep.equal([op.userOpHash]);
    expect(answers.subgraphActivity).to.be.above(0);
    expect(answers.subgraphBlock).to.be.above(0);
    expect(answers.latestHash).to.be.a('string');
    expect([answers.graphql, answers.unreachable]).to.deep.equal([1, 'network']);
    expect([answers.created, answers.listed, answers.deliveries, answers.deleteWebhook]).to.deep.equal([
      true,
      true,
      true,
      { success: true },
    ]);
    expect(answers.testWebhook).to.nested.include({ 'error.status': 404 });
    expect(answers.replayWebhookDelivery).to.nested.include({ 'error.status': 404 });

    const status = (await d.get('getNetworkStatus', { network: 'devnet' })).body as { indexedBlock: number };
    expect(JSON.parse(ok(await run(process.execPath, ['out/commonjs.cjs'], project, cache), 'the CommonJS sample'))).to.equal(
      status.indexedBlock,
    );
    const viaTrpc = JSON.parse(ok(await run(process.execPath, ['out/trpc.js'], project, cache), 'the tRPC sample')) as object;
    expect(viaTrpc).to.deep.equal({
      indexed: status.indexedBlock,
      jiffyscan: [op.userOpHash],
      refusal: { code: 'BAD_REQUEST', param: 'network', httpStatus: 400 },
    });
  });
});
