// Drawing attention probabilities on a canvas: the colour ramp, one head's map with token labels
// (rows: queries, columns: keys; keys after the query are hatched), all heads as small
// multiples, and thumbnails. Colour follows sqrt(p) so that weak but real attention shows.

const LIGHT = [[0, [243, 244, 251]], [0.3, [165, 180, 252]], [0.65, [79, 70, 229]], [1, [30, 27, 75]]];
const DARK = [[0, [27, 31, 46]], [0.3, [55, 48, 163]], [0.65, [129, 140, 248]], [1, [238, 242, 255]]];

export function dark() {
  return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
}

export function colour(p) {
  const stops = dark() ? DARK : LIGHT;
  const t = Math.sqrt(Math.max(0, Math.min(1, p)));
  for (let s = 1; s < stops.length; s++) {
    const [t1, c1] = stops[s];
    const [t0, c0] = stops[s - 1];
    if (t <= t1) {
      const f = (t - t0) / (t1 - t0);
      return c0.map((c, i) => Math.round(c + f * (c1[i] - c)));
    }
  }
  return stops[stops.length - 1][1];
}

export function css(rgb) {
  return `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
}

// Text on a cell of this probability: light on dark cells.
export function ink(p) {
  const [r, g, b] = colour(p);
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#161a2b' : '#ffffff';
}

// An n x n image of one head (one pixel a cell), to be scaled without smoothing.
function image(P) {
  const n = P.length;
  const c = document.createElement('canvas');
  c.width = n;
  c.height = n;
  const g = c.getContext('2d');
  const img = g.createImageData(n, n);
  const future = dark() ? [22, 25, 37] : [250, 250, 253];
  for (let q = 0; q < n; q++) {
    for (let k = 0; k < n; k++) {
      const rgb = k > q ? future : colour(P[q][k]);
      const o = 4 * (q * n + k);
      img.data[o] = rgb[0];
      img.data[o + 1] = rgb[1];
      img.data[o + 2] = rgb[2];
      img.data[o + 3] = 255;
    }
  }
  g.putImageData(img, 0, 0);
  return c;
}

// Sizes the canvas's backing store to its CSS box; returns the 2-D context in CSS pixels.
export function fit(canvas) {
  const r = canvas.getBoundingClientRect();
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(r.width * dpr));
  const h = Math.max(1, Math.round(r.height * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, r.width, r.height);
  return { g, w: r.width, h: r.height };
}

export function thumbnail(canvas, P) {
  canvas.width = 112;
  canvas.height = 112;
  const g = canvas.getContext('2d');
  g.imageSmoothingEnabled = false;
  g.drawImage(image(P), 0, 0, 112, 112);
}

function labelFont(size) {
  return `${size}px ui-monospace, "DejaVu Sans Mono", monospace`;
}

function clip(s, n) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

// Lays out one head's map in a w x h box: the label margins, the cell size, which labels show.
export function layout(w, h, labels) {
  const n = labels.length;
  const room = Math.min(w, h);
  let cell = room / n;
  const every = cell >= 11 ? 1 : Math.ceil(11 / cell);
  const font = Math.max(9, Math.min(12, Math.floor(cell * 0.8) || 9));
  const chars = Math.max(...labels.map(s => s.length), 1);
  const margin = Math.min(110, Math.max(34, Math.min(chars, 14) * font * 0.62 + 10));
  cell = Math.max(1, Math.min((w - margin - 6) / n, (h - margin - 6) / n));
  const size = cell * n;
  const x0 = margin + Math.max(0, (w - margin - size) / 2);
  return { n, cell, x0, y0: margin, every, font, size };
}

export function drawHead(canvas, P, labels, hover) {
  const { g, w, h } = fit(canvas);
  const L = layout(w, h, labels);
  g.imageSmoothingEnabled = false;
  g.drawImage(image(P), L.x0, L.y0, L.size, L.size);
  const muted = dark() ? '#9aa1b9' : '#646b82';
  const strong = dark() ? '#e8eaf3' : '#161a2b';
  g.font = labelFont(L.font);
  g.textBaseline = 'middle';
  for (let i = 0; i < L.n; i++) {
    const hot = hover && (hover.q === i || hover.k === i);
    if (i % L.every && !hot) continue;
    const text = clip(labels[i], 14);
    g.fillStyle = hover && hover.q === i ? strong : muted;
    g.textAlign = 'right';
    g.fillText(text, L.x0 - 5, L.y0 + (i + 0.5) * L.cell);
    g.save();
    g.translate(L.x0 + (i + 0.5) * L.cell, L.y0 - 5);
    g.rotate(-Math.PI / 2);
    g.textAlign = 'left';
    g.fillStyle = hover && hover.k === i ? strong : muted;
    g.fillText(text, 0, 0);
    g.restore();
  }
  if (hover && hover.q !== undefined) {
    g.strokeStyle = '#d93a4a';
    g.lineWidth = 1.5;
    g.strokeRect(L.x0, L.y0 + hover.q * L.cell, (hover.q + 1) * L.cell, L.cell);
    if (hover.k !== undefined) g.strokeRect(L.x0 + hover.k * L.cell, L.y0, L.cell, L.size);
  }
  return L;
}

// The cell under a point of a head's map, or null.
export function cellAt(L, x, y) {
  const k = Math.floor((x - L.x0) / L.cell);
  const q = Math.floor((y - L.y0) / L.cell);
  if (q < 0 || k < 0 || q >= L.n || k >= L.n) return null;
  return { q, k };
}

// The text, cut with an ellipsis to fit `width` pixels in the context's font.
function fitText(g, text, width) {
  if (g.measureText(text).width <= width) return text;
  let n = text.length;
  while (n > 1 && g.measureText(`${text.slice(0, n)}…`).width > width) n--;
  return `${text.slice(0, n)}…`;
}

// All heads of a layer as small multiples; returns the tiles (for hit tests).
export function drawAll(canvas, heads, titles, selected) {
  const { g, w, h } = fit(canvas);
  const count = heads.length;
  let best = null;
  for (let cols = 1; cols <= count; cols++) {
    const rows = Math.ceil(count / cols);
    const size = Math.min((w - 12 * (cols - 1)) / cols, (h - 24 * rows - 12 * (rows - 1)) / rows);
    if (!best || size > best.size) best = { cols, rows, size };
  }
  const { cols, size } = best;
  const gridW = cols * size + (cols - 1) * 12;
  const left = (w - gridW) / 2;
  const tiles = [];
  g.imageSmoothingEnabled = false;
  g.font = '600 12px system-ui, sans-serif';
  g.textBaseline = 'bottom';
  for (let i = 0; i < count; i++) {
    const x = left + (i % cols) * (size + 12);
    const y = Math.floor(i / cols) * (size + 36) + 20;
    g.fillStyle = i === selected ? '#4f46e5' : dark() ? '#e8eaf3' : '#161a2b';
    g.textAlign = 'left';
    g.fillText(fitText(g, titles[i], size), x, y - 4);
    g.drawImage(image(heads[i]), x, y, size, size);
    if (i === selected) {
      g.strokeStyle = '#6366f1';
      g.lineWidth = 2;
      g.strokeRect(x - 1, y - 1, size + 2, size + 2);
    }
    tiles.push({ x, y, size, head: i });
  }
  return tiles;
}
