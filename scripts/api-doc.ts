/**
 * Writes docs/api.md's route tables from the routes the server serves (src/server/route-doc.ts).
 * `npm run docs:api`; test/docs.test.ts fails while the page is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { apiRoutes } from '../src/server/api.ts';
import { routeTables, unpadded, withRouteTables } from '../src/server/route-doc.ts';

const path = new URL('../docs/api.md', import.meta.url);
const page = readFileSync(path, 'utf8');
const written = withRouteTables(page, routeTables(apiRoutes));
if (written === undefined) {
  console.error(
    'docs/api.md has no route markers: put the begin and end markers where the tables go',
  );
  process.exit(1);
}
// A page that differs only in a formatter's padding is current: it is left as it is.
const current = unpadded(written) === unpadded(page);
if (!current) writeFileSync(path, written);
console.log(
  current ? 'docs/api.md: the route tables were current' : 'docs/api.md: route tables written',
);
