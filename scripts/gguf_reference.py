#!/usr/bin/python3
"""Independent check of a "llama" GGUF: its own reader, llama.cpp-style SPM tokenizer and a NumPy
forward pass written from the math, sharing no code with scripts/train_default_model's writer or
torch model. Run alone to generate text from a GGUF:
    scripts/gguf_reference.py [-m models/default.gguf] -p "In the beginning" [-n 64] [--temp 0.8]
"""
import argparse
import heapq
import struct
import sys

try:
    import numpy as np
except ImportError:
    sys.exit("error: numpy missing; install with: sudo apt install python3-numpy")

# --- GGUF reader (docs/formats.md §1) ----------------------------------------------------------------

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
            11: "<q", 12: "<d"}
_GGML = {0: (np.float32, 4), 1: (np.float16, 2)}  # ggml type -> (numpy dtype, bytes per value)


class GGUF:
    """Metadata dict `kv` and tensors by name (numpy arrays, shape = reversed ne, as stored)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        self.pos = 0
        if self.buf[:4] != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.pos = 4
        version, n_tensors, n_kv = self._read("<I"), self._read("<Q"), self._read("<Q")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version} unsupported")
        self.kv = {}
        for _ in range(n_kv):
            key = self._str()
            self.kv[key] = self._value(self._read("<I"))
        infos = []
        for _ in range(n_tensors):
            name = self._str()
            ne = [self._read("<Q") for _ in range(self._read("<I"))]
            infos.append((name, ne, self._read("<I"), self._read("<Q")))
        align = self.kv.get("general.alignment", 32)
        data0 = self.pos + (align - self.pos % align) % align
        self.tensors = {}
        for name, ne, typ, off in infos:
            if typ not in _GGML:
                raise ValueError(f"{path}: tensor {name} has ggml type {typ}, reader knows F32/F16")
            dtype, size = _GGML[typ]
            count = int(np.prod(ne))
            if off % align or data0 + off + count * size > len(self.buf):
                raise ValueError(f"{path}: tensor {name} misaligned or past end of file")
            arr = np.frombuffer(self.buf, dtype, count, data0 + off)
            self.tensors[name] = arr.reshape(list(reversed(ne)))

    def _read(self, fmt):
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def _str(self):
        n = self._read("<Q")
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def _value(self, typ):
        if typ == 8:
            return self._str()
        if typ == 9:
            elem, n = self._read("<I"), self._read("<Q")
            return [self._value(elem) for _ in range(n)]
        return self._read(_SCALARS[typ])

    def f32(self, name):
        return self.tensors[name].astype(np.float32)


# --- Tokenizer: llama.cpp's SPM algorithm over the GGUF vocabulary (docs/formats.md §4.2) -------------

class SpmTokenizer:
    def __init__(self, g):
        self.tokens = g.kv["tokenizer.ggml.tokens"]
        self.scores = g.kv["tokenizer.ggml.scores"]
        self.types = g.kv["tokenizer.ggml.token_type"]
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.bos = g.kv["tokenizer.ggml.bos_token_id"]
        self.eos = g.kv["tokenizer.ggml.eos_token_id"]
        self.add_bos = g.kv.get("tokenizer.ggml.add_bos_token", True)
        self.space_prefix = g.kv.get("tokenizer.ggml.add_space_prefix", True)

    def encode(self, text, add_bos=None):
        """Ids of `text` as one fragment: '▁' for spaces, highest-score merge first (leftmost on
        ties), leftover characters as <0xXX> byte tokens."""
        text = text.replace(" ", "\u2581")
        if self.space_prefix:
            text = "\u2581" + text
        sym = list(text)                       # symbol texts; "" once merged away
        nxt = list(range(1, len(sym) + 1))
        prv = list(range(-1, len(sym) - 1))
        heap = []

        def push(left, right):
            if left >= 0 and right < len(sym):
                tid = self.ids.get(sym[left] + sym[right])
                if tid is not None:
                    heapq.heappush(heap, (-self.scores[tid], left, right,
                                          len(sym[left]) + len(sym[right])))

        for i in range(len(sym) - 1):
            push(i, i + 1)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            if not sym[left] or not sym[right] or len(sym[left]) + len(sym[right]) != size \
                    or nxt[left] != right:
                continue                        # stale: a side was merged since
            sym[left] += sym[right]
            sym[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] < len(sym):
                prv[nxt[right]] = left
            push(prv[left], left)
            push(left, nxt[left])
        out = [self.bos] if (self.add_bos if add_bos is None else add_bos) else []
        i = 0
        while i < len(sym):
            tid = self.ids.get(sym[i])
            if tid is not None:
                out.append(tid)
            else:
                out.extend(self.ids[f"<0x{b:02X}>"] for b in sym[i].encode("utf-8"))
            i = nxt[i]
        return out

    def decode(self, ids):
        raw = bytearray()
        for i in ids:
            t, typ = self.tokens[i], self.types[i]
            if typ == 6:
                raw.append(int(t[3:5], 16))
            elif typ == 1:
                raw += t.replace("\u2581", " ").encode("utf-8")
        s = raw.decode("utf-8", errors="replace")
        return s[1:] if self.space_prefix and s.startswith(" ") else s


# --- NumPy forward pass ---------------------------------------------------------------------------

class Llama:
    """Weights as float32 arrays in PyTorch orientation (out, in); forward(tokens) -> logits."""

    def __init__(self, g):
        a = g.kv["general.architecture"]
        if a != "llama":
            raise ValueError(f"architecture {a}, expected llama")
        self.n_layers = g.kv[f"{a}.block_count"]
        self.n_heads = g.kv[f"{a}.attention.head_count"]
        self.n_kv_heads = g.kv.get(f"{a}.attention.head_count_kv", self.n_heads)
        self.dim = g.kv[f"{a}.embedding_length"]
        self.head_dim = self.dim // self.n_heads
        self.eps = g.kv[f"{a}.attention.layer_norm_rms_epsilon"]
        self.base = g.kv.get(f"{a}.rope.freq_base", 10000.0)
        self.n_rot = g.kv.get(f"{a}.rope.dimension_count", self.head_dim)
        self.w = {n: g.f32(n) for n in g.tensors}
        if "output.weight" not in self.w:
            self.w["output.weight"] = self.w["token_embd.weight"]

    def rmsnorm(self, x, w):
        return x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + self.eps) * w

    def rope(self, x, pos):
        """NORM mode: pair (x[2i], x[2i+1]) of each head turns by pos * base^(-2i/n_rot)."""
        i = np.arange(self.n_rot // 2)
        theta = pos[:, None] * self.base ** (-2.0 * i / self.n_rot)          # (T, n_rot/2)
        c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
        x0, x1 = x[..., 0:self.n_rot:2].copy(), x[..., 1:self.n_rot:2].copy()
        y = x.copy()
        y[..., 0:self.n_rot:2] = x0 * c - x1 * s
        y[..., 1:self.n_rot:2] = x0 * s + x1 * c
        return y

    def attention(self, q, k, v):
        """q (T, H, Dh), k/v (T, Hkv, Dh); causal; query head h reads KV head h // (H/Hkv)."""
        T, group = q.shape[0], self.n_heads // self.n_kv_heads
        out = np.empty_like(q)
        mask = np.triu(np.full((T, T), -np.inf), 1)
        for h in range(self.n_heads):
            kh, vh = k[:, h // group], v[:, h // group]
            s = q[:, h] @ kh.T / np.sqrt(self.head_dim) + mask
            p = np.exp(s - s.max(-1, keepdims=True))
            out[:, h] = (p / p.sum(-1, keepdims=True)) @ vh
        return out

    def forward(self, tokens):
        w, T = self.w, len(tokens)
        pos = np.arange(T, dtype=np.float64)
        x = w["token_embd.weight"][np.asarray(tokens)]                       # (T, dim)
        for l in range(self.n_layers):
            p = f"blk.{l}."
            h = self.rmsnorm(x, w[p + "attn_norm.weight"])
            q = (h @ w[p + "attn_q.weight"].T).reshape(T, self.n_heads, self.head_dim)
            k = (h @ w[p + "attn_k.weight"].T).reshape(T, self.n_kv_heads, self.head_dim)
            v = (h @ w[p + "attn_v.weight"].T).reshape(T, self.n_kv_heads, self.head_dim)
            o = self.attention(self.rope(q, pos), self.rope(k, pos), v).reshape(T, -1)
            x = x + o @ w[p + "attn_output.weight"].T
            h = self.rmsnorm(x, w[p + "ffn_norm.weight"])
            gate, up = h @ w[p + "ffn_gate.weight"].T, h @ w[p + "ffn_up.weight"].T
            x = x + (gate / (1 + np.exp(-gate)) * up) @ w[p + "ffn_down.weight"].T
        return (self.rmsnorm(x, w["output_norm.weight"]) @ w["output.weight"].T).astype(np.float32)


def generate(model, tok, prompt_ids, n, temp=0.0, seed=0, ctx=None):
    """Greedy (temp 0) or temperature sampling; recomputes the whole window each step."""
    rng = np.random.default_rng(seed)
    ids = list(prompt_ids)
    for _ in range(n):
        window = ids if ctx is None else ids[-ctx:]
        logits = model.forward(window)[-1].astype(np.float64)
        if temp <= 0:
            nxt = int(np.argmax(logits))
        else:
            p = np.exp((logits - logits.max()) / temp)
            nxt = int(rng.choice(len(p), p=p / p.sum()))
        if nxt == tok.eos:
            break
        ids.append(nxt)
    return ids[len(prompt_ids):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-m", "--model", default="models/default.gguf")
    ap.add_argument("-p", "--prompt", default="In the beginning")
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("--temp", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    g = GGUF(args.model)
    tok, model = SpmTokenizer(g), Llama(g)
    ids = tok.encode(args.prompt)
    out = generate(model, tok, ids, args.n, args.temp, args.seed, g.kv.get("llama.context_length"))
    print("prompt ids:", ids)
    print("output ids:", out)
    print(tok.decode(ids[1:] + out))


if __name__ == "__main__":
    main()
