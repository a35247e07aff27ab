// What no other tool shows: a head's attention laid over the picture. For a text query (the
// hovered or clicked token, else the last one) the probabilities it gives the image's tokens are
// drawn over the image's patch grid as a heatmap, and the layer's heads are ranked by how much of
// their attention the text after the image puts on it (the mean over those queries of the
// probability mass on the image's keys).
import { colour } from './heatmap.js';

const $ = id => document.getElementById(id);

function percent(p) {
  const v = 100 * p;
  return `${v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2)}%`;
}

// Per head, the mean share of the text queries after the image that lands on the image.
export function imageShares(data, im) {
  const end = im.first + im.tokens;
  return data.heads.map(P => {
    let sum = 0, n = 0;
    for (let q = end; q < P.length; q++, n++)
      for (let k = im.first; k < end; k++) sum += P[q][k];
    return n ? sum / n : 0;
  });
}

export class ImageAttention {
  constructor(onSelectHead) {
    this.onSelectHead = onSelectHead;
    this.img = null;
    this.url = null;
  }

  // data: the attention route's answer; url: the image as it was sent (null: none).
  show(data, url, head, query) {
    const box = $('attention-image');
    const im = data && data.images && data.images[0];
    box.hidden = !im || !url;
    if (box.hidden) return;
    if (url !== this.url) {
      this.url = url;
      this.img = new Image();
      this.img.onload = () => this.show(data, url, head, query);
      this.img.src = url;
    }
    this.rank(data, im, head);
    const n = data.tokens.length;
    let q = query ?? n - 1;
    if (q < im.first + im.tokens) q = n - 1;  // an image token's own row: show the last text token's
    this.draw(data.heads[head][q], im, data.pieces[q], head);
  }

  // The image fitted and centred in the encoder's canvas (as the projector pads it), the grid's
  // cells coloured by the query's probabilities scaled to their largest.
  draw(row, im, piece, head) {
    const c = $('image-heat');
    const [gx, gy] = im.grid, [W, H] = im.size;
    const width = 320, height = Math.round(width * H / W);
    const dpr = window.devicePixelRatio || 1;
    c.width = width * dpr, c.height = height * dpr;
    c.style.width = `${width}px`, c.style.height = `${height}px`;
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#000';
    g.fillRect(0, 0, width, height);
    if (this.img && this.img.complete && this.img.naturalWidth) {
      const s = Math.min(width / this.img.naturalWidth, height / this.img.naturalHeight);
      const w = this.img.naturalWidth * s, h = this.img.naturalHeight * s;
      g.drawImage(this.img, (width - w) / 2, (height - h) / 2, w, h);
    }
    let most = 0, total = 0;
    for (let j = 0; j < im.tokens; j++) most = Math.max(most, row[im.first + j]), total += row[im.first + j];
    const cw = width / gx, ch = height / gy;
    for (let j = 0; j < im.tokens; j++) {
      const p = most > 0 ? row[im.first + j] / most : 0;
      const [r, gg, b] = colour(p);
      g.fillStyle = `rgba(${r},${gg},${b},${0.15 + 0.6 * p})`;
      g.fillRect((j % gx) * cw, Math.floor(j / gx) * ch, cw, ch);
    }
    c.dataset.total = total.toFixed(6);
    $('image-caption').textContent =
      `Head ${head}: “${piece}” puts ${percent(total)} of its attention on the image's ${gx}×${gy} tokens (colours scaled to its largest cell). Hover a token above to change it.`;
  }

  rank(data, im, head) {
    const shares = imageShares(data, im);
    const order = shares.map((s, h) => [s, h]).sort((a, b) => b[0] - a[0]);
    const list = $('image-heads');
    list.replaceChildren(...order.map(([s, h]) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'image-head';
      b.dataset.testid = 'image-head';
      b.setAttribute('aria-pressed', `${h === head}`);
      const bar = document.createElement('span');
      bar.className = 'image-bar';
      bar.style.width = `${Math.round(100 * Math.min(1, s))}%`;
      b.append(`Head ${h} · ${percent(s)}`, bar);
      b.addEventListener('click', () => this.onSelectHead(h));
      li.append(b);
      return li;
    }));
  }
}
