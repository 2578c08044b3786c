// Checks a built pkgdown site the way a reader sees it, for .ci/site. Run with node, with
// playwright-core on NODE_PATH:
//   node site-check.js SITE_DIR BASE_URL SHOT_DIR PAGE... [--expect-image PAGE=SRC]...
// SITE_DIR is the site on disk, BASE_URL where it is served (http://127.0.0.1:PORT/), SHOT_DIR
// where the screenshots go, PAGE a path under the site (index.html, reference/index.html, ...).
// 1. Offline: no HTML or CSS file of the site refers to a resource (script, style sheet, image,
//    font, frame...) on another host or in a file:// URL. Links a reader may follow (<a href>)
//    are not resources and are allowed.
// 2. Each PAGE is opened in headless Chromium (/usr/bin/chromium, a new empty profile) and fails
//    on: a console message of level error, an uncaught exception, a failed request or one
//    answered with HTTP 400 or more, a request to any other origin than BASE_URL (blocked), and
//    an <img> that did not load (naturalWidth 0). A full-page screenshot of each goes to
//    SHOT_DIR/<page with / as ->.png. On the home page the search box is used once (the index
//    is fetched, Fuse and autocomplete run) and must suggest something for "memory".
// --expect-image PAGE=SRC: PAGE must show (loaded, naturalWidth > 0) an image whose src ends
// with SRC. Exits 1 if anything failed, after printing every finding.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
const expected = [];
const positional = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--expect-image') {
    const [page, src] = args[++i].split('=');
    expected.push({ page, src });
  } else {
    positional.push(args[i]);
  }
}
const [siteDir, baseUrl, shotDir, ...pages] = positional;
if (!siteDir || !baseUrl || !shotDir || pages.length === 0) {
  console.error('usage: node site-check.js SITE_DIR BASE_URL SHOT_DIR PAGE... ' +
    '[--expect-image PAGE=SRC]');
  process.exit(2);
}
const origin = new URL(baseUrl).origin;
const findings = [];
const fail = (where, what) => findings.push(`${where}: ${what}`);

// 1. Static scan. Tags whose src/href/srcset/data/poster the browser fetches by itself.
const external = /^\s*(?:(?:https?:)?\/\/|file:)/i;
function scanHtml(file, text) {
  const tags = text.match(/<(?:script|link|img|iframe|frame|source|video|audio|embed|object|input|track|image|use)\b[^>]*>/gi) || [];
  for (const tag of tags) {
    const isAnchorLike = /^<link\b/i.test(tag) && /\brel\s*=\s*["']?(?:canonical|alternate|author|license)\b/i.test(tag);
    const re = /\b(src|href|srcset|data|poster|xlink:href)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi;
    let m;
    while ((m = re.exec(tag)) !== null) {
      const value = m[3] ?? m[4] ?? m[5];
      const urls = m[1].toLowerCase() === 'srcset' ? value.split(',').map((s) => s.trim().split(/\s+/)[0]) : [value];
      for (const u of urls) {
        if (external.test(u) && !isAnchorLike) fail(file, `refers to the outside resource ${u} in ${tag.slice(0, 120)}`);
      }
    }
  }
  for (const m of text.matchAll(/style\s*=\s*"([^"]*)"/gi)) scanCss(file, m[1]);
  for (const m of text.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/gi)) scanCss(file, m[1]);
}
function scanCss(file, text) {
  for (const m of text.matchAll(/url\(\s*["']?([^"')]*)["']?\s*\)|@import\s+["']([^"']*)["']/gi)) {
    const u = m[1] ?? m[2];
    if (external.test(u)) fail(file, `refers to the outside resource ${u} in CSS`);
  }
}
let scanned = 0;
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) { walk(full); continue; }
    const rel = path.relative(siteDir, full);
    if (/\.html?$/i.test(entry.name)) { scanHtml(rel, fs.readFileSync(full, 'utf8')); scanned++; }
    if (/\.css$/i.test(entry.name)) { scanCss(rel, fs.readFileSync(full, 'utf8')); scanned++; }
  }
})(siteDir);
console.log(`offline: ${scanned} HTML and CSS files scanned for resources on other hosts: ` +
  `${findings.length} found`);

// 2. The browser.
async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agmem-site-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    chromiumSandbox: false,
    viewport: { width: 1280, height: 900 },
    // As root, in a closed network: without the background-networking flags Chromium's own
    // connections are refused and land in the log.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context.setDefaultTimeout(30000);
  try {
    for (const rel of pages) {
      await checkPage(context, rel).catch((err) => {
        fail(rel, `the check stopped: ${String(err.message).split('\n')[0]}`);
        console.log(`${'failed'.padEnd(12)} ${rel}: the check stopped (see below)`);
      });
    }
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

async function checkPage(context, rel) {
  const page = await context.newPage();
  const url = new URL(rel, baseUrl).href;
  const before = findings.length;
  // Only this origin is served; anything else is recorded and blocked.
  await page.route('**/*', (route) => {
    const req = route.request().url();
    if (req.startsWith('data:') || new URL(req).origin === origin) return route.continue();
    fail(rel, `request to another host, blocked: ${req}`);
    return route.abort('blockedbyclient');
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error') {
      const loc = msg.location();
      fail(rel, `console error: ${msg.text()}${loc && loc.url ? ` (${loc.url}:${loc.lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (err) => fail(rel, `uncaught exception: ${err.message}`));
  page.on('requestfailed', (req) => {
    const why = req.failure() ? req.failure().errorText : 'failed';
    if (!why.startsWith('net::ERR_BLOCKED_BY_CLIENT')) fail(rel, `request failed (${why}): ${req.url()}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) fail(rel, `HTTP ${res.status()} for ${res.url()}`);
  });
  const response = await page.goto(url, { waitUntil: 'load' });
  if (!response || !response.ok()) fail(rel, `the page itself: HTTP ${response ? response.status() : 'none'}`);
  await page.waitForLoadState('networkidle');
  const images = await page.evaluate(() => Array.from(document.images).map((img) => ({
    src: img.getAttribute('src'), url: img.currentSrc || img.src, complete: img.complete,
    width: img.naturalWidth, height: img.naturalHeight,
  })));
  for (const img of images) {
    if (!img.complete || img.width === 0) fail(rel, `broken image: <img src="${img.src}">`);
  }
  for (const e of expected.filter((x) => x.page === rel)) {
    const hit = images.find((img) => img.url.endsWith(e.src) && img.width > 0);
    if (!hit) fail(rel, `does not show the image ${e.src}`);
  }
  const toc = await page.locator('#toc a.nav-link').count();
  let search = '';
  if (rel === 'index.html' && (await page.locator('#search-input').count()) > 0) {
    // The index is fetched when the box gets the focus; what is typed before it arrives finds
    // nothing, as for a reader who types at once.
    const index = page.waitForResponse((res) => res.url().endsWith('/search.json'));
    await page.locator('#search-input').focus();
    await index;
    await page.waitForFunction(() => !document.querySelector('#search-input.loading'), null,
      { timeout: 10000 });
    await page.locator('#search-input').pressSequentially('memory', { delay: 20 });
    const suggestions = page.locator('.aa-suggestion');
    await suggestions.first().waitFor({ state: 'visible', timeout: 10000 })
      .catch(() => fail(rel, 'the search box suggested nothing for "memory"'));
    search = `, search for "memory": ${await suggestions.count()} suggestions`;
    await page.keyboard.press('Escape');
    await page.locator('#search-input').fill('');
    await page.locator('#search-input').blur();
  }
  const shot = path.join(shotDir, `${rel.replace(/\.html$/, '').replace(/\//g, '-')}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  const imgs = images.map((i) => `${i.src} ${i.width}x${i.height}`).join(', ') || 'none';
  const status = findings.length === before ? 'ok' : `${findings.length - before} finding(s)`;
  console.log(`${status.padEnd(12)} ${rel}: images [${imgs}], ${toc} table-of-contents links` +
    `${search}; screenshot ${path.basename(shot)}`);
  await page.close();
}

main().then(() => {
  if (findings.length > 0) {
    console.log(`\n${findings.length} finding(s):`);
    for (const f of findings) console.log(`  ${f}`);
    process.exit(1);
  }
  console.log(`site check: ${pages.length} pages opened, no console error, no failed request, ` +
    'no broken image, nothing from another host');
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
