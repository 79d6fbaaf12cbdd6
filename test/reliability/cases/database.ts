/**
 * PostgreSQL paused (SIGSTOP of every process of the server), stopped (`pg_ctl stop -m fast`) and
 * killed (SIGKILL of the postmaster), each PLAN.databaseFaults times, under the running web,
 * indexer and dispatcher with the chain producing and clients reading the API. The product runs on
 * a PostgreSQL server the case starts (the shared one is never touched), with its defaults.
 *
 * After each: every process ready again (none hangs for good), the API equal to the chain and every
 * webhook event delivered. The API's answers to the requests sent during the outage are counted: a
 * JSON 503 with Retry-After is the promise (spec/api); any other 5xx, a non-JSON answer, no answer,
 * or one slower than PAUSED_ANSWER_BOUND_MS is a broken promise, noted (⚠️).
 */
import { startContinuous } from '../../../devnet/index.js';
import { startApiLoad, statusSummary, type Answer } from '../../faults/support/apiLoad.js';
import { waitUntil } from '../../faults/support/childProcess.js';
import { postgresServerBinaries } from '../../helpers/pgReplica.js';
import { httpStatus } from '../../faults/support/productOnDatabase.js';
import { PLAN, ms, sleep, type Deployment, type Matrix, type Verdict } from '../judging.js';

const PAUSE_MS = 10_000;
const DOWN_MS = 5_000;
/** The web's statement timeout (5 s), the grace after it (1 s), and room for a busy machine. */
const PAUSED_ANSWER_BOUND_MS = 8_000;

type Fault = { scenario: string; injected: string; outage: (d: Deployment) => Promise<void> };

const FAULTS: Fault[] = [
  {
    scenario: 'paused (SIGSTOP)',
    injected: `${PAUSE_MS / 1000} s paused`,
    async outage(d) {
      d.server!.pause();
      await sleep(PAUSE_MS);
      d.server!.resume();
    },
  },
  {
    scenario: 'stopped (pg_ctl stop -m fast)',
    injected: `${DOWN_MS / 1000} s down`,
    async outage(d) {
      await d.server!.shutdown();
      await sleep(DOWN_MS);
      await d.server!.start();
    },
  },
  {
    scenario: 'killed (SIGKILL of the postmaster)',
    injected: `${DOWN_MS / 1000} s down`,
    async outage(d) {
      await d.server!.killPostmaster();
      await sleep(DOWN_MS);
      await d.server!.start();
    },
  },
];

export function databaseCases(matrix: Matrix): void {
  it(`PostgreSQL paused, stopped and killed, ${PLAN.databaseFaults} of each, under load with the chain producing`, async function () {
    if (!postgresServerBinaries()) this.skip();
    const d = await matrix.deploy('reliability database', { privateServer: true });
    const sample = d.devnet.truth.userOps.filter((_, i) => i % 20 === 0).map((o) => `/v0/getUserOp?hash=${o.userOpHash}`);
    for (const fault of FAULTS) {
      const during: Answer[] = [];
      const readyAfter: number[] = [];
      const verdicts: Verdict[] = [];
      for (let n = 0; n < PLAN.databaseFaults && verdicts.every((v) => v.ok); n++) {
        const load = startApiLoad({
          baseUrl: d.product.webUrl,
          key: d.product.key,
          // The last path is never cached: it reaches the database whatever the cache holds.
          paths: ['/v0/getLatestUserOps?network=devnet&first=10', ...sample, '/v0/getLatestUserOps?network=devnet&first=1&skip={n}'],
        });
        const traffic = startContinuous(d.devnet, { intervalMs: 700, opsPerTick: 2, seed: 900 + d.devnet.truth.userOps.length });
        await sleep(2_000);
        const downAt = Date.now();
        await fault.outage(d);
        const upAt = Date.now();
        // No process hangs for good: each answers its /readyz 200 again.
        await waitUntil(
          'web, indexer and dispatcher ready again',
          async () =>
            (await Promise.all((['web', 'indexer', 'dispatcher'] as const).map((p) => httpStatus(d.product.readyz[p])))).every(
              (s) => s === 200,
            ),
          60_000,
        );
        readyAfter.push(Date.now() - upAt);
        await traffic.stop();
        const answers = await load.stop();
        during.push(...answers.filter((a) => a.at - a.ms >= downAt && a.at - a.ms <= upAt));
        verdicts.push(await d.judge());
      }
      const broken = during.filter(
        (a) => a.status === 0 || !a.json || (a.status >= 500 && !(a.status === 503 && a.retryAfter)) || a.ms >= PAUSED_ANSWER_BOUND_MS,
      );
      const unavailable = during.filter((a) => a.status === 503).length;
      await matrix.record(d, {
        group: 'database',
        scenario: `${fault.scenario} ×${verdicts.length}`,
        figures: [
          `${fault.injected} each`,
          `${during.length} requests sent during the outages: ${statusSummary(during)}, JSON 503 ×${unavailable}, longest answer ${ms(Math.max(0, ...during.map((a) => a.ms)))}`,
          `all three processes ready ${ms(Math.max(...readyAfter))} at most after the server was back`,
        ],
        note:
          broken.length > 0
            ? `${broken.length} answers during the outage were not a JSON 503 with Retry-After within ${ms(PAUSED_ANSWER_BOUND_MS)}, e.g. ${broken[0]!.status} ${broken[0]!.path} after ${ms(broken[0]!.ms)}`
            : null,
        verdicts,
      });
    }
  });
}
