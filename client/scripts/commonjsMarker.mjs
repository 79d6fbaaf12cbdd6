// dist/cjs is CommonJS in a package of type "module": a package.json of its own says so to Node and TypeScript.
import { writeFileSync } from 'node:fs';
import { URL } from 'node:url';

writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
