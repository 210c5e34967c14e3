import express, { type Response } from 'express';
import { etagOfText } from './conditional';

const JSON_TYPE = 'application/json; charset=utf-8';
const expressJson = express.response.json;

/**
 * `res.json` for an app's responses, answering what Express's answers (status, headers, body,
 * strong ETag, 304 to a current If-None-Match, HEAD without a body) with less work per response.
 *
 * Express sets `application/json` through mime-types, which adds the charset; then res.send
 * parses that header again to set the charset once more, and turns the string into a Buffer for
 * its ETag. A Buffer body leaves Node's http to send the head and the body as two chunks of one
 * `writev`, where a string body is joined to the head and sent by one `write`: on the single read
 * that difference cost 8 µs of the kernel's time per response (issue 25, `BENCH_SIDE=baseline
 * pnpm bench:profile` against desk's profile). Here the body stays the string it was serialised
 * to, its length and strong ETag (the etag package's, as Express's `strong` setting makes them)
 * are taken from it, and it is handed to `res.end` with its head.
 *
 * Express's own path is taken where this one would need its other rules: a type already set (a
 * problem document), no JSON text (`undefined`), an app whose `etag` setting is not `strong`, a
 * Transfer-Encoding, or a status without a body (204, 205, 304).
 */
export function leanJson(response: Response): void {
  response.json = function json(this: Response, value: unknown) {
    if (this.hasHeader('Content-Type') || this.hasHeader('Transfer-Encoding') || this.app.get('etag') !== 'strong') return expressJson.call(this, value);
    const status = this.statusCode;
    if (status === 204 || status === 205 || status === 304) return expressJson.call(this, value);
    const text = JSON.stringify(value);
    if (text === undefined) return expressJson.call(this, value);
    this.setHeader('Content-Type', JSON_TYPE);
    this.setHeader('Content-Length', String(Buffer.byteLength(text, 'utf8')));
    if (!this.hasHeader('ETag')) this.setHeader('ETag', etagOfText(text));
    // req.fresh: a GET or HEAD whose If-None-Match (or If-Modified-Since) the response satisfies.
    if (this.req.fresh) {
      this.statusCode = 304;
      this.removeHeader('Content-Type');
      this.removeHeader('Content-Length');
      this.end();
      return this;
    }
    if (this.req.method === 'HEAD') this.end();
    else this.end(text, 'utf8');
    return this;
  };
}
