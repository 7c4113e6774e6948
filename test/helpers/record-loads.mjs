// Loaded into a CLI child with --import (NODE_OPTIONS): every module the child loads is appended, as
// its URL, to the file PGQ_RECORD_LOADS names (test/cli/cached-scan-loads.test.ts).
import { register } from 'node:module';

register('./record-loads-hooks.mjs', import.meta.url, { data: process.env.PGQ_RECORD_LOADS });
