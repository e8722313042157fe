// A Concordia bot in JavaScript (Node.js, no packages): plays a random legal action,
// reproducibly from the seed it is given. Protocol: docs/bot-protocol.md (one JSON object per line).
"use strict";
const readline = require("readline");

// mulberry32: a small 32-bit generator; the same seed gives the same choices
function generator(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// the seed runs to 2**63 - 1, past what a JavaScript number holds exactly: read it from the text
function seedOf(line) {
  const match = /"seed"\s*:\s*(\d+)/.exec(line);
  return match ? Number(BigInt(match[1]) % 4294967296n) : 0;
}

const lines = readline.createInterface({ input: process.stdin });
let random = null;
lines.on("line", (line) => {
  if (random === null) { // the hello
    const hello = JSON.parse(line);
    random = generator(seedOf(line));
    process.stderr.write(`js-random: seat ${hello.seat} of ${hello.players} on ${hello.map}\n`);
    console.log(JSON.stringify({ type: "hello", protocol: "concordia-bot", version: 1, name: "js-random", want: [] }));
    return;
  }
  const request = JSON.parse(line);
  const legal = request.legal;
  console.log(JSON.stringify({ action: legal[Math.floor(random() * legal.length)] }));
});
lines.on("close", () => process.exit(0)); // stdin closed: the game is over
