/**
 * `GET /metrics`: the server's Prometheus metrics in the text exposition
 * format. With `METRICS_TOKEN` set, only a request carrying
 * `Authorization: Bearer <METRICS_TOKEN>` gets them (401 otherwise); unset,
 * anyone who can reach the port may scrape, as with the probes. With several
 * workers the answer covers all of them; when their metrics cannot be had in
 * time (a worker died mid-scrape, or is still starting), 503 and a short text.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ClusterMetricsUnavailable } from '../metrics/clusterScrape.ts';
import type { ServerMetrics } from '../metrics/serverMetrics.ts';

/** Whether `url` is the metrics path (checked on every request, so no parsing). */
export function isMetrics(url: string | undefined): boolean {
  return url !== undefined && url.split('?')[0] === '/metrics';
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether `header` is `Bearer <token>`, compared in constant time. */
function carries(header: string | undefined, token: string): boolean {
  const presented = /^Bearer (\S+)$/i.exec(header?.trim() ?? '')?.[1];
  // Digests have one length, so the comparison does not reveal the token's.
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}

/** Answers a metrics request (`isMetrics` said it is one); `token` null: no token needed. */
export async function answerMetrics(req: IncomingMessage, res: ServerResponse, metrics: ServerMetrics, token: string | null): Promise<void> {
  const json = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...json, allow: 'GET, HEAD' });
    res.end(JSON.stringify({ errors: [{ message: 'Metrics are read with GET.', extensions: { code: 'METHOD_NOT_ALLOWED' } }] }));
    return;
  }
  if (token !== null && !carries(req.headers.authorization, token)) {
    res.writeHead(401, { ...json, 'www-authenticate': 'Bearer' });
    res.end(JSON.stringify({ errors: [{ message: 'Metrics need `Authorization: Bearer <METRICS_TOKEN>`.', extensions: { code: 'UNAUTHENTICATED' } }] }));
    return;
  }
  try {
    const { contentType, text } = await metrics.render();
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
  } catch (error) {
    if (error instanceof ClusterMetricsUnavailable) {
      // Totals missing a worker would read as counters going backwards: no answer rather than part of one.
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : `The metrics of every worker could not be collected: ${error.message}\n`);
      return;
    }
    res.writeHead(500, json);
    res.end(JSON.stringify({ errors: [{ message: 'The metrics could not be collected.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
  }
}
