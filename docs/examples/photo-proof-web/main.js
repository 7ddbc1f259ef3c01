// The page's script: photo_proof's web package (aliased in vite.config.js)
// proves the chosen file. `window.result` is for the tests.
import init, { run } from 'wf_photo_proof';

const input = document.querySelector('input[type=file]');
const output = document.querySelector('#proof');

init().then(() => {
  input.addEventListener('change', async () => {
    const file = input.files[0];
    if (!file) return;
    try {
      // A File is read into bytes first: run takes a Uint8Array.
      const proof = await run([new Uint8Array(await file.arrayBuffer())]);
      output.textContent = JSON.stringify(proof, null, 2);
      window.result = proof;
    } catch (e) {
      output.textContent = e.message;
      window.result = { error: e.message };
    }
  });
  window.ready = true;
});
