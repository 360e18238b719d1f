// The share link: the config travels in the URL fragment (#c=...), which browsers never send to a server.
// Format: c = base64url(deflate-raw(UTF-8 text)), then optional selectors t (target), w (world size),
// v (DeepSpeed version), p (model size), m (GPU memory). Everything read back is untrusted: the text only
// ever goes to the linter, and each selector is checked against what the page offers before it is used.

export const MAX_TEXT_BYTES = 1 << 20; // a larger config is refused, not truncated
const MAX_FRAGMENT = 4 * MAX_TEXT_BYTES; // base64 of the worst case, compressed or not

function toBase64url(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("the link's config is not base64url");
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream, limit) {
  // Read the output chunk by chunk so a small link that inflates to gigabytes stops at `limit`.
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`the link's config is over ${limit} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

export async function encode(text, selectors) {
  const raw = new TextEncoder().encode(text);
  const packed = await pipe(raw, new CompressionStream("deflate-raw"), 2 * raw.length + 64);
  const params = new URLSearchParams();
  params.set("c", toBase64url(packed));
  for (const [k, v] of Object.entries(selectors)) if (v) params.set(k, String(v));
  return params.toString();
}

// -> null when the fragment holds no config, else {text, selectors}; throws Error(why) on a broken link.
export async function decode(hash) {
  const fragment = hash.startsWith("#") ? hash.slice(1) : hash;
  if (fragment.length > MAX_FRAGMENT) throw new Error("the link is too long");
  const params = new URLSearchParams(fragment);
  const c = params.get("c");
  if (c === null) return null;
  const bytes = await pipe(fromBase64url(c), new DecompressionStream("deflate-raw"), MAX_TEXT_BYTES);
  const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  const selectors = {};
  for (const k of ["t", "w", "v", "p", "m"]) {
    const v = params.get(k);
    if (v !== null && v.length <= 32) selectors[k] = v;
  }
  return { text, selectors };
}
