// Django's settings that decide whether a connection outlives its request:
// CONN_MAX_AGE (0, the default, closes the connection at the end of every
// request and Celery task; a positive age or None keeps it) and
// ATOMIC_REQUESTS, read from the module manage.py names or the settings.py
// files near the project root.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readConfigText } from '../../../../read-file.ts';
import { projectRoot } from '../../flow/project.ts';

export interface DjangoSettings {
  /** CONN_MAX_AGE of the default database: a number of seconds, null (for ever), undefined when not read. */
  connMaxAge: number | null | undefined;
  atomicRequests: boolean;
  /** The settings file it was read from. */
  file?: string;
}

const settingsCache = new Map<string, DjangoSettings>();

/** The project's Django settings: the module manage.py names, else the settings.py files near the root. */
export function djangoSettings(file: string): DjangoSettings {
  const root = projectRoot(file);
  const cached = settingsCache.get(root);
  if (cached) return cached;
  const settings: DjangoSettings = { connMaxAge: undefined, atomicRequests: false };
  for (const path of settingsFiles(root)) {
    let text = '';
    try {
      text = readConfigText(path);
    } catch {
      continue;
    }
    if (!/DATABASES|CONN_MAX_AGE/.test(text)) continue;
    settings.file = path;
    const age = /["']?CONN_MAX_AGE["']?\s*[:=]\s*([^,\n}#]+)/.exec(text);
    if (!age) settings.connMaxAge = 0;
    else {
      const value = age[1].trim();
      settings.connMaxAge = /^\d+$/.test(value) ? Number(value) : value === 'None' ? null : undefined;
    }
    settings.atomicRequests = /["']?ATOMIC_REQUESTS["']?\s*[:=]\s*True/.test(text);
    break;
  }
  settingsCache.set(root, settings);
  return settings;
}

export function clearDjangoCache(): void {
  settingsCache.clear();
}

function settingsFiles(root: string): string[] {
  const found: string[] = [];
  const manage = join(root, 'manage.py');
  if (existsSync(manage)) {
    try {
      const module = /DJANGO_SETTINGS_MODULE["']\s*,\s*["']([\w.]+)["']/.exec(readConfigText(manage))?.[1];
      if (module) {
        const path = join(root, ...module.split('.'));
        found.push(`${path}.py`, join(path, '__init__.py'), join(path, 'base.py'));
      }
    } catch {
      // unreadable: look for settings files instead
    }
  }
  const list = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
  };
  found.push(join(root, 'settings.py'));
  for (const entry of list(root)) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    found.push(join(root, entry.name, 'settings.py'), join(root, entry.name, 'settings', '__init__.py'), join(root, entry.name, 'settings', 'base.py'));
  }
  return found.filter((p) => existsSync(p));
}

