// node:crypto, loaded when something first hashes: the cache, --shard, baselines and SARIF
// fingerprints do, a plain scan never does, and loading the module costs some 58M instructions
// (about 1% of a cold scan of the python bench shape, cachegrind).
import { createRequire } from 'node:module';

type Crypto = typeof import('node:crypto');

let loaded: Crypto | undefined;

export function nodeCrypto(): Crypto {
  return (loaded ??= createRequire(import.meta.url)('node:crypto') as Crypto);
}
