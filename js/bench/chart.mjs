// bench/chart.svg: median time per CID for each variant, input size and
// runtime, as horizontal bars on a log scale. Hand-written SVG: no
// dependency, deterministic for the same numbers.
const VARIANTS = [
  ['floor', 'hand-written floor', '#4a4a4a'],
  ['fused_run', 'Braid fused run()', '#1f77b4'],
  ['chained_ops', 'op packages chained', '#9ecae1'],
  ['serde_wasm_bindgen', 'serde-wasm-bindgen', '#ff7f0e'],
  ['serde_json', 'serde_json in/out', '#ffbb78'],
  ['pure_js', 'pure JS', '#2ca02c'],
];

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function chart(groups) {
  // groups: [{ title, sizes: { label: { variant: { median } } } }]
  const rows = [];
  for (const g of groups) for (const [size, row] of Object.entries(g.sizes)) rows.push({ title: `${g.title}, ${size}`, row });
  const bar = 11;
  const rowH = VARIANTS.length * bar + 22;
  const left = 160;
  const width = 760;
  const plot = width - left - 90;
  const height = 40 + rows.length * rowH + 24;
  const all = rows.flatMap((r) => VARIANTS.map(([k]) => r.row[k]?.median).filter((x) => x > 0));
  const lo = Math.log10(Math.min(...all) / 2);
  const hi = Math.log10(Math.max(...all) * 1.2);
  const x = (v) => ((Math.log10(v) - lo) / (hi - lo)) * plot;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<text x="10" y="18" font-size="14" font-weight="bold">CIDv1 (blake3, raw, base32): median time per call, log scale (shorter is faster)</text>`,
  ];
  rows.forEach((r, i) => {
    const y0 = 36 + i * rowH;
    out.push(`<text x="10" y="${y0 + 12}" font-weight="bold">${esc(r.title)}</text>`);
    VARIANTS.forEach(([key, label, color], j) => {
      const v = r.row[key]?.median;
      if (!(v > 0)) return;
      const y = y0 + 16 + j * bar;
      out.push(`<text x="${left - 6}" y="${y + 9}" text-anchor="end">${esc(label)}</text>`);
      out.push(`<rect x="${left}" y="${y}" width="${Math.max(1, x(v)).toFixed(1)}" height="${bar - 2}" fill="${color}"/>`);
      const shown = v >= 1000 ? `${(v / 1000).toFixed(1)} ms` : `${v.toFixed(1)} µs`;
      out.push(`<text x="${(left + x(v) + 4).toFixed(1)}" y="${y + 9}">${shown}</text>`);
    });
  });
  out.push('</svg>', '');
  return out.join('\n');
}
