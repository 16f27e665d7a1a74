import { queryCatalog } from '../../libs/analytics/catalog-view.ts';
import { explorerAssets } from './explore.ts';

let html: string | undefined;

/**
 * The chart page an embed token opens (`GET /embed/{embed_token}`): the explorer's chart and
 * table modules, and the catalog's names for people as a data block (JSON that is never run,
 * which the page's policy allows). Its script fetches `./answer` beside its own URL and nothing
 * else; every file it loads comes from this origin.
 */
export function embedPage(): string {
  if (html) return html;
  const base = explorerAssets().base;
  // `<` escaped: no text of the catalog can close the data block.
  const catalog = JSON.stringify(queryCatalog()).replaceAll('<', '\\u003c');
  html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="color-scheme" content="light dark">
    <meta name="referrer" content="no-referrer">
    <title>Cairn chart</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="${base}/uPlot.min.css">
    <link rel="stylesheet" href="${base}/explorer.css">
    <script src="${base}/uPlot.iife.min.js" defer></script>
    <script type="module" src="${base}/embed.js"></script>
    <script type="application/json" id="catalog">${catalog}</script>
  </head>
  <body class="embed">
    <main>
      <p id="status" class="status" role="status" aria-live="polite">Loading…</p>
      <figure id="chart" class="chart" hidden>
        <div id="chart-canvas"></div>
      </figure>
      <div id="table-wrap" class="table-wrap" hidden>
        <table id="table"></table>
      </div>
    </main>
  </body>
</html>
`;
  return html;
}
