// Images in the composer: one dropped on the composer, pasted into the message box or picked with
// the image button goes with the next message as an OpenAI image_url part (a data: URL). The
// attention view sends a smaller copy (at most SMALL pixels a side), so that the image's tokens
// stay within what one attention map can show.

const $ = id => document.getElementById(id);
const SMALL = 224;

let attached = null;  // { url, small, width, height } of the image waiting for the next message
const smaller = new Map();  // a sent image's URL -> its small copy

function readFile(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(new Error(`could not read ${file.name || 'the image'}`));
    r.readAsDataURL(file);
  });
}

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error('the browser cannot show this image'));
    img.src = url;
  });
}

// The image scaled to at most `side` pixels a side, as a PNG data: URL.
function shrink(img, side) {
  const s = Math.min(1, side / Math.max(img.naturalWidth, img.naturalHeight));
  const c = document.createElement('canvas');
  c.width = Math.max(1, Math.round(img.naturalWidth * s));
  c.height = Math.max(1, Math.round(img.naturalHeight * s));
  c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
  return c.toDataURL('image/png');
}

async function attach(file, onError) {
  if (!file || !file.type.startsWith('image/')) return;
  try {
    const url = await readFile(file);
    const img = await loadImage(url);
    attached = { url, small: shrink(img, SMALL), width: img.naturalWidth, height: img.naturalHeight };
    smaller.set(url, attached.small);
    $('attach-img').src = url;
    $('attach-size').textContent = `${img.naturalWidth}×${img.naturalHeight}`;
    $('attach').hidden = false;
  } catch (e) {
    onError(e);
  }
}

export function clearAttached() {
  attached = null;
  $('attach').hidden = true;
  $('attach-img').removeAttribute('src');
}

// The image waiting for the next message, taken (null when none).
export function takeAttached() {
  const a = attached;
  if (a) clearAttached();
  return a;
}

// A message's content with its image parts' URLs replaced by their small copies.
export function withSmallImages(content) {
  if (!Array.isArray(content)) return content;
  return content.map(p => p.type === 'image_url' ? { ...p, image_url: { url: smaller.get(p.image_url.url) || p.image_url.url } } : p);
}

// The first image part's URL of some messages, or null.
export function firstImage(messages) {
  for (const m of messages)
    for (const p of Array.isArray(m.content) ? m.content : []) if (p.type === 'image_url') return p.image_url.url;
  return null;
}

export function wireImages(onError) {
  const composer = $('composer');
  composer.addEventListener('dragover', e => { e.preventDefault(); composer.classList.add('dropping'); });
  composer.addEventListener('dragleave', () => composer.classList.remove('dropping'));
  composer.addEventListener('drop', e => {
    e.preventDefault();
    composer.classList.remove('dropping');
    attach([...(e.dataTransfer ? e.dataTransfer.files : [])].find(f => f.type.startsWith('image/')), onError);
  });
  $('prompt').addEventListener('paste', e => {
    const file = [...(e.clipboardData ? e.clipboardData.files : [])].find(f => f.type.startsWith('image/'));
    if (file) { e.preventDefault(); attach(file, onError); }
  });
  $('image-pick').addEventListener('click', () => $('image-file').click());
  $('image-file').addEventListener('change', e => { attach(e.target.files[0], onError); e.target.value = ''; });
  $('attach-remove').addEventListener('click', clearAttached);
}
