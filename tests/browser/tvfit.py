"""Measuring a screen in the page (the TV beside a table, the room screen): what a person across the room could
not read whole. ``problems(page)`` lists, one short line each: the page wider or taller than the screen, a box
outside it, a text cut at the right or the bottom (an overflow that clips, an ellipsis), a table wider than its
box, a text under ``min_vh`` of the screen's height (SVG text measured on the screen), two boxes covering each
other (the QR codes, the game's boxes, the ranking), and on the conquest map two city names overlapping or a
name covering another city. An empty list: it fits. Used by tests/browser/test_tv_screens.py and the evening
tests (tests/evening/kit.py)."""

from __future__ import annotations

FIT = r"""(opts) => {
  // What a screen shows that a person cannot read whole: every problem as a short line (empty: it fits).
  opts = opts || {};
  const W = innerWidth, H = innerHeight, out = [];
  const minPx = (opts.minVh || 2) * H / 100;
  const root = document.documentElement;
  const name = (e) => (e.id ? '#' + e.id : e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '')) ;
  const where = (e) => { const p = []; for (let n = e; n && n !== document.body && p.length < 3; n = n.parentElement) p.unshift(name(n)); return p.join('>'); };
  const shown = (e) => { if (!e.getClientRects().length) return false; const s = getComputedStyle(e); return s.visibility !== 'hidden' && +s.opacity !== 0; };
  if (root.scrollWidth > W + 1) out.push(`page wider than the screen: ${root.scrollWidth} > ${W}`);
  if (root.scrollHeight > H + 1) out.push(`page taller than the screen: ${root.scrollHeight} > ${H}`);
  const scope = document.querySelector(opts.scope || 'main') || document.body;
  const reported = [];
  for (const e of scope.querySelectorAll('*')) {
    if (!shown(e) || e.closest('#toast')) continue;
    if (reported.some(p => p.contains(e))) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > W + 1 || r.bottom > H + 1 || r.left < -1 || r.top < -1) { reported.push(e); out.push(`outside the screen: ${where(e)} ${Math.round(r.left)},${Math.round(r.top)}-${Math.round(r.right)},${Math.round(r.bottom)}`); continue; }
    const s = getComputedStyle(e);
    if (!(e instanceof SVGElement)) {
      const clips = s.overflowX !== 'visible' || s.textOverflow === 'ellipsis';
      if (clips && e.scrollWidth > e.clientWidth + 1) reported.push(e), out.push(`cut at the right: ${where(e)} ${e.scrollWidth} > ${e.clientWidth} "${e.textContent.slice(0, 40)}"`);
      if (s.overflowY !== 'visible' && e.scrollHeight > e.clientHeight + 1) out.push(`cut at the bottom: ${where(e)} ${e.scrollHeight} > ${e.clientHeight}`);
      // a text that runs out of its box (over a neighbour) though nothing clips it
      const box = e.parentElement && e.parentElement.closest('.tv-box, .display-qr, .table-card');
      if (box && (r.right > box.getBoundingClientRect().right + 1 || r.left < box.getBoundingClientRect().left - 1))
        { reported.push(e); out.push(`out of its box: ${where(e)} "${e.textContent.slice(0, 30)}"`); continue; }
      // a table wider than the box it sits in spills over its neighbours
      if (e.tagName === 'TABLE' && e.parentElement) {
        const p = e.parentElement.getBoundingClientRect();
        if (r.right > p.right + 1) out.push(`table wider than its box: ${where(e)} ${Math.round(r.right)} > ${Math.round(p.right)}`);
      }
    }
    // text too small to read from across the room
    const own = Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (own && !e.closest('.tv-bar')) {
      const m = e instanceof SVGGraphicsElement ? e.getScreenCTM() : null;
      const px = parseFloat(s.fontSize) * (m ? Math.hypot(m.a, m.b) : 1);  // an SVG text: its size on the screen
      if (px < minPx - 0.5) out.push(`text too small: ${where(e)} ${px.toFixed(1)}px < ${minPx.toFixed(1)}px "${e.textContent.trim().slice(0, 30)}"`);
    }
  }
  // boxes that cover each other: the QR codes and the game's boxes, the map's names
  const boxes = Array.from(document.querySelectorAll(opts.boxes || '.display-qr, .tv-box, .tv-roll, #tv-ranking, .tv-clockbox, #clock-turn')).filter(shown);
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    if (boxes[i].contains(boxes[j]) || boxes[j].contains(boxes[i])) continue;
    if (hit(boxes[i].getBoundingClientRect(), boxes[j].getBoundingClientRect())) out.push(`covers: ${where(boxes[i])} and ${where(boxes[j])}`);
  }
  const labels = Array.from(document.querySelectorAll(opts.labels || '#ci-tv-map text.ci-tv-name')).filter(shown).map(e => [e, e.getBoundingClientRect()]);
  for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++)
    if (hit(labels[i][1], labels[j][1])) out.push(`names overlap: ${labels[i][0].textContent} and ${labels[j][0].textContent}`);
  const marks = Array.from(document.querySelectorAll(opts.marks || '#ci-tv-map [data-city]:is(circle, rect)')).filter(shown).map(e => [e, e.getBoundingClientRect()]);
  for (const [t, r] of labels) for (const [m, b] of marks)
    if (m.getAttribute('data-city') !== t.getAttribute('data-city') && hit(r, b)) out.push(`a name covers another city: ${t.textContent} on ${m.getAttribute('data-city')}`);
  return out;
}"""


def problems(page, scope: str = "main", min_vh: float = 2.0, **opts) -> list[str]:
    """What does not fit on the page as it is now (see the module's docstring)."""
    return page.evaluate(FIT, {"scope": scope, "minVh": min_vh, **opts})


def assert_fits(page, what: str = "", **kw) -> None:
    found = problems(page, **kw)
    assert not found, (what, page.viewport_size, found)
