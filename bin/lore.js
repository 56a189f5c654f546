#!/usr/bin/env node
// lore runs its TypeScript sources directly: tsx compiles each module on load (cached on disk),
// so there is no build step between a clone and a running service.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
