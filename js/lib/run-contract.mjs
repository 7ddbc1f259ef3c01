// What the run endpoint's contract refuses, and how, for salted_cid
// (`text: String, bytes: Bytes -> Cid`): one list for every host of it,
// Braid's service (js/test/component.test.mjs) and the HTTP functions under
// wasmtime serve and jco serve (js/test/http.test.mjs).

const json = { 'content-type': 'application/json' };
const hello = Buffer.from('hello').toString('base64');

/** [body, headers, status, detail] of each refused request to salted_cid. */
export const SALTED_PROBLEMS = [
  [JSON.stringify({ text: 'salt' }), json, 400, /the input `bytes` is missing; this workflow takes text, bytes/],
  [JSON.stringify({ text: 'salt', bytes: hello, extra: 1 }), json, 400, /unknown input `extra`/],
  [JSON.stringify({ text: 1, bytes: hello }), json, 400, /input text: expected a string, found a number/],
  [JSON.stringify({ text: 'salt', bytes: '%%%' }), json, 400, /input bytes: not base64/],
  ['{', json, 400, /the body is not JSON/],
  ['hello', {}, 415, /takes 2 input\(s\) \(text, bytes\): send them as JSON/],
];
