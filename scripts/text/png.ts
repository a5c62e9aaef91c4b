/**
 * Minimal PNG encoder (8-bit RGB, no interlace) on node:zlib, and a tiny raster canvas with the
 * few drawing operations the reliability diagram needs. Output is deterministic for equal input.
 */
import { crc32, deflateSync } from "node:zlib";

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, "latin1");
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length); // CRC-32 of type and data
  return out;
}

/** Encodes `rgb` (width * height * 3 bytes, rows top to bottom) as a PNG file. */
export function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  if (rgb.length !== width * height * 3) throw new Error(`encodePng: ${rgb.length} bytes for ${width}x${height}`);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 3 + 1)] = 0; // filter: none
    Buffer.from(rgb.buffer, rgb.byteOffset + y * width * 3, width * 3).copy(raw, y * (width * 3 + 1) + 1);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", Buffer.alloc(0))]);
}

export type Rgb = readonly [number, number, number];

/** 3x5 bitmap glyphs for tick labels. */
const GLYPHS: Record<string, string> = {
  "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111", "4": "101101111001001",
  "5": "111100111001111", "6": "111100111101111", "7": "111001001001001", "8": "111101111101111", "9": "111101111001111",
  ".": "000000000000010",
};

/** An RGB raster with pixel-level drawing. */
export class Canvas {
  readonly pixels: Uint8Array;
  constructor(readonly width: number, readonly height: number, background: Rgb = [255, 255, 255]) {
    this.pixels = new Uint8Array(width * height * 3);
    for (let i = 0; i < width * height; i++) this.pixels.set(background, i * 3);
  }
  set(x: number, y: number, c: Rgb): void {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    this.pixels.set(c, (y * this.width + x) * 3);
  }
  rect(x0: number, y0: number, x1: number, y1: number, c: Rgb): void {
    for (let y = Math.round(Math.min(y0, y1)); y <= Math.round(Math.max(y0, y1)); y++)
      for (let x = Math.round(Math.min(x0, x1)); x <= Math.round(Math.max(x0, x1)); x++) this.set(x, y, c);
  }
  /** A line with the given thickness (square brush); `dash` > 0 draws dashes of that length. */
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, thickness = 1, dash = 0): void {
    const steps = Math.max(1, Math.ceil(Math.hypot(x1 - x0, y1 - y0)));
    const h = Math.floor(thickness / 2);
    for (let s = 0; s <= steps; s++) {
      if (dash > 0 && Math.floor(s / dash) % 2 === 1) continue;
      const x = x0 + ((x1 - x0) * s) / steps;
      const y = y0 + ((y1 - y0) * s) / steps;
      this.rect(x - h, y - h, x - h + thickness - 1, y - h + thickness - 1, c);
    }
  }
  disc(cx: number, cy: number, r: number, c: Rgb): void {
    for (let y = -r; y <= r; y++) for (let x = -r; x <= r; x++) if (x * x + y * y <= r * r) this.set(cx + x, cy + y, c);
  }
  /** Draws digits and '.' with the 3x5 font scaled by `px`; (x, y) is the top-left corner. */
  text(x: number, y: number, s: string, c: Rgb, px = 2): void {
    for (const ch of s) {
      const g = GLYPHS[ch];
      if (g) for (let k = 0; k < 15; k++) if (g[k] === "1") this.rect(x + (k % 3) * px, y + Math.floor(k / 3) * px, x + (k % 3) * px + px - 1, y + Math.floor(k / 3) * px + px - 1, c);
      x += 4 * px;
    }
  }
  png(): Buffer {
    return encodePng(this.width, this.height, this.pixels);
  }
}
