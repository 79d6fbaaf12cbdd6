// `npm run keys -- ...`: kept as an alias of `opscan keys ...` (bin/opscan.ts).
process.argv.splice(2, 0, 'keys');
await import('./opscan.js');
