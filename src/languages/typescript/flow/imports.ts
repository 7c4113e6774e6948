// What the names of a file stand for: driver modules and their exports
// (imports and require()) as the driver modules read them, and the names
// imported from other modules (maybe the project's own), resolved when the
// walk needs them.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver } from '../../../model/index.ts';
import type { DriverRegistry } from '../drivers/index.ts';
import { patternNames, span, stringValue, unwrap, type Node } from '../syntax.ts';
import type { Imports, TypeMeaning } from './types.ts';

/** What readImports read of each program, per driver registry: a module is read at several import depths, and by the scan. */
const importsByProgram = new WeakMap<TSESTree.Program, { drivers: DriverRegistry; imports: Imports }>();

/** readImports, once per program and driver registry (nothing changes an Imports once read). */
export function importsOf(program: TSESTree.Program, drivers: DriverRegistry): Imports {
  const known = importsByProgram.get(program);
  if (known?.drivers === drivers) return known.imports;
  const imports = readImports(program, drivers);
  importsByProgram.set(program, { drivers, imports });
  return imports;
}

/** Imports, `import x = require()` and top-level `const x = require('pg')`. */
export function readImports(program: TSESTree.Program, drivers: DriverRegistry): Imports {
  const imports: Imports = { names: new Map(), drivers: [], types: new Map(), project: new Map() };
  const addDriver = (d: Driver) => {
    if (!imports.drivers.includes(d)) imports.drivers.push(d);
  };
  const visitRequire = (declarator: TSESTree.VariableDeclarator) => {
    const init = unwrap(declarator.init);
    if (init?.type !== 'CallExpression' || init.callee.type !== 'Identifier' || init.callee.name !== 'require') return;
    const specifier = stringValue(init.arguments[0] as Node);
    const driver = specifier ? drivers.driverOfModule(specifier) : undefined;
    if (specifier && !driver) {
      const at = span(init.arguments[0] as Node);
      if (declarator.id.type === 'Identifier') imports.project.set(declarator.id.name, { specifier, imported: 'module.exports', at, typeOnly: false });
      else if (declarator.id.type === 'ObjectPattern') {
        for (const p of declarator.id.properties) {
          if (p.type !== 'Property' || p.key.type !== 'Identifier') continue;
          for (const local of patternNames(p.value as Node)) imports.project.set(local.name, { specifier, imported: p.key.name, at, typeOnly: false });
        }
      }
      return;
    }
    if (!driver || !specifier) return;
    addDriver(driver);
    if (declarator.id.type === 'Identifier') {
      const value = drivers.exportOf(driver, 'default', specifier);
      if (value) imports.names.set(declarator.id.name, value);
    } else if (declarator.id.type === 'ObjectPattern') {
      for (const p of declarator.id.properties) {
        if (p.type !== 'Property' || p.key.type !== 'Identifier') continue;
        const value = drivers.exportOf(driver, p.key.name, specifier);
        for (const local of patternNames(p.value as Node)) if (value) imports.names.set(local.name, value);
      }
    }
  };
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration') {
      const specifier = String(statement.source.value);
      const importedName = (s: TSESTree.ImportClause) => (s.type === 'ImportDefaultSpecifier' ? 'default' : s.type === 'ImportNamespaceSpecifier' ? '*' : s.imported.type === 'Identifier' ? s.imported.name : String(s.imported.value));
      // A module of the project that is a driver's generated client, by the names imported from it: those the driver knows are its.
      const generated = drivers.driverOfModule(specifier) ? undefined : drivers.driverOfGenerated(statement.specifiers.map(importedName));
      const driver = drivers.driverOfModule(specifier) ?? generated;
      if (!driver) {
        for (const s of statement.specifiers) {
          const typeOnly = statement.importKind === 'type' || (s.type === 'ImportSpecifier' && s.importKind === 'type');
          imports.project.set(s.local.name, { specifier, imported: importedName(s), at: span(statement.source), typeOnly });
        }
        continue;
      }
      addDriver(driver);
      for (const s of statement.specifiers) {
        const imported = importedName(s);
        const typeOnly = statement.importKind === 'type' || (s.type === 'ImportSpecifier' && s.importKind === 'type');
        if (generated && (s.type !== 'ImportSpecifier' || !drivers.exportOf(driver, imported, specifier))) {
          imports.project.set(s.local.name, { specifier, imported, at: span(statement.source), typeOnly });
          continue;
        }
        if (s.type === 'ImportSpecifier') imports.types.set(s.local.name, { driver, name: imported });
        // `import type pg from 'pg'` names pg.PoolClient as well as `import pg from 'pg'` does.
        if (imported === 'default' || imported === '*') imports.types.set(s.local.name, { driver, name: '*' });
        if (typeOnly) continue;
        const value = drivers.exportOf(driver, imported, specifier);
        if (value) imports.names.set(s.local.name, value);
      }
    } else if (statement.type === 'TSImportEqualsDeclaration' && statement.moduleReference.type === 'TSExternalModuleReference') {
      const specifier = String((statement.moduleReference.expression as TSESTree.StringLiteral).value);
      const driver = drivers.driverOfModule(specifier);
      if (!driver) {
        imports.project.set(statement.id.name, { specifier, imported: 'module.exports', at: span(statement.moduleReference.expression), typeOnly: false });
        continue;
      }
      addDriver(driver);
      const value = drivers.exportOf(driver, 'default', specifier);
      if (value) imports.names.set(statement.id.name, value);
      imports.types.set(statement.id.name, { driver, name: '*' });
    } else if (statement.type === 'VariableDeclaration') {
      for (const d of statement.declarations) visitRequire(d);
    }
  }
  return imports;
}

/** What a type annotation's name says a name holds, when the type is a driver's (`pg.PoolClient`, `PoolClient` imported from pg). */
export function valueOfType(name: string, qualifier: string | undefined, imports: Imports, drivers: DriverRegistry): TypeMeaning | undefined {
  const from = qualifier ? imports.types.get(qualifier) : imports.types.get(name);
  const driver = from?.driver;
  if (!driver) return undefined;
  const exported = qualifier ? name : from.name;
  return drivers.typeOf(driver, exported, qualifier !== undefined);
}
